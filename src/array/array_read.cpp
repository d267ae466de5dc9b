// SPDX-License-Identifier: BSD-3-Clause
// Reading: slices (only the chunks and blocks they touch), single items, orthogonal selections.
#include "tessera/cxx.hpp"
#include <stdint.h>
#include <string.h>

#include "base/first_error.hpp"
#include "chunk/chunk_internal.hpp"
#include "frame/frame_internal.hpp"
#include "array_internal.hpp"
#include "orthogonal_sort.hpp"
#include "rows_read.hpp"
#include "touched_blocks.hpp"
#include "tessera/nd_copy.hpp"
#include "tessera/slice_plan.hpp"

namespace tessera {

using detail::array_access;

namespace detail {

status region_fill(int ndim, int64_t itemsize, bytes_mut dst, const int64_t* dst_shape, const int64_t* dst_start,
                   const int64_t* region_shape, bytes_view item) noexcept {
  // The one caller (a slice read's special chunk) passes an item of itemsize or none, a region of its plan and an
  // output the read checked against its shape: these checks guard the contract, no input fails them.
  if (!item.empty() && static_cast<int64_t>(item.size()) != itemsize)  // GCOVR_EXCL_BR_LINE: see above
    return make_error(errc::invalid_argument, TESSERA_MSG("region_fill: item size"));  // GCOVR_EXCL_LINE
  int64_t total = 1;
  for (int i = 0; i < ndim; ++i) {
    if (region_shape[i] == 0) return ok_status();  // GCOVR_EXCL_BR_LINE: a read of no items ends before
    if (dst_start[i] < 0 || region_shape[i] < 0 || dst_start[i] + region_shape[i] > dst_shape[i])  // GCOVR_EXCL_BR_LINE
      return make_error(errc::out_of_range, TESSERA_MSG("region_fill: region outside the buffer"));  // GCOVR_EXCL_LINE
    total *= dst_shape[i];
  }
  if (static_cast<int64_t>(dst.size()) < total * itemsize)  // GCOVR_EXCL_BR_LINE: see above
    return make_error(errc::buffer_too_small, TESSERA_MSG("region_fill: buffer smaller than its shape"));  // GCOVR_EXCL_LINE
  // Walk the region's rows (the last dimension is contiguous).
  int64_t strides[kMaxDims] = {};
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dst_shape[i];
  }
  const int64_t row = ndim == 0 ? 1 : region_shape[ndim - 1];
  bool all_zero = true;  // an empty item stands for zero bytes
  for (size_t i = 0; i < item.size(); ++i) all_zero &= item[i] == 0;
  int64_t idx[kMaxDims] = {};
  for (;;) {
    int64_t off = 0;
    for (int i = 0; i < ndim; ++i) off += (dst_start[i] + idx[i]) * strides[i];
    uint8_t* p = dst.data() + off * itemsize;
    if (all_zero) {
      memset(p, 0, static_cast<size_t>(row * itemsize));
    } else {
      for (int64_t k = 0; k < row; ++k) memcpy(p + k * itemsize, item.data(), static_cast<size_t>(itemsize));
    }
    int d = ndim - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < region_shape[d]) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  return ok_status();
}

status special_item(chunk_special kind, int32_t itemsize, uint8_t* out) noexcept {
  memset(out, 0, static_cast<size_t>(itemsize));
  if (kind == chunk_special::nan) {
    // IEEE quiet NaNs, little-endian, as the reference's set_nans writes them.
    if (itemsize == 4) {
      out[2] = 0xC0;
      out[3] = 0x7F;
    } else if (itemsize == 8) {
      out[6] = 0xF8;
      out[7] = 0x7F;
    } else {
      return make_error(errc::malformed, TESSERA_MSG("array: a NaN chunk in an array whose itemsize is not 4 or 8"));
    }
  }
  return ok_status();
}

status region_fill_special(int ndim, int64_t itemsize, bytes_mut dst, const int64_t* dst_shape,
                           const int64_t* dst_start, const int64_t* region_shape, chunk_special kind) noexcept {
  // Index entries are zeros, uninit (read as zeros) or NaNs of 4 or 8 bytes: the item fits a small buffer.
  uint8_t nan[8] = {};
  if (kind == chunk_special::nan) {
    if (itemsize != 4 && itemsize != 8) return make_error(errc::malformed, TESSERA_MSG("array: a NaN chunk in an array whose itemsize is not 4 or 8"));
    TESSERA_TRY(special_item(kind, static_cast<int32_t>(itemsize), nan));
    return region_fill(ndim, itemsize, dst, dst_shape, dst_start, region_shape, bytes_view(nan, static_cast<size_t>(itemsize)));
  }
  return region_fill(ndim, itemsize, dst, dst_shape, dst_start, region_shape, bytes_view());
}

}  // namespace detail

