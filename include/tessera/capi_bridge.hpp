// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// The C API's types from C++, for the ports that give their C++ storages and directories a C face
/// (tessera/port/tessera_memory.h, tessera/port/tessera_posix.h): the core's C API keeps the one adapter each needs.
#pragma once

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/executor.hpp"
#include "tessera/storage.hpp"
#include "tessera/storage_directory.hpp"
#include "tessera/tessera.h"

namespace tessera {

/// e as a C status (its message "" when it has none).
inline tessera_status status_to_c(const error& e) noexcept {
  tessera_status s;
  s.code = static_cast<int32_t>(e.code);
  s.message = e.message != nullptr ? e.message : "";
  return s;
}

/// The C allocator's callbacks and context as a C++ allocator.
inline allocator allocator_from_c(const tessera_allocator& c) noexcept {
  allocator a;
  a.allocate = c.allocate;
  a.deallocate = c.deallocate;
  a.context = c.context;
  return a;
}

/// The C executor over e (its context is e, which must outlive it): run calls the C tasks through e. The C API's
/// calls that take an executor recognize one made here and use e itself, so that e's run_beside (a thread
/// pool's) is not lost behind the C struct, which has no field for it. e.run nullptr: a serial C executor.
[[nodiscard]] tessera_executor executor_to_c(const executor* e) noexcept;

/// The C storage over s (its context is s, which must outlive it); the optional callbacks s lacks stay missing.
[[nodiscard]] tessera_storage storage_to_c(const storage* s) noexcept;

/// What a C directory over a C++ one needs: the C++ directory, and the allocator of the open entries (each a
/// small box holding the C++ storage and the C storage over it, at a stable address until close).
struct directory_to_c_state {
  storage_directory dir{};  ///< the C++ directory the C one forwards to
  allocator alloc{};        ///< allocates the open entries' boxes
};
/// The C directory over s (its context is s, which must outlive it).
[[nodiscard]] tessera_storage_directory directory_to_c(directory_to_c_state* s) noexcept;

}  // namespace tessera
