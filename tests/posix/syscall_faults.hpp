// SPDX-License-Identifier: BSD-3-Clause
// Test-only fault injection for the POSIX port's system calls. The test program is linked with GNU ld's --wrap
// for each call (tests/posix/CMakeLists.txt), so the port's references reach the wrappers in syscall_faults.cpp,
// which pass every call through unless a fault is armed for it. Nothing of this is in the port itself.
#pragma once

#include <cstddef>

namespace syscall_faults {

// The wrapped calls (glibc's 64-bit names where _FILE_OFFSET_BITS=64 renames them).
enum class call : int {
  pread,
  pwrite,
  fstat,
  ftruncate,
  fsync,
  open,
  openat,
  close,
  rename,
  renameat,
  unlink,
  unlinkat,
  mkdir,
  mmap,
  munmap,
  pthread_create,       // these four fail by returning the error (errno is left alone)
  pthread_mutex_init,
  pthread_cond_init,
  posix_memalign,
  calloc,  // fails with a null pointer
  count_
};

// Disarms every fault and zeroes the call counts.
void reset() noexcept;
// The nth call of c from now (1: the next) and the times - 1 after it fail with errno err (EINTR: retried).
void fail(call c, int nth, int err, int times = 1) noexcept;
// The nth pread or pwrite from now moves at most max_bytes bytes (0: returns 0, nothing moved).
void shorten(call c, int nth, size_t max_bytes) noexcept;
// Calls of c since the last reset (failed ones included).
[[nodiscard]] int calls(call c) noexcept;

}  // namespace syscall_faults
