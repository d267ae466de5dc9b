// SPDX-License-Identifier: BSD-3-Clause
// Opening frames and reading them lazily: header, index and trailer at open; chunks and blocks on demand.
#include "tessera/cxx.hpp"
#include <string.h>

#include "base/first_error.hpp"
#include "chunk/chunk_internal.hpp"
#include "frame/frame_internal.hpp"

namespace tessera {

using detail::frame_access;
using detail::frame_state;
using detail::frame_meta_entry;

frame& frame::operator=(frame&& o) noexcept {
  if (this != &o) {
    (void)detail::frame_release(*this);
    s_ = o.s_;
    o.s_ = nullptr;
  }
  return *this;
}

frame::~frame() { (void)detail::frame_release(*this); }

status frame_close(frame& f) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return ok_status();
  const status tidy = detail::cframe_close_tidy(*s);
  const status released = detail::frame_release(f);
  return tidy.ok() ? released : tidy;
}

status detail::frame_release(frame& f) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return ok_status();
  status result = ok_status();
  // Sparse chunk entries written for changes that were never committed: nothing refers to them.
  if (s->sparse && s->options.writable) {
    char name[16];
    for (uint32_t i = 0; i < s->nfresh; ++i)
      if (frame_sparse_chunk_name(s->fresh[i], name, sizeof name).ok()) (void)storage_directory_remove(s->dir, name);
  }
  detail::state_free(s);
  frame_access::set(f, nullptr);
  return result;
}

namespace detail {

namespace {

status index_entry_nbytes(frame_state& s, int64_t i, int32_t* out) noexcept;

// Reads and checks the header of the stored chunk at src (at most 32 bytes).
result<chunk_header> source_header(frame_state& s, const chunk_source& src, uint8_t (&buf)[kChunkHeaderExtendedSize]) noexcept {
  const size_t n = src.limit < kChunkHeaderExtendedSize ? static_cast<size_t>(src.limit) : kChunkHeaderExtendedSize;
  if (n < kChunkHeaderMinSize) return make_error(errc::corrupt, TESSERA_MSG("frame: chunk position too close to the data's end"));
  const bytes_view v = frame_state_view(s, *src.st);
  if (!v.empty() && src.pos <= v.size() && n <= v.size() - src.pos) memcpy(buf, v.data() + src.pos, n);
  else TESSERA_TRY(storage_read(*src.st, src.pos, bytes_mut(buf, n)));
  auto h = chunk_header_read(bytes_view(buf, n));
  if (!h.ok()) return h.err();
  if (static_cast<uint64_t>(h->cbytes) > src.limit) return make_error(errc::corrupt, TESSERA_MSG("frame: chunk runs past the frame's data"));
  return h;
}

// A stored chunk's own block size decides the decoder scratch it grows to (blocks per worker, and block 0 for
// delta): a claim of the chunk's header, held to the frame's budget as array_open holds the b2nd block shape.
// VL-block chunks size it by their largest block (at most nbytes); special and memcpyed chunks need none.
status decode_scratch_check(const frame_state& s, const chunk_decoder& d, const chunk_header& h) noexcept {
  if (h.special != chunk_special::none || h.memcpyed || h.vlblocks) return ok_status();
  chunk_decoder_options o;
  o.exec = chunk_decoder_executor(d);
  o.max_blocksize = 0;
  const size_t none = chunk_decoder_estimate(o);
  o.max_blocksize = static_cast<size_t>(h.blocksize);
  return state_budget_check(s, chunk_decoder_estimate(o) - none,
                            TESSERA_MSG("frame: a chunk's blocksize needs more decoder scratch than max_alloc"));
}

// The bytes [at, at + n) of a chunk source: a view, or read into the state's scratch at scratch_off.
result<const uint8_t*> source_bytes(frame_state& s, const chunk_source& src, uint64_t at, size_t n, size_t scratch_off) noexcept {
  const bytes_view v = frame_state_view(s, *src.st);
  const uint64_t abs = src.pos + at;
  if (!v.empty() && abs <= v.size() && n <= v.size() - abs) return v.data() + abs;
  TESSERA_TRY(state_buffer_reserve(s, &s.scratch, &s.scratch_cap, scratch_off + n));
  TESSERA_TRY(storage_read(*src.st, abs, bytes_mut(s.scratch + scratch_off, n)));
  return static_cast<const uint8_t*>(s.scratch + scratch_off);
}

status frame_read_common(frame_state& s, bool sparse_kind) noexcept {
  uint8_t fixed[kFrameHeaderMinLen];
  TESSERA_TRY(frame_read_into(s, 0, bytes_mut(fixed, sizeof fixed)));
  frame_info info;
  TESSERA_TRY(header_fixed_parse(bytes_view(fixed, sizeof fixed), info));
  if ((info.kind == frame_kind::sparse) != sparse_kind)
    return make_error(errc::malformed, sparse_kind ? TESSERA_MSG("sframe: the index file is not a sparse frame")
                                                   : TESSERA_MSG("frame: a sparse frame's index opened as a contiguous frame"));
  auto size = storage_size(s.st);
  if (!size.ok()) return size.err();
  if (*size < s.base || info.frame_len > *size - s.base) return make_error(errc::truncated, TESSERA_MSG("frame: storage shorter than the frame length"));
  if (info.frame_len < kFrameHeaderMinLen + kFrameTrailerMinLen) return make_error(errc::malformed, TESSERA_MSG("frame: frame length too small"));
  s.info = info;
  TESSERA_TRY(state_buffer_reserve(s, &s.header, &s.header_cap, info.header_len, TESSERA_MSG("frame: header_len exceeds max_alloc")));
  TESSERA_TRY(frame_read_into(s, 0, bytes_mut(s.header, info.header_len)));
  TESSERA_TRY(header_metas_parse(s));

  // The trailer: its length sits 22 bytes before the frame's end.
  uint8_t tail[kFrameTrailerMinLen];
  TESSERA_TRY(frame_read_into(s, info.frame_len - kFrameTrailerMinLen, bytes_mut(tail, sizeof tail)));
  uint64_t trailer_off = 0;
  TESSERA_TRY(frame_trailer_locate(info, bytes_view(tail, sizeof tail), &trailer_off, &s.info.trailer_len));
  {
    auto t = frame_bytes(s, trailer_off, s.info.trailer_len);
    if (!t.ok()) return t.err();
    TESSERA_TRY(trailer_parse(s, *t));
  }

  int64_t n = 0;
  if (info.nbytes > 0) {
    auto pos = frame_index_pos(info, sparse_kind, trailer_off);
    if (!pos.ok()) return pos.err();
    uint8_t hb[kChunkHeaderExtendedSize];
    const size_t hn = trailer_off - *pos < sizeof hb ? static_cast<size_t>(trailer_off - *pos) : sizeof hb;
    TESSERA_TRY(frame_read_into(s, *pos, bytes_mut(hb, hn)));
    chunk_header ih;
    TESSERA_TRY(frame_index_check(info, *pos, trailer_off, bytes_view(hb, hn), &ih, &n));
    s.nchunks = n;
    s.info.nchunks = n;
    TESSERA_TRY(index_lazy_open(s, *pos, ih, n));
    s.committed_has_index = true;
  }
  s.nchunks = n;
  s.info.nchunks = n;
  s.schunk_chunksize = info.chunksize;
  s.committed_len = info.frame_len;
  s.committed_cbytes = info.cbytes;
  if (!sparse_kind && n == 0) s.info.cbytes = 0;  // the reference keeps a stale size after deleting every chunk
  s.data_end = info.header_len + (sparse_kind ? 0 : static_cast<uint64_t>(s.info.cbytes));
  return ok_status();
}

// The source of the stored chunk at index value off (sparse: opens its entry into `entry`). From a value the
// caller has read: no read of the index under it.
result<chunk_source> chunk_source_at(frame_state& s, int64_t off, sparse_entry& entry) noexcept {
  chunk_source src;
  if (s.sparse) {
    char name[16];
    TESSERA_TRY(frame_sparse_chunk_name(off, name, sizeof name));
    TESSERA_TRY(entry.open_name(s, name, storage_open::read));
    auto size = storage_size(entry.st);
    if (!size.ok()) return size.err();
    src.st = &entry.st;
    src.pos = 0;
    src.limit = *size;
    return src;
  }
  const uint64_t data = s.info.header_len;
  const uint64_t section = s.data_end - data;
  if (static_cast<uint64_t>(off) >= section) return make_error(errc::corrupt, TESSERA_MSG("frame: chunk offset past the chunks section"));
  src.st = &s.st;
  src.pos = s.base + data + static_cast<uint64_t>(off);
  src.limit = section - static_cast<uint64_t>(off);
  return src;
}

// Entry i's sizes not known yet (e, as the index gave it): read from the chunk's header and learned by the index.
// Its own function: the header buffer is on the stack after the index was read, not under the index's reads.
__attribute__((noinline)) status index_entry_sizes_read(frame_state& s, int64_t i, frame_chunk_entry& e) noexcept {
  if (e.offset < 0) return make_error(errc::unsupported, TESSERA_MSG("frame: special index entry in a frame of variable chunk sizes"));
  sparse_entry entry;
  auto src = chunk_source_at(s, e.offset, entry);
  if (!src.ok()) return src.err();
  uint8_t hb[kChunkHeaderExtendedSize];
  auto h = source_header(s, *src, hb);
  if (!h.ok()) return h.err();
  // With a fixed chunksize the header already said each chunk's nbytes: the chunk must agree.
  if (e.nbytes >= 0 && e.nbytes != h->nbytes)
    return make_error(errc::corrupt, TESSERA_MSG("frame: a chunk's nbytes differs from the frame's chunksize"));
  e.nbytes = h->nbytes;
  e.cbytes = h->cbytes;
  e.blocksize = h->blocksize;
  TESSERA_TRY(entry.close());
  index_entry_learn(s, i, e);
  return ok_status();
}

status index_entry_nbytes(frame_state& s, int64_t i, int32_t* out) noexcept {
  frame_chunk_entry e;
  TESSERA_TRY(index_entry_get(s, i, &e));
  if (e.nbytes < 0 || e.cbytes < 0 || e.blocksize < 0) TESSERA_TRY(index_entry_sizes_read(s, i, e));
  *out = e.nbytes;
  return ok_status();
}

status chunk_index_check(const frame_state* s, int64_t nchunk) noexcept {
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  if (nchunk < 0 || nchunk >= s->nchunks) return make_error(errc::out_of_range, TESSERA_MSG("frame: chunk number past the frame's chunks"));
  return ok_status();
}

// Sorts the n little-endian 32-bit values at a in place, without memory or recursion. Starts written by threads
// are nearly sorted (c-blosc2, 2 threads, 16384 blocks: 9224 inversions), which an insertion sort puts in order in
// about n steps; past 8n moves (starts in any order, a crafted chunk) a heap sort, O(n log n), finishes the job.
void starts_sort(uint8_t* a, size_t n) noexcept {
  auto at = [a](size_t i) noexcept { return le_load32(a + 4 * i); };
  auto put = [a](size_t i, uint32_t v) noexcept { le_store32(a + 4 * i, v); };
  size_t budget = 8 * n;
  size_t i = 1;
  for (; i < n; ++i) {
    const uint32_t v = at(i);
    size_t j = i;
    for (; j > 0 && at(j - 1) > v && budget > 0; --j, --budget) put(j, at(j - 1));
    put(j, v);
    if (budget == 0) break;
  }
  if (i >= n) return;
  // v, taken out at hole h, sinks into the heap [0, end).
  auto sift = [&](size_t h, size_t end, uint32_t v) noexcept {
    for (;;) {
      size_t c = 2 * h + 1;
      if (c >= end) break;
      uint32_t cv = at(c);
      if (c + 1 < end) {
        const uint32_t r = at(c + 1);
        if (r > cv) {
          ++c;
          cv = r;
        }
      }
      if (cv <= v) break;
      put(h, cv);
      h = c;
    }
    put(h, v);
  };
  for (size_t k = n / 2; k-- > 0;) sift(k, n, at(k));
  for (size_t end = n; end > 1; --end) {
    const uint32_t top = at(0);
    sift(0, end - 1, at(end - 1));
    put(end - 1, top);
  }
}

// Where each block's streams are in a stored chunk: from its start to the next larger start (or cbytes). Starts
// in increasing order (a writer that places blocks in order) make that the next entry. Writers that place blocks
// as their threads finish them (c-blosc2 with several) store them out of order: then a sorted copy of the starts
// (sort_into, once per chunk) finds it by a binary search, rather than a scan of all starts per block, which made
// a read of many blocks quadratic in the chunk's block count.
struct block_extent {
  uint64_t start, end;
};
struct stored_starts {
  const uint8_t* p = nullptr;  // the chunk's bstarts as stored
  size_t n = 0;
  uint64_t data_start = 0;
  uint64_t cbytes = 0;
  bool ascending = true;
  const uint8_t* sorted = nullptr;  // not ascending: the n starts sorted (sort_into)

