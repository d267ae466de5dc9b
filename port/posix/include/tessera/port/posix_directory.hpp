// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A filesystem directory as a tessera::storage_directory (the home of a sparse frame): entries are files opened
/// relative to the directory's descriptor (openat/unlinkat/renameat), and every change of the directory is made
/// durable with an fsync of it before the call returns.
#pragma once

#include "tessera/error.hpp"
#include "tessera/storage_directory.hpp"

namespace tessera {

/// An open directory. A plain handle: copying it does not duplicate the descriptor; close it once.
struct posix_directory {
  int fd = -1;  ///< the directory's descriptor (O_DIRECTORY); -1 when closed
};

/// Opens the directory `path`. With `create`, missing directories along the path are made first (mkdir -p, each
/// new one made durable in its parent). Errors: io (missing without create, not a directory, permissions),
/// no_space, invalid_argument (empty path).
[[nodiscard]] result<posix_directory> posix_directory_open(const char* path, bool create) noexcept;

/// Closes the directory's descriptor (fd becomes -1); a closed directory is a no-op. Storages opened from it
/// stay valid until they are closed themselves.
[[nodiscard]] status posix_directory_close(posix_directory& d) noexcept;

/// The storage_directory over d. Its context is the descriptor itself (valid until posix_directory_close,
/// wherever d lives). Entry names: 1..kStorageNameMax bytes, no '/', not "." or ".." (else invalid_argument).
/// Storages it opens are posix_file storages; its close callback closes their descriptors. Its list callback
/// reads the directory (readdir on a descriptor of its own) and lists the regular files whose names it accepts.
[[nodiscard]] storage_directory posix_directory_interface(const posix_directory& d) noexcept;

}  // namespace tessera
