// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A directory of named storages: what a sparse frame (sframe) lives in. The core never opens files; ports
/// implement this (port/posix over a filesystem directory, port/memory in RAM). Like `storage`, a struct of
/// callbacks and a context.
#pragma once

#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/storage.hpp"

namespace tessera {

/// How storage_directory::open opens an entry.
enum class storage_open : uint8_t {
  read,        ///< an existing entry, read-only (its write/truncate may be nullptr)
  read_write,  ///< an existing entry
  replace,     ///< read-write; created when missing, emptied when present
};

/// Entry names are short relative names without separators ("chunks.b2frame", "0000001F.chunk",
/// "chunks.b2frame.tmp"): at most kStorageNameMax bytes, NUL-terminated.
inline constexpr uint32_t kStorageNameMax = 31;

/// What storage_directory::list calls for each entry: `name` is NUL-terminated, at most kStorageNameMax bytes,
/// valid only during the call. A status other than ok stops the listing, and list returns it.
using storage_directory_visit = status (*)(void* arg, const char* name) noexcept;

/// A directory of named storages: callbacks and their context.
struct storage_directory {
  /// Opens entry `name` into *out. A missing entry with mode read or read_write is errc::io. An entry created by
  /// `replace` must be durable (its directory entry too) once its storage's sync returns.
  status (*open)(void* context, const char* name, storage_open mode, storage* out) noexcept = nullptr;
  /// Releases a storage returned by open (no sync). Called exactly once per successful open.
  status (*close)(void* context, storage* s) noexcept = nullptr;
  /// Removes entry `name`; errc::io when it is missing. Durable when it returns.
  status (*remove)(void* context, const char* name) noexcept = nullptr;
  /// Atomically replaces entry `to` with entry `from` (POSIX rename). Durable when it returns: after a crash the
  /// directory holds either the old `to` or the new one, never neither.
  status (*rename)(void* context, const char* from, const char* to) noexcept = nullptr;
  void* context = nullptr;  ///< passed to every callback
  /// Optional: calls visit(arg, name) once for each entry, in any order, with memory that does not grow with
  /// the number of entries. Only entries a directory could open are listed (names of 1..kStorageNameMax bytes;
  /// a filesystem lists regular files only). visit may remove the entry it is given (with `remove`); whether
  /// entries added or removed otherwise during a listing are visited is unspecified. Returns the first error of
  /// visit or of the listing. Without it, sparse frames leave chunk entries that no commit references where a
  /// crash left them (see frame_open_sparse). Declared after `context` so that positional initializers of the
  /// first five members stay valid.
  status (*list)(void* context, storage_directory_visit visit, void* arg) noexcept = nullptr;
};

/// \name Checked calls
/// Checked calls: a missing callback is errc::unsupported.
///@{

/// d.open.
[[nodiscard]] status storage_directory_open(const storage_directory& d, const char* name, storage_open mode,
                                            storage* out) noexcept;
/// d.close.
[[nodiscard]] status storage_directory_close(const storage_directory& d, storage* s) noexcept;
/// d.remove.
[[nodiscard]] status storage_directory_remove(const storage_directory& d, const char* name) noexcept;
/// d.rename.
[[nodiscard]] status storage_directory_rename(const storage_directory& d, const char* from, const char* to) noexcept;
/// d.list (a null visit is errc::invalid_argument).
[[nodiscard]] status storage_directory_list(const storage_directory& d, storage_directory_visit visit, void* arg) noexcept;
///@}

}  // namespace tessera