  void init(const uint8_t* starts, size_t nblocks, uint64_t data, uint64_t size) noexcept {
    p = starts;
    n = nblocks;
    data_start = data;
    cbytes = size;
    ascending = true;
    sorted = nullptr;
    for (size_t k = 0; k + 1 < n && ascending; ++k) ascending = at(k) < at(k + 1);
  }
  // The sorted copy, written to out (4 * n bytes); extent_of needs it when the starts are not ascending.
  void sort_into(uint8_t* out) noexcept {
    memcpy(out, p, 4 * n);
    starts_sort(out, n);
    sorted = out;
  }
  int32_t at(size_t j) const noexcept { return as_signed32(le_load32(p + 4 * j)); }
  status extent_of(size_t j, block_extent* e) const noexcept {
    if (j >= n) return make_error(errc::out_of_range, TESSERA_MSG("chunk: block index past the chunk's blocks"));
    const int32_t st = at(j);
    if (st < 0 || static_cast<uint64_t>(st) < data_start || static_cast<uint64_t>(st) >= cbytes)
      return make_error(errc::corrupt, TESSERA_MSG("chunk: block start out of bounds"));
    uint64_t end = cbytes;
    if (ascending) {
      if (j + 1 < n) end = static_cast<uint64_t>(at(j + 1));
    } else {
      // The first sorted start above st (negative ones, as unsigned, lie above cbytes and never end a block).
      size_t lo = 0, hi = n;
      while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (le_load32(sorted + 4 * mid) <= static_cast<uint32_t>(st)) lo = mid + 1;
        else hi = mid;
      }
      if (lo < n && le_load32(sorted + 4 * lo) < end) end = le_load32(sorted + 4 * lo);
    }
    e->start = static_cast<uint64_t>(st);
    e->end = end;
    return ok_status();
  }
};

// A copied block's streams must end within its stored extent (up to the next block's start): past it, the copy
// holds other bytes than the chunk does, so the block would decode differently from a copy than in place.
status copied_block_check(const uint8_t* copy, uint64_t start, uint64_t end, size_t nstreams) noexcept {
  if (!block_streams_within(copy, start, end, nstreams))
    return make_error(errc::corrupt, TESSERA_MSG("chunk: a block's streams run past the next block's start"));
  return ok_status();
}

// Reading and decoding blocks in parallel (storages with concurrent reads): each worker builds a one-block
// chunk in its own buffer (the stored header, bstarts and dictionary, then the block's streams read from the
// storage), decodes it into its scratch and hands it on. No block waits for the others' reads.
struct parallel_blocks {
  chunk_decoder* d = nullptr;
  const chunk_block_request* request = nullptr;
  const chunk_blocks_reader* reader = nullptr;  // the chunk's prefix (header, bstarts, dictionary) and where it is stored
  uint8_t* buffers = nullptr;       // one per worker, buffer_size bytes each
  size_t buffer_size = 0;
  uint32_t nworkers = 0;
  first_error error;

