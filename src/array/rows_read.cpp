// SPDX-License-Identifier: BSD-3-Clause
// Large slice reads written in the output's address order: see rows_read.hpp.
#include "rows_read.hpp"

#if TESSERA_SPEED_PATHS
#include "base/first_error.hpp"
#include "frame/frame_internal.hpp"
#include "layout/run_writer.hpp"
#include "array_internal.hpp"
#include "touched_blocks.hpp"

namespace tessera::detail {

namespace {

// A worker's staging: the layer's blocks, decoded side by side. A bigger layer is cut into segments of
// consecutive blocks along the last dimension, each a task of its own (its rows are then written in pieces,
// still in address order). 1 MiB: an L2's worth; more measured no faster.
constexpr size_t kStagingBytes = size_t{1} << 20;
// Smaller reads keep the block-by-block copy: the order only pays when the output is far larger than the caches.
constexpr int64_t kRowsMinBytes = int64_t{1} << 20;
// Streaming stores bypass the caches: for reads far larger than them (a smaller output is better left in cache
// for whoever reads it next).
constexpr int64_t kStreamingMinBytes = int64_t{16} << 20;

struct rows_job {
  const array_layout* l = nullptr;
  int64_t itemsize = 0;
  chunk_decoder* d = nullptr;
  int n = 0;                                         // chunks in the group
  bytes_view bytes[kRowsGroupChunks];                // their stored bytes (chunks in place)
  const uint8_t* raw[kRowsGroupChunks] = {};         // a memcpyed chunk's blocks (read in place), else null
  // A frame without views (a file): each chunk's blocks are read by the task that decodes them, the chunk's
  // blocks of one segment with one read, into the worker's read buffer.
  const chunk_blocks_reader* readers = nullptr;      // per chunk; null when the chunks are in place
  uint8_t* reads = nullptr;                          // the workers' read buffers, read_per_worker bytes each
  size_t read_per_worker = 0;
  touched_blocks t[kRowsGroupChunks];                // their regions' blocks
  int64_t before[kRowsGroupChunks + 1] = {};         // touched blocks along the last dimension before chunk k
  int64_t nlayers = 0;                               // block coordinates touched in dimensions 0..ndim-2
  int64_t segment = 0;                               // blocks per task along the last dimension
  int64_t nsegments = 0;
  uint8_t* staging = nullptr;                        // the workers' staging, per_worker bytes each
  size_t per_worker = 0;
  bytes_mut out;
  int64_t out_strides[kMaxDims] = {};                // items
  bool streaming = false;
  first_error error;

  static void task(void* context, size_t index, uint32_t worker) noexcept {
    auto& j = *static_cast<rows_job*>(context);
    if (j.error.any()) return;
    const status s = j.run(static_cast<int64_t>(index), worker);
    if (!s.ok()) j.error.set(s);
  }