namespace {

// Scratch for reading: one block, and a chunk when a chunk is decoded whole. Allocated on first use.
struct read_scratch {
  owned_array<uint8_t> block;
  owned_array<uint8_t> chunk;
  int64_t chunk_index = -1;  // the chunk `chunk` holds (-1: none)
};

status chunk_decode_whole(array& a, int64_t nchunk, read_scratch& s) noexcept {
  if (s.chunk_index == nchunk) return ok_status();
  const int64_t n = array_access::sizes(a).chunk_nbytes;
  if (s.chunk.data() == nullptr) {
    TESSERA_TRY(detail::array_budget_check(a, static_cast<uint64_t>(n), TESSERA_MSG("array: the b2nd chunk shape exceeds max_alloc")));
    TESSERA_TRY(s.chunk.allocate(array_access::alloc(a), static_cast<size_t>(n)));
  }
  s.chunk_index = -1;
  auto r = frame_chunk_decode(array_access::frm(a), array_access::decoder(a), nchunk,
                              bytes_mut(s.chunk.data(), s.chunk.size()));
  if (!r.ok()) return r.err();
  if (static_cast<int64_t>(*r) != n) return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's size disagrees with the geometry"));
  s.chunk_index = nchunk;
  return ok_status();
}

// Whether a stored chunk's blocks are the array's (then single blocks are decoded), decided from its header
// before anything is decoded: a chunk written with other blocks is decoded whole. Its nbytes must be the array's.
result<bool> chunk_blocks_match(const array& a, const frame_chunk_ref& ref) noexcept {
  const layout_sizes& sz = array_access::sizes(a);
  if (ref.nbytes != sz.chunk_nbytes) return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's nbytes disagrees with the b2nd chunk shape"));
  return int64_t{ref.blocksize} == sz.block_nbytes;
}

// Block nblock of chunk nchunk (stored, located as ref): decoded alone into s.block when the chunk's blocks are
// the array's, else from the whole chunk. *out points at its block_nbytes bytes.
status block_fetch(array& a, const frame_chunk_ref& ref, int64_t nchunk, int64_t nblock, read_scratch& s,
                   const uint8_t** out) noexcept {
  const int64_t bn = array_access::sizes(a).block_nbytes;
  if (s.chunk_index != nchunk) {
    auto match = chunk_blocks_match(a, ref);
    if (!match.ok()) return match.err();
    if (*match) {
      if (s.block.data() == nullptr) TESSERA_TRY(s.block.allocate(array_access::alloc(a), static_cast<size_t>(bn)));
      auto r = frame_block_decode(array_access::frm(a), array_access::decoder(a), nchunk, static_cast<size_t>(nblock),
                                  bytes_mut(s.block.data(), s.block.size()));
      if (!r.ok()) return r.err();
      if (static_cast<int64_t>(*r) != bn) return make_error(errc::corrupt, TESSERA_MSG("array: a block's size disagrees with its header"));
      *out = s.block.data();
      return ok_status();
    }
    TESSERA_TRY(chunk_decode_whole(a, nchunk, s));
  }
  *out = s.chunk.data() + nblock * bn;
  return ok_status();
}

using detail::touched_block;
using detail::touched_block_consume;
using detail::touched_block_number;
using detail::touched_block_range;
using detail::touched_blocks;
using detail::touched_blocks_init;
using detail::touched_blocks_request;

// The touched blocks of one chunk (touched_blocks.hpp) copied out of a whole decoded chunk, split over the
// executor's workers. Blocks' destinations are disjoint, so they are copied in parallel.
struct chunk_copy_job {
  touched_blocks t;
  const uint8_t* chunk = nullptr;        // the whole decoded chunk (block after block)
  int64_t parts = 1;                     // slabs per block
  int64_t nunits = 0;                    // nblocks * parts
  int64_t units_per_task = 0;
  tessera::cxx::atomic<bool> failed{false};

  void reset() noexcept {  // for the next chunk (t is set by chunk_copy_init)
    chunk = nullptr;
    parts = 1;
    nunits = 0;
    units_per_task = 0;
    failed.store(false, tessera::cxx::memory_order_relaxed);
  }
};

bool chunk_copy_init(touched_blocks& t, array& a, const slice_chunk& c, bytes_mut out, const int64_t* out_shape,
                     const int64_t* dst0) noexcept {
  return touched_blocks_init(t, array_access::layout(a), array_access::itemsize(a), c, out, out_shape, dst0);
}

// Copying the slice's part of a whole decoded chunk out (a chunk written with other blocks than the array's),
// block by block, split over the executor's workers. With fewer blocks than tasks (big blocks), each block is
// also cut into slabs along the first dimension.
void chunk_copy_units(chunk_copy_job& j, int64_t u0, int64_t u1) noexcept {
  const touched_blocks& t = j.t;
  const array_layout& l = *t.l;
  const int64_t block_nbytes = l.block_nitems * t.itemsize;
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t part = u % j.parts;
    int64_t src_start[kMaxDims] = {};
    int64_t dst[kMaxDims] = {};
    int64_t shape[kMaxDims] = {};
    const int64_t nblock = touched_block(t, u / j.parts, src_start, dst, shape);
    if (j.parts > 1) {  // this unit's slab [p0, p1) of the block's rows along dimension 0
      const int64_t p0 = shape[0] * part / j.parts;
      const int64_t p1 = shape[0] * (part + 1) / j.parts;
      if (p1 == p0) continue;
      src_start[0] += p0;
      dst[0] += p0;
      shape[0] = p1 - p0;
    }
    const bytes_view block(j.chunk + nblock * block_nbytes, static_cast<size_t>(block_nbytes));
    const status s = nd_copy_region(l.ndim, t.itemsize, block, l.blockshape, src_start, t.out, t.out_shape, dst, shape);
    // Regions of the read's plan inside a decoded chunk of the array's size: no copy fails.
    if (!s.ok()) j.failed.store(true, tessera::cxx::memory_order_relaxed);  // GCOVR_EXCL_BR_LINE: see above
  }
}

void chunk_copy_task(void* context, size_t index, uint32_t) noexcept {
  auto& j = *static_cast<chunk_copy_job*>(context);
  const int64_t u0 = static_cast<int64_t>(index) * j.units_per_task;
  const int64_t u1 = u0 + j.units_per_task < j.nunits ? u0 + j.units_per_task : j.nunits;
  chunk_copy_units(j, u0, u1);
}