  static void task(void* context, size_t i, uint32_t worker) noexcept {
    auto& j = *static_cast<parallel_blocks*>(context);
    if (j.error.any()) return;
    if (worker >= j.nworkers) {
      j.error.set(make_error(errc::invalid_argument, TESSERA_MSG("executor: a task ran with a worker index past executor.workers")));
      return;
    }
    const chunk_block_request& r = *j.request;
    const size_t nblock = r.block(r.context, i);
    auto chunk = chunk_blocks_read(*j.reader, nblock, 1,
                                   bytes_mut(j.buffers + static_cast<size_t>(worker) * j.buffer_size, j.buffer_size));
    detail::code_status st = chunk.ok() ? detail::code_status() : detail::code_status(chunk.err());
    bytes_view decoded;
    size_t begin = 0, end = SIZE_MAX;
    if (r.range != nullptr) r.range(r.context, i, &begin, &end);
    if (st.ok()) st = chunk_block_decode_on(*j.d, worker, *chunk, nblock, begin, end, &decoded);
    if (st.ok()) st = r.consume(r.context, i, decoded, worker);
    if (!st.ok()) j.error.set(st);
  }
};

}  // namespace

detail::code_status frame_trailer_locate(const frame_info& info, bytes_view tail, uint64_t* trailer_off,
                            uint32_t* trailer_len) noexcept {
  auto tlr = trailer_len_parse(tail);
  if (!tlr.ok()) return tlr.err();
  const uint64_t tl = *tlr;
  if (tl < kFrameTrailerMinLen || tl > INT32_MAX || tl > info.frame_len - kFrameHeaderMinLen)
    return make_error(errc::malformed, TESSERA_MSG("frame: trailer length out of range"));
  const uint64_t off = info.nbytes > 0 ? info.frame_len - tl : info.header_len;
  if (off < info.header_len || off + tl > info.frame_len)
    return make_error(errc::malformed, TESSERA_MSG("frame: trailer outside the frame"));
  *trailer_off = off;
  *trailer_len = static_cast<uint32_t>(tl);
  return ok_status();
}

result<uint64_t> frame_index_pos(const frame_info& info, bool sparse, uint64_t trailer_off) noexcept {
  const uint64_t pos = info.header_len + (sparse ? 0 : static_cast<uint64_t>(info.cbytes));
  if ((!sparse && info.cbytes > static_cast<int64_t>(info.frame_len)) || pos + kChunkHeaderMinSize > trailer_off)
    return make_error(errc::malformed, TESSERA_MSG("frame: index chunk outside the frame"));
  return pos;
}

detail::code_status frame_index_check(const frame_info& info, uint64_t pos, uint64_t trailer_off, bytes_view head,
                         chunk_header* h, int64_t* n) noexcept {
  TESSERA_TRY(chunk_header_parse(head, *h));
  const chunk_header* const ih = h;
  if (static_cast<uint64_t>(ih->cbytes) > trailer_off - pos) return make_error(errc::malformed, TESSERA_MSG("frame: index chunk runs into the trailer"));
  if (ih->nbytes % 8 != 0) return make_error(errc::malformed, TESSERA_MSG("frame: index chunk size not a multiple of 8"));
  const int64_t count = ih->nbytes / 8;
  if (info.nchunks >= 0 && count != info.nchunks) return make_error(errc::corrupt, TESSERA_MSG("frame: index chunk and header disagree on the number of chunks"));
  // Every chunk holds at least one byte: an index with more entries than the frame has bytes is lying.
  if (count > info.nbytes) return make_error(errc::corrupt, TESSERA_MSG("frame: more index entries than the frame has bytes"));
  *n = count;
  return ok_status();
}

