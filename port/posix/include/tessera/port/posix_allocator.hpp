// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// The malloc-family allocator: malloc for ordinary alignments, posix_memalign for larger ones.
#pragma once

#include "tessera/allocator.hpp"

namespace tessera {

/// Honors any power-of-two alignment (returns nullptr for a zero size, an alignment that is not a power of two,
/// or when the system is out of memory). Stateless: the context is nullptr.
[[nodiscard]] allocator posix_allocator() noexcept;

}  // namespace tessera
