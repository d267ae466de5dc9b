// SPDX-License-Identifier: BSD-3-Clause
// tessera compact FILE: rewrites a contiguous frame tight, in place (array_compact: the chunks moved down, the
// file cut at the frame's end), with the commit's old-or-new guarantee at every step; an sframe directory only
// has its pending state committed (each chunk is its own file). Prints the size before and after.
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "cli.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kCmd = "compact";

}  // namespace

int cmd_compact(int argc, char** argv) noexcept {
  const char* path = nullptr;
  int npaths = 0;
  for (int i = 0; i < argc; ++i) {
    if (argv[i][0] == '-' && argv[i][1] != '\0') return fail(kExitUsage, kCmd, "unknown option '%s'", argv[i]);
    path = argv[i];
    ++npaths;
  }
  if (npaths != 1) return fail(kExitUsage, kCmd, "expects one FILE, got %d arguments", npaths);
  struct stat sb;
  if (::stat(path, &sb) != 0) return fail(kExitFailure, kCmd, "%s: %s", path, std::strerror(errno));
  if (S_ISDIR(sb.st_mode)) {
    std::printf("%s: a sparse frame: each chunk is its own file, nothing to compact\n", path);
    return 0;
  }
  if (!S_ISREG(sb.st_mode)) return fail(kExitFailure, kCmd, "%s: not a regular file", path);
  auto file = posix_file_open(path, posix_open::read_write);
  if (!file.ok()) return fail_error(kCmd, path, file.err());
  posix_file pf = *file;
  struct closer {
    posix_file& f;
    ~closer() { (void)posix_file_close(f); }
  } close_file{pf};
  const storage st = posix_file_storage(pf);
  array_open_options options;
  options.frame.writable = true;
  options.frame.durable = true;
  array a;
  if (auto e = array_open(a, st, tool_allocator(), options); !e.ok()) return fail_error(kCmd, path, e);
  auto before = frame_space_get(array_frame(a));
  if (!before.ok()) {
    (void)array_close(a);
    return fail_error(kCmd, path, before.err());
  }
  if (auto e = array_compact(a); !e.ok()) {
    (void)array_close(a);
    return fail_error(kCmd, path, e);
  }
  auto after = frame_space_get(array_frame(a));
  if (auto e = array_close(a); !e.ok()) return fail_error(kCmd, path, e);
  if (!after.ok()) return fail_error(kCmd, path, after.err());
  std::printf("%s: %" PRIu64 " -> %" PRIu64 " bytes (%" PRIu64 " free bytes reclaimed)\n", path, before->frame_len,
              after->frame_len, before->free_bytes - after->free_bytes);
  return 0;
}

}  // namespace tessera::cli
