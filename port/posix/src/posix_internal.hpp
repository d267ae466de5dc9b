// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by the POSIX port's files and directories.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include "tessera/error.hpp"

namespace tessera::detail {

// open/openat retried on EINTR (dirfd < 0: plain open).
int posix_open_retry(int dirfd, const char* path, int flags, mode_t mode) noexcept;
// The error value of a failed open (errno) of a file, an entry, a directory or a mapping.
[[nodiscard]] status posix_open_error(int err) noexcept;
// Opens path (relative to dirfd; dirfd < 0: plain open) read-write, creating it when missing and emptying it when
// `truncate`. Exclusive first, to know whether the name is new (*created: its directory needs an fsync). A
// negative descriptor on failure, errno saying why.
int posix_open_create(int dirfd, const char* path, bool truncate, mode_t mode, bool* created) noexcept;
// fstat of a descriptor just opened, refusing a directory (whose reads would fail later with EISDIR); closes
// the descriptor on failure.
[[nodiscard]] status posix_stat_opened(int fd, struct stat* st) noexcept;
// The end of every open of a file or entry: the error of a failed open (fd < 0, errno), posix_stat_opened, and
// when the name was created, the fsync of its directory (dirfd; dirfd < 0: path's parent), closing fd on failure.
[[nodiscard]] status posix_open_finish(int fd, bool created, int dirfd, const char* path) noexcept;
// fsync of an open directory; file systems that cannot fsync directories (EINVAL) count as success.
[[nodiscard]] status posix_fsync_directory_fd(int fd) noexcept;
// Whether errno says the disk, quota or file size limit is full.
[[nodiscard]] bool posix_errno_is_full(int err) noexcept;

}  // namespace tessera::detail