// j is set up (chunk_copy_init) and j.chunk holds the decoded chunk.
status chunk_copy_out(array& a, chunk_copy_job& j) noexcept {
  int64_t nitems = 1;
  for (int d = 0; d < j.t.l->ndim; ++d) nitems *= j.t.stop[d] - j.t.start[d];
  const executor& e = array_access::exec(a);
  // Parallel only when each task has enough to copy to pay for a wake-up (~64 KiB).
  int64_t ntasks = e.workers > 1 && e.run != nullptr ? static_cast<int64_t>(e.workers) * 4 : 1;
  if (ntasks > nitems * j.t.itemsize / 65536) ntasks = nitems * j.t.itemsize / 65536;
  if (ntasks <= 1) {
    j.nunits = j.t.nblocks;
    chunk_copy_units(j, 0, j.nunits);
  } else {
    if (j.t.nblocks < ntasks) j.parts = (ntasks + j.t.nblocks - 1) / j.t.nblocks;
    j.nunits = j.t.nblocks * j.parts;
    j.units_per_task = (j.nunits + ntasks - 1) / ntasks;
    ntasks = (j.nunits + j.units_per_task - 1) / j.units_per_task;
    executor_run(e, static_cast<size_t>(ntasks), chunk_copy_task, &j);
  }
  if (j.failed.load(tessera::cxx::memory_order_relaxed))  // GCOVR_EXCL_BR_LINE: no copy fails (chunk_copy_units)
    return make_error(errc::corrupt, TESSERA_MSG("array: a block's copy region disagrees with the geometry"));  // GCOVR_EXCL_LINE
  return ok_status();
}

// A slice over several chunks of a read-only frame held in memory (a buffer or a map) and a parallel executor:
// the touched blocks of up to kBatchChunks chunks go to the workers as one run, so no worker waits for the
// others at a chunk's end, and each block is read in place, decoded into its worker's scratch and copied out.
// Nothing is allocated: the chunks are views and the decoder's scratch is prepared on the caller's thread.
// Host builds also batch files (from_storage): there each task first reads its block's streams, into a buffer
// per worker allocated on the caller's thread.
constexpr int kBatchChunks = 16;
#if TESSERA_SPEED_PATHS
// The most bytes of consecutive blocks a task reads from a file at once (a block larger than this alone): reads of
// about 100 KB copy out of the page cache at the copy's own speed, reads of 30 KB pay a third more for their calls.
constexpr size_t kRunBytes = size_t{256} << 10;
#endif

using detail::chunk_block_decode_on;
using detail::chunk_decoder_executor;
using detail::chunk_decoder_prepare;

struct batch_job {
  chunk_decoder* d = nullptr;
  executor exec = executor_serial();
  touched_blocks chunks[kBatchChunks];
  bytes_view bytes[kBatchChunks];
  int64_t first_task[kBatchChunks + 1] = {};  // chunk k's tasks: [first_task[k], first_task[k + 1])
  int n = 0;
  detail::first_error error;
#if TESSERA_SPEED_PATHS
  // A file (a frame whose chunks are not in place, contiguous or sparse; with parallel workers its storage reads
  // concurrently): each task reads its blocks' streams itself (detail::chunk_blocks_read) into its worker's
  // buffer, after the chunk's header and block starts were read on the caller's thread into prefixes. A task
  // takes a run of blocks consecutive in the chunk (neighbours along the last dimension) with one read: a call
  // costs about a microsecond of the kernel's time besides its copy, as much as copying 10 KB.
  bool from_storage = false;
  int64_t run[kBatchChunks] = {};    // chunk k's blocks per task along its outer dimension (1: one per task)
  int64_t inner[kBatchChunks] = {};  // chunk k's touched blocks per outer block coordinate
  detail::chunk_blocks_reader readers[kBatchChunks];
  detail::sparse_entry entries[kBatchChunks];  // a sparse frame's chunks, open until the run is over
  owned_array<uint8_t> prefixes;  // kBatchChunks x prefix_cap
  size_t prefix_cap = 0;
  owned_array<uint8_t> reads;     // exec.workers x read_per_worker
  size_t read_per_worker = 0;
  size_t read_largest = 0;        // the largest block read of the chunks batched so far
#endif

  static void task(void* context, size_t index, uint32_t worker) noexcept {
    auto& b = *static_cast<batch_job*>(context);
    if (b.error.any()) return;
    const int64_t t = static_cast<int64_t>(index);
    int k = 0;
    while (k + 1 < b.n && b.first_task[k + 1] <= t) ++k;
    touched_blocks& j = b.chunks[k];
    const int64_t ti = t - b.first_task[k];
#if TESSERA_SPEED_PATHS
    if (b.from_storage) {
      // Task ti: the touched blocks i = o * inner + r for o in [o0, o1), consecutive in the chunk, read at once.
      const int64_t span = j.nblocks / b.inner[k];
      const int64_t r = ti % b.inner[k];
      const int64_t o0 = ti / b.inner[k] * b.run[k];
      const int64_t o1 = o0 + b.run[k] < span ? o0 + b.run[k] : span;
      const size_t first = touched_block_number(&j, static_cast<size_t>(o0 * b.inner[k] + r));
      auto got = detail::chunk_blocks_read(b.readers[k], first, static_cast<size_t>(o1 - o0),
                                           bytes_mut(b.reads.data() + b.read_per_worker * worker, b.read_per_worker));
      if (!got.ok()) {
        b.error.set(got.err());
        return;
      }
      for (int64_t o = o0; o < o1; ++o) {
        const status st = block_read(b, j, *got, static_cast<size_t>(o * b.inner[k] + r), worker);
        if (!st.ok()) {
          b.error.set(st);
          return;
        }
      }
      return;
    }
#endif
    const status st = block_read(b, j, b.bytes[k], static_cast<size_t>(ti), worker);
    if (!st.ok()) b.error.set(st);
  }