namespace {

// The requested blocks decoded by the executor's workers, each reading its own block's streams (through
// `reader`) into its buffer (the state's worker scratch, reserved by the caller).
__attribute__((noinline)) status blocks_decode_parallel(chunk_decoder& d, const chunk_block_request& r,
                                                        const chunk_blocks_reader& reader, uint8_t* buffers,
                                                        size_t buffer_size) noexcept {
  const executor& ex = chunk_decoder_executor(d);
  parallel_blocks job;
  job.d = &d;
  job.request = &r;
  job.reader = &reader;
  job.buffers = buffers;
  job.buffer_size = buffer_size;
  job.nworkers = ex.workers;
  executor_run(ex, r.count, parallel_blocks::task, &job);
  return job.error.result();
}

// What lazy_chunk_get leaves to its caller: decode (or hand back) *chunk, nothing (done), or the workers' reads.
enum class lazy_next : uint8_t { decode, done, parallel };

// blocks_decode_lazy's reading: *chunk is what the decoder reads for the request (in place, the whole chunk, or
// a sparse copy of it: header, bstarts, dictionary and the requested blocks' streams, bstarts pointing at the
// copies, built in the state's scratch); with `copying`, empty for a memcpyed chunk. Or the blocks are handled
// here (memcpyed blocks handed to the request: done), or *reader and *buffer_size are set for the workers to
// read their own blocks (parallel). Its own function: its frame is not under the decode.
__attribute__((noinline)) status lazy_chunk_get(frame_state& s, chunk_decoder& d, const chunk_source& src,
                                                const chunk_block_request& r, bool copying, bytes_view* chunk,
                                                lazy_next* next, chunk_blocks_reader* reader,
                                                size_t* buffer_size) noexcept {
  *next = lazy_next::decode;
  uint8_t hb[kChunkHeaderExtendedSize];
  auto hr = source_header(s, src, hb);
  if (!hr.ok()) return hr.err();
  const chunk_header& h = *hr;
  const uint64_t cbytes = static_cast<uint64_t>(h.cbytes);
  auto finish = [chunk](bytes_view c) -> status {
    *chunk = c;
    return ok_status();
  };
  const bytes_view v = frame_state_view(s, *src.st);
  if (!v.empty() && src.pos <= v.size() && cbytes <= v.size() - src.pos)
    return finish(bytes_view(v.data() + src.pos, static_cast<size_t>(cbytes)));
  auto whole = [&]() -> status {
    auto all = source_bytes(s, src, 0, static_cast<size_t>(cbytes), 0);
    if (!all.ok()) return all.err();
    return finish(bytes_view(*all, static_cast<size_t>(cbytes)));
  };
  if (h.special != chunk_special::none || h.vlblocks || h.lazy || h.nbytes == 0 || cbytes <= 256 || r.count == 0)
    return whole();
  if (copying && h.memcpyed) {  // not copied: the caller decodes it with frame_blocks_decode
    *chunk = bytes_view();
    return ok_status();
  }
  if (h.memcpyed) {  // blocks stored as they are: read each into scratch and hand it over, in this thread
    *next = lazy_next::done;
    for (size_t i = 0; i < r.count; ++i) {
      auto e = chunk_block_extent_get(h, bytes_view(), r.block(r.context, i));
      if (!e.ok()) return e.err();
      const uint64_t at = h.header_size + uint64_t{e->offset};
      if (at + e->size > cbytes) return make_error(errc::corrupt, TESSERA_MSG("chunk: memcpyed block past cbytes"));
      TESSERA_TRY(state_buffer_reserve(s, &s.scratch, &s.scratch_cap, e->size));
      TESSERA_TRY(storage_read(*src.st, src.pos + at, bytes_mut(s.scratch, e->size)));
      TESSERA_TRY(r.consume(r.context, i, bytes_view(s.scratch, e->size), 0));
    }
    return ok_status();
  }
  const uint64_t bstarts_end = h.header_size + uint64_t{4} * h.nblocks;
  if (bstarts_end > cbytes) return make_error(errc::truncated, TESSERA_MSG("chunk: bstarts run past cbytes"));
  uint64_t data_start = bstarts_end;
  if (h.dict) {
    uint8_t ds[4];
    if (bstarts_end + 4 > cbytes) return make_error(errc::truncated, TESSERA_MSG("chunk: dictionary size past cbytes"));
    TESSERA_TRY(storage_read(*src.st, src.pos + bstarts_end, bytes_mut(ds, 4)));
    const int32_t dsize = as_signed32(le_load32(ds));
    if (dsize <= 0 || dsize > kChunkMaxDictSize) return make_error(errc::malformed, TESSERA_MSG("chunk: invalid dictionary size"));
    data_start += 4 + static_cast<uint64_t>(dsize);
    if (data_start > cbytes) return make_error(errc::truncated, TESSERA_MSG("chunk: dictionary runs past cbytes"));
  }
  auto pre = source_bytes(s, src, 0, static_cast<size_t>(data_start), 0);
  if (!pre.ok()) return pre.err();
  stored_starts starts;
  starts.init(*pre + h.header_size, h.nblocks, data_start, cbytes);
  if (!starts.ascending) {
    TESSERA_TRY(state_buffer_reserve(s, &s.starts_sorted, &s.starts_sorted_cap, 4 * static_cast<size_t>(h.nblocks)));
    starts.sort_into(s.starts_sorted);
  }
  bool delta = false;
  for (uint8_t fid : h.filters)
    if (fid == static_cast<uint8_t>(filter_id::delta)) delta = true;
  // Pass 1: the sparse chunk's size. Block 0 goes first when delta needs it and it is not requested.
  bool has0 = false;
  bool later = false;
  uint64_t total = data_start;
  uint64_t largest = 0;
  for (size_t i = 0; i < r.count; ++i) {
    const size_t j = r.block(r.context, i);
    block_extent e{};
    TESSERA_TRY(starts.extent_of(j, &e));
    has0 |= j == 0;
    later |= j > 0;
    total += e.end - e.start;
    if (e.end - e.start > largest) largest = e.end - e.start;
    if (total > cbytes) return whole();  // blocks asked for more than once: the chunk itself is smaller
  }
  const executor& ex = chunk_decoder_executor(d);
  if (!copying && src.st->concurrent_reads && !delta && ex.run != nullptr && ex.workers > 1 && r.count > 1) {
    // Buffers of all workers: at most `workers` times a block's compressed size and the chunk's prefix.
    *buffer_size = static_cast<size_t>((data_start + largest + 15) / 16 * 16);
    if (*buffer_size > SIZE_MAX / ex.workers) return make_error(errc::overflow, TESSERA_MSG("chunk: block buffers overflow"));
    TESSERA_TRY(state_buffer_reserve(s, &s.worker_scratch, &s.worker_scratch_cap, *buffer_size * ex.workers));
    TESSERA_TRY(chunk_decoder_prepare(d, h));
    reader->src = src;
    reader->prefix = *pre;
    reader->header_size = h.header_size;
    reader->nblocks = static_cast<uint32_t>(h.nblocks);
    reader->blocksize = static_cast<uint32_t>(h.blocksize);
    reader->data_start = data_start;
    reader->cbytes = cbytes;
    reader->ascending = starts.ascending;
    reader->sorted = starts.sorted;
    reader->nstreams = static_cast<uint32_t>(block_nstreams(h, 0));
    reader->nstreams_last = static_cast<uint32_t>(block_nstreams(h, h.nblocks - 1));
    *next = lazy_next::parallel;
    return ok_status();
  }
  const bool add0 = delta && later && !has0;
  block_extent e0{};
  if (add0) {
    TESSERA_TRY(starts.extent_of(0, &e0));
    total += e0.end - e0.start;
    if (total > cbytes) return whole();
  }
  if (total > INT32_MAX) return make_error(errc::overflow, TESSERA_MSG("chunk: block too large"));
  // The sparse chunk at the scratch's start, the stored starts kept after it while the copies' starts are written.
  const size_t starts_size = 4 * static_cast<size_t>(h.nblocks);
  const bool pre_in_scratch = *pre == s.scratch;
  TESSERA_TRY(state_buffer_reserve(s, &s.scratch, &s.scratch_cap, static_cast<size_t>(total) + starts_size));
  uint8_t* m = s.scratch;
  if (!pre_in_scratch) memcpy(m, *pre, static_cast<size_t>(data_start));
  memcpy(m + total, m + h.header_size, starts_size);
  starts.p = m + total;
  // Pass 2: copy the streams (adjacent ones with one read) and point the starts at the copies. Starts of blocks
  // not requested point at the first copy: never decoded, but in bounds.
  for (size_t j = 0; j < h.nblocks; ++j) le_store32(m + h.header_size + 4 * j, static_cast<uint32_t>(data_start));
  uint64_t at = data_start;
  uint64_t run_src = 0, run_dst = 0, run_len = 0;
  auto flush = [&]() -> status {
    if (run_len == 0) return ok_status();
    const status st = storage_read(*src.st, src.pos + run_src, bytes_mut(m + run_dst, static_cast<size_t>(run_len)));
    run_len = 0;
    return st;
  };
  auto place = [&](size_t j, const block_extent& e) -> status {
    const uint64_t n = e.end - e.start;
    if (run_len > 0 && run_src + run_len == e.start && run_dst + run_len == at) {
      run_len += n;
    } else {
      TESSERA_TRY(flush());
      run_src = e.start;
      run_dst = at;
      run_len = n;
    }
    le_store32(m + h.header_size + 4 * j, static_cast<uint32_t>(at));
    at += n;
    return ok_status();
  };
  if (add0) TESSERA_TRY(place(0, e0));
  for (size_t i = 0; i < r.count; ++i) {
    const size_t j = r.block(r.context, i);
    block_extent e{};
    TESSERA_TRY(starts.extent_of(j, &e));
    TESSERA_TRY(place(j, e));
  }
  TESSERA_TRY(flush());
  auto copied = [&](size_t j) -> status {
    block_extent e{};
    TESSERA_TRY(starts.extent_of(j, &e));
    const uint64_t start = le_load32(m + h.header_size + 4 * j);
    return copied_block_check(m, start, start + (e.end - e.start), block_nstreams(h, j));
  };
  if (add0) TESSERA_TRY(copied(0));
  for (size_t i = 0; i < r.count; ++i) TESSERA_TRY(copied(r.block(r.context, i)));
  le_store32(m + 12, static_cast<uint32_t>(total));
  return finish(bytes_view(m, static_cast<size_t>(total)));
}

}  // namespace

