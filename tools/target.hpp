// SPDX-License-Identifier: BSD-3-Clause
// Where create and convert write: a temporary name in the target's directory (".NAME.tessera-XXXXXX", a file
// or, for a sparse frame, a directory), renamed over the target only when the array is complete. A failure, or
// SIGINT/SIGTERM/SIGHUP/SIGPIPE, removes the temporary, so no half-written array is ever left under the name.
#pragma once

#include <climits>

#include "tessera/port/posix_directory.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/storage.hpp"
#include "tessera/storage_directory.hpp"

namespace tessera::cli {

struct output_target {
  output_target() noexcept = default;
  output_target(const output_target&) = delete;
  output_target& operator=(const output_target&) = delete;
  ~output_target();  // removes the temporary unless committed

  const char* path = nullptr;  // the target's name
  bool sparse = false;
  char temp[PATH_MAX] = {};
  char resolved[PATH_MAX] = {};  // the file a symbolic link OUT names (then `path` points here)
  bool active = false;  // the temporary exists
  posix_file file{};
  posix_directory dir{};
  storage st{};
  storage_directory sd{};
};

/// Checks the target (a missing name or a regular file for a contiguous frame, a symbolic link followed; for a
/// sparse frame a missing name or a directory holding nothing but a sparse frame's files) and makes the
/// temporary. A device, FIFO or socket is refused, never replaced. Reports failures itself (returns the exit
/// status, 0 on success).
[[nodiscard]] int target_begin(const char* cmd, output_target& t, const char* path, bool sparse) noexcept;
/// Closes the storage and renames the temporary over the target (a sparse target directory is replaced).
[[nodiscard]] int target_commit(const char* cmd, output_target& t) noexcept;
/// Closes and removes the temporary.
void target_abort(output_target& t) noexcept;

}  // namespace tessera::cli
