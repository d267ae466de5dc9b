// SPDX-License-Identifier: BSD-3-Clause
// New arrays from arrays: slices, copies with other chunk and block shapes, concatenations, squeeze and
// expand_dims, and saving a frame's contents elsewhere.
#include <stdint.h>
#include <string.h>
#include "tessera/cxx.hpp"

#include "array_internal.hpp"

namespace tessera {

using detail::array_access;
using detail::name_of;

namespace {

array_params dst_params(array& src, const array_params* params, int ndim, const int64_t* shape) noexcept {
  array_params p = params != nullptr ? *params : array_params_get(src);
  p.ndim = ndim;
  for (int d = 0; d < kMaxDims; ++d) p.shape[d] = d < ndim ? shape[d] : 0;
  p.dtype = array_dtype(src);
  p.itemsize = array_itemsize(src);
  return p;
}

// [start, stop) of the new array is [start + offset, stop + offset) of src.
struct offset_source {
  array* src;
  int64_t offset[kMaxDims];
};
status offset_read(void* ctx, const int64_t* start, const int64_t* stop, bytes_mut out, const int64_t* out_shape,
                   const int64_t* out_start) noexcept {
  auto* s = static_cast<offset_source*>(ctx);
  const int ndim = array_access::layout(*s->src).ndim;
  int64_t a[kMaxDims] = {};
  int64_t b[kMaxDims] = {};
  for (int d = 0; d < ndim; ++d) {
    a[d] = start[d] + s->offset[d];
    b[d] = stop[d] + s->offset[d];
  }
  return detail::array_read_into(*s->src, a, b, out, out_shape, out_start);
}

struct concat_source {
  array* first;
  array* second;
  int axis;
  int64_t n1;  // extent of first along axis
};
status concat_read(void* ctx, const int64_t* start, const int64_t* stop, bytes_mut out, const int64_t* out_shape,
                   const int64_t* out_start) noexcept {
  auto* s = static_cast<concat_source*>(ctx);
  const int ndim = array_access::layout(*s->first).ndim;
  int64_t a[kMaxDims] = {};
  int64_t b[kMaxDims] = {};
  int64_t o[kMaxDims] = {};
  for (int d = 0; d < ndim; ++d) {
    a[d] = start[d];
    b[d] = stop[d];
    o[d] = out_start[d];
  }
  const int ax = s->axis;
  if (start[ax] < s->n1) {
    b[ax] = stop[ax] < s->n1 ? stop[ax] : s->n1;
    TESSERA_TRY(detail::array_read_into(*s->first, a, b, out, out_shape, o));
  }
  if (stop[ax] > s->n1) {
    const int64_t from = start[ax] > s->n1 ? start[ax] : s->n1;
    a[ax] = from - s->n1;
    b[ax] = stop[ax] - s->n1;
    o[ax] = out_start[ax] + (from - start[ax]);
    TESSERA_TRY(detail::array_read_into(*s->second, a, b, out, out_shape, o));
  }
  return ok_status();
}

// Squeeze: the new array's dimensions are src's without the removed ones (extent 1).
struct squeeze_source {
  array* src;
  bool removed[kMaxDims];
};
status squeeze_read(void* ctx, const int64_t* start, const int64_t* stop, bytes_mut out, const int64_t* out_shape,
                    const int64_t* out_start) noexcept {
  auto* s = static_cast<squeeze_source*>(ctx);
  const int ndim = array_access::layout(*s->src).ndim;
  int64_t a[kMaxDims] = {};
  int64_t b[kMaxDims] = {};
  int64_t os[kMaxDims] = {};
  int64_t o[kMaxDims] = {};
  int k = 0;
  for (int d = 0; d < ndim; ++d) {
    if (s->removed[d]) {
      a[d] = 0;
      b[d] = 1;
      os[d] = 1;
      o[d] = 0;
    } else {
      a[d] = start[k];
      b[d] = stop[k];
      os[d] = out_shape[k];
      o[d] = out_start[k];
      ++k;
    }
  }
  return detail::array_read_into(*s->src, a, b, out, os, o);
}

// A new frame with src's parameters, metalayers (b2nd replaced by `meta`) and vlmetalayers, and src's chunks
// as they are stored.
status raw_copy(array& dst, const array_target& target, const allocator& alloc, array& src,
                const b2nd_meta& meta) noexcept {
  TESSERA_TRY(detail::array_check_open(src));
  frame& sf = array_access::frm(src);
  const frame_info* info = frame_info_get(sf);
  uint8_t meta_bytes[32 + 19 * kMaxDims + kArrayMaxDtypeLen];
  if (meta.dtype.size() > kArrayMaxDtypeLen) return make_error(errc::unsupported, TESSERA_MSG("array: dtype string too long"));
  auto meta_len = b2nd_meta_encode(meta, bytes_mut(meta_bytes, sizeof meta_bytes));
  if (!meta_len.ok()) return meta_len.err();
  frame_metalayer_init metas[kFrameMaxMetalayers];
  uint32_t nmetas = 0;
  metas[nmetas++] = frame_metalayer_init{name_of(kB2ndMetaName), bytes_view(meta_bytes, *meta_len)};
  for (uint32_t i = 0; i < info->nmetalayers && nmetas < kFrameMaxMetalayers; ++i) {
    auto name = frame_meta_name(sf, i);
    if (!name.ok()) return name.err();
    if ((name->size() == 4 && memcmp(name->data(), "b2nd", 4) == 0) ||
        (name->size() == 7 && memcmp(name->data(), "caterva", 7) == 0))
      continue;
    auto content = frame_meta_find(sf, *name);
    if (!content.ok()) return content.err();
    metas[nmetas++] = frame_metalayer_init{*name, *content};
  }
  frame_create_params p = frame_create_params_from(*info);
  p.metalayers = metas;
  p.nmetalayers = nmetas;
  p.expected_nchunks = info->nchunks;
  frame f;
  TESSERA_TRY(detail::frame_create_at(f, target, alloc, p));
  owned_array<uint8_t> buffer;
  for (int64_t i = 0; i < info->nchunks; ++i) {
    auto chunk = frame_chunk_read(sf, i, buffer);
    if (!chunk.ok()) return chunk.err();
    TESSERA_TRY(frame_chunk_append(f, *chunk));
  }
  for (uint32_t i = 0; i < info->nvlmetalayers; ++i) {
    auto name = frame_vlmeta_name(sf, i);
    if (!name.ok()) return name.err();
    auto raw = frame_vlmeta_raw(sf, *name);
    if (!raw.ok()) return raw.err();
    TESSERA_TRY(frame_vlmeta_set_chunk(f, *name, *raw));
  }
  TESSERA_TRY(frame_commit(f));
  array_access::plugins(dst) = array_access::plugins(src);
  return detail::array_attach(dst, tessera::cxx::move(f), true, alloc, array_access::exec(src));
}

}  // namespace

status array_slice_copy(array& dst, const array_target& target, const allocator& alloc, array& src,
                        const int64_t* start, const int64_t* stop, const array_params* params) noexcept {
  TESSERA_TRY(detail::array_check_open(src));
  if (&dst == &src) return make_error(errc::invalid_argument, TESSERA_MSG("array: the destination is the source"));
  const array_layout& l = array_access::layout(src);
  int64_t shape[kMaxDims] = {};
  offset_source os{&src, {}};
  for (int d = 0; d < l.ndim; ++d) {
    if (start[d] < 0 || stop[d] < start[d] || stop[d] > l.shape[d])
      return detail::array_error_values(src, errc::out_of_range,
                                        TESSERA_MSG("array_slice_copy: dimension {}: start {}, stop {}: not 0 <= start <= stop <= {}"),
                                        d, start[d], stop[d], l.shape[d]);
    shape[d] = stop[d] - start[d];
    os.offset[d] = start[d];
  }
  const array_params p = dst_params(src, params, l.ndim, shape);
  array_access::plugins(dst) = p.plugins;
  return detail::array_create_from_source(dst, target, alloc, p, detail::array_source{offset_read, &os});
}

status array_copy(array& dst, const array_target& target, const allocator& alloc, array& src,
                  const array_params* params) noexcept {
  TESSERA_TRY(detail::array_check_open(src));
  const int64_t zero[kMaxDims] = {};
  return array_slice_copy(dst, target, alloc, src, zero, array_access::layout(src).shape, params);
}

status array_concatenate(array& dst, const array_target& target, const allocator& alloc, array& src1, array& src2,
                         int axis, const array_params* params) noexcept {
  TESSERA_TRY(detail::array_check_open(src1));
  TESSERA_TRY(detail::array_check_open(src2));
  if (&dst == &src1 || &dst == &src2) return make_error(errc::invalid_argument, TESSERA_MSG("array: the destination is a source"));
  const array_layout& l1 = array_access::layout(src1);
  const array_layout& l2 = array_access::layout(src2);
  if (l1.ndim != l2.ndim || axis < 0 || axis >= l1.ndim)
    return make_error(errc::invalid_argument, TESSERA_MSG("array_concatenate: ndim differs or axis outside 0..ndim-1"));
  if (array_itemsize(src1) != array_itemsize(src2))
    return make_error(errc::invalid_argument, TESSERA_MSG("array_concatenate: itemsizes differ"));
  const span<const char> d1 = array_dtype(src1);
  const span<const char> d2 = array_dtype(src2);
  if (d1.size() != d2.size() || (d1.size() > 0 && memcmp(d1.data(), d2.data(), d1.size()) != 0))
    return make_error(errc::invalid_argument, TESSERA_MSG("array_concatenate: dtypes differ"));
  int64_t shape[kMaxDims] = {};
  for (int d = 0; d < l1.ndim; ++d) {
    if (d != axis && l1.shape[d] != l2.shape[d])
      return make_error(errc::invalid_argument, TESSERA_MSG("array_concatenate: extents differ outside the axis"));
    shape[d] = l1.shape[d];
  }
  if (l2.shape[axis] > INT64_MAX - l1.shape[axis]) return make_error(errc::overflow, TESSERA_MSG("array_concatenate: extent"));
  shape[axis] += l2.shape[axis];
  const array_params p = dst_params(src1, params, l1.ndim, shape);
  concat_source cs{&src1, &src2, axis, l1.shape[axis]};
  array_access::plugins(dst) = p.plugins;
  return detail::array_create_from_source(dst, target, alloc, p, detail::array_source{concat_read, &cs});
}

status array_squeeze(array& dst, const array_target& target, const allocator& alloc, array& src,
                     const bool* axes) noexcept {
  TESSERA_TRY(detail::array_check_open(src));
  if (&dst == &src) return make_error(errc::invalid_argument, TESSERA_MSG("array: the destination is the source"));
  const array_layout& l = array_access::layout(src);
  squeeze_source ss{&src, {}};
  b2nd_meta m = detail::array_meta_of(src);
  int k = 0;
  bool raw = true;
  for (int d = 0; d < l.ndim; ++d) {
    const bool remove = axes == nullptr ? l.shape[d] == 1 : axes[d];
    if (remove && l.shape[d] != 1)
      return make_error(errc::invalid_argument, TESSERA_MSG("array_squeeze: a removed dimension has an extent other than 1"));
    ss.removed[d] = remove;
    if (remove) {
      raw &= l.chunkshape[d] == 1 && l.blockshape[d] == 1;
      continue;
    }
    m.shape[k] = l.shape[d];
    m.chunkshape[k] = static_cast<int32_t>(l.chunkshape[d]);
    m.blockshape[k] = static_cast<int32_t>(l.blockshape[d]);
    ++k;
  }
  m.ndim = static_cast<int8_t>(k);
  if (raw) return raw_copy(dst, target, alloc, src, m);
  array_params p = array_params_get(src);
  p.ndim = k;
  for (int d = 0; d < kMaxDims; ++d) {
    p.shape[d] = d < k ? m.shape[d] : 0;
    p.chunkshape[d] = d < k ? m.chunkshape[d] : 0;
    p.blockshape[d] = d < k ? m.blockshape[d] : 0;
  }
  array_access::plugins(dst) = p.plugins;
  return detail::array_create_from_source(dst, target, alloc, p, detail::array_source{squeeze_read, &ss});
}

status array_expand_dims(array& dst, const array_target& target, const allocator& alloc, array& src,
                         const bool* axes, int new_ndim) noexcept {
  TESSERA_TRY(detail::array_check_open(src));
  if (&dst == &src) return make_error(errc::invalid_argument, TESSERA_MSG("array: the destination is the source"));
  const array_layout& l = array_access::layout(src);
  if (new_ndim < l.ndim || new_ndim > kMaxDims || (new_ndim > l.ndim && axes == nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("array_expand_dims: bad new_ndim or axes"));
  b2nd_meta m = detail::array_meta_of(src);
  int k = 0;
  for (int d = 0; d < new_ndim; ++d) {
    if (axes[d]) {
      m.shape[d] = 1;
      m.chunkshape[d] = 1;
      m.blockshape[d] = 1;
    } else {
      if (k >= l.ndim) return make_error(errc::invalid_argument, TESSERA_MSG("array_expand_dims: axes keep too many dimensions"));
      m.shape[d] = l.shape[k];
      m.chunkshape[d] = static_cast<int32_t>(l.chunkshape[k]);
      m.blockshape[d] = static_cast<int32_t>(l.blockshape[k]);
      ++k;
    }
  }
  if (k != l.ndim) return make_error(errc::invalid_argument, TESSERA_MSG("array_expand_dims: axes keep too few dimensions"));
  m.ndim = static_cast<int8_t>(new_ndim);
  return raw_copy(dst, target, alloc, src, m);
}

status array_save(array& dst, const array_target& target, const allocator& alloc, array& src) noexcept {
  TESSERA_TRY(detail::array_check_open(src));
  if (&dst == &src) return make_error(errc::invalid_argument, TESSERA_MSG("array: the destination is the source"));
  return raw_copy(dst, target, alloc, src, detail::array_meta_of(src));
}

}  // namespace tessera
