// SPDX-License-Identifier: BSD-3-Clause
// The array a frame holds, from its b2nd metalayer and the frame's header fields, every value checked as a claim
// of the file (what layout_init refuses as an argument is a malformed file here) and against the memory budget.
// Shared by array_open (array_create.cpp) and the in-memory view (array_view.cpp).
#pragma once
#include <stdint.h>

#include "tessera/b2nd_meta.hpp"
#include "tessera/executor.hpp"
#include "tessera/frame.hpp"
#include "tessera/layout.hpp"

namespace tessera::detail {

struct b2nd_geometry {
  b2nd_meta meta;       // its dtype views the metalayer's bytes
  array_layout layout;
  layout_sizes sizes;
};

// raw: the metalayer's content; info: the frame's fields (nchunks as counted); fresh: a frame just created (no
// chunks yet). The decoder for exec's workers must fit max_alloc with the array's blocks, and a chunk too.
[[nodiscard]] detail::code_status b2nd_geometry_read(bytes_view raw, const frame_info& info, bool fresh, uint64_t max_alloc,
                                        const executor& exec, b2nd_geometry& out) noexcept;
/// The same into the caller's parts: the layout (large: a view's own) need not sit on the stack.
[[nodiscard]] detail::code_status b2nd_geometry_read_into(bytes_view raw, const frame_info& info, bool fresh, uint64_t max_alloc,
                                             const executor& exec, b2nd_meta& meta, array_layout& layout,
                                             layout_sizes& sizes) noexcept;

}  // namespace tessera::detail
