// SPDX-License-Identifier: BSD-3-Clause
// File storage over POSIX descriptors. Every transfer loops over short counts and EINTR; errno is turned into a
// static message naming the call (errors are values; no exceptions, no allocation).
#include "tessera/port/posix_file.hpp"

#include "posix_internal.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <limits>

namespace tessera {
namespace {

static_assert(sizeof(off_t) == 8, "the POSIX port needs a 64-bit off_t (_FILE_OFFSET_BITS=64)");

constexpr uint64_t kMaxOffset = static_cast<uint64_t>(std::numeric_limits<off_t>::max());
// Linux transfers at most 0x7ffff000 bytes per call; asking for less keeps 32-bit ssize_t results exact.
constexpr size_t kMaxTransfer = size_t{1} << 30;

int fd_of(void* context) noexcept { return static_cast<int>(reinterpret_cast<intptr_t>(context)); }

bool is_full(int e) noexcept { return detail::posix_errno_is_full(e); }

}  // namespace

bool detail::posix_errno_is_full(int e) noexcept { return e == ENOSPC || e == EDQUOT || e == EFBIG; }

status detail::posix_open_error(int e) noexcept {
  switch (e) {
    case ENOENT: return make_error(errc::io, TESSERA_MSG("posix: open failed: no such file or directory"));
    case EACCES:
    case EPERM: return make_error(errc::io, TESSERA_MSG("posix: open failed: permission denied"));
    case EISDIR: return make_error(errc::io, TESSERA_MSG("posix: open failed: the path is a directory"));
    case ENOTDIR: return make_error(errc::io, TESSERA_MSG("posix: open failed: a path component is not a directory"));
    case EROFS: return make_error(errc::io, TESSERA_MSG("posix: open failed: read-only file system"));
    case EEXIST: return make_error(errc::io, TESSERA_MSG("posix: open failed: the file exists"));
    case EMFILE:
    case ENFILE: return make_error(errc::io, TESSERA_MSG("posix: open failed: too many open files"));
    case ENAMETOOLONG: return make_error(errc::io, TESSERA_MSG("posix: open failed: name too long"));
    case EOVERFLOW: return make_error(errc::io, TESSERA_MSG("posix: open failed: the file is too large to open"));
    case ENOSPC:
    case EDQUOT: return make_error(errc::no_space, TESSERA_MSG("posix: open failed: no space to create the file"));
    default: return make_error(errc::io, TESSERA_MSG("posix: open failed"));
  }
}

namespace {

// Moves `size` bytes at `offset` through io(done, want, at) (a pread or pwrite of `want` bytes at file offset `at`,
// `done` bytes into the buffer), across short counts and EINTR. 0 when every byte moved, the errno of a failed
// call, or -1 when a call moved nothing (a read at the end of the file; a write that makes no progress).
template <class Io>
int transfer(Io io, size_t size, uint64_t offset) noexcept {
  size_t done = 0;
  while (done < size) {
    const size_t left = size - done;
    const ssize_t n = io(done, left < kMaxTransfer ? left : kMaxTransfer, offset + done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return -1;
    done += static_cast<size_t>(n);
  }
  return 0;
}

status file_read(void* context, uint64_t offset, bytes_mut dst) noexcept {
  const int fd = fd_of(context);
  if (offset > kMaxOffset || dst.size() > kMaxOffset - offset)
    return make_error(errc::out_of_range, TESSERA_MSG("posix_file: read offset past the largest file offset"));
  const int e = transfer([&](size_t done, size_t want, uint64_t at) {
    return ::pread(fd, dst.data() + done, want, static_cast<off_t>(at));
  }, dst.size(), offset);
  if (e == 0) return ok_status();
  if (e < 0) return make_error(errc::truncated, TESSERA_MSG("posix_file: read past the end of the file"));
  if (e == EISDIR) return make_error(errc::io, TESSERA_MSG("posix_file: pread failed: the file is a directory"));
  if (e == EBADF) return make_error(errc::io, TESSERA_MSG("posix_file: pread failed: bad or write-only descriptor"));
  return make_error(errc::io, TESSERA_MSG("posix_file: pread failed"));
}

status file_write(void* context, uint64_t offset, bytes_view src) noexcept {
  const int fd = fd_of(context);
  if (offset > kMaxOffset || src.size() > kMaxOffset - offset)
    return make_error(errc::no_space, TESSERA_MSG("posix_file: write past the largest file offset"));
  const int e = transfer([&](size_t done, size_t want, uint64_t at) {
    return ::pwrite(fd, src.data() + done, want, static_cast<off_t>(at));
  }, src.size(), offset);
  if (e == 0) return ok_status();
  // A zero-byte write of a non-empty buffer makes no progress: treat it as full rather than spin.
  if (e < 0) return make_error(errc::no_space, TESSERA_MSG("posix_file: pwrite wrote nothing"));
  if (is_full(e)) return make_error(errc::no_space, TESSERA_MSG("posix_file: pwrite failed: no space left"));
  if (e == EBADF) return make_error(errc::io, TESSERA_MSG("posix_file: pwrite failed: bad or read-only descriptor"));
  return make_error(errc::io, TESSERA_MSG("posix_file: pwrite failed"));
}

status file_size(void* context, uint64_t* out) noexcept {
  struct stat st;
  if (::fstat(fd_of(context), &st) != 0) return make_error(errc::io, TESSERA_MSG("posix_file: fstat failed"));
  if (st.st_size < 0) return make_error(errc::io, TESSERA_MSG("posix_file: fstat reported a negative size"));
  *out = static_cast<uint64_t>(st.st_size);
  return ok_status();
}

status file_truncate(void* context, uint64_t size) noexcept {
  if (size > kMaxOffset) return make_error(errc::no_space, TESSERA_MSG("posix_file: truncate past the largest file offset"));
  for (;;) {
    if (::ftruncate(fd_of(context), static_cast<off_t>(size)) == 0) return ok_status();
    if (errno == EINTR) continue;
    if (is_full(errno)) return make_error(errc::no_space, TESSERA_MSG("posix_file: ftruncate failed: no space left"));
    return make_error(errc::io, TESSERA_MSG("posix_file: ftruncate failed"));
  }
}

status file_sync(void* context) noexcept {
  for (;;) {
    if (::fsync(fd_of(context)) == 0) return ok_status();
    if (errno == EINTR) continue;
    if (is_full(errno)) return make_error(errc::no_space, TESSERA_MSG("posix_file: fsync failed: no space left"));
    return make_error(errc::io, TESSERA_MSG("posix_file: fsync failed"));
  }
}

int open_retry(const char* path, int flags, mode_t mode) noexcept {
  return detail::posix_open_retry(-1, path, flags, mode);
}

status fsync_directory(const char* dir) noexcept {
  const int fd = open_retry(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) return make_error(errc::io, TESSERA_MSG("posix_file: opening the directory to fsync it failed"));
  const status s = detail::posix_fsync_directory_fd(fd);
  ::close(fd);
  return s;
}

}  // namespace

int detail::posix_open_retry(int dirfd, const char* path, int flags, mode_t mode) noexcept {
  for (;;) {
    const int fd = dirfd < 0 ? ::open(path, flags, mode) : ::openat(dirfd, path, flags, mode);
    if (fd >= 0 || errno != EINTR) return fd;
  }
}

int detail::posix_open_create(int dirfd, const char* path, bool truncate, mode_t mode, bool* created) noexcept {
  const int trunc = truncate ? O_TRUNC : 0;
  *created = false;
  int fd = posix_open_retry(dirfd, path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd >= 0) {
    *created = true;
  } else if (errno == EEXIST) {
    fd = posix_open_retry(dirfd, path, O_RDWR | O_CLOEXEC | trunc, 0);
    // Removed in between: one more exclusive try is enough (a second race is the caller's business).
    if (fd < 0 && errno == ENOENT) {
      fd = posix_open_retry(dirfd, path, O_RDWR | O_CREAT | O_CLOEXEC | trunc, mode);
      *created = fd >= 0;
    }
  }
  return fd;
}

status detail::posix_stat_opened(int fd, struct stat* st) noexcept {
  if (::fstat(fd, st) != 0) {
    ::close(fd);
    return make_error(errc::io, TESSERA_MSG("posix: fstat failed"));
  }
  if (S_ISDIR(st->st_mode)) {
    ::close(fd);
    return make_error(errc::io, TESSERA_MSG("posix: open failed: the path is a directory"));
  }
  return ok_status();
}

status detail::posix_fsync_directory_fd(int fd) noexcept {
  for (;;) {
    if (::fsync(fd) == 0) return ok_status();
    if (errno == EINTR) continue;
    // Some file systems cannot fsync directories (EINVAL): their entries are as durable as they get.
    if (errno == EINVAL) return ok_status();
    return make_error(errc::io, TESSERA_MSG("posix: fsync of a directory failed"));
  }
}

status posix_directory_sync_parent(const char* path) noexcept {
  if (path == nullptr || path[0] == '\0') return make_error(errc::invalid_argument, TESSERA_MSG("posix_file: empty path"));
  const char* slash = std::strrchr(path, '/');
  if (slash == nullptr) return fsync_directory(".");
  if (slash == path) return fsync_directory("/");
  // The parent's name, copied: PATH_MAX bounds every path the kernel accepts.
  char dir[4096];
  const size_t n = static_cast<size_t>(slash - path);
  if (n >= sizeof dir) return make_error(errc::io, TESSERA_MSG("posix_file: path too long"));
  std::memcpy(dir, path, n);
  dir[n] = '\0';
  return fsync_directory(dir);
}

result<posix_file> posix_file_open(const char* path, posix_open mode) noexcept {
  if (path == nullptr || path[0] == '\0') return make_error(errc::invalid_argument, TESSERA_MSG("posix_file: empty path"));
  constexpr mode_t kMode = 0666;  // less the umask, as every tool creates files
  int fd = -1;
  bool created = false;
  switch (mode) {
    case posix_open::read: fd = open_retry(path, O_RDONLY | O_CLOEXEC, 0); break;
    case posix_open::read_write: fd = open_retry(path, O_RDWR | O_CLOEXEC, 0); break;
    case posix_open::create:
    case posix_open::replace: fd = detail::posix_open_create(-1, path, mode == posix_open::replace, kMode, &created); break;
    default: return make_error(errc::invalid_argument, TESSERA_MSG("posix_file: unknown open mode"));
  }
  TESSERA_TRY(detail::posix_open_finish(fd, created, -1, path));
  posix_file f;
  f.fd = fd;
  f.writable = mode != posix_open::read;
  return f;
}

status detail::posix_open_finish(int fd, bool created, int dirfd, const char* path) noexcept {
  if (fd < 0) return posix_open_error(errno);
  struct stat st;
  TESSERA_TRY(posix_stat_opened(fd, &st));
  if (!created) return ok_status();
  const status s = dirfd >= 0 ? posix_fsync_directory_fd(dirfd) : posix_directory_sync_parent(path);
  if (!s.ok()) ::close(fd);
  return s;
}

status posix_file_close(posix_file& f) noexcept {
  if (f.fd < 0) return ok_status();
  const int fd = f.fd;
  f.fd = -1;
  f.writable = false;
  // Linux closes the descriptor even when close reports EINTR: never retry (the number may be reused).
  if (::close(fd) != 0 && errno != EINTR) {
    if (is_full(errno)) return make_error(errc::no_space, TESSERA_MSG("posix_file: close failed: no space left"));
    return make_error(errc::io, TESSERA_MSG("posix_file: close failed"));
  }
  return ok_status();
}

storage posix_file_storage(const posix_file& f) noexcept {
  storage s;
  if (f.fd < 0) return s;  // no callbacks: every checked call reports errc::unsupported
  // The descriptor travels in the callbacks' void* context: never dereferenced, only cast back.
  s.context = reinterpret_cast<void*>(static_cast<intptr_t>(f.fd));  // NOLINT(performance-no-int-to-ptr)
  s.read = file_read;
  s.size = file_size;
  s.sync = file_sync;
  s.concurrent_reads = true;  // pread has no shared file position
  if (f.writable) {
    s.write = file_write;
    s.truncate = file_truncate;
  }
  return s;
}

status posix_file_rename(const char* from, const char* to) noexcept {
  if (from == nullptr || to == nullptr || from[0] == '\0' || to[0] == '\0')
    return make_error(errc::invalid_argument, TESSERA_MSG("posix_file: empty path"));
  if (::rename(from, to) != 0) {
    if (errno == ENOENT) return make_error(errc::io, TESSERA_MSG("posix_file: rename failed: no such file or directory"));
    if (is_full(errno)) return make_error(errc::no_space, TESSERA_MSG("posix_file: rename failed: no space left"));
    return make_error(errc::io, TESSERA_MSG("posix_file: rename failed"));
  }
  TESSERA_TRY(posix_directory_sync_parent(to));
  // A rename across directories changes both: the source's directory loses the entry.
  const char* fs = std::strrchr(from, '/');
  const char* ts = std::strrchr(to, '/');
  const size_t fn = fs == nullptr ? 0 : static_cast<size_t>(fs - from);
  const size_t tn = ts == nullptr ? 0 : static_cast<size_t>(ts - to);
  if (fn != tn || std::memcmp(from, to, fn) != 0) TESSERA_TRY(posix_directory_sync_parent(from));
  return ok_status();
}

status posix_file_remove(const char* path) noexcept {
  if (path == nullptr || path[0] == '\0') return make_error(errc::invalid_argument, TESSERA_MSG("posix_file: empty path"));
  if (::unlink(path) != 0) {
    if (errno == ENOENT) return make_error(errc::io, TESSERA_MSG("posix_file: unlink failed: no such file"));
    if (errno == EISDIR || errno == EPERM)
      return make_error(errc::io, TESSERA_MSG("posix_file: unlink failed: permission denied or a directory"));
    return make_error(errc::io, TESSERA_MSG("posix_file: unlink failed"));
  }
  return ok_status();
}

}  // namespace tessera
