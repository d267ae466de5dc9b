/// \file
/// A whole file mapped read-only into memory as a tessera::storage (POSIX: open/fstat/mmap/munmap).
///
/// Why: the storage's `view` is the mapping, so the core reads frames in place: chunks and the blocks of a slice
/// decode straight from the mapped pages, with no read() copy and no scratch buffer per chunk, and the blocks
/// decode in parallel on an executor, each worker touching only the pages it needs. The kernel's default
/// read-ahead is kept (no madvise): MADV_RANDOM would turn every chunk into single-page faults.
///
/// Caveat: if another process shrinks (truncates) the file while it is mapped, touching the pages that were cut
/// off raises SIGBUS, which no error value can report. Map only files nobody truncates meanwhile (a finished
/// array, a read-only archive); use posix_file for files that may change size under you. The mapping's size is
/// fixed when it opens: bytes appended later are not seen.
#pragma once

#include <cstdint>

#include "tessera/error.hpp"
#include "tessera/storage.hpp"

namespace tessera {

/// A whole file mapped read-only (PROT_READ, MAP_PRIVATE). A plain handle: copying it does not duplicate the
/// mapping; close it once. An empty file is the valid mapping data == nullptr, size == 0 (nothing is mapped).
struct posix_mapping {
  const uint8_t* data = nullptr;  ///< the mapped bytes (nullptr for an empty file or when closed)
  uint64_t size = 0;              ///< the file's size when it was mapped
};

/// Maps the regular file `path` whole (its descriptor is closed before this returns: the mapping keeps the file
/// alive, even if its name is removed). Errors: errc::io with a message naming the failed call (open, fstat,
/// mmap), errc::io for a directory or anything but a regular file, errc::overflow for a file larger than the
/// address space (32-bit targets: more than SIZE_MAX bytes), errc::invalid_argument for an empty path.
[[nodiscard]] result<posix_mapping> posix_mapping_open(const char* path) noexcept;

/// Unmaps (data becomes nullptr, size 0). Closing a closed mapping is a no-op.
[[nodiscard]] status posix_mapping_close(posix_mapping& m) noexcept;

/// The read-only storage over a mapping: read copies out of it (errc::truncated for a range past the end, like
/// posix_file), size is the mapped size, view is the mapping itself; write, truncate and sync are nullptr. Its
/// context is &m: the posix_mapping object must outlive the storage and must not move. Reads touch no mutable
/// state, so any number of threads may read at once.
[[nodiscard]] storage posix_mapping_storage(const posix_mapping& m) noexcept;

}  // namespace tessera
