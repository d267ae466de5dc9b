// SPDX-License-Identifier: BSD-3-Clause
// The wrappers behind syscall_faults.hpp: __wrap_X counts the call, fails it when armed, else calls __real_X
// (the C library's X). Calls may come from several threads (a slice read's workers pread at once): each call
// takes its number from an atomic count, and the faults are armed only while no call is in flight.
#include "syscall_faults.hpp"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <fcntl.h>
#include <pthread.h>
#include <cstdlib>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace syscall_faults {
namespace {

struct armed {
  std::atomic<int> calls{0};
  int fail_at = 0;  // the call number (counted from the reset) that fails first; 0: none
  int fail_times = 0;
  int err = 0;
  int short_at = 0;  // the call number whose transfer is cut; 0: none
  size_t short_bytes = 0;
};

armed g_armed[static_cast<int>(call::count_)];

armed& of(call c) noexcept { return g_armed[static_cast<int>(c)]; }

// Counts a call of c; true (errno set) when it must fail. *number: the call's number since the reset.
bool failing(call c, int* number = nullptr) noexcept {
  armed& a = of(c);
  const int n = a.calls.fetch_add(1, std::memory_order_relaxed) + 1;
  if (number != nullptr) *number = n;
  if (a.fail_at != 0 && n >= a.fail_at && n < a.fail_at + a.fail_times) {
    errno = a.err;
    return true;
  }
  return false;
}

// The byte count call number `number` of c may move.
size_t limit(call c, int number, size_t n) noexcept {
  const armed& a = of(c);
  return a.short_at != 0 && number == a.short_at && a.short_bytes < n ? a.short_bytes : n;
}

}  // namespace

void reset() noexcept {
  for (armed& a : g_armed) {
    a.calls.store(0, std::memory_order_relaxed);
    a.fail_at = a.fail_times = a.err = a.short_at = 0;
    a.short_bytes = 0;
  }
}

void fail(call c, int nth, int err, int times) noexcept {
  armed& a = of(c);
  a.fail_at = a.calls.load(std::memory_order_relaxed) + nth;
  a.fail_times = times;
  a.err = err;
}

void shorten(call c, int nth, size_t max_bytes) noexcept {
  armed& a = of(c);
  a.short_at = a.calls.load(std::memory_order_relaxed) + nth;
  a.short_bytes = max_bytes;
}

int calls(call c) noexcept { return of(c).calls.load(std::memory_order_relaxed); }

}  // namespace syscall_faults

using syscall_faults::call;
using syscall_faults::failing;
using syscall_faults::limit;

// NOLINTBEGIN(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp): the names GNU ld's --wrap defines
extern "C" {
ssize_t __real_pread64(int fd, void* buf, size_t n, off64_t off);
ssize_t __real_pwrite64(int fd, const void* buf, size_t n, off64_t off);
int __real_fstat64(int fd, struct stat64* st);
int __real_ftruncate64(int fd, off64_t size);
int __real_fsync(int fd);
int __real_open64(const char* path, int flags, ...);
int __real_openat64(int dirfd, const char* path, int flags, ...);
int __real_close(int fd);
int __real_rename(const char* from, const char* to);
int __real_renameat(int fromfd, const char* from, int tofd, const char* to);
int __real_unlink(const char* path);
int __real_unlinkat(int dirfd, const char* path, int flags);
int __real_mkdir(const char* path, mode_t mode);
void* __real_mmap64(void* addr, size_t n, int prot, int flags, int fd, off64_t off);
int __real_munmap(void* addr, size_t n);
int __real_pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*), void* arg);
int __real_pthread_mutex_init(pthread_mutex_t* m, const pthread_mutexattr_t* attr);
int __real_pthread_cond_init(pthread_cond_t* c, const pthread_condattr_t* attr);
int __real_posix_memalign(void** out, size_t align, size_t n);
void* __real_calloc(size_t count, size_t size);

ssize_t __wrap_pread64(int fd, void* buf, size_t n, off64_t off) {
  int number = 0;
  if (failing(call::pread, &number)) return -1;
  const size_t m = limit(call::pread, number, n);
  return m == 0 && n != 0 ? 0 : __real_pread64(fd, buf, m, off);
}
ssize_t __wrap_pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  int number = 0;
  if (failing(call::pwrite, &number)) return -1;
  const size_t m = limit(call::pwrite, number, n);
  return m == 0 && n != 0 ? 0 : __real_pwrite64(fd, buf, m, off);
}
int __wrap_fstat64(int fd, struct stat64* st) { return failing(call::fstat) ? -1 : __real_fstat64(fd, st); }
int __wrap_ftruncate64(int fd, off64_t size) { return failing(call::ftruncate) ? -1 : __real_ftruncate64(fd, size); }
int __wrap_fsync(int fd) { return failing(call::fsync) ? -1 : __real_fsync(fd); }
int __wrap_open64(const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  return failing(call::open) ? -1 : __real_open64(path, flags, mode);
}
int __wrap_openat64(int dirfd, const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  return failing(call::openat) ? -1 : __real_openat64(dirfd, path, flags, mode);
}
// A failing close still closes (as Linux does on EINTR and EIO): the descriptor is never leaked.
int __wrap_close(int fd) {
  const bool fail = failing(call::close);
  const int e = errno;
  const int r = __real_close(fd);
  if (!fail) return r;
  errno = e;
  return -1;
}
int __wrap_rename(const char* from, const char* to) { return failing(call::rename) ? -1 : __real_rename(from, to); }
int __wrap_renameat(int fromfd, const char* from, int tofd, const char* to) {
  return failing(call::renameat) ? -1 : __real_renameat(fromfd, from, tofd, to);
}
int __wrap_unlink(const char* path) { return failing(call::unlink) ? -1 : __real_unlink(path); }
int __wrap_unlinkat(int dirfd, const char* path, int flags) {
  return failing(call::unlinkat) ? -1 : __real_unlinkat(dirfd, path, flags);
}
int __wrap_mkdir(const char* path, mode_t mode) { return failing(call::mkdir) ? -1 : __real_mkdir(path, mode); }
void* __wrap_mmap64(void* addr, size_t n, int prot, int flags, int fd, off64_t off) {
  return failing(call::mmap) ? MAP_FAILED : __real_mmap64(addr, n, prot, flags, fd, off);
}
// A failing munmap still unmaps: the test process keeps its address space clean.
int __wrap_munmap(void* addr, size_t n) {
  const bool fail = failing(call::munmap);
  const int e = errno;
  const int r = __real_munmap(addr, n);
  if (!fail) return r;
  errno = e;
  return -1;
}
// The pthread calls and posix_memalign report an error by returning it.
int __wrap_pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
  return failing(call::pthread_create) ? errno : __real_pthread_create(t, attr, fn, arg);
}
int __wrap_pthread_mutex_init(pthread_mutex_t* m, const pthread_mutexattr_t* attr) {
  return failing(call::pthread_mutex_init) ? errno : __real_pthread_mutex_init(m, attr);
}
int __wrap_pthread_cond_init(pthread_cond_t* c, const pthread_condattr_t* attr) {
  return failing(call::pthread_cond_init) ? errno : __real_pthread_cond_init(c, attr);
}
int __wrap_posix_memalign(void** out, size_t align, size_t n) {
  return failing(call::posix_memalign) ? errno : __real_posix_memalign(out, align, n);
}
void* __wrap_calloc(size_t count, size_t size) { return failing(call::calloc) ? nullptr : __real_calloc(count, size); }
}
// NOLINTEND(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
