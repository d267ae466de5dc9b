// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// The storage the core reads and writes frames through. Ports implement it (port/memory, port/posix,
/// port/flash); the core never opens a file. littlefs-style: a struct of callbacks and a context.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera {

/// A byte store of one frame (a file, a buffer, a flash region): callbacks and their context.
struct storage {
  /// Reads exactly dst.size() bytes at offset. errc::truncated when the range reaches past the end.
  status (*read)(void* context, uint64_t offset, bytes_mut dst) noexcept = nullptr;
  /// Writes src at offset, growing the storage when it reaches past the end. errc::no_space when it is full.
  /// nullptr for read-only storage.
  status (*write)(void* context, uint64_t offset, bytes_view src) noexcept = nullptr;
  /// The current size in bytes.
  status (*size)(void* context, uint64_t* out) noexcept = nullptr;
  /// Cuts (or extends with zeros) the storage to `size` bytes. nullptr when the storage cannot.
  status (*truncate)(void* context, uint64_t size) noexcept = nullptr;
  /// Makes every write so far durable (fsync, flash program completion). nullptr means writes are durable.
  /// What a durable frame assumes of a storage (docs/architecture.md, "The commit protocol"): a write is durable
  /// once a later sync succeeded; before that, a crash may lose it or keep any of its 512-byte sectors; a write
  /// that lies inside one aligned 512-byte sector is never torn; after a failed sync, the writes since the last
  /// successful one may be lost even though reads still return them (the frame then refuses every later write
  /// until it is reopened).
  status (*sync)(void* context) noexcept = nullptr;
  /// Optional: the storage's bytes, when it already is memory, so frames are read in place without copies.
  /// Returns an empty view when it cannot; the view stays valid until the next write, truncate or lend (and, for
  /// a storage with reads_end, until reads_end).
  bytes_view (*view)(void* context) noexcept = nullptr;
  void* context = nullptr;  ///< passed to every callback
  /// Whether read may be called from several threads at once (pread on a file): the blocks of a slice are then
  /// read by the executor's workers while others decode. false: every call comes from the calling thread.
  bool concurrent_reads = false;
  /// Optional: bracket one read operation of the core (an array's slice, item or selection read), called on the
  /// calling thread before and after it; the executor's tasks run only in between. Handles that share a storage
  /// bracket their own reads, so brackets may nest and overlap from several threads. A storage whose view is safe
  /// only for a while (a file map guarded by a lease: posix_mapping) gives a non-empty view only while a bracket
  /// is open; the core asks for it only inside a bracket of the same handle and uses none past its reads_end.
  void (*reads_begin)(void* context) noexcept = nullptr;
  void (*reads_end)(void* context) noexcept = nullptr;  ///< closes the bracket reads_begin opened
  /// Optional: memory of the storage's own for a write of up to `size` bytes at `offset`, at or past its end, so
  /// that a writer builds those bytes in place (a chunk encoded straight into a memory buffer) instead of in a
  /// buffer of its own: a later write of bytes that start there, at that offset, copies nothing. Lending changes
  /// neither the size nor what reads return, and the bytes are the storage's only once written. The span stays
  /// valid until the next write, truncate or lend. An empty span when it cannot (the writer then writes from its
  /// own buffer, as with no callback).
  bytes_mut (*lend)(void* context, uint64_t offset, size_t size) noexcept = nullptr;
};

/// \name Checked calls
/// Checked calls: a missing callback is errc::unsupported, never a null call.
///@{

/// s.read; an empty dst succeeds without a call, a range past UINT64_MAX is out_of_range.
[[nodiscard]] status storage_read(const storage& s, uint64_t offset, bytes_mut dst) noexcept;
/// s.write; an empty src succeeds without a call, a range past UINT64_MAX is out_of_range.
[[nodiscard]] status storage_write(const storage& s, uint64_t offset, bytes_view src) noexcept;
/// s.size.
[[nodiscard]] result<uint64_t> storage_size(const storage& s) noexcept;
/// s.truncate.
[[nodiscard]] status storage_truncate(const storage& s, uint64_t size) noexcept;
/// s.sync; ok without a call when there is none (writes are durable).
[[nodiscard]] status storage_sync(const storage& s) noexcept;
/// s.view; an empty view when there is none.
[[nodiscard]] bytes_view storage_view(const storage& s) noexcept;
/// s.lend; an empty span when there is none, or for a range past UINT64_MAX.
[[nodiscard]] bytes_mut storage_lend(const storage& s, uint64_t offset, size_t size) noexcept;
///@}


}  // namespace tessera
