// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A whole file mapped read-only into memory as a tessera::storage (POSIX: open/fstat/mmap/munmap).
///
/// Why: the storage's `view` is the mapping, so the core reads frames in place: chunks and the blocks of a slice
/// decode straight from the mapped pages, with no read() copy and no scratch buffer per chunk, and the blocks
/// decode in parallel on an executor, each worker touching only the pages it needs. The kernel's default
/// read-ahead is kept (no madvise): MADV_RANDOM would turn every chunk into single-page faults.
///
/// Safety: touching mapped pages that another process cut off (a truncate) raises SIGBUS, which no error value
/// could report. So the map is used only while a read lease (Linux F_SETLEASE) is held: the storage's
/// reads_begin, which the core calls before each array read, takes a read lease and checks that the file still
/// covers the map; reads_end releases it. While the lease is held, no one can open the file for writing or
/// truncate it: the kernel makes that open (or truncate) wait until the read ends. The wait is bounded by
/// /proc/sys/fs/lease-break-time (45 s by default): only a single read that takes longer than that, with a truncate
/// waiting on it, could still meet cut-off pages. The lease is not signalled (its
/// owner is cleared; see posix_mapping.cpp). Outside a read, or when no lease can be had (the file is open for
/// writing anywhere, it belongs to another user without CAP_LEASE, the file system has no leases, not Linux), or
/// when the file is now shorter than the map, the same storage reads the file through pread: slower, never a
/// crash. The mapping's size is fixed when it opens: bytes appended later are read through pread.
#pragma once

#include <cstdint>

#include "tessera/error.hpp"
#include "tessera/storage.hpp"

namespace tessera {

/// A whole file mapped read-only (PROT_READ, MAP_PRIVATE), and its read-only descriptor. A plain handle: copying
/// it does not duplicate the mapping; close it once. An empty file is the valid mapping data == nullptr, size == 0
/// (nothing is mapped; reads go through the descriptor).
struct posix_mapping {
  const uint8_t* data = nullptr;  ///< the mapped bytes (nullptr for an empty file or when closed)
  uint64_t size = 0;              ///< the file's size when it was mapped
  int fd = -1;                    ///< the file, read-only: its lease, its size, and reads outside the map
  uint32_t reads = 0;             ///< open read brackets (reads_begin less reads_end)
  bool leased = false;            ///< a read lease is held and the file covers the map: the map may be touched
  bool lock = false;              ///< guards reads and leased across threads (handles that share the storage)
};

/// Maps the regular file `path` whole and keeps it open read-only (the mapping and the descriptor keep the file
/// alive, even if its name is removed). Errors: errc::io with a message naming the failed call (open, fstat,
/// mmap), errc::io for a directory or anything but a regular file, errc::overflow for a file larger than the
/// address space (32-bit targets: more than SIZE_MAX bytes), errc::invalid_argument for an empty path.
[[nodiscard]] result<posix_mapping> posix_mapping_open(const char* path) noexcept;

/// Unmaps and closes the descriptor (data becomes nullptr, size 0, fd -1). Closing a closed mapping is a no-op.
[[nodiscard]] status posix_mapping_close(posix_mapping& m) noexcept;

/// The read-only storage over a mapping: reads_begin and reads_end take and release the lease (the first bracket
/// open takes it, the last to close releases it); while one is open, view is the mapping, elsewhere it is empty;
/// read is always a pread (errc::truncated for a range past the file's end, like posix_file); size is the file's
/// current size (fstat); write, truncate and sync are nullptr. Its context is &m: the posix_mapping object must
/// outlive the storage and must not move. Any number of threads may read and bracket at once (array handles that
/// share the storage, one per thread). The core asks for the view only inside its own bracket.
[[nodiscard]] storage posix_mapping_storage(const posix_mapping& m) noexcept;

}  // namespace tessera