  // Touched block i of j decoded from chunk (the chunk in place, or the blocks a task read) and copied out.
  static status block_read(batch_job& b, touched_blocks& j, bytes_view chunk, size_t i, uint32_t worker) noexcept {
    size_t begin = 0, end = 0;
    touched_block_range(&j, i, &begin, &end);
    bytes_view decoded;
#if TESSERA_SPEED_PATHS
    // A block of which a few rows are wanted: only those unshuffled, straight to the output.
    if (detail::touched_block_few(j, i)) {
      detail::block_planes planes;
      detail::touched_block_planes_hint hint{&j, i};
      planes.stored = detail::touched_block_prefetch;
      planes.context = &hint;
      TESSERA_TRY(detail::chunk_block_planes_on(*b.d, worker, chunk, touched_block_number(&j, i), begin, end,
                                                &decoded, &planes));
      return planes.typesize != 0 ? detail::touched_block_unshuffle(j, i, decoded.size(), planes)
                                  : touched_block_consume(&j, i, decoded, worker);
    }
#endif
    detail::code_status st = chunk_block_decode_on(*b.d, worker, chunk, touched_block_number(&j, i), begin, end, &decoded);
    if (st.ok()) st = touched_block_consume(&j, i, decoded, worker);
    return st;
  }
};

status batch_run(array& a, batch_job& b) noexcept {
  if (b.n == 0) return ok_status();
#if TESSERA_SPEED_PATHS
  if (b.from_storage)  // the workers' read buffers, on the caller's thread
    TESSERA_TRY(detail::worker_buffers_reserve(a, b.reads, &b.read_per_worker, (b.read_largest + 63) / 64 * 64,
                                               b.exec.workers, TESSERA_MSG("array: the read's buffers exceed max_alloc")));
#else
  (void)a;
#endif
  executor_run(b.exec, static_cast<size_t>(b.first_task[b.n]), batch_job::task, &b);
  status result = b.error.result();
#if TESSERA_SPEED_PATHS
  for (int k = 0; k < b.n; ++k) {
    const status closed = b.entries[k].close();
    if (result.ok()) result = closed;
  }
#endif
  b.n = 0;
  b.first_task[0] = 0;
  return result;
}

// Whether the array's executor and its decoder's run tasks on several workers.
bool reads_parallel(array& a) noexcept {
  const executor& e = array_access::exec(a);
  return e.run != nullptr && e.workers >= 2 && chunk_decoder_executor(array_access::decoder(a)).workers >= 2;
}

// Whether reads may take the batch path: chunks are views that stay valid (a read-only contiguous frame whose
// storage is in memory) and the executor runs tasks in parallel, or (speed paths) serially on the caller's
// thread, where a block whose few rows are wanted has only those unshuffled (touched_block_few); speed paths
// also take files (a contiguous frame's or a sparse frame's), whose blocks the tasks read (from_storage). Sets
// b.exec.
bool batch_possible(array& a, batch_job& b) noexcept {
  const bool parallel = reads_parallel(a);
  b.exec = parallel ? array_access::exec(a) : executor_serial();
  if (!parallel && !TESSERA_SPEED_PATHS) return false;
  if (detail::frame_chunks_in_place(array_access::frm(a))) return true;
#if TESSERA_SPEED_PATHS
  // A file: the tasks read their blocks themselves (on parallel workers when its storage allows it).
  b.from_storage = detail::frame_blocks_readable_by_tasks(array_access::frm(a), parallel);
  return b.from_storage;
#else
  return false;
#endif
}

#if TESSERA_SPEED_PATHS
bool touched_blocks_any_few(const touched_blocks& t) noexcept {
  for (int64_t i = 0; i < t.nblocks; ++i)
    if (detail::touched_block_few(t, static_cast<size_t>(i))) return true;
  return false;
}
#endif

// Where a slice starts in an output of its own shape (in the image, not on each caller's stack).
constexpr int64_t kZeros[kMaxDims] = {};

// One slice read's state: the chunks are read one at a time (chunk()), or (host builds, large reads of arrays in
// memory) a row of chunks at a time in the output's order (rows_read.hpp). It lives in the array's read state
// (array_read_into), not on the caller's stack: its plan, chunk record and touched blocks are kMaxDims-sized
// arrays a firmware task's stack has no room for.
struct slice_reader {
  array& a;
  // The read's bracket (a map's view is safe only inside it: posix_mapping's lease), here rather than on the
  // caller's stack; declared first after `a`, so it closes after everything else of the read is gone.
  detail::frame_reads_scope reads;
  slice_plan plan;
  slice_chunk_iterator chunks{plan};  // constructed again over the plan once it is set (array_read_into)
  bytes_mut out;
  const int64_t* out_shape;
  const int64_t* out_start;
  bool out_is_slice = true;
  bool c_order = false;
  bool batching = false;
  read_scratch s;
  chunk_copy_job job;        // the touched blocks of the chunk chunk() reads
  int64_t chunk_dst[kMaxDims] = {};  // where that chunk's part of the slice goes in the output
  batch_job* batch;          // null when reads cannot batch (serial, without the speed paths)

  slice_reader(array& arr, bytes_mut o, const int64_t* oshape, const int64_t* ostart, batch_job* b) noexcept
      : a(arr), reads(array_access::frm(arr)), out(o), out_shape(oshape), out_start(ostart), batch(b) {}

