// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// N-dimensional strided copy between two C-order buffers (the reference's b2nd_copy_buffer2): the workhorse of
/// every slice read and write, so it copies whole contiguous runs with one memcpy each, after merging the
/// dimensions that are contiguous in both buffers.
#pragma once

#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera {

/// Copies the region of extent `copy_shape` at `src_start` of a C-order buffer of shape `src_shape` into a C-order
/// buffer of shape `dst_shape` at `dst_start`. Items are `itemsize` bytes. `src` and `dst` must hold at least
/// prod(shape) * itemsize bytes each and must not overlap. ndim 0 copies one item (the shape pointers may then be
/// null). A region with an extent of 0 copies nothing (the arguments are still validated).
/// Errors: invalid_argument (ndim outside 0..kMaxDims, itemsize < 1, negative shapes or starts, overlapping
/// buffers), out_of_range (the region does not fit either buffer's shape), overflow (a buffer's byte size does
/// not fit int64), buffer_too_small (a span is smaller than its shape says).
[[nodiscard]] status nd_copy_region(int ndim, int64_t itemsize, bytes_view src, const int64_t* src_shape,
                                    const int64_t* src_start, bytes_mut dst, const int64_t* dst_shape,
                                    const int64_t* dst_start, const int64_t* copy_shape) noexcept;

/// The same with the region given as [src_start, src_stop), as the reference takes it.
/// Errors: those of nd_copy_region, and out_of_range when src_stop < src_start.
[[nodiscard]] status nd_copy(int ndim, int64_t itemsize, bytes_view src, const int64_t* src_shape,
                             const int64_t* src_start, const int64_t* src_stop, bytes_mut dst,
                             const int64_t* dst_shape, const int64_t* dst_start) noexcept;

}  // namespace tessera
