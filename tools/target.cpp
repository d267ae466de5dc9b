// SPDX-License-Identifier: BSD-3-Clause
#include "target.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <initializer_list>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.hpp"

namespace tessera::cli {

namespace {

// The temporary file a signal must remove (a file only: removing a directory tree is not async-signal-safe).
std::atomic<const char*> g_signal_temp{nullptr};

extern "C" void on_signal(int sig) {
  const char* t = g_signal_temp.load();
  if (t != nullptr) (void)::unlink(t);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void signals_arm(const char* temp) noexcept {
  g_signal_temp.store(temp);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) std::signal(sig, on_signal);
}

void signals_disarm() noexcept { g_signal_temp.store(nullptr); }

// A sparse frame's own files: chunks.b2frame and NNNNNNNN.chunk.
bool sparse_entry(const char* name) noexcept {
  if (std::strcmp(name, "chunks.b2frame") == 0) return true;
  const size_t n = std::strlen(name);
  if (n != 14 || std::strcmp(name + 8, ".chunk") != 0) return false;
  for (int i = 0; i < 8; ++i)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'A' && name[i] <= 'F') || (name[i] >= 'a' && name[i] <= 'f')))
      return false;
  return true;
}

// Removes a directory holding only a sparse frame's files (all=false: refuses anything else, removes nothing)
// or, with all, whatever files it holds. Returns false (errno set) on failure.
bool sparse_dir_remove(const char* path, bool check_only) noexcept {
  DIR* d = ::opendir(path);
  if (d == nullptr) return false;
  bool ok = true;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (check_only) {
      if (!sparse_entry(e->d_name)) {
        ok = false;
        errno = ENOTEMPTY;
        break;
      }
      continue;
    }
    if (::unlinkat(::dirfd(d), e->d_name, 0) != 0) ok = false;
  }
  ::closedir(d);
  if (ok && !check_only && ::rmdir(path) != 0) ok = false;
  return ok;
}

void storage_close(output_target& t) noexcept {
  if (t.file.fd >= 0) (void)posix_file_close(t.file);
  if (t.dir.fd >= 0) (void)posix_directory_close(t.dir);
}

}  // namespace

output_target::~output_target() { target_abort(*this); }

int target_begin(const char* cmd, output_target& t, const char* path, bool sparse) noexcept {
  t.path = path;
  t.sparse = sparse;
  struct stat sb;
  // A symbolic link is followed: the temporary goes beside the file it names, which the rename replaces, so
  // the link stays and names the new array. A link to nothing is refused (where would the array go?).
  if (::lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
    if (::realpath(path, t.resolved) == nullptr)
      return fail(kExitFailure, cmd, "%s: a symbolic link to nothing (%s): not followed", path, std::strerror(errno));
    path = t.path = t.resolved;
  }
  const bool exists = ::stat(path, &sb) == 0;
  // A device, FIFO or socket is never replaced by a file: a frame needs a regular file (its header is written
  // last, at its start).
  if (exists && !S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode))
    return fail(kExitFailure, cmd, "%s: not a regular file (%s): an array is written to a regular file", path,
                S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device" : S_ISFIFO(sb.st_mode) ? "a FIFO"
                : S_ISSOCK(sb.st_mode) ? "a socket" : "a special file");
  if (exists && !sparse && S_ISDIR(sb.st_mode))
    return fail(kExitFailure, cmd, "%s: is a directory (a cframe is a file; use --sparse for a directory)", path);
  if (exists && sparse && !S_ISDIR(sb.st_mode))
    return fail(kExitFailure, cmd, "%s: exists and is not a directory (a sparse frame is a directory)", path);
  if (exists && sparse && !sparse_dir_remove(path, true))
    return fail(kExitFailure, cmd, "%s: the directory holds other files than a sparse frame's: not replaced", path);
  // The temporary: same directory (so the rename is atomic), a hidden name.
  const char* slash = std::strrchr(path, '/');
  const int dirlen = slash ? static_cast<int>(slash - path + 1) : 0;
  const char* base = slash ? slash + 1 : path;
  if (base[0] == '\0') return fail(kExitUsage, cmd, "%s: names a directory, not an array", path);
  const int n = std::snprintf(t.temp, sizeof t.temp, "%.*s.%s.tessera-XXXXXX", dirlen, path, base);
  if (n < 0 || static_cast<size_t>(n) >= sizeof t.temp) return fail(kExitFailure, cmd, "%s: the name is too long", path);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (sparse) {
    if (::mkdtemp(t.temp) == nullptr) return fail(kExitFailure, cmd, "%s: %s", path, std::strerror(errno));
    t.active = true;
    (void)::chmod(t.temp, 0777 & ~mask);
    auto d = posix_directory_open(t.temp, false);
    if (!d.ok()) return fail_error(cmd, path, d.err());
    t.dir = *d;
    t.sd = posix_directory_interface(t.dir);
    return 0;
  }
  const int fd = ::mkstemp(t.temp);
  if (fd < 0) return fail(kExitFailure, cmd, "%s: %s", path, std::strerror(errno));
  t.active = true;
  signals_arm(t.temp);
  (void)::fchmod(fd, 0666 & ~mask);  // mkstemp makes 0600: the array gets the usual permissions
  ::close(fd);
  auto f = posix_file_open(t.temp, posix_open::replace);
  if (!f.ok()) return fail_error(cmd, path, f.err());
  t.file = *f;
  t.st = posix_file_storage(t.file);
  return 0;
}

int target_commit(const char* cmd, output_target& t) noexcept {
  storage_close(t);
  if (!t.sparse) {
    if (auto e = posix_file_rename(t.temp, t.path); !e.ok()) return fail_error(cmd, t.path, e);
    t.active = false;
    signals_disarm();
    return 0;
  }
  // A directory cannot be renamed over a non-empty one: the old one moves aside first, then goes.
  struct stat sb;
  char old[PATH_MAX + 8];
  bool moved = false;
  if (::stat(t.path, &sb) == 0) {
    std::memcpy(old, t.temp, sizeof t.temp);
    std::memcpy(old + std::strlen(t.temp), ".old", 5);
    if (::rename(t.path, old) != 0) return fail(kExitFailure, cmd, "%s: %s", t.path, std::strerror(errno));
    moved = true;
  }
  if (::rename(t.temp, t.path) != 0) {
    const int err = errno;
    if (moved) (void)::rename(old, t.path);
    return fail(kExitFailure, cmd, "%s: %s", t.path, std::strerror(err));
  }
  t.active = false;
  if (moved && !sparse_dir_remove(old, false))
    return fail(kExitFailure, cmd, "%s: the replaced sparse frame could not be removed: %s", old, std::strerror(errno));
  (void)posix_directory_sync_parent(t.path);
  return 0;
}

void target_abort(output_target& t) noexcept {
  storage_close(t);
  if (!t.active) return;
  if (t.sparse) (void)sparse_dir_remove(t.temp, false);
  else (void)::unlink(t.temp);
  t.active = false;
  signals_disarm();
}

}  // namespace tessera::cli
