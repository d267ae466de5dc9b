// SPDX-License-Identifier: BSD-3-Clause
// Slices to and from a caller's buffer of another shape (c-blosc2's buffershape in b2nd_get_slice_cbuffer and
// b2nd_set_slice_cbuffer): the slice is read into, or written from, a box of a larger C-order buffer.
#include <stdint.h>

#include "array_internal.hpp"

namespace tessera {

using detail::array_access;

namespace {

// Checks [start, stop) against the array and the box of the slice's extent at buffer_start (null: zeros) against
// buffer_shape and the buffer's size (overflow-safe); *box_start receives the box's start.
status buffer_box_check(const array& a, const int64_t* start, const int64_t* stop, size_t buffer_size,
                        const int64_t* buffer_shape, const int64_t* buffer_start, int64_t* box_start) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  const array_layout& l = array_access::layout(a);
  if (l.ndim > 0 && (start == nullptr || stop == nullptr || buffer_shape == nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("array: slice buffer: null start, stop or buffer_shape"));
  int64_t need = array_access::itemsize(a);
  for (int d = 0; d < l.ndim; ++d) {
    if (start[d] < 0 || stop[d] < start[d] || stop[d] > l.shape[d])
      return make_error(errc::out_of_range, TESSERA_MSG("array: slice buffer: not 0 <= start <= stop <= shape"));
    if (buffer_shape[d] < 0)
      return make_error(errc::invalid_argument, TESSERA_MSG("array: slice buffer: negative buffer_shape"));
    box_start[d] = buffer_start != nullptr ? buffer_start[d] : 0;
    if (box_start[d] < 0 || box_start[d] > buffer_shape[d] || stop[d] - start[d] > buffer_shape[d] - box_start[d])
      return make_error(errc::out_of_range, TESSERA_MSG("array: slice buffer: the slice's box at buffer_start does not fit buffer_shape"));
    if (buffer_shape[d] != 0 && need > INT64_MAX / buffer_shape[d])
      return make_error(errc::overflow, TESSERA_MSG("array: slice buffer: buffer_shape's byte size overflows"));
    need *= buffer_shape[d];
  }
  if (static_cast<uint64_t>(need) > buffer_size)
    return make_error(errc::buffer_too_small, TESSERA_MSG("array: slice buffer: buffer smaller than buffer_shape says"));
  return ok_status();
}

}  // namespace

status array_slice_read_into(array& a, const int64_t* start, const int64_t* stop, bytes_mut buffer,
                             const int64_t* buffer_shape, const int64_t* buffer_start) noexcept {
  int64_t box_start[kMaxDims] = {};
  TESSERA_TRY(buffer_box_check(a, start, stop, buffer.size(), buffer_shape, buffer_start, box_start));
  return detail::array_read_into(a, start, stop, buffer, buffer_shape, box_start);
}

status array_slice_write_from(array& a, const int64_t* start, const int64_t* stop, bytes_view buffer,
                              const int64_t* buffer_shape, const int64_t* buffer_start) noexcept {
  TESSERA_TRY(detail::array_check_writable(a));
  int64_t box_start[kMaxDims] = {};
  TESSERA_TRY(buffer_box_check(a, start, stop, buffer.size(), buffer_shape, buffer_start, box_start));
  TESSERA_TRY(detail::array_slice_write_nocommit(a, start, stop, buffer, buffer_shape, box_start));
  return detail::array_finish(a);
}

}  // namespace tessera