  status run(int64_t index, uint32_t worker) noexcept {
    const array_layout& L = *l;
    const int last = L.ndim - 1;
    const int64_t bn = L.block_nitems * itemsize;
    uint8_t* const stage = staging + per_worker * worker + kStagingSlack;
    // The layer's block coordinates in dimensions 0..ndim-2 (every chunk of the group has the same), and the
    // part of the region they hold: [lo, hi) in chunk coordinates.
    const touched_blocks& t0 = t[0];
    const int64_t k0 = index % nsegments * segment;
    const int64_t k1 = k0 + segment < before[n] ? k0 + segment : before[n];
    int32_t lo[kMaxDims] = {}, hi[kMaxDims] = {}, b0[kMaxDims] = {};
    const uint32_t outer_block = layer_blocks(index / nsegments, lo, hi, b0);
    bytes_view read;  // readers: the blocks of chunk g this segment reads
    // Decode the segment's blocks side by side (a memcpyed chunk's are read in place); note each one's piece of
    // the layer's first row (where it starts, how long it is).
    const uint8_t* piece_src[kStagingPieces];
    size_t piece_len[kStagingPieces];
    int64_t run_dst_last = 0;  // the output coordinate along the last dimension where the run starts
    int g = 0;
    for (int64_t k = k0; k < k1; ++k) {
      while (before[g + 1] <= k) ++g;
      const touched_blocks& tg = t[g];
      const uint32_t bc = tg.first[last] + static_cast<uint32_t>(k - before[g]);
      const int32_t bs = static_cast<int32_t>(L.blockshape[last]);
      const int32_t bl = static_cast<int32_t>(bc) * bs;
      const int32_t a = bl > tg.start[last] ? bl : tg.start[last];
      const int32_t e = bl + bs < tg.stop[last] ? bl + bs : tg.stop[last];
      if (k == k0) run_dst_last = tg.dst[last] + (a - tg.start[last]);
      // The bytes of the block the layer reads: from its first row's first item to its last row's last.
      size_t first = static_cast<size_t>(a - bl), lastitem = static_cast<size_t>(e - 1 - bl);
      for (int dd = 0; dd < last; ++dd) {
        const size_t stride = static_cast<size_t>(L.block_item_strides[dd]);
        first += static_cast<size_t>(lo[dd] - b0[dd]) * stride;
        lastitem += static_cast<size_t>(hi[dd] - 1 - b0[dd]) * stride;
      }
      const size_t slot = static_cast<size_t>(k - k0);
      const size_t nblock = outer_block + bc;  // the last dimension's block stride is 1
      const uint8_t* block = raw[g] != nullptr ? raw[g] + nblock * static_cast<size_t>(bn) : nullptr;
      bytes_view stored = bytes[g];
      if (readers != nullptr) {
        const int64_t k_first = k0 > before[g] ? k0 : before[g];
        const bool as_is = readers[g].memcpyed;
        if (k == k_first) {  // chunk g's first block in this segment: read them all (blocks stored as they are
                             // straight into their staging slots, which follow each other as they do)
          const int64_t count = (k1 < before[g + 1] ? k1 : before[g + 1]) - k;
          const bytes_mut into = as_is ? bytes_mut(stage + slot * bn, static_cast<size_t>(count * bn))
                                       : bytes_mut(reads + read_per_worker * worker, read_per_worker);
          auto got = chunk_blocks_read(readers[g], nblock, static_cast<size_t>(count), into);
          if (!got.ok()) return got.err();
          if (as_is && got->size() != into.size())
            return make_error(errc::truncated, TESSERA_MSG("array: a memcpyed chunk shorter than its nbytes"));
          read = *got;
        }
        if (as_is) block = stage + slot * bn;
        stored = read;
      }
      if (block == nullptr) {
        bytes_view decoded;
        TESSERA_TRY(chunk_block_decode_into_on(*d, worker, stored, nblock, first * itemsize, (lastitem + 1) * itemsize,
                                               bytes_mut(stage + slot * bn, static_cast<size_t>(bn)), &decoded));
        if (static_cast<int64_t>(decoded.size()) != bn)
          return make_error(errc::corrupt, TESSERA_MSG("array: a block's size disagrees with its chunk's header"));
        block = decoded.data();
      }
      piece_src[slot] = block + first * static_cast<size_t>(itemsize);
      piece_len[slot] = static_cast<size_t>(e - a) * static_cast<size_t>(itemsize);
    }
    // Every output row the layer covers, in address order: the pieces side by side.
    bool overread = true;  // the pieces are all in the staging, whose slack covers its ends
    for (int gg = 0; gg < n; ++gg) overread = overread && raw[gg] == nullptr;
    run_writer w(streaming, overread);
    int32_t pos[kMaxDims] = {};
    for (int dd = 0; dd < last; ++dd) pos[dd] = lo[dd];
    const int64_t nk = k1 - k0;
    for (;;) {
      int64_t o = run_dst_last;
      size_t row = 0;  // the row's offset in a block, in items
      for (int dd = 0; dd < last; ++dd) {
        o += (t0.dst[dd] + (pos[dd] - t0.start[dd])) * out_strides[dd];
        row += static_cast<size_t>(pos[dd] - lo[dd]) * static_cast<size_t>(L.block_item_strides[dd]);
      }
      w.begin(out.data() + o * itemsize);
      const size_t row_bytes = row * static_cast<size_t>(itemsize);
      // piece_src[0, nk) were all set by the segment's loop over [k0, k1) above; the analyzer loses k1 - k0.
      for (int64_t s = 0; s < nk; ++s) w.put(piece_src[s] + row_bytes, piece_len[s]);  // NOLINT(clang-analyzer-core.UndefinedBinaryOperatorResult)
      int dd = last - 1;
      for (; dd >= 0; --dd) {
        if (++pos[dd] < hi[dd]) break;
        pos[dd] = lo[dd];
      }
      if (dd < 0) break;
    }
    w.end();
    run_writer_fence();
    return ok_status();
  }

