// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A file as a tessera::storage (POSIX: open/pread/pwrite/fstat/ftruncate/fsync). Errors are values: errc::io
/// with a message naming the failed call, errc::no_space when the disk (or quota, or size limit) is full,
/// errc::truncated for a read past the end.
#pragma once

#include <cstdint>

#include "tessera/error.hpp"
#include "tessera/storage.hpp"

namespace tessera {

/// How posix_file_open opens a file.
enum class posix_open : uint8_t {
  read,        ///< an existing file; the storage is read-only (write and truncate are nullptr)
  read_write,  ///< an existing file
  create,      ///< read-write; created when missing, contents kept when present
  replace,     ///< read-write; created when missing, emptied when present
};

/// An open file. A plain handle: copying it does not duplicate the descriptor; close it once.
struct posix_file {
  int fd = -1;            ///< the file's descriptor; -1 when closed
  bool writable = false;  ///< opened for writing (every mode but read)
};

/// Opens `path`. A newly created file's directory entry is made durable (fsync of its directory) before this
/// returns, so a later storage sync makes both name and contents durable. A directory is an errc::io error.
[[nodiscard]] result<posix_file> posix_file_open(const char* path, posix_open mode) noexcept;

/// Closes the descriptor (fd becomes -1). Closing a closed file is a no-op. Does not sync.
[[nodiscard]] status posix_file_close(posix_file& f) noexcept;

/// The storage over an open file. Its context is the descriptor itself, so the storage stays valid (and may be
/// copied anywhere) until the file is closed, wherever `f` lives.
[[nodiscard]] storage posix_file_storage(const posix_file& f) noexcept;

/// Renames `from` to `to` (replacing `to` atomically) and makes the rename durable (fsync of the directories).
[[nodiscard]] status posix_file_rename(const char* from, const char* to) noexcept;

/// Removes the file `path`; errc::io when it is missing or cannot be removed.
[[nodiscard]] status posix_file_remove(const char* path) noexcept;

/// fsync of the directory holding `path` (the directory "." for a bare name): makes a create, rename or remove
/// of that entry durable.
[[nodiscard]] status posix_directory_sync_parent(const char* path) noexcept;

}  // namespace tessera
