// SPDX-License-Identifier: BSD-3-Clause
// N-d strided copy between C-order buffers. After validation the copy is described in bytes as a list of
// (extent, source stride, destination stride) loops, innermost first, with the item itself as an innermost loop
// of stride 1; loops of extent 1 are dropped and a loop is merged into the one inside it when it continues it in
// both buffers. The innermost loop is then always one contiguous run: one memcpy per run, as long as possible.
#include "tessera/nd_copy.hpp"

#include <string.h>

#include "mul_checked.hpp"
#include "nd_copy_rows.hpp"
#include "tessera/config.hpp"
#include "tessera/shuffle.hpp"

namespace tessera {

namespace {

struct loop {
  size_t extent;
  size_t src_stride;
  size_t dst_stride;
};

// prod(shape) * itemsize, checked against int64 and the span's size.
[[nodiscard]] detail::code_status buffer_check(int ndim, int64_t itemsize, const int64_t* shape, size_t size,
                                  size_t& nbytes) noexcept {
  int64_t n = itemsize;
  for (int i = 0; i < ndim; ++i)
    if (!detail::mul_checked(n, shape[i])) return make_error(errc::overflow, TESSERA_MSG("nd_copy: buffer size overflows"));
  if (static_cast<uint64_t>(n) > static_cast<uint64_t>(size))
    return make_error(errc::buffer_too_small, TESSERA_MSG("nd_copy: buffer smaller than its shape"));
  nbytes = static_cast<size_t>(n);
  return ok_status();
}

// n runs of `run` bytes (N when it is not 0: a constant the compiler turns into one move), stepping by the strides.
template <size_t N>
void runs_copy(uint8_t* d, const uint8_t* s, size_t dof, size_t so, size_t n, size_t ds, size_t ss, size_t run) noexcept {
  for (size_t k = 0; k < n; ++k, so += ss, dof += ds) memcpy(d + dof, s + so, N != 0 ? N : run);
}

}  // namespace

status nd_copy_region(int ndim, int64_t itemsize, bytes_view src, const int64_t* src_shape, const int64_t* src_start,
                      bytes_mut dst, const int64_t* dst_shape, const int64_t* dst_start,
                      const int64_t* copy_shape) noexcept {
  if (ndim < 0 || ndim > kMaxDims) return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: ndim outside 0..kMaxDims"));
  if (itemsize < 1) return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: itemsize < 1"));
  if (ndim > 0 && (src_shape == nullptr || src_start == nullptr || dst_shape == nullptr || dst_start == nullptr ||
                   copy_shape == nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: null shape or start"));
  bool empty = false;
  for (int i = 0; i < ndim; ++i) {
    if (src_shape[i] < 0 || dst_shape[i] < 0 || copy_shape[i] < 0)
      return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: negative shape"));
    if (src_start[i] < 0 || dst_start[i] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: negative start"));
    if (src_start[i] > src_shape[i] || copy_shape[i] > src_shape[i] - src_start[i])
      return make_error(errc::out_of_range, TESSERA_MSG("nd_copy: region outside the source shape"));
    if (dst_start[i] > dst_shape[i] || copy_shape[i] > dst_shape[i] - dst_start[i])
      return make_error(errc::out_of_range, TESSERA_MSG("nd_copy: region outside the destination shape"));
    empty |= copy_shape[i] == 0;
  }
  size_t src_nbytes = 0;
  size_t dst_nbytes = 0;
  TESSERA_TRY(buffer_check(ndim, itemsize, src_shape, src.size(), src_nbytes));
  TESSERA_TRY(buffer_check(ndim, itemsize, dst_shape, dst.size(), dst_nbytes));
  if (empty) return ok_status();
  const uintptr_t s0 = reinterpret_cast<uintptr_t>(src.data());
  const uintptr_t d0 = reinterpret_cast<uintptr_t>(dst.data());
  if (s0 < d0 + dst_nbytes && d0 < s0 + src_nbytes)
    return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: source and destination overlap"));

  // Every offset below is inside a buffer whose byte size fits size_t, so size_t arithmetic cannot wrap.
  loop loops[kMaxDims + 1];
  int nloops = 1;
  loops[0] = loop{static_cast<size_t>(itemsize), 1, 1};
  size_t src_stride = static_cast<size_t>(itemsize);
  size_t dst_stride = static_cast<size_t>(itemsize);
  size_t src_offset = 0;
  size_t dst_offset = 0;
  for (int i = ndim - 1; i >= 0; --i) {
    const size_t extent = static_cast<size_t>(copy_shape[i]);
    src_offset += static_cast<size_t>(src_start[i]) * src_stride;
    dst_offset += static_cast<size_t>(dst_start[i]) * dst_stride;
    if (extent != 1) {
      loop& inner = loops[nloops - 1];
      if (src_stride == inner.extent * inner.src_stride && dst_stride == inner.extent * inner.dst_stride)
        inner.extent *= extent;
      else
        loops[nloops++] = loop{extent, src_stride, dst_stride};
    }
    src_stride *= static_cast<size_t>(src_shape[i]);
    dst_stride *= static_cast<size_t>(dst_shape[i]);
  }

  // Offsets rather than pointers: stepping a pointer past its buffer's end, even without using it, is UB.
  const uint8_t* const s = src.data();
  uint8_t* const d = dst.data();
  const size_t run = loops[0].extent;
  if (nloops == 1) {
    memcpy(d + dst_offset, s + src_offset, run);
    return ok_status();
  }
  // The loop just outside the run is the hot one; the rest step like an odometer. Runs of one 4- or 8-byte item
  // (a plane across the last axis) are fixed-size moves, not a library call per item, and so are runs of 33 - 128
  // bytes (a block's rows: 100 bytes for 25 floats) where the CPU runs AVX2 (the shuffle's level: 32-byte moves;
  // 16-byte moves are slower than the library's call); a size-optimized build (-Os, e.g. TESSERA_OPTIMIZE_SIZE on
  // bare metal) keeps only the generic copy.
#if defined(TESSERA_HAVE_AVX2) && !defined(__OPTIMIZE_SIZE__)
  const bool avx2 = shuffle_kernels_active().level == simd_level::avx2;
#endif
  const size_t n1 = loops[1].extent;
  const size_t ss1 = loops[1].src_stride;
  const size_t ds1 = loops[1].dst_stride;
  size_t counters[kMaxDims + 1] = {};
  for (;;) {
#ifndef __OPTIMIZE_SIZE__
    if (run == 4) runs_copy<4>(d, s, dst_offset, src_offset, n1, ds1, ss1, run);
    else if (run == 8) runs_copy<8>(d, s, dst_offset, src_offset, n1, ds1, ss1, run);
#if defined(TESSERA_HAVE_AVX2)
    else if (avx2 && run > 32 && run <= 128) detail::nd_copy_runs_avx2(d, s, dst_offset, src_offset, n1, ds1, ss1, run);
#endif
    else
#endif
      runs_copy<0>(d, s, dst_offset, src_offset, n1, ds1, ss1, run);
    int j = 2;
    for (; j < nloops; ++j) {
      src_offset += loops[j].src_stride;
      dst_offset += loops[j].dst_stride;
      if (++counters[j] < loops[j].extent) break;
      counters[j] = 0;
      src_offset -= loops[j].src_stride * loops[j].extent;
      dst_offset -= loops[j].dst_stride * loops[j].extent;
    }
    if (j == nloops) return ok_status();
  }
}

status nd_copy(int ndim, int64_t itemsize, bytes_view src, const int64_t* src_shape, const int64_t* src_start,
               const int64_t* src_stop, bytes_mut dst, const int64_t* dst_shape, const int64_t* dst_start) noexcept {
  if (ndim < 0 || ndim > kMaxDims) return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: ndim outside 0..kMaxDims"));
  if (ndim > 0 && (src_start == nullptr || src_stop == nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: null start or stop"));
  int64_t copy_shape[kMaxDims] = {};
  for (int i = 0; i < ndim; ++i) {
    if (src_start[i] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("nd_copy: negative start"));
    if (src_stop[i] < src_start[i]) return make_error(errc::out_of_range, TESSERA_MSG("nd_copy: stop is before start"));
    copy_shape[i] = src_stop[i] - src_start[i];
  }
  return nd_copy_region(ndim, itemsize, src, src_shape, src_start, dst, dst_shape, dst_start, copy_shape);
}

}  // namespace tessera