  static constexpr size_t kStagingPieces = 64;  // blocks per segment at most (so small blocks stay few per task)
  // Bytes before and after each worker's staging that run_writer may read around the pieces: in the rows' order
  // its reads stay inside the staging, but the guarantee should not rest on that (16 would do; 64 keeps the
  // staging's alignment).
  static constexpr size_t kStagingSlack = 64;

  // The block coordinates of layer `layer` in dimensions 0..ndim-2 (every chunk of the group has the same), as
  // the part of the block number they make, and the part of the region they hold: [lo, hi) in chunk
  // coordinates, b0 where the blocks start.
  uint32_t layer_blocks(int64_t layer, int32_t* lo, int32_t* hi, int32_t* b0) const noexcept {
    const array_layout& L = *l;
    const touched_blocks& t0 = t[0];
    uint32_t outer_block = 0;
    for (int dd = L.ndim - 2; dd >= 0; --dd) {
      const uint32_t bc = t0.first[dd] + static_cast<uint32_t>(layer % t0.span[dd]);
      layer /= t0.span[dd];
      outer_block += bc * static_cast<uint32_t>(L.block_strides[dd]);
      const int32_t bs = static_cast<int32_t>(L.blockshape[dd]);
      b0[dd] = static_cast<int32_t>(bc) * bs;
      lo[dd] = b0[dd] > t0.start[dd] ? b0[dd] : t0.start[dd];
      hi[dd] = b0[dd] + bs < t0.stop[dd] ? b0[dd] + bs : t0.stop[dd];
    }
    return outer_block;
  }