status blocks_decode_lazy(frame_state& s, chunk_decoder& d, const chunk_source& src, const chunk_block_request& r,
                          bytes_view* copy) noexcept {
  bytes_view chunk;
  lazy_next next = lazy_next::decode;
  size_t buffer_size = 0;
  TESSERA_TRY(lazy_chunk_get(s, d, src, r, copy != nullptr, &chunk, &next, &s.workers_reader, &buffer_size));
  if (next == lazy_next::done) return ok_status();
  if (next == lazy_next::parallel)
    return blocks_decode_parallel(d, r, s.workers_reader, s.worker_scratch, buffer_size);
  if (copy == nullptr) return chunk_decode_blocks(d, chunk, r);
  *copy = chunk;
  return ok_status();
}

// The index's decoder (serial, no block size limit). Its options live in this frame, not in index_decode's,
// which stays on the stack through the whole decode: it sits on the deepest paths of create, commit and close.
namespace {
__attribute__((noinline)) status index_decoder_init(chunk_decoder& d, const allocator& alloc) noexcept {
  chunk_decoder_options o;
  o.max_blocksize = 0;
  return chunk_decoder_init(d, alloc, o);
}
}  // namespace

status index_decode(frame_state& s, bytes_view chunk, int64_t n) noexcept {
  auto h = chunk_header_read(chunk);
  if (!h.ok()) return h.err();
  if (static_cast<int64_t>(h->nbytes) != n * 8) return make_error(errc::corrupt, TESSERA_MSG("frame: index chunk size mismatch"));
  if (n == 0) return ok_status();
  // Decode into the chunk table's memory viewed as bytes, then spread the int64 offsets backwards.
  const size_t raw = static_cast<size_t>(n) * 8;
  auto* bytes = reinterpret_cast<uint8_t*>(s.chunks);
  if (h->memcpyed) {
    if (chunk.size() < h->header_size + raw) return make_error(errc::truncated, TESSERA_MSG("frame: index chunk truncated"));
    memmove(bytes, chunk.data() + h->header_size, raw);
  } else {
    chunk_decoder d;
    TESSERA_TRY(index_decoder_init(d, s.alloc));
    auto r = chunk_decode(d, chunk, bytes_mut(bytes, raw));
    if (!r.ok()) return r.err();
  }
  static_assert(sizeof(frame_chunk_entry) >= 8, "entries hold an offset");
  for (int64_t i = n - 1; i >= 0; --i) {
    const uint64_t v = le_load64(bytes + 8 * i);
    frame_chunk_entry e;
    e.offset = as_signed(v);
    s.chunks[i] = e;
  }
  return ok_status();
}

status frame_open_cframe_state(frame_state& s) noexcept { return frame_read_common(s, false); }

status frame_open_sframe_state(frame_state& s) noexcept {
  sparse_entry idx;
  TESSERA_TRY(idx.open_name(s, kSparseIndexName, storage_open::read));
  s.st = idx.st;
  s.base = 0;
  status e = frame_read_common(s, true);
  s.st = storage{};
  TESSERA_TRY(e);
  return idx.close();
}

status frame_chunk_entry_nbytes(frame_state& s, int64_t i, int32_t* out) noexcept { return index_entry_nbytes(s, i, out); }

status frame_table_entry_nbytes(frame_state& s, int64_t i, int32_t* out) noexcept {
  TESSERA_TRY(table_in_memory_check(s));
  frame_chunk_entry e = s.chunks[i];
  if (e.nbytes < 0 || e.cbytes < 0 || e.blocksize < 0) TESSERA_TRY(index_entry_sizes_read(s, i, e));
  *out = e.nbytes;
  return ok_status();
}

result<frame_chunk_ref> chunk_locate(frame_state& s, int64_t nchunk) noexcept {
  TESSERA_TRY(chunk_index_check(&s, nchunk));
  frame_chunk_ref r;
  frame_chunk_entry e;
  TESSERA_TRY(index_entry_get(s, nchunk, &e));
  auto sp = index_special(e.offset);
  if (!sp.ok()) return sp.err();
  r.special = *sp;
  r.offset = e.offset;
  int32_t nb = 0;
  TESSERA_TRY(index_entry_nbytes(s, nchunk, &nb));
  TESSERA_TRY(index_entry_get(s, nchunk, &e));
  r.nbytes = nb;
  r.cbytes = e.cbytes;
  r.blocksize = e.blocksize;
  return r;
}

result<frame_chunk_ref> chunk_locate_table(frame_state& s, int64_t nchunk) noexcept {
  TESSERA_TRY(chunk_index_check(&s, nchunk));
  TESSERA_TRY(table_in_memory_check(s));
  frame_chunk_ref r;
  auto sp = index_special(s.chunks[nchunk].offset);
  if (!sp.ok()) return sp.err();
  r.special = *sp;
  r.offset = s.chunks[nchunk].offset;
  TESSERA_TRY(frame_table_entry_nbytes(s, nchunk, &r.nbytes));
  r.cbytes = s.chunks[nchunk].cbytes;
  r.blocksize = s.chunks[nchunk].blocksize;
  return r;
}

bool frame_blocks_readable_by_tasks(const frame& f, bool parallel) noexcept {
  const frame_state* s = frame_access::get(f);
  return s != nullptr && (s->sparse || !parallel || s->st.concurrent_reads);
}

bool frame_chunks_in_place(const frame& f) noexcept {
  const frame_state* s = frame_access::get(f);
  return s != nullptr && !s->sparse && !s->options.writable && !frame_state_view(*s, s->st).empty();
}

