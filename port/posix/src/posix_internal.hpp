// Helpers shared by the POSIX port's files and directories.
#pragma once

#include <sys/types.h>

#include "tessera/error.hpp"

namespace tessera::detail {

// open/openat retried on EINTR (dirfd < 0: plain open).
int posix_open_retry(int dirfd, const char* path, int flags, mode_t mode) noexcept;
// The error value of a failed open (errno), naming `what` ("posix_file" or "posix_directory").
[[nodiscard]] status posix_open_error(int err) noexcept;
// fsync of an open directory; file systems that cannot fsync directories (EINVAL) count as success.
[[nodiscard]] status posix_fsync_directory_fd(int fd) noexcept;
// Whether errno says the disk, quota or file size limit is full.
[[nodiscard]] bool posix_errno_is_full(int err) noexcept;

}  // namespace tessera::detail