  void destination(const slice_chunk& c, int64_t* dst0) const noexcept {
    for (int i = 0; i < array_access::layout(a).ndim; ++i) dst0[i] = out_start[i] + c.slice_start[i];
  }

  status chunk(const slice_chunk& c) noexcept {
    const array_layout& l = array_access::layout(a);
    const int64_t itemsize = array_access::itemsize(a);
    frame& f = array_access::frm(a);
    int64_t* dst0 = chunk_dst;
    destination(c, dst0);
    auto ref = frame_chunk_locate(f, c.nchunk);
    if (!ref.ok()) return ref.err();
    if (ref->special != chunk_special::none)
      return detail::region_fill_special(l.ndim, itemsize, out, out_shape, dst0, c.region_shape, ref->special);
    // The reference's fast path: the slice is exactly one whole interior chunk stored in C order.
    bool interior = true;
    for (int i = 0; i < l.ndim; ++i) interior &= c.chunk_extent[i] == l.chunkshape[i];
    if (out_is_slice && plan.nchunks == 1 && c.covers_chunk && interior && c_order) {
      auto r = frame_chunk_decode(f, array_access::decoder(a), c.nchunk, out);
      if (!r.ok()) return r.err();
      if (static_cast<int64_t>(*r) != array_access::sizes(a).chunk_nbytes)
        return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's size disagrees with the geometry"));
      return ok_status();
    }
    // Its nbytes must be the array's; its blocks decide how it is read.
    auto match = chunk_blocks_match(a, *ref);
    if (!match.ok()) return match.err();
#if TESSERA_SPEED_PATHS
    if (batching && *match && batch->from_storage) {
      auto added = batch_add_stored(c, dst0);
      if (!added.ok()) return added.err();
      if (*added) return ok_status();
    }
    const bool in_place = !batch->from_storage;
#else
    const bool in_place = true;
#endif
    if (batching && *match && in_place) {
      owned_array<uint8_t> none;  // a read-only frame in memory hands out views: nothing is allocated
      auto bytes = frame_chunk_read(f, c.nchunk, none);
      if (!bytes.ok()) return bytes.err();
      auto fits = none.data() == nullptr ? detail::chunk_decodes_by_block(a, *bytes) : result<bool>(false);
      if (!fits.ok()) return fits.err();
      if (*fits) {
        touched_blocks& bj = batch->chunks[batch->n];
        if (!chunk_copy_init(bj, a, c, out, out_shape, dst0)) return ok_status();
        batch->bytes[batch->n] = *bytes;
        batch->first_task[batch->n + 1] = batch->first_task[batch->n] + bj.nblocks;
        if (++batch->n == kBatchChunks) TESSERA_TRY(batch_run(a, *batch));
        return ok_status();
      }
    }
    chunk_copy_job& j = job;  // ndim 0 too: one block of one item
    j.reset();
    if (!chunk_copy_init(j.t, a, c, out, out_shape, dst0)) return ok_status();
    if (*match) {
#if TESSERA_SPEED_PATHS
      // A thin slice of a chunk the batch path does not take (a slice inside one chunk of a file) read with one
      // thread: the touched blocks' streams copied in one go, then read as the
      // batch path reads them, so the blocks of which few rows are wanted have only those unshuffled. Thick
      // slices, and any with parallel workers, keep the reads inside the workers (frame_blocks_decode): copying
      // first on the caller's thread was slower with 2 workers. So do reads of one block (an element), whose
      // scratch then grows only as far as the decode needs.
      if (!batching && batch->exec.run == nullptr && j.t.nblocks > 1 && touched_blocks_any_few(j.t)) {
        bytes_view copy;
        TESSERA_TRY(detail::frame_blocks_copy(f, array_access::decoder(a), c.nchunk, touched_blocks_request(j.t), &copy));
        if (!copy.empty()) {
          auto fits = detail::chunk_decodes_by_block(a, copy);
          if (!fits.ok()) return fits.err();
          if (!*fits) return chunk_decode_blocks(array_access::decoder(a), copy, touched_blocks_request(j.t));
          batch->chunks[0] = j.t;
          batch->bytes[0] = copy;
          batch->first_task[1] = j.t.nblocks;
          batch->n = 1;
          return batch_run(a, *batch);
        }
      }
#endif
      // The touched blocks, decoded over the executor's workers, each copied out from the worker's scratch.
      return frame_blocks_decode(f, array_access::decoder(a), c.nchunk, touched_blocks_request(j.t));
    }
    // The chunk was written with other blocks than the array's: decode it whole and copy from it.
    TESSERA_TRY(chunk_decode_whole(a, c.nchunk, s));
    j.chunk = s.chunk.data();
    return chunk_copy_out(a, j);
  }

#if TESSERA_SPEED_PATHS
  // Chunk c of a file for the batch: its header and block starts read here, its blocks by the workers. False
  // when it is not read so (memcpyed, delta, a dictionary...: then on its own).
  result<bool> batch_add_stored(const slice_chunk& c, const int64_t* dst0) noexcept {
    detail::chunk_blocks_reader& rd = batch->readers[batch->n];
    detail::sparse_entry& entry = batch->entries[batch->n];
    auto fits = detail::stored_chunk_reader_init(a, c.nchunk, batch->exec.run != nullptr,
                                                 batch->prefixes.data() + batch->prefix_cap * static_cast<size_t>(batch->n),
                                                 &rd, &entry);
    if (!fits.ok()) return fits.err();
    if (!*fits || rd.memcpyed) {
      TESSERA_TRY(entry.close());
      return false;
    }
    touched_blocks& bj = batch->chunks[batch->n];
    if (!chunk_copy_init(bj, a, c, out, out_shape, dst0)) {  // nothing of it wanted
      TESSERA_TRY(entry.close());
      return true;
    }
    // Runs of blocks consecutive in the chunk (along the outer dimension when its blocks are neighbours, its
    // block stride 1), each read by one task, up to kRunBytes (or one block) whatever the file claims.
    const int64_t span = bj.outer >= 0 ? bj.span[bj.outer] : 1;
    const int64_t inner = bj.nblocks / span;
    size_t largest_block = 0;
    for (int64_t i = 0; i < bj.nblocks; ++i) {
      auto size = detail::chunk_blocks_size(rd, touched_block_number(&bj, static_cast<size_t>(i)), 1);
      if (!size.ok()) return size.err();
      if (*size > largest_block) largest_block = *size;  // with the chunk's prefix
    }
    int64_t run = 1;
    if (span > 1 && array_access::layout(a).block_strides[bj.outer] == 1) {
      const size_t fit = largest_block > 0 ? kRunBytes / largest_block : 1;  // (a block's read holds its prefix)
      run = fit < 1 ? 1 : fit < static_cast<size_t>(span) ? static_cast<int64_t>(fit) : span;
    }
    const int64_t nruns = (span + run - 1) / run;
    for (int64_t task = 0; task < inner * nruns; ++task) {
      const int64_t o0 = task / inner * run;
      const int64_t count = o0 + run < span ? run : span - o0;
      auto size = detail::chunk_blocks_size(rd, touched_block_number(&bj, static_cast<size_t>(o0 * inner + task % inner)),
                                            static_cast<size_t>(count));
      if (!size.ok()) return size.err();
      if (*size > batch->read_largest) batch->read_largest = *size;
    }
    batch->run[batch->n] = run;
    batch->inner[batch->n] = inner;
    batch->bytes[batch->n] = bytes_view();
    batch->first_task[batch->n + 1] = batch->first_task[batch->n] + inner * nruns;
    if (++batch->n == kBatchChunks) TESSERA_TRY(batch_run(a, *batch));
    return true;
  }