result<bool> frame_blocks_reader_init(frame& f, int64_t nchunk, uint32_t max_blocks, uint8_t* prefix,
                                      chunk_blocks_reader* out, sparse_entry* entry) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  if (s->sparse && entry == nullptr) return false;
  auto ref = chunk_locate(*s, nchunk);
  if (!ref.ok()) return ref.err();
  if (ref->special != chunk_special::none) return false;
  sparse_entry none;
  auto src = chunk_source_at(*s, ref->offset, s->sparse ? *entry : none);
  if (!src.ok()) return src.err();
  // The header and the block starts of up to max_blocks blocks with one read (a file pays a call per read; the
  // prefix has room for them): the bytes past the chunk's own prefix are not used.
  const uint64_t want = kChunkHeaderExtendedSize + uint64_t{4} * max_blocks;
  const size_t have = static_cast<size_t>(src->limit < want ? src->limit : want);
  if (have < kChunkHeaderMinSize) return make_error(errc::corrupt, TESSERA_MSG("frame: chunk position too close to the data's end"));
  TESSERA_TRY(storage_read(*src->st, src->pos, bytes_mut(prefix, have)));
  auto hr = chunk_header_read(bytes_view(prefix, have < kChunkHeaderExtendedSize ? have : kChunkHeaderExtendedSize));
  if (!hr.ok()) return hr.err();
  const chunk_header& h = *hr;
  if (static_cast<uint64_t>(h.cbytes) > src->limit) return make_error(errc::corrupt, TESSERA_MSG("frame: chunk runs past the frame's data"));
  if (h.special != chunk_special::none || h.dict || h.vlblocks || h.lazy || h.nblocks > max_blocks) return false;
  for (uint8_t fid : h.filters)
    if (fid == static_cast<uint8_t>(filter_id::delta)) return false;
  chunk_blocks_reader r;
  r.src = *src;
  r.prefix = prefix;
  r.header_size = h.header_size;
  r.nblocks = static_cast<uint32_t>(h.nblocks);
  r.blocksize = static_cast<uint32_t>(h.blocksize);
  r.cbytes = static_cast<uint64_t>(h.cbytes);
  r.memcpyed = h.memcpyed;
  r.nstreams = static_cast<uint32_t>(block_nstreams(h, 0));
  r.nstreams_last = static_cast<uint32_t>(block_nstreams(h, h.nblocks - 1));
  r.data_start = h.memcpyed ? h.header_size : h.header_size + uint64_t{4} * h.nblocks;
  if (r.data_start > r.cbytes) return make_error(errc::truncated, TESSERA_MSG("chunk: bstarts run past cbytes"));
  if (h.memcpyed && (r.cbytes - h.header_size) < static_cast<uint64_t>(h.nbytes))
    return make_error(errc::truncated, TESSERA_MSG("chunk: memcpyed chunk shorter than its nbytes"));
  // The prefix was read whole: data_start is at most the header and max_blocks starts (want) and at most cbytes,
  // which fits the source's limit, so at most `have`.
  if (!h.memcpyed) {
    stored_starts starts;
    starts.init(prefix + h.header_size, h.nblocks, r.data_start, r.cbytes);
    r.ascending = starts.ascending;
    if (!starts.ascending) {  // the sorted copy after the stored starts: frame_blocks_prefix_size has room for it
      starts.sort_into(prefix + r.data_start);
      r.sorted = starts.sorted;
    }
  }
  *out = r;
  return true;
}

namespace {

stored_starts reader_starts(const chunk_blocks_reader& r) noexcept {
  stored_starts st;
  st.p = r.prefix + r.header_size;
  st.n = r.nblocks;
  st.data_start = r.data_start;
  st.cbytes = r.cbytes;
  st.ascending = r.ascending;
  st.sorted = r.sorted;
  return st;
}

}  // namespace

result<size_t> chunk_blocks_size(const chunk_blocks_reader& r, size_t first, size_t count) noexcept {
  if (count == 0 || first >= r.nblocks || count > r.nblocks - first)
    return make_error(errc::out_of_range, TESSERA_MSG("chunk: blocks past the chunk's blocks"));
  if (r.memcpyed) return count * size_t{r.blocksize};
  const stored_starts st = reader_starts(r);
  uint64_t total = r.data_start;
  for (size_t j = first; j < first + count; ++j) {
    block_extent e{};
    TESSERA_TRY(st.extent_of(j, &e));
    total += e.end - e.start;
  }
  if (total > INT32_MAX) return make_error(errc::overflow, TESSERA_MSG("chunk: block too large"));
  return static_cast<size_t>(total);
}

result<bytes_view> chunk_blocks_read(const chunk_blocks_reader& r, size_t first, size_t count, bytes_mut buffer) noexcept {
  auto need = chunk_blocks_size(r, first, count);
  if (!need.ok()) return need.err();
  if (*need > buffer.size()) return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: buffer smaller than the blocks"));
  uint8_t* m = buffer.data();
  if (r.memcpyed) {  // the blocks as they are: the last one may end at cbytes, short of a whole block
    const uint64_t at = r.header_size + uint64_t{r.blocksize} * first;
    const uint64_t n = at + *need <= r.cbytes ? *need : r.cbytes - at;
    TESSERA_TRY(storage_read(*r.src.st, r.src.pos + at, bytes_mut(m, static_cast<size_t>(n))));
    return bytes_view(m, static_cast<size_t>(n));
  }
  const stored_starts st = reader_starts(r);
  memcpy(m, r.prefix, static_cast<size_t>(r.data_start));
  uint64_t at = r.data_start;
  block_extent run{};
  uint64_t run_at = at;
  for (size_t j = first; j < first + count; ++j) {
    block_extent e{};
    TESSERA_TRY(st.extent_of(j, &e));
    if (j > first && e.start != run.end) {  // not adjacent to the run: read what the run has so far
      TESSERA_TRY(storage_read(*r.src.st, r.src.pos + run.start, bytes_mut(m + run_at, static_cast<size_t>(run.end - run.start))));
      run_at = at;
      run.start = e.start;
    } else if (j == first) {
      run.start = e.start;
    }
    run.end = e.end;
    le_store32(m + r.header_size + 4 * j, static_cast<uint32_t>(at));
    at += e.end - e.start;
  }
  TESSERA_TRY(storage_read(*r.src.st, r.src.pos + run.start, bytes_mut(m + run_at, static_cast<size_t>(run.end - run.start))));
  for (size_t j = first; j < first + count; ++j) {
    const uint64_t start = le_load32(m + r.header_size + 4 * j);
    const uint64_t end = j + 1 < first + count ? le_load32(m + r.header_size + 4 * (j + 1)) : at;
    TESSERA_TRY(copied_block_check(m, start, end, j + 1 == r.nblocks ? r.nstreams_last : r.nstreams));
  }
  le_store32(m + 12, static_cast<uint32_t>(at));
  return bytes_view(m, static_cast<size_t>(at));
}

namespace {

// chunk_bytes for the chunk located as ref. Its own function: its source and entry are on the stack after the
// index was read, not under the index's reads.
__attribute__((noinline)) result<bytes_view> chunk_bytes_of(frame_state& s, const frame_chunk_ref* ref,
                                                            owned_array<uint8_t>* buffer, bool may_view) noexcept {
  if (ref->special != chunk_special::none) {
    uint8_t* out = nullptr;
    if (buffer != nullptr) {
      TESSERA_TRY(buffer->allocate(s.alloc, kChunkStoredOverhead));
      out = buffer->data();
    } else {
      TESSERA_TRY(state_buffer_reserve(s, &s.scratch, &s.scratch_cap, kChunkStoredOverhead));
      out = s.scratch;
    }
    special_chunk_write(ref->special, ref->nbytes, s.info.typesize, s.info.blocksize, out);
    return bytes_view(out, kChunkStoredOverhead);
  }
  sparse_entry entry;
  auto src = chunk_source_at(s, ref->offset, entry);
  if (!src.ok()) return src.err();
  const size_t cb = static_cast<size_t>(ref->cbytes);
  if (static_cast<uint64_t>(cb) > src->limit) return make_error(errc::corrupt, TESSERA_MSG("frame: chunk runs past the frame's data"));
  if (!s.sparse && may_view) {
    const bytes_view v = frame_state_view(s, *src->st);
    if (!v.empty() && src->pos <= v.size() && cb <= v.size() - src->pos) return bytes_view(v.data() + src->pos, cb);
  }
  uint8_t* out = nullptr;
  if (buffer != nullptr) {
    TESSERA_TRY(buffer->allocate(s.alloc, cb));
    out = buffer->data();
  } else {
    TESSERA_TRY(state_buffer_reserve(s, &s.scratch, &s.scratch_cap, cb));
    out = s.scratch;
  }
  TESSERA_TRY(storage_read(*src->st, src->pos, bytes_mut(out, cb)));
  TESSERA_TRY(entry.close());
  return bytes_view(out, cb);
}

}  // namespace

