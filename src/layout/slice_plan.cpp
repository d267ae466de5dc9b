// SPDX-License-Identifier: BSD-3-Clause
// Slice planning: which chunks and blocks a hyper-rectangle touches and what to copy from each. The iterators
// only visit what is touched (the ranges of chunk and block coordinates are computed, not scanned).
#include "tessera/slice_plan.hpp"

#include <string.h>

namespace tessera {

namespace {

// Advances `coords` through the box [first, first + span) in C order; the caller counts the steps.
void odometer_step(int ndim, const int64_t* first, const int64_t* span, int64_t* coords) noexcept {
  for (int i = ndim - 1; i >= 0; --i) {
    if (++coords[i] < first[i] + span[i]) return;
    coords[i] = first[i];
  }
}

}  // namespace

status slice_plan_init(slice_plan& plan, const array_layout& layout, const int64_t* start,
                       const int64_t* stop) noexcept {
  plan = slice_plan{};
  const int ndim = layout.ndim;
  if (ndim > 0 && (start == nullptr || stop == nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("slice: null start or stop"));
  plan.layout = &layout;
  int64_t nitems = 1;
  int64_t nchunks = 1;
  for (int i = 0; i < ndim; ++i) {
    if (start[i] < 0) return make_error(errc::out_of_range, TESSERA_MSG("slice: start is negative"));
    if (stop[i] < start[i]) return make_error(errc::out_of_range, TESSERA_MSG("slice: stop is before start"));
    if (stop[i] > layout.shape[i]) return make_error(errc::out_of_range, TESSERA_MSG("slice: stop is beyond the array's shape"));
    plan.start[i] = start[i];
    plan.stop[i] = stop[i];
    plan.shape[i] = stop[i] - start[i];
    // Bounded by the array's item count, which the layout checked; 0 when any dimension is empty.
    nitems *= plan.shape[i];
    if (plan.shape[i] > 0) {
      const int64_t c = layout.chunkshape[i];  // > 0: the dimension is not empty
      plan.first_chunk[i] = start[i] / c;
      plan.chunk_span[i] = (stop[i] - 1) / c - plan.first_chunk[i] + 1;
      nchunks *= plan.chunk_span[i];
    }
  }
  plan.nitems = nitems;
  plan.nchunks = nitems == 0 ? 0 : nchunks;
  return ok_status();
}

slice_chunk_iterator::slice_chunk_iterator(const slice_plan& plan) noexcept
    : plan_(&plan), remaining_(plan.nchunks) {
  // One clear of the whole chunk record, which the compiler otherwise does as one memset per array.
  memset(static_cast<void*>(&current_), 0, sizeof current_);
}

bool slice_chunk_iterator::next() noexcept {
  if (remaining_ <= 0) return false;
  --remaining_;
  const slice_plan& p = *plan_;
  const array_layout& l = *p.layout;
  const int ndim = l.ndim;
  slice_chunk& c = current_;
  if (!started_) {
    started_ = true;
    for (int i = 0; i < ndim; ++i) c.coords[i] = p.first_chunk[i];
  } else {
    odometer_step(ndim, p.first_chunk, p.chunk_span, c.coords);
  }
  c.nchunk = 0;
  c.covers_chunk = true;
  for (int i = 0; i < ndim; ++i) {
    c.nchunk += c.coords[i] * l.chunk_strides[i];
    const int64_t cs = l.chunkshape[i];
    const int64_t cstart = c.coords[i] * cs;
    // Inside the chunk every offset is at most chunkshape (an int32 in the metalayer): 32-bit from here on.
    const int64_t rest = l.shape[i] - cstart;
    const int32_t extent = static_cast<int32_t>(rest < cs ? rest : cs);
    const int64_t s0 = p.start[i] - cstart;  // the slice's bounds relative to the chunk
    const int64_t s1 = p.stop[i] - cstart;
    const int32_t lo = s0 > 0 ? static_cast<int32_t>(s0) : 0;
    const int32_t hi = s1 < extent ? static_cast<int32_t>(s1) : extent;
    c.chunk_start[i] = cstart;
    c.chunk_extent[i] = extent;
    c.region_start[i] = lo;
    c.region_shape[i] = hi - lo;
    c.slice_start[i] = lo - s0;
    c.covers_chunk &= hi - lo == extent;
  }
  return true;
}

slice_block_iterator::slice_block_iterator(const slice_plan& plan, const slice_chunk& chunk) noexcept
    : plan_(&plan), chunk_(&chunk), remaining_(1) {
  const array_layout& l = *plan.layout;
  for (int i = 0; i < l.ndim; ++i) {
    const int64_t b = l.blockshape[i];
    if (chunk.region_shape[i] <= 0 || b <= 0) {  // not a chunk of this plan's: nothing to visit
      remaining_ = 0;
      return;
    }
    first_[i] = chunk.region_start[i] / b;
    span_[i] = (chunk.region_start[i] + chunk.region_shape[i] - 1) / b - first_[i] + 1;
    remaining_ *= span_[i];
  }
}

bool slice_block_iterator::next() noexcept {
  if (remaining_ <= 0) return false;
  --remaining_;
  const array_layout& l = *plan_->layout;
  const slice_chunk& c = *chunk_;
  const int ndim = l.ndim;
  slice_block& b = current_;
  if (!started_) {
    started_ = true;
    for (int i = 0; i < ndim; ++i) b.coords[i] = first_[i];
  } else {
    odometer_step(ndim, first_, span_, b.coords);
  }
  b.nblock = 0;
  b.covers_block = true;
  for (int i = 0; i < ndim; ++i) {
    b.nblock += b.coords[i] * l.block_strides[i];
    const int64_t bs = l.blockshape[i];
    const int64_t bstart = b.coords[i] * bs;  // relative to the chunk
    const int64_t rstop = c.region_start[i] + c.region_shape[i];
    const int64_t lo = c.region_start[i] > bstart ? c.region_start[i] : bstart;
    const int64_t hi = rstop < bstart + bs ? rstop : bstart + bs;
    b.region_start[i] = lo - bstart;
    b.region_shape[i] = hi - lo;
    b.chunk_start[i] = lo;
    b.slice_start[i] = c.slice_start[i] + (lo - c.region_start[i]);
    b.covers_block &= b.region_shape[i] == bs;
  }
  b.offset = b.nblock * l.block_nitems;
  return true;
}

}  // namespace tessera