  // Groups of chunks along the last dimension read in the output's order; a group with a chunk that path does
  // not read goes chunk by chunk.
  status rows(int64_t slice_bytes) noexcept {
    const int last = array_access::layout(a).ndim - 1;
    slice_chunk group[detail::kRowsGroupChunks];
    int64_t dst0[detail::kRowsGroupChunks][kMaxDims] = {};
    detail::rows_staging staging;
    bool more = chunks.next();
    while (more) {
      int n = 0;
      bool same_row = true;
      do {
        group[n] = chunks.chunk();
        destination(group[n], dst0[n]);
        ++n;
        more = chunks.next();
        for (int i = 0; more && i < last; ++i) same_row &= chunks.chunk().coords[i] == group[0].coords[i];
      } while (more && same_row && n < detail::kRowsGroupChunks);
      auto done = detail::rows_read_group(a, group, dst0, n, out, out_shape, slice_bytes, staging);
      if (!done.ok()) return done.err();
      if (!*done)
        for (int k = 0; k < n; ++k) TESSERA_TRY(chunk(group[k]));
    }
    return ok_status();
  }
#endif
};

}  // namespace

namespace detail {

result<bool> chunk_decodes_by_block(array& a, bytes_view chunk) noexcept {
  auto h = chunk_header_read(chunk);
  if (!h.ok()) return h.err();
  if (h->special != chunk_special::none || h->memcpyed || h->vlblocks || h->lazy) return false;
  for (uint8_t f : h->filters)
    if (f == static_cast<uint8_t>(filter_id::delta)) return false;
  TESSERA_TRY(chunk_decoder_prepare(array_access::decoder(a), *h));
  return true;
}

// The words of the array's read state that hold n bytes.
constexpr size_t words_of(size_t n) noexcept { return (n + sizeof(uint64_t) - 1) / sizeof(uint64_t); }

// Ends a slice read: its reader and batch (when placed in the array's read state) are destroyed, their memory
// kept.
struct slice_reader_scope {
  slice_reader* r;
  batch_job* b;
  ~slice_reader_scope() {
    if (b != nullptr) b->~batch_job();
    r->~slice_reader();
  }
};

status array_read_into(array& a, const int64_t* start, const int64_t* stop, bytes_mut out, const int64_t* out_shape,
                       const int64_t* out_start) noexcept {
  TESSERA_TRY(array_check_open(a));
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  // The reader in the array's read state: allocated by the first read and kept for the next ones (no
  // allocation per read). The batch of touched blocks (about 4 KiB) only where reads can batch: on a host's
  // stack (speed paths), else after the reader in the read state when the executor is parallel.
  const size_t reader_words = words_of(sizeof(slice_reader));
  static_assert(alignof(slice_reader) <= alignof(uint64_t) && alignof(batch_job) <= alignof(uint64_t),
                "the read state is an array of words");
  owned_array<uint64_t>& state = array_access::read_state(a);
#if TESSERA_SPEED_PATHS
  batch_job host_batch;
  batch_job* batch = &host_batch;
  const size_t words = reader_words;
#else
  const bool with_batch = reads_parallel(a);
  const size_t words = reader_words + (with_batch ? words_of(sizeof(batch_job)) : 0);
#endif
  if (state.size() < words) TESSERA_TRY(state.allocate(array_access::alloc(a), words));
#if !TESSERA_SPEED_PATHS
  batch_job* batch = with_batch ? new (tessera::cxx::place, state.data() + reader_words) batch_job : nullptr;
#endif
  slice_reader& r = *new (tessera::cxx::place, state.data()) slice_reader(a, out, out_shape, out_start, batch);
  const slice_reader_scope scope{&r, TESSERA_SPEED_PATHS ? nullptr : batch};
  slice_plan& plan = r.plan;
  TESSERA_TRY(slice_plan_init(plan, l, start, stop));
  if (out_shape == nullptr) {  // a buffer of the slice's own shape: no shape array on the caller's stack
    out_shape = r.out_shape = plan.shape;
    out_start = r.out_start = kZeros;
  }
  int64_t out_total = itemsize;
  bool out_is_slice = true;
  for (int i = 0; i < l.ndim; ++i) {
    if (out_start[i] < 0 || out_start[i] + plan.shape[i] > out_shape[i])
      return array_error_values(a, errc::out_of_range, TESSERA_MSG("array: dimension {}: the slice's {} items from {} do not fit the output's {}"),
                                i, plan.shape[i], out_start[i], out_shape[i]);
    out_total *= out_shape[i];
    out_is_slice &= out_shape[i] == plan.shape[i];
  }
  if (static_cast<int64_t>(out.size()) < out_total)
    return array_error_values(a, errc::buffer_too_small, TESSERA_MSG("array: out has {} bytes, its shape needs {}"),
                              static_cast<int64_t>(out.size()), out_total);
  if (plan.nitems == 0) return ok_status();

  r.out_is_slice = out_is_slice;
  r.c_order = layout_chunk_is_c_order(l);
  r.batching = batch != nullptr && batch_possible(a, *batch) && plan.nchunks > 1;
#if TESSERA_SPEED_PATHS
  // A one-chunk read of a file batches only its copy (slice_reader::chunk); chunks of more than 16k blocks keep
  // their starts to one chunk at a time (frame_blocks_decode) rather than 16.
  const uint64_t prefix_bytes = detail::frame_blocks_prefix_size(static_cast<uint64_t>(l.blocks_per_chunk));
  batch->from_storage &= r.batching && prefix_bytes <= detail::kBlocksPrefixMax;
  batch->prefix_cap = static_cast<size_t>(batch->from_storage ? prefix_bytes : 0);
  if (batch->from_storage) {  // room for the batched chunks' headers and block starts
    TESSERA_TRY(detail::array_budget_check(a, static_cast<uint64_t>(batch->prefix_cap) * kBatchChunks,
                                           TESSERA_MSG("array: the read's chunk prefixes exceed max_alloc")));
    TESSERA_TRY(batch->prefixes.allocate(array_access::alloc(a), batch->prefix_cap * kBatchChunks));
  }
#endif
  if (batch != nullptr) batch->d = &array_access::decoder(a);
  slice_chunk_iterator& chunks = *new (tessera::cxx::place, &r.chunks) slice_chunk_iterator(plan);
#if TESSERA_SPEED_PATHS
  const int64_t slice_bytes = plan.nitems * itemsize;
  if (rows_read_possible(a, plan, slice_bytes)) {
    TESSERA_TRY(r.rows(slice_bytes));
    return batch_run(a, *batch);
  }
#endif
  while (chunks.next()) TESSERA_TRY(r.chunk(chunks.chunk()));
  return batch != nullptr ? batch_run(a, *batch) : ok_status();
}

}  // namespace detail