result<bytes_view> chunk_bytes(frame_state& s, int64_t nchunk, owned_array<uint8_t>* buffer, bool may_view) noexcept {
  auto ref = chunk_locate(s, nchunk);
  if (!ref.ok()) return ref.err();
  return chunk_bytes_of(s, &*ref, buffer, may_view);
}

// A chunk read from the frame decoded into out, after its blocks were checked against the state's budget. Its
// own function: the chunk's header is on the stack beside the decode, not under the chunk's read.
__attribute__((noinline)) result<size_t> chunk_decode_checked(frame_state& s, chunk_decoder& d, bytes_view chunk,
                                                              bytes_mut out) noexcept {
  auto h = chunk_header_read(chunk);
  if (h.ok()) TESSERA_TRY(decode_scratch_check(s, d, *h));
  return chunk_decode(d, chunk, out);
}

// frame_blocks_decode's parts after the chunk was located: on the stack after the index was read, not under
// the index's reads (their own functions).
__attribute__((noinline)) status special_blocks_decode(frame_state& s, chunk_decoder& d, const frame_chunk_ref& ref,
                                                       const chunk_block_request& request) noexcept {
  uint8_t sc[kChunkStoredOverhead];
  special_chunk_write(ref.special, ref.nbytes, s.info.typesize, s.info.blocksize, sc);
  return chunk_decode_blocks(d, bytes_view(sc, sizeof sc), request);
}

// The stored chunk's header at src checked against the state's budget for the decoder's scratch.
__attribute__((noinline)) status source_scratch_check(frame_state& s, chunk_decoder& d,
                                                      const chunk_source& src) noexcept {
  uint8_t hb[kChunkHeaderExtendedSize];
  auto h = source_header(s, src, hb);
  if (!h.ok()) return h.err();
  return decode_scratch_check(s, d, *h);
}

__attribute__((noinline)) status stored_blocks_decode(frame_state& s, chunk_decoder& d, const frame_chunk_ref& ref,
                                                      const chunk_block_request& request) noexcept {
  sparse_entry entry;
  auto src = chunk_source_at(s, ref.offset, entry);
  if (!src.ok()) return src.err();
  TESSERA_TRY(source_scratch_check(s, d, *src));
  TESSERA_TRY(blocks_decode_lazy(s, d, *src, request));
  return entry.close();
}

}  // namespace detail

// ---- Public API ------------------------------------------------------------------------------------------------

namespace detail {

status state_install(frame& f, const allocator& alloc, const frame_open_options& options, const storage* st,
                     const storage_directory* dir, state_setup setup, const void* context) noexcept {
  TESSERA_TRY(frame_release(f));
  auto sr = state_new(alloc);
  if (!sr.ok()) return sr.err();
  frame_state* s = *sr;
  s->options = options;
  if (st != nullptr) {
    s->st = *st;
    s->base = options.base_offset;
  }
  if (dir != nullptr) {
    s->dir = *dir;
    s->sparse = true;
  }
  status e = setup(*s, context);
  if (!e.ok()) {
    state_free(s);
    return e;
  }
  frame_access::set(f, s);
  return ok_status();
}

}  // namespace detail

namespace {

status open_state(frame_state& s, const void*) noexcept {
  if (s.options.writable && !s.sparse && s.st.write == nullptr)
    return make_error(errc::read_only, TESSERA_MSG("frame: writable open of a read-only storage"));
  return s.sparse ? detail::frame_open_sframe_state(s) : detail::frame_open_cframe_state(s);
}

status open_with(frame& f, const allocator& alloc, const frame_open_options& options, const storage* st,
                 const storage_directory* dir) noexcept {
  return detail::state_install(f, alloc, options, st, dir, open_state, nullptr);
}

}  // namespace

status frame_open(frame& f, const storage& st, const allocator& alloc, const frame_open_options& options) noexcept {
  return open_with(f, alloc, options, &st, nullptr);
}

status frame_open_sparse(frame& f, const storage_directory& dir, const allocator& alloc,
                         const frame_open_options& options) noexcept {
  TESSERA_TRY(open_with(f, alloc, options, nullptr, &dir));
  // Tidying only: the frame is open and right whatever the sweep meets (the next writable open tries again).
  (void)detail::sframe_sweep(*frame_access::get(f));
  return ok_status();
}

uint64_t frame_max_alloc(const frame& f) noexcept {
  const frame_state* s = frame_access::get(f);
  return s == nullptr ? kDefaultMaxAlloc : s->options.max_alloc;
}

status frame_open_again(frame& out, const frame& f, const allocator& alloc) noexcept {
  const frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  if (&out == &f) return make_error(errc::invalid_argument, TESSERA_MSG("frame_open_again: the same frame"));
  frame_open_options o = s->options;
  o.writable = false;
  o.encoder = nullptr;
  // A writer may commit while this reads: its header rewrite is the one step that changes what a reader sees,
  // so the header is read again after the open, and the open is retried until both reads agree.
  status last = ok_status();
  for (int attempt = 0; attempt < 8; ++attempt) {
    frame fresh;
    last = s->sparse ? open_with(fresh, alloc, o, nullptr, &s->dir)
                     : open_with(fresh, alloc, o, &s->st, nullptr);
    if (last.ok() && !s->sparse) {
      const frame_state* n = frame_access::get(fresh);
      uint8_t again[kFrameHeaderMinLen];
      last = storage_read(n->st, n->base, bytes_mut(again, sizeof again));
      if (last.ok() && memcmp(again, n->header, sizeof again) != 0)
        last = make_error(errc::corrupt, TESSERA_MSG("frame: the header kept changing while it was read (a writer committing)"));
    }
    if (last.ok()) {
      out = tessera::cxx::move(fresh);
      return ok_status();
    }
    if (last.code == errc::out_of_memory || last.code == errc::resource_limit || last.code == errc::invalid_argument)
      break;
  }
  return last;
}

status frame_refresh(frame& f) noexcept {
  const frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  if (s->options.writable) return make_error(errc::invalid_argument, TESSERA_MSG("frame_refresh: a writable frame is its own writer"));
  frame fresh;
  TESSERA_TRY(frame_open_again(fresh, f, s->alloc));
  f = tessera::cxx::move(fresh);
  return ok_status();
}

const frame_info* frame_info_get(const frame& f) noexcept {
  const frame_state* s = frame_access::get(f);
  return s == nullptr ? nullptr : &s->info;
}