  // The most bytes a task reads at once (readers): chunk_blocks_size over every layer, segment and chunk.
  result<size_t> largest_read() const noexcept {
    size_t largest = 0;
    const int last = l->ndim - 1;
    for (int64_t layer = 0; layer < nlayers; ++layer) {
      int32_t lo[kMaxDims], hi[kMaxDims], b0[kMaxDims];
      const uint32_t outer_block = layer_blocks(layer, lo, hi, b0);
      for (int64_t k0 = 0; k0 < before[n]; k0 += segment) {
        const int64_t k1 = k0 + segment < before[n] ? k0 + segment : before[n];
        for (int g = 0; g < n; ++g) {
          if (readers[g].memcpyed) continue;  // read into the staging
          const int64_t a = k0 > before[g] ? k0 : before[g];
          const int64_t e = k1 < before[g + 1] ? k1 : before[g + 1];
          if (a >= e) continue;
          const size_t first = outer_block + t[g].first[last] + static_cast<size_t>(a - before[g]);
          auto size = chunk_blocks_size(readers[g], first, static_cast<size_t>(e - a));
          if (!size.ok()) return size.err();
          if (*size > largest) largest = *size;
        }
      }
    }
    return largest;
  }
};

}  // namespace

bool rows_read_possible(array& a, const slice_plan& plan, int64_t out_bytes) noexcept {
  const array_layout& l = array_access::layout(a);
  if (l.ndim < 2 || out_bytes < kRowsMinBytes) return false;
  // Rows across several blocks, and blocks small enough for two side by side in the staging.
  const int last = l.ndim - 1;
  if (plan.shape[last] <= l.blockshape[last]) return false;
  return static_cast<uint64_t>(l.block_nitems) * static_cast<uint64_t>(array_access::itemsize(a)) * 2 <= kStagingBytes;
}

result<bool> stored_chunk_reader_init(array& a, int64_t nchunk, bool parallel, uint8_t* prefix,
                                      chunk_blocks_reader* reader, sparse_entry* entry) noexcept {
  const layout_sizes& sz = array_access::sizes(a);
  auto fits = frame_blocks_reader_init(array_access::frm(a), nchunk,
                                       static_cast<uint32_t>(array_access::layout(a).blocks_per_chunk), prefix, reader,
                                       entry);
  if (!fits.ok()) return fits.err();
  if (!*fits || int64_t{reader->blocksize} != sz.block_nbytes || (parallel && !reader->src.st->concurrent_reads))
    return false;
  auto h = chunk_header_read(bytes_view(prefix, kChunkHeaderExtendedSize));
  if (!h.ok()) return h.err();
  if (int64_t{h->nbytes} != sz.chunk_nbytes)
    return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's nbytes disagrees with the b2nd chunk shape"));
  if (!reader->memcpyed) TESSERA_TRY(chunk_decoder_prepare(array_access::decoder(a), *h));
  return true;
}

result<bool> rows_read_group(array& a, const slice_chunk* chunks, const int64_t (*dst0)[kMaxDims], int n,
                             bytes_mut out, const int64_t* out_shape, int64_t slice_bytes, rows_staging& staging) noexcept {
  const array_layout& l = array_access::layout(a);
  const int64_t itemsize = array_access::itemsize(a);
  chunk_decoder& d = array_access::decoder(a);
  frame& f = array_access::frm(a);
  rows_job j;
  j.l = &l;
  j.itemsize = itemsize;
  j.d = &d;
  j.n = n;
  j.out = out;
  const int last = l.ndim - 1;
  const layout_sizes& sz = array_access::sizes(a);
  const bool in_place = frame_chunks_in_place(f);
  const executor& e = chunk_decoder_executor(d);
  const uint32_t workers = e.run != nullptr && e.workers > 1 ? e.workers : 1;
  // A frame without views: each chunk's header and block starts read into staging.prefixes (prefix_cap each).
  const uint64_t prefix_bytes = frame_blocks_prefix_size(static_cast<uint64_t>(l.blocks_per_chunk));
  if (!in_place && prefix_bytes > kBlocksPrefixMax) return false;  // chunk by chunk, their starts one at a time
  const size_t prefix_cap = static_cast<size_t>(in_place ? 0 : prefix_bytes);
  chunk_blocks_reader readers[kRowsGroupChunks];
  sparse_entry entries[kRowsGroupChunks];  // a sparse frame's chunks, open while they are read
  if (!in_place) {
    const size_t need = prefix_cap * static_cast<size_t>(n);
    if (staging.prefixes.size() < need) {
      staging.prefixes.reset();
      TESSERA_TRY(array_budget_check(a, need, TESSERA_MSG("array: the read's chunk prefixes exceed max_alloc")));
      TESSERA_TRY(staging.prefixes.allocate(array_access::alloc(a), need));
    }
    j.readers = readers;
  }
  for (int k = 0; k < n; ++k) {
    auto ref = frame_chunk_locate(f, chunks[k].nchunk);
    if (!ref.ok()) return ref.err();
    if (ref->special != chunk_special::none) return false;
    if (ref->nbytes != sz.chunk_nbytes)
      return make_error(errc::corrupt, TESSERA_MSG("array: a chunk's nbytes disagrees with the b2nd chunk shape"));
    if (int64_t{ref->blocksize} != sz.block_nbytes) return false;
    if (!in_place) {
      // A memcpyed chunk's nbytes after its header were checked by frame_blocks_reader_init.
      auto fits = stored_chunk_reader_init(a, chunks[k].nchunk, workers > 1,
                                           staging.prefixes.data() + prefix_cap * static_cast<size_t>(k), &readers[k],
                                           &entries[k]);
      if (!fits.ok()) return fits.err();
      if (!*fits) return false;
    } else {
      owned_array<uint8_t> none;  // a frame whose chunks are in place hands out views: nothing is allocated
      auto bytes = frame_chunk_read(f, chunks[k].nchunk, none);
      if (!bytes.ok()) return bytes.err();
      if (none.data() != nullptr) return false;
      auto h = chunk_header_read(*bytes);
      if (!h.ok()) return h.err();
      if (h->memcpyed && h->special == chunk_special::none && !h->vlblocks && !h->lazy) {
        // Stored as they are: the blocks are read in place, all nbytes of them after the header.
        if (bytes->size() < h->header_size || bytes->size() - h->header_size < static_cast<size_t>(sz.chunk_nbytes))
          return make_error(errc::truncated, TESSERA_MSG("array: a memcpyed chunk shorter than its nbytes"));
        j.raw[k] = bytes->data() + h->header_size;
      } else {
        auto fits = chunk_decodes_by_block(a, *bytes);
        if (!fits.ok()) return fits.err();
        if (!*fits) return false;
      }
      j.bytes[k] = *bytes;
    }
    if (!touched_blocks_init(j.t[k], l, itemsize, chunks[k], out, out_shape, dst0[k])) return false;
    j.before[k + 1] = j.before[k] + j.t[k].span[last];
  }
  j.nlayers = 1;
  for (int dd = 0; dd < last; ++dd) j.nlayers *= j.t[0].span[dd];
  const int64_t bn = l.block_nitems * itemsize;
  int64_t fit = static_cast<int64_t>(kStagingBytes) / bn;
  if (fit > static_cast<int64_t>(rows_job::kStagingPieces)) fit = static_cast<int64_t>(rows_job::kStagingPieces);
  j.nsegments = (j.before[n] + fit - 1) / fit;
  j.segment = (j.before[n] + j.nsegments - 1) / j.nsegments;  // even segments
  {
    int64_t s = 1;
    for (int dd = last; dd >= 0; --dd) {
      j.out_strides[dd] = s;
      s *= out_shape[dd];
    }
  }
  // Streaming stores pay with one worker and with two (the 256 MB read: 32.5 against 35.3 ms at two; the earlier
  // finding that two were slower was made with the assembly buffer sometimes across a page, see run_writer).
  j.streaming = slice_bytes >= kStreamingMinBytes;
  TESSERA_TRY(worker_buffers_reserve(a, staging.bytes, &staging.per_worker,
                                     static_cast<size_t>(j.segment * bn) + 2 * rows_job::kStagingSlack, workers,
                                     TESSERA_MSG("array: the read's staging exceeds max_alloc")));
  j.staging = staging.bytes.data();
  j.per_worker = staging.per_worker;
  if (!in_place) {  // the workers' read buffers: the largest read of any task
    auto largest = j.largest_read();
    if (!largest.ok()) return largest.err();
    TESSERA_TRY(worker_buffers_reserve(a, staging.reads, &staging.read_per_worker, (*largest + 63) / 64 * 64, workers,
                                       TESSERA_MSG("array: the read's buffers exceed max_alloc")));
    j.reads = staging.reads.data();
    j.read_per_worker = staging.read_per_worker;
  }
  executor_run(workers > 1 ? e : executor_serial(), static_cast<size_t>(j.nlayers * j.nsegments), rows_job::task, &j);
  TESSERA_TRY(j.error.result());
  for (int k = 0; k < n; ++k) TESSERA_TRY(entries[k].close());
  return true;
}

}  // namespace tessera::detail
#endif  // TESSERA_SPEED_PATHS