status array_slice_read(array& a, const int64_t* start, const int64_t* stop, bytes_mut out) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  const array_layout& l = array_access::layout(a);
  for (int i = 0; i < l.ndim; ++i) {
    if (start[i] < 0 || stop[i] < start[i] || stop[i] > l.shape[i])
      return detail::array_error_values(a, errc::out_of_range,
                                        TESSERA_MSG("array_slice_read: dimension {}: start {}, stop {}: not 0 <= start <= stop <= {}"),
                                        i, start[i], stop[i], l.shape[i]);
  }
  return detail::array_read_into(a, start, stop, out, nullptr, nullptr);
}

status array_read(array& a, bytes_mut out) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  return array_slice_read(a, kZeros, array_access::layout(a).shape, out);
}

status array_element_read(array& a, const int64_t* coords, bytes_mut out) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  if (static_cast<int64_t>(out.size()) < itemsize)
    return detail::array_error_values(a, errc::buffer_too_small, TESSERA_MSG("array_element_read: out has {} bytes, an item {}"),
                                      static_cast<int64_t>(out.size()), itemsize);
  for (int d = 0; d < l.ndim; ++d)
    if (coords[d] < 0 || coords[d] >= l.shape[d])
      return detail::array_error_values(a, errc::out_of_range,
                                        TESSERA_MSG("array_element_read: dimension {}: coordinate {} not in [0, {})"), d,
                                        coords[d], l.shape[d]);
  auto loc = layout_locate(l, coords);
  if (!loc.ok()) return loc.err();
  // A one-item slice: its block is decoded only as far as the item, and copied from scratch (ndim 0: the one
  // item of the one chunk).
  int64_t stop[kMaxDims] = {};
  for (int d = 0; d < l.ndim; ++d) stop[d] = coords[d] + 1;
  const bytes_mut item(out.data(), static_cast<size_t>(itemsize));
  return detail::array_read_into(a, l.ndim > 0 ? coords : kZeros, stop, item, nullptr, nullptr);
}