namespace {

// Entry i of a metalayer table (fixed or variable-length); `past` says that i is past its end.
result<span<const char>> entry_name(const frame_meta_entry* e, uint32_t n, uint32_t i, const char* past) noexcept {
  if (i >= n) return make_error(errc::out_of_range, past);
  return span<const char>(e[i].name, e[i].name_len);
}

// The entry of a metalayer table with that name, or nullptr.
const frame_meta_entry* entry_find(const frame_meta_entry* e, uint32_t n, span<const char> name) noexcept {
  for (uint32_t i = 0; i < n; ++i)
    if (detail::names_equal(e[i], name)) return &e[i];
  return nullptr;
}

}  // namespace

result<span<const char>> frame_meta_name(const frame& f, uint32_t i) noexcept {
  const frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  return entry_name(s->metas, s->nmetas, i, TESSERA_MSG("frame: metalayer number past the metalayers"));
}

result<bytes_view> frame_meta_find(const frame& f, span<const char> name) noexcept {
  const frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  const frame_meta_entry* e = entry_find(s->metas, s->nmetas, name);
  if (e == nullptr) return make_error(errc::out_of_range, TESSERA_MSG("frame: no fixed metalayer with that name"));
  return bytes_view(s->header + e->content_off, e->content_len);
}

result<span<const char>> frame_vlmeta_name(const frame& f, uint32_t i) noexcept {
  const frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  return entry_name(s->vlmetas, s->nvlmetas, i, TESSERA_MSG("frame: vlmetalayer number past the vlmetalayers"));
}

result<bytes_view> frame_vlmeta_raw(const frame& f, span<const char> name) noexcept {
  const frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  const frame_meta_entry* e = entry_find(s->vlmetas, s->nvlmetas, name);
  if (e == nullptr) return make_error(errc::out_of_range, TESSERA_MSG("frame: no vlmetalayer with that name"));
  return bytes_view(e->data, e->content_len);
}

result<size_t> frame_vlmeta_nbytes(const frame& f, span<const char> name) noexcept {
  auto raw = frame_vlmeta_raw(f, name);
  if (!raw.ok()) return raw.err();
  auto h = chunk_header_read(*raw);
  if (!h.ok()) return h.err();
  if (static_cast<size_t>(h->cbytes) != raw->size()) return make_error(errc::corrupt, TESSERA_MSG("frame: vlmetalayer chunk size mismatch"));
  return static_cast<size_t>(h->nbytes);
}

result<size_t> frame_vlmeta_decode(const frame& f, chunk_decoder& d, span<const char> name, bytes_mut out) noexcept {
  auto n = frame_vlmeta_nbytes(f, name);
  if (!n.ok()) return n.err();
  if (*n == 0) return size_t{0};
  auto raw = frame_vlmeta_raw(f, name);
  if (!raw.ok()) return raw.err();
  return chunk_decode(d, *raw, out);
}

result<frame_chunk_ref> frame_chunk_locate(frame& f, int64_t nchunk) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  return detail::chunk_locate(*s, nchunk);
}

result<int64_t> frame_chunk_special_run(frame& f, int64_t nchunk) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  TESSERA_TRY(detail::chunk_index_check(s, nchunk));
  return detail::index_special_run(*s, nchunk, s->nchunks);
}

result<bytes_view> frame_chunk_read(frame& f, int64_t nchunk, owned_array<uint8_t>& buffer) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  // A writable frame's next append may move its storage (a growable buffer reallocates): a view handed to the
  // caller could dangle, so its chunks are always copied into `buffer`.
  return detail::chunk_bytes(*s, nchunk, &buffer, !s->options.writable);
}

result<size_t> frame_chunk_decode(frame& f, chunk_decoder& d, int64_t nchunk, bytes_mut out) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  auto bytes = detail::chunk_bytes(*s, nchunk, nullptr);
  if (!bytes.ok()) return bytes.err();
  return detail::chunk_decode_checked(*s, d, *bytes, out);
}

namespace detail {

result<frame_chunk_ref> frame_chunk_locate_table(frame& f, int64_t nchunk) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  return chunk_locate_table(*s, nchunk);
}

result<size_t> frame_chunk_decode_table(frame& f, chunk_decoder& d, int64_t nchunk, bytes_mut out) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  auto ref = chunk_locate_table(*s, nchunk);
  if (!ref.ok()) return ref.err();
  auto bytes = chunk_bytes_of(*s, &*ref, nullptr, true);
  if (!bytes.ok()) return bytes.err();
  return chunk_decode_checked(*s, d, *bytes, out);
}

}  // namespace detail

namespace {

// frame_block_decode's request: one block, copied out.
struct block_copy {
  size_t nblock = 0;
  bytes_mut out;
  size_t size = 0;
  static size_t block(void* context, size_t) noexcept { return static_cast<block_copy*>(context)->nblock; }
  static status consume(void* context, size_t, bytes_view decoded, uint32_t) noexcept {
    auto& c = *static_cast<block_copy*>(context);
    if (c.out.size() < decoded.size()) return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: output shorter than the block"));
    memcpy(c.out.data(), decoded.data(), decoded.size());
    c.size = decoded.size();
    return ok_status();
  }
};

}  // namespace

result<size_t> frame_block_decode(frame& f, chunk_decoder& d, int64_t nchunk, size_t nblock, bytes_mut out) noexcept {
  block_copy c;
  c.nblock = nblock;
  c.out = out;
  chunk_block_request r;
  r.count = 1;
  r.block = block_copy::block;
  r.consume = block_copy::consume;
  r.context = &c;
  TESSERA_TRY(frame_blocks_decode(f, d, nchunk, r));
  return c.size;
}

status frame_blocks_decode(frame& f, chunk_decoder& d, int64_t nchunk, const chunk_block_request& request) noexcept {
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  if (request.count > 0 && (request.block == nullptr || request.consume == nullptr))
    return make_error(errc::invalid_argument, TESSERA_MSG("frame_blocks_decode: request without block or consume"));
  auto ref = detail::chunk_locate(*s, nchunk);
  if (!ref.ok()) return ref.err();
  if (ref->special != chunk_special::none) return detail::special_blocks_decode(*s, d, *ref, request);
  return detail::stored_blocks_decode(*s, d, *ref, request);
}

namespace detail {

status frame_blocks_copy(frame& f, chunk_decoder& d, int64_t nchunk, const chunk_block_request& request,
                         bytes_view* copy) noexcept {
  *copy = bytes_view();
  frame_state* s = frame_access::get(f);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("frame: not open"));
  if (request.count > 0 && request.block == nullptr)
    return make_error(errc::invalid_argument, TESSERA_MSG("frame_blocks_copy: request without block"));
  auto ref = chunk_locate(*s, nchunk);
  if (!ref.ok()) return ref.err();
  if (ref->special != chunk_special::none) return ok_status();
  sparse_entry entry;
  auto src = chunk_source_at(*s, ref->offset, entry);
  if (!src.ok()) return src.err();
  // A sparse frame's entry in memory would be viewed after it is closed: not copied.
  if (s->sparse && !frame_state_view(*s, *src->st).empty()) return ok_status();
  {
    uint8_t hb[kChunkHeaderExtendedSize];
    auto h = source_header(*s, *src, hb);
    if (!h.ok()) return h.err();
    TESSERA_TRY(decode_scratch_check(*s, d, *h));
  }
  TESSERA_TRY(blocks_decode_lazy(*s, d, *src, request, copy));
  return entry.close();
}

}  // namespace detail

bool frame_dirty(const frame& f) noexcept {
  const frame_state* s = frame_access::get(f);
  return s != nullptr && s->dirty;
}

}  // namespace tessera
