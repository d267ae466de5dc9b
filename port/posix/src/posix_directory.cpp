// SPDX-License-Identifier: BSD-3-Clause
// A storage_directory over a filesystem directory: openat/unlinkat/renameat relative to the directory's
// descriptor (no path buffers, no races with the directory being renamed), fsync of the directory after each
// change of its entries.
#include "tessera/port/posix_directory.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_internal.hpp"
#include "tessera/port/posix_file.hpp"

namespace tessera {
namespace {

int fd_of(void* context) noexcept { return static_cast<int>(reinterpret_cast<intptr_t>(context)); }

status name_check(const char* name) noexcept {
  if (name == nullptr || name[0] == '\0') return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: empty entry name"));
  size_t n = 0;
  for (; name[n] != '\0'; ++n) {
    if (n >= kStorageNameMax) return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: entry name too long"));
    if (name[n] == '/') return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: entry name with a '/'"));
  }
  if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: entry name '.' or '..'"));
  return ok_status();
}

status dir_open(void* context, const char* name, storage_open mode, storage* out) noexcept {
  if (out == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: no storage to open into"));
  *out = storage{};
  TESSERA_TRY(name_check(name));
  const int dirfd = fd_of(context);
  if (dirfd < 0) return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: the directory is closed"));
  int fd = -1;
  bool created = false;
  switch (mode) {
    case storage_open::read: fd = detail::posix_open_retry(dirfd, name, O_RDONLY | O_CLOEXEC, 0); break;
    case storage_open::read_write: fd = detail::posix_open_retry(dirfd, name, O_RDWR | O_CLOEXEC, 0); break;
    case storage_open::replace: fd = detail::posix_open_create(dirfd, name, true, 0666, &created); break;
    default: return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: unknown open mode"));
  }
  TESSERA_TRY(detail::posix_open_finish(fd, created, dirfd, name));
  posix_file f;
  f.fd = fd;
  f.writable = mode != storage_open::read;
  *out = posix_file_storage(f);
  return ok_status();
}

status dir_close(void*, storage* s) noexcept {
  if (s == nullptr || s->read == nullptr) return ok_status();  // nothing open
  posix_file f;
  f.fd = static_cast<int>(reinterpret_cast<intptr_t>(s->context));
  *s = storage{};
  return posix_file_close(f);
}

status dir_remove(void* context, const char* name) noexcept {
  TESSERA_TRY(name_check(name));
  const int dirfd = fd_of(context);
  if (dirfd < 0) return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: the directory is closed"));
  if (::unlinkat(dirfd, name, 0) != 0) {
    if (errno == ENOENT) return make_error(errc::io, TESSERA_MSG("posix_directory: unlink failed: no such entry"));
    if (errno == EISDIR || errno == EPERM) return make_error(errc::io, TESSERA_MSG("posix_directory: unlink failed: a directory or not permitted"));
    if (errno == EACCES) return make_error(errc::io, TESSERA_MSG("posix_directory: unlink failed: permission denied"));
    return make_error(errc::io, TESSERA_MSG("posix_directory: unlink failed"));
  }
  return detail::posix_fsync_directory_fd(dirfd);
}

status dir_rename(void* context, const char* from, const char* to) noexcept {
  TESSERA_TRY(name_check(from));
  TESSERA_TRY(name_check(to));
  const int dirfd = fd_of(context);
  if (dirfd < 0) return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: the directory is closed"));
  if (::renameat(dirfd, from, dirfd, to) != 0) {
    if (errno == ENOENT) return make_error(errc::io, TESSERA_MSG("posix_directory: rename failed: no such entry"));
    if (detail::posix_errno_is_full(errno)) return make_error(errc::no_space, TESSERA_MSG("posix_directory: rename failed: no space left"));
    if (errno == EACCES || errno == EPERM) return make_error(errc::io, TESSERA_MSG("posix_directory: rename failed: permission denied"));
    return make_error(errc::io, TESSERA_MSG("posix_directory: rename failed"));
  }
  return detail::posix_fsync_directory_fd(dirfd);
}

// Whether entry `name` is a regular file (d_type when the filesystem gives it, else fstatat without following
// links): directories, links, devices are not entries of ours.
bool regular_file(int dirfd, const struct dirent* e) noexcept {
#if defined(DT_REG) && defined(DT_UNKNOWN)
  if (e->d_type != DT_UNKNOWN) return e->d_type == DT_REG;
#endif
  struct stat st;
  return ::fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

// readdir over a descriptor of its own (the directory's stays untouched for the *at calls): libc's DIR buffer
// is the only memory, whatever the number of entries.
status dir_list(void* context, storage_directory_visit visit, void* arg) noexcept {
  const int dirfd = fd_of(context);
  if (dirfd < 0) return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: the directory is closed"));
  const int fd = detail::posix_open_retry(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) return detail::posix_open_error(errno);
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    (void)::close(fd);
    return make_error(errc::io, TESSERA_MSG("posix_directory: fdopendir failed"));
  }
  status result = ok_status();
  for (;;) {
    errno = 0;
    const struct dirent* e = ::readdir(d);
    if (e == nullptr) {
      if (errno != 0) result = make_error(errc::io, TESSERA_MSG("posix_directory: readdir failed"));
      break;
    }
    const size_t n = ::strnlen(e->d_name, kStorageNameMax + 1);
    if (n == 0 || n > kStorageNameMax || !name_check(e->d_name).ok() || !regular_file(dirfd, e)) continue;
    result = visit(arg, e->d_name);
    if (!result.ok()) break;
  }
  (void)::closedir(d);  // closes fd
  return result;
}

// mkdir of one path prefix; a new directory is made durable in its parent.
status mkdir_one(char* path, size_t len) noexcept {
  const char saved = path[len];
  path[len] = '\0';
  status s = ok_status();
  if (::mkdir(path, 0777) == 0) {
    s = posix_directory_sync_parent(path);
  } else if (errno != EEXIST) {
    if (errno == EACCES || errno == EPERM) s = make_error(errc::io, TESSERA_MSG("posix_directory: mkdir failed: permission denied"));
    else if (errno == ENOTDIR) s = make_error(errc::io, TESSERA_MSG("posix_directory: mkdir failed: a path component is not a directory"));
    else if (detail::posix_errno_is_full(errno)) s = make_error(errc::no_space, TESSERA_MSG("posix_directory: mkdir failed: no space left"));
    else s = make_error(errc::io, TESSERA_MSG("posix_directory: mkdir failed"));
  }
  path[len] = saved;
  return s;
}

}  // namespace

result<posix_directory> posix_directory_open(const char* path, bool create) noexcept {
  if (path == nullptr || path[0] == '\0') return make_error(errc::invalid_argument, TESSERA_MSG("posix_directory: empty path"));
  if (create) {
    char buf[4096];
    const size_t n = std::strlen(path);
    if (n >= sizeof buf) return make_error(errc::io, TESSERA_MSG("posix_directory: path too long"));
    std::memcpy(buf, path, n + 1);
    // Every prefix ending before a '/', then the whole path ("a//b/" and "/abs" work too).
    for (size_t i = 1; i < n; ++i)
      if (buf[i] == '/' && buf[i - 1] != '/') TESSERA_TRY(mkdir_one(buf, i));
    TESSERA_TRY(mkdir_one(buf, n));
  }
  const int fd = detail::posix_open_retry(-1, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == ENOTDIR) return make_error(errc::io, TESSERA_MSG("posix_directory: open failed: not a directory"));
    return detail::posix_open_error(errno);
  }
  posix_directory d;
  d.fd = fd;
  return d;
}

status posix_directory_close(posix_directory& d) noexcept {
  if (d.fd < 0) return ok_status();
  const int fd = d.fd;
  d.fd = -1;
  if (::close(fd) != 0 && errno != EINTR) return make_error(errc::io, TESSERA_MSG("posix_directory: close failed"));
  return ok_status();
}

storage_directory posix_directory_interface(const posix_directory& d) noexcept {
  // The descriptor travels in the callbacks' void* context: never dereferenced, only cast back.
  void* const fd = reinterpret_cast<void*>(static_cast<intptr_t>(d.fd));  // NOLINT(performance-no-int-to-ptr)
  return storage_directory{dir_open, dir_close, dir_remove, dir_rename, fd, dir_list};
}

}  // namespace tessera