status array_orthogonal_read(array& a, const int64_t* const* indices, const int64_t* counts, bytes_mut out) noexcept {
  TESSERA_TRY(detail::array_check_open(a));
  const array_layout& l = array_access::layout(a);
  const int ndim = l.ndim;
  const int64_t itemsize = array_access::itemsize(a);
  if (ndim == 0) return array_element_read(a, nullptr, out);
  int64_t total_idx = 0;
  int64_t nout = 1;
  for (int d = 0; d < ndim; ++d) {
    if (counts[d] < 0) return make_error(errc::invalid_argument, TESSERA_MSG("array_orthogonal_read: negative count"));
    if (counts[d] > 0 && indices[d] == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("array_orthogonal_read: null indices"));
    total_idx += counts[d];
    if (counts[d] != 0 && nout > (INT64_MAX / itemsize) / counts[d])
      return make_error(errc::overflow, TESSERA_MSG("array_orthogonal_read: selection too large"));
    nout *= counts[d];
  }
  if (static_cast<int64_t>(out.size()) / itemsize < nout)
    return detail::array_error_values(a, errc::buffer_too_small,
                                      TESSERA_MSG("array_orthogonal_read: out has {} bytes, the selection needs {} items of {}"),
                                      static_cast<int64_t>(out.size()), nout, itemsize);
  if (nout == 0) return ok_status();
  for (int d = 0; d < ndim; ++d) {
    for (int64_t k = 0; k < counts[d]; ++k) {
      if (indices[d][k] < 0 || indices[d][k] >= l.shape[d])
        return detail::array_error_values(a, errc::out_of_range,
                                          TESSERA_MSG("array_orthogonal_read: dimension {}: index {} (number {}) not in [0, {})"),
                                          d, indices[d][k], k, l.shape[d]);
    }
  }
  // Per dimension: (value, position) sorted by value, so items of one block are consecutive; then the starts
  // of the runs that share a block (the "groups").
  using pair = detail::orthogonal_entry;
  owned_array<pair> pairs;
  owned_array<int64_t> group_start;  // per dim: its groups' first pair index, then one past the end
  TESSERA_TRY(pairs.allocate(array_access::alloc(a), static_cast<size_t>(total_idx)));
  TESSERA_TRY(group_start.allocate(array_access::alloc(a), static_cast<size_t>(total_idx + ndim)));
  pair* p[kMaxDims] = {};
  int64_t* g[kMaxDims] = {};
  int64_t ngroups[kMaxDims] = {};
  {
    int64_t po = 0;
    int64_t go = 0;
    for (int d = 0; d < ndim; ++d) {
      p[d] = pairs.data() + po;
      g[d] = group_start.data() + go;
      for (int64_t k = 0; k < counts[d]; ++k) p[d][k] = pair{indices[d][k], k};
      const pair* v = p[d];
      const int64_t n = counts[d];
      detail::orthogonal_sort(p[d], n);
      int64_t prev_block = -1;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t val = v[k].value;
        const int64_t blk = (val / l.chunkshape[d]) * l.block_grid[d] + (val % l.chunkshape[d]) / l.blockshape[d];
        if (blk != prev_block) {
          g[d][ngroups[d]++] = k;
          prev_block = blk;
        }
      }
      g[d][ngroups[d]] = n;
      po += n;
      go += n + 1;
    }
  }
  int64_t out_strides[kMaxDims] = {};
  {
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      out_strides[d] = s;
      s *= counts[d];
    }
  }
  const detail::frame_reads_scope reads(array_access::frm(a));
  read_scratch s;
  int64_t gi[kMaxDims] = {};  // current group per dim
  for (;;) {
    int64_t cc[kMaxDims] = {};
    int64_t bc[kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) {
      const int64_t v0 = p[d][g[d][gi[d]]].value;
      cc[d] = v0 / l.chunkshape[d];
      bc[d] = (v0 % l.chunkshape[d]) / l.blockshape[d];
    }
    auto nchunk = layout_chunk_index(l, cc);
    if (!nchunk.ok()) return nchunk.err();
    auto nblock = layout_block_index(l, bc);
    if (!nblock.ok()) return nblock.err();
    const uint8_t* block = nullptr;
    uint8_t special[8] = {};  // index entries are zeros or uninit (all zero bytes) or NaNs (4 or 8 bytes)
    bool is_special = false;
    auto ref = frame_chunk_locate(array_access::frm(a), *nchunk);
    if (!ref.ok()) return ref.err();
    if (ref->special != chunk_special::none) {
      if (ref->special == chunk_special::nan) TESSERA_TRY(detail::special_item(ref->special, static_cast<int32_t>(itemsize), special));
      is_special = true;
    } else {
      TESSERA_TRY(block_fetch(a, *ref, *nchunk, *nblock, s, &block));
    }
    // Every combination of the groups' items.
    int64_t k[kMaxDims] = {};
    for (int d = 0; d < ndim; ++d) k[d] = g[d][gi[d]];
    for (;;) {
      int64_t src = 0;
      int64_t dst = 0;
      for (int d = 0; d < ndim; ++d) {
        const pair& e = p[d][k[d]];
        src += ((e.value % l.chunkshape[d]) % l.blockshape[d]) * l.block_item_strides[d];
        dst += e.pos * out_strides[d];
      }
      uint8_t* to = out.data() + dst * itemsize;
      if (!is_special) memcpy(to, block + src * itemsize, static_cast<size_t>(itemsize));  // NOLINT(clang-analyzer-core.NonNullParamChecker): block is set whenever the chunk is not special
      else if (ref->special == chunk_special::nan) memcpy(to, special, static_cast<size_t>(itemsize));
      else memset(to, 0, static_cast<size_t>(itemsize));
      int d = ndim - 1;
      for (; d >= 0; --d) {
        if (++k[d] < g[d][gi[d] + 1]) break;
        k[d] = g[d][gi[d]];
      }
      if (d < 0) break;
    }
    int d = ndim - 1;
    for (; d >= 0; --d) {
      if (++gi[d] < ngroups[d]) break;
      gi[d] = 0;
    }
    if (d < 0) break;
  }
  return ok_status();
}

}  // namespace tessera
