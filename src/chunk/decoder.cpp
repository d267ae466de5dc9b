// SPDX-License-Identifier: BSD-3-Clause
// Decoding chunks: the whole chunk (blocks over the executor's workers) or one block alone.
#include "tessera/cxx.hpp"
#include <string.h>

#include "chunk/chunk_internal.hpp"
#include "codecs/blosclz.hpp"
#include "codecs/codec.hpp"
#include "codecs/lz4_block.hpp"
#include "codecs/ndlz.hpp"
#include "codecs/zfp.hpp"
#include "filters/elements_unshuffle.hpp"
#include "filters/filters.hpp"
#include "tessera/shuffle.hpp"

namespace tessera {

using detail::chunk_layout;
using detail::chunk_load_i32;

// Bytes of elements gathered through the worker's buffer (gather::stack): an element or a short run of them.
constexpr size_t kGatherStack = 256;

struct chunk_decoder::worker {
  // What the blocks met so far needed: the filters' temporaries, then the decoded block a block request hands
  // on (block_decode). Allocated when first needed, grown on demand, on the caller's thread.
  uint8_t* scratch = nullptr;
  size_t scratch_size = 0;
  bool fixed = false;  // options.fixed_scratch: made at init for max_blocksize, larger blocks refused
  detail::codec_context codecs;
  const chunk_plugins* plugins = nullptr;  // the decoder's options.plugins
  const chunk_nd_geometry* geometry = nullptr;  // the decoder's options.geometry (moves with the decoder)
  detail::code_status err;
  // A few elements of a block decoded in place, on their way to their places (gather::stack): in the worker,
  // not on the stack of every block decode (a firmware task's stack is small).
  uint8_t gather[kGatherStack];
};

namespace {

constexpr size_t kScratchAlign = 64;
constexpr size_t kScratchBlocks = 4;  // the most a block needs: two filter temporaries, bit-shuffle's, its output

// ---- Per-block work ----------------------------------------------------------------------------------------

// Why a chunk's library codec cannot be decoded: this build has no such library, or (bare metal) the program did
// not link it (tessera/codecs.hpp).
// GCOVR_EXCL_START: the host build links every codec library; builds without one (TESSERA_WITH_*=OFF) and bare
// metal's codecs on demand are what reach this.
detail::code_status codec_missing(codec_format f, bool not_linked) noexcept {
  if (not_linked) {
    switch (f) {
      case codec_format::lz4:
        return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs LZ4, which this program does not link (tessera::codec_link_lz4_decoder)"));
      case codec_format::zlib:
        return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs Zlib, which this program does not link (tessera::codec_link_zlib_decoder)"));
      default:
        return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs Zstd, which this program does not link (tessera::codec_link_zstd_decoder)"));
    }
  }
  switch (f) {
    case codec_format::lz4:
      return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs the LZ4 codec, which this build does not include"));
    case codec_format::zlib:
      return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs the Zlib codec, which this build does not include"));
    default:
      return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs the Zstd codec, which this build does not include"));
  }
}
// GCOVR_EXCL_STOP

#if TESSERA_SPEED_PATHS
// The chunk's blocks are byte- or bit-shuffled: its streams are planes of numbers.
bool shuffled(const chunk_header& h) noexcept {
  for (uint8_t f : h.filters)
    if (f == static_cast<uint8_t>(filter_id::shuffle) || f == static_cast<uint8_t>(filter_id::bitshuffle)) return true;
  return false;
}
#endif

// The chunk's streams go to the in-house LZ4 decoder (lz4_block.hpp), faster on shuffled numbers, which stops
// after `want` bytes at no cost: it checks that bound where it checks the output's end anyway.
bool lz4_in_house(const chunk_header& h, bytes_view dict) noexcept {
#if TESSERA_SPEED_PATHS
  return h.format == codec_format::lz4 && dict.empty() && shuffled(h) && detail::lz4_block_decode_available();
#else
  (void)h;
  (void)dict;
  return false;
#endif
}

// Decodes a stream into out (exactly out.size() bytes), or only at least its first `want` bytes when the codec
// can stop early (LZ4 without a dictionary, BloscLZ); the others decode it all.
detail::code_status stream_decompress(const chunk_header& h, chunk_decoder::worker& w, bytes_view in, bytes_mut out,
                         bytes_view dict, size_t want) noexcept {
  switch (h.format) {
    case codec_format::blosclz: {
      // One call for both: want >= out.size() decodes the whole stream, which must fill out exactly (the
      // decoder never writes past out).
      auto n = detail::blosclz_decompress_prefix(in, out, want);
      if (!n.ok()) return n.err();
      if (*n < (want < out.size() ? want : out.size()))
        return make_error(errc::corrupt, TESSERA_MSG("blosclz: stream decodes to a wrong size"));
      return ok_status();
    }
    case codec_format::lz4:
    case codec_format::zlib:
    case codec_format::zstd: {
      const detail::codec_decoder_impl* impl = detail::codec_decoder_find(h.format);
      // The host build links every codec library (codec_missing).
      if (impl == nullptr || !impl->available) return codec_missing(h.format, impl == nullptr);  // GCOVR_EXCL_BR_LINE
      if (lz4_in_house(h, dict)) return detail::lz4_block_decode(in, out, want);
      return impl->decompress(w.codecs, in, out, dict, want);
    }
    case codec_format::snappy:
      return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs the Snappy codec, which Blosc2 dropped"));
    case codec_format::user: {
      // The whole stream: a user codec has no way to stop early. The application's codec first, then the
      // library's own (NDLZ).
      const chunk_user_codec* u = chunk_plugins_codec(w.plugins, h.udcodec);
      if (u == nullptr || u->decode == nullptr) {
        if (h.udcodec == detail::kNdlzId) {
          // GCOVR_EXCL_BR_START: the host build links NDLZ (bare metal links it on demand).
          if (!detail::ndlz_decoder_linked())
            return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs NDLZ, which this program does not link "
                                                                   "(tessera::codec_link_ndlz_decoder)"));
          // GCOVR_EXCL_BR_STOP
          return detail::ndlz_decompress(in, out, h.compcode_meta);
        }
        if (detail::zfp_id(h.udcodec)) {
#if defined(TESSERA_HAVE_ZFP)
          return detail::zfp_decompress(h.udcodec, h.compcode_meta, h.typesize, *w.geometry, in, out);
#else
          return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs ZFP (codecs 33, 34, 35), which this build does "
                                                                 "not have (it needs libzfp: CMake TESSERA_WITH_ZFP, hosts only)"));
#endif
        }
        return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs a user codec (udcodec) that the decoder's plugins do not "
                                                               "register (chunk_plugins_missing names its id)"));
      }
      size_t n = 0;
      TESSERA_TRY(u->decode(u->context, in, out, h.compcode_meta, &n));
      if (n != out.size()) return make_error(errc::corrupt, TESSERA_MSG("chunk: a user codec decoded a stream to a wrong size"));
      return ok_status();
    }
    default: break;
  }
  return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk names a codec format this library does not know"));
}

// The filters to undo, in backward order. Lossy filters have nothing to undo; the bit shuffle of format 2 left
// blocks whose element count is not a multiple of 8 untouched.
struct backward_plan {
  uint8_t ids[kChunkMaxFilters];
  uint8_t metas[kChunkMaxFilters];
  const chunk_user_filter* user[kChunkMaxFilters];  // the implementation of a user filter, else null
  int count = 0;
  int copying = 0;  // filters that need a separate output buffer
  bool bits = false;  // bitunshuffle, which needs a block of scratch
  bool delta = false;
};

// GCOVR_EXCL_START: the host build compiles every filter in; builds with TESSERA_WITH_<filter>=OFF reach this.
detail::code_status filter_compiled_out() noexcept {
  return make_error(errc::unsupported, TESSERA_MSG("chunk: the chunk uses a filter this build compiled out (TESSERA_WITH_*)"));
}
// GCOVR_EXCL_STOP

detail::code_status backward_plan_make(const chunk_header& h, size_t bsize, const chunk_plugins* plugins, backward_plan& p) noexcept {
  p.count = 0;
  p.copying = 0;
  p.bits = false;
  p.delta = false;
  for (int i = kChunkMaxFilters - 1; i >= 0; --i) {
    const uint8_t f = h.filters[i];
    p.user[p.count] = nullptr;
    switch (static_cast<filter_id>(f)) {
      case filter_id::none:
      case filter_id::trunc_prec:
      case filter_id::int_trunc:
        continue;
      case filter_id::bitshuffle:
        if (h.version == kChunkVersionBlosc1 && (bsize / h.typesize) % 8 != 0) continue;
        // GCOVR_EXCL_BR_START: every filter is compiled in and linked on the host (bare metal links them on demand).
        if (!chunk_filter_available(filter_id::bitshuffle)) return filter_compiled_out();
        if (!detail::filter_linked(filter_id::bitshuffle)) return detail::filter_unlinked_error(filter_id::bitshuffle);
        ++p.copying;
        p.bits = true;
        break;
      case filter_id::shuffle:
      case filter_id::bytedelta:
        if (!chunk_filter_available(static_cast<filter_id>(f))) return filter_compiled_out();
        if (!detail::filter_linked(static_cast<filter_id>(f))) return detail::filter_unlinked_error(static_cast<filter_id>(f));
        ++p.copying;
        break;
      case filter_id::delta:
        if (!chunk_filter_available(filter_id::delta)) return filter_compiled_out();
        if (!detail::filter_linked(filter_id::delta)) return detail::filter_unlinked_error(filter_id::delta);
        // GCOVR_EXCL_BR_STOP
        p.delta = true;
        break;
      case filter_id::ndcell:
      case filter_id::ndmean: {
        // The application's filter of that id first, else the library's own.
        const chunk_user_filter* u = chunk_plugins_filter(plugins, f);
        p.user[p.count] = u != nullptr && u->backward != nullptr ? u : nullptr;
        // GCOVR_EXCL_BR_START: the host build links every filter (bare metal links them on demand).
        if (p.user[p.count] == nullptr && !detail::filter_linked(static_cast<filter_id>(f)))
          return detail::filter_unlinked_error(static_cast<filter_id>(f));
        // GCOVR_EXCL_BR_STOP
        ++p.copying;
        break;
      }
      default: {
        const chunk_user_filter* u = chunk_plugins_filter(plugins, f);
        if (u == nullptr || u->backward == nullptr)
          return make_error(errc::unsupported,
                            TESSERA_MSG("the chunk uses a user filter (such as the old bytedelta 34) that neither "
                            "this library nor the decoder's plugins provide (chunk_plugins_missing names its id)"));
        p.user[p.count] = u;
        ++p.copying;
        break;
      }
    }
    p.ids[p.count] = f;
    p.metas[p.count] = h.filters_meta[i];
    ++p.count;
  }
  return ok_status();
}

bool chunk_has_delta(const chunk_header& h) noexcept {
  for (uint8_t f : h.filters)
    if (f == static_cast<uint8_t>(filter_id::delta)) return true;
  return false;
}

// The bytes of a block a caller needs, [begin, end); all of it by default. planes (speed paths): when set, a
// block whose only filter is a plain shuffle of at most 16-byte elements is left as its byte planes, which
// *planes then points to (else its typesize is 0), for a caller that unshuffles only the elements it wants.
struct block_need {
  size_t begin = 0;
  size_t end = SIZE_MAX;
  detail::block_planes* planes = nullptr;
};

// How a plain shuffle's few wanted elements are unshuffled inside the one block they are decoded into, so that
// no second block is needed (the low-RAM path a partial read takes; it does what the fast path does for few
// elements, a byte gather, so it costs no time): planes (split streams: each byte plane is decoded into the
// part of the block the elements do not cover, then scattered to them), stack (the streams decoded in place,
// the elements gathered through the worker's buffer). none: unshuffled into a separate output.
enum class gather : uint8_t { none, planes, stack };

// How much of each stream a block needs decoded when only part of it is wanted: possible when no filter mixes
// bytes across the block (none, or a plain shuffle of whole elements: element k's bytes sit at k in each byte
// plane). `prefix(s)` is what stream s must yield (0: skip it); [e0, e1) the elements to unshuffle.
struct partial_plan {
  bool on = false;       // streams stop early (prefix)
  bool shuffle = false;  // a plain shuffle, of which only elements [e0, e1) are wanted
  gather how = gather::none;
  size_t e0 = 0, e1 = 0;  // shuffle: elements needed
  size_t begin = 0, end = 0;
  size_t prefix(size_t s, size_t nstreams, size_t stream_size, size_t typesize) const noexcept {
    if (!on) return stream_size;
    if (shuffle) {
      // Split: stream s is byte plane s. One stream: the planes back to back, the last one's part ends it.
      return nstreams > 1 ? e1 : (typesize - 1) * stream_size / typesize + e1;
    }
    const size_t lo = s * stream_size;
    if (begin >= lo + stream_size || end <= lo) return 0;
    return (end < lo + stream_size ? end : lo + stream_size) - lo;
  }
};

// The only filter to undo is a shuffle of whole typesize-byte elements: element k's byte b sits at b * ne + k.
bool plain_shuffle(const chunk_header& h, const backward_plan& plan, size_t bsize) noexcept {
  return plan.count == 1 && static_cast<filter_id>(plan.ids[0]) == filter_id::shuffle &&
         (plan.metas[0] == 0 || plan.metas[0] == h.typesize) && h.typesize > 1 && bsize % h.typesize == 0;
}

partial_plan partial_plan_make(const chunk_header& h, const backward_plan& plan, size_t nblock, size_t bsize,
                               block_need need, bytes_view dict) noexcept {
  partial_plan p;
  if (need.end > bsize) need.end = bsize;
  if (need.begin >= need.end || (need.begin == 0 && need.end == bsize) || h.vlblocks || plan.delta) return p;
  if (plan.count == 0) {
    p.on = true;
  } else if (plain_shuffle(h, plan, bsize)) {
    p.on = true;
    p.shuffle = true;
    p.e0 = need.begin / h.typesize;
    p.e1 = (need.end + h.typesize - 1) / h.typesize;
  }
  p.begin = need.begin;
  p.end = need.end;
  // Stopping early pays only when it skips much, except in the in-house LZ4 decoder: liblz4's partial decoder is
  // slower than its full one.
  if (p.on && !lz4_in_house(h, dict) && (p.shuffle ? p.e1 * 4 > bsize / h.typesize * 3 : need.end * 4 > bsize * 3))
    p.on = false;
  const size_t ts = h.typesize;
  const size_t ne = bsize / ts;
  const size_t n = p.e1 - p.e0;
  if (p.shuffle && n * 4 <= ne) {  // many: the fast path's SIMD unshuffle of the whole block is faster
    const bool split = h.split && !(nblock + 1 == h.nblocks && h.leftover > 0);
    if (split && (p.e0 * ts >= ne || bsize - p.e1 * ts >= ne)) p.how = gather::planes;
    else if (n * ts <= kGatherStack) p.how = gather::stack;
  }
  return p;
}

// Grows a worker's scratch to at least `bytes`, from the decoder's allocator (on the caller's thread).
detail::code_status scratch_grow(chunk_decoder::worker& w, size_t bytes) noexcept {
  if (bytes <= w.scratch_size) return ok_status();
  if (w.scratch != nullptr) allocator_deallocate(w.codecs.alloc, w.scratch, w.scratch_size, kScratchAlign);
  w.scratch_size = 0;
  w.scratch = static_cast<uint8_t*>(allocator_allocate(w.codecs.alloc, bytes, kScratchAlign));
  if (w.scratch == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("chunk: allocator refused the block scratch"));
  w.scratch_size = bytes;
  return ok_status();
}

// The worker's scratch holding `blocks` blocks of bsize bytes, grown to it when `grow` (on the caller's thread)
// unless it is fixed.
detail::code_status scratch_hold(chunk_decoder::worker& w, size_t blocks, size_t bsize, bool grow) noexcept {
  if (bsize > SIZE_MAX / kScratchBlocks) return make_error(errc::overflow, TESSERA_MSG("chunk: block scratch overflows"));
  if (w.fixed && bsize > w.scratch_size / kScratchBlocks)
    return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: blocks larger than the decoder's fixed scratch"));
  if (grow && !w.fixed) TESSERA_TRY(scratch_grow(w, blocks * bsize));
  if (blocks * bsize > w.scratch_size)
    return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: decoder scratch not reserved for the block"));
  return ok_status();
}

// Decodes block `nblock` (bsize bytes) into dst, or (dst null) into the worker's scratch past the pipeline's
// temporaries, where *at tells; the scratch grows to what the block needs when `grow` (on the caller's thread).
// dref is the decoded block 0 when nblock > 0 and the chunk uses delta. With `need` narrower than the block,
// only [need.begin, need.end) is sure to be decoded (streams are decoded only as far as it needs).
// vl = false: a copy for callers that refused VL-block chunks beforehand (array_view), without their code.
template <bool vl = true>
detail::code_status block_decode(const chunk_header& h, const chunk_layout& l, size_t nblock, size_t bsize, uint8_t* dst,
                    const uint8_t* dref, chunk_decoder::worker& w, block_need need = block_need{}, bool grow = false,
                    uint8_t** at = nullptr) noexcept {
  backward_plan plan;
  TESSERA_TRY(backward_plan_make(h, bsize, w.plugins, plan));
  partial_plan part = partial_plan_make(h, plan, nblock, bsize, need, l.dict);
  // Left as byte planes: the streams go straight to the output and no filter runs.
  const bool leave_planes = TESSERA_SPEED_PATHS && need.planes != nullptr && plain_shuffle(h, plan, bsize) &&
                            h.typesize <= detail::block_planes::kMaxPlanes;
  if (need.planes != nullptr) need.planes->typesize = leave_planes ? h.typesize : 0;
  // Where each plane is: in cur, or (a stream stored as it is) in the chunk.
  auto planes_at = [&](size_t s, size_t nstreams, const uint8_t* stream, bool stored = false) noexcept {
    if (!leave_planes) return;
    detail::block_planes& p = *need.planes;
    const size_t b0 = nstreams > 1 ? s : 0, b1 = nstreams > 1 ? s + 1 : h.typesize;
    for (size_t b = b0; b < b1; ++b) {
      p.plane[b] = stream + (b - b0) * (bsize / h.typesize);
      if (stored && p.stored != nullptr) p.stored(p.context, h.typesize, b, p.plane[b]);
    }
  };
  if (leave_planes) part.how = gather::none;
  // Blocks of scratch before the output: the stream output when a filter copies, a second temporary for a
  // second copying filter, bit-shuffle's.
  const size_t temporaries =
      leave_planes || part.how != gather::none || plan.copying == 0 ? 0 : 1 + (plan.copying > 1) + plan.bits;
  TESSERA_TRY(scratch_hold(w, temporaries + (dst == nullptr ? 1 : 0), bsize, grow));
  uint8_t* const a = w.scratch;
  if (dst == nullptr) *at = dst = a + temporaries * bsize;
  uint8_t* const b = plan.copying > 1 ? a + bsize : nullptr;
  uint8_t* const scratch = plan.bits ? a + (plan.copying > 1 ? 2 : 1) * bsize : nullptr;
  uint8_t* cur = temporaries > 0 ? a : dst;
  const size_t ne = bsize / h.typesize;
  // gather::planes: each stream goes to the side of the block the wanted elements leave free.
  uint8_t* const side = part.e0 * h.typesize >= ne ? dst : dst + bsize - ne;

  const uint8_t* c = l.chunk.data();
  const size_t cbytes = l.chunk.size();  // below 2^31 (an int32 in the header): offsets in size_t
  if (vl && h.vlblocks) {
    auto vb = detail::vl_block_get(h, l, nblock);
    if (!vb.ok()) return vb.err();
    if (vb->size != bsize) return make_error(errc::corrupt, TESSERA_MSG("chunk: VL block size changed"));
    bytes_view in(c + vb->stream, static_cast<size_t>(vb->stream_size));
    if (in.size() == bsize && leave_planes) {
      planes_at(0, 1, in.data(), true);  // stored as it is: read in the chunk
    } else {
      if (in.size() == bsize) memcpy(cur, in.data(), bsize);
      else TESSERA_TRY(stream_decompress(h, w, in, bytes_mut(cur, bsize), l.dict, bsize));
      planes_at(0, 1, cur);
    }
  } else {
    const int32_t start = chunk_load_i32(c + l.bstarts + 4 * nblock);
    if (start < 0 || static_cast<size_t>(start) < l.data_start || static_cast<size_t>(start) >= cbytes)
      return make_error(errc::corrupt, TESSERA_MSG("chunk: block start out of bounds"));
    const size_t nstreams = detail::block_nstreams(h, nblock);
    if (bsize % nstreams != 0) return make_error(errc::malformed, TESSERA_MSG("chunk: split block not a multiple of typesize"));
    const size_t neblock = bsize / nstreams;
    size_t pos = static_cast<size_t>(start);
    for (size_t s = 0; s < nstreams; ++s) {
      uint8_t* o = part.how == gather::planes ? side : cur + s * neblock;
      const size_t want = part.prefix(s, nstreams, neblock, h.typesize);
      if (cbytes - pos < 4) return make_error(errc::truncated, TESSERA_MSG("chunk: stream size past cbytes"));
      const int32_t csize = chunk_load_i32(c + pos);
      pos += 4;
      planes_at(s, nstreams, o);  // unless it is stored as it is, below
      if (csize == 0) {
        memset(o, 0, want);  // a run of zeros
      } else if (csize < 0) {
        if (cbytes - pos < 1) return make_error(errc::truncated, TESSERA_MSG("chunk: stream token past cbytes"));
        const uint8_t token = c[pos];
        pos += 1;
        if ((token & 0x1) == 0) return make_error(errc::unsupported, TESSERA_MSG("chunk: unknown stream token"));
        if (csize < -255) return make_error(errc::corrupt, TESSERA_MSG("chunk: run-length value larger than a byte"));
        memset(o, static_cast<uint8_t>(-csize), want);
      } else {
        if (static_cast<size_t>(csize) > cbytes - pos) return make_error(errc::truncated, TESSERA_MSG("chunk: stream past cbytes"));
        bytes_view in(c + pos, static_cast<size_t>(csize));
        if (in.size() == neblock && leave_planes) planes_at(s, nstreams, in.data(), true);
        else if (in.size() == neblock) memcpy(o, in.data(), want);
        else if (want > 0) TESSERA_TRY(stream_decompress(h, w, in, bytes_mut(o, neblock), l.dict, want));
        pos += static_cast<size_t>(csize);
      }
      if (part.how == gather::planes)
        for (size_t e = part.e0; e < part.e1; ++e) dst[e * h.typesize + s] = o[e];
    }
  }
  if (part.how == gather::planes || leave_planes) return ok_status();

  // Undo the filters. Each copying filter writes the other temporary, the last one writes dst; delta works in
  // place (the reference's delta always runs on the destination block).
  for (int k = 0; k < plan.count; ++k) {
    const auto f = static_cast<filter_id>(plan.ids[k]);
    if (f == filter_id::delta) {
      if constexpr (TESSERA_WITH_DELTA != 0) detail::delta_decode(dref, nblock == 0, h.typesize, cur, bsize);
      continue;
    }
    bool last_copying = true;
    for (int m = k + 1; m < plan.count; ++m)
      if (static_cast<filter_id>(plan.ids[m]) != filter_id::delta) last_copying = false;
    uint8_t* target = last_copying ? dst : (cur == a ? b : a);
    const size_t meta = plan.metas[k];
    switch (f) {
      case filter_id::shuffle:
        // A few needed elements: only those (element k's byte b is at b * nelems + k). Many: the whole SIMD
        // unshuffle is faster, and the elements past the decoded prefixes come out as garbage nobody reads.
        if (part.shuffle && (part.e1 - part.e0) * 4 <= ne) {
          // gather::stack decodes in place (cur is dst): the elements go through the worker's buffer.
          uint8_t* const t = w.gather;
          uint8_t* const to = cur == target ? t : target + part.e0 * h.typesize;
          detail::elements_unshuffle(h.typesize, cur + part.e0, ne, part.e1 - part.e0, to);
          // t was just written by elements_unshuffle, and target is never null (b exists whenever a copying filter
          // is not the last); neither analyzer follows that.
          // cppcheck-suppress uninitvar
          if (to == t) memcpy(target + part.e0 * h.typesize, t, (part.e1 - part.e0) * h.typesize);  // NOLINT(clang-analyzer-core.NonNullParamChecker)
        } else {
          unshuffle(meta != 0 ? meta : h.typesize, bsize, cur, target);
        }
        break;
      // Compiled-out filters never reach here (backward_plan_make refuses them); the guards drop their code.
      case filter_id::bitshuffle:
        if constexpr (TESSERA_WITH_BITSHUFFLE != 0) bitunshuffle(h.typesize, bsize, cur, target, scratch);
        break;
      case filter_id::bytedelta:
        if constexpr (TESSERA_WITH_BYTEDELTA != 0)
          detail::bytedelta_decode(meta != 0 ? meta : h.typesize, cur, target, bsize);
        break;
      default:  // a user filter (backward_plan_make found it), or the library's ndcell and ndmean
        if (plan.user[k] != nullptr) {
          const chunk_user_filter& u = *plan.user[k];
          TESSERA_TRY(u.backward(u.context, bytes_view(cur, bsize), bytes_mut(target, bsize), plan.metas[k], h.typesize));
        } else {  // ndcell or ndmean: backward_plan_make lets no other id through without a user filter
          TESSERA_TRY(f == filter_id::ndcell
                          ? detail::ndcell_backward(*w.geometry, plan.metas[k], h.typesize, cur, target, bsize)
                          : detail::ndmean_backward(*w.geometry, plan.metas[k], h.typesize, cur, target, bsize));
        }
        break;
    }
    cur = target;
  }
  return ok_status();
}

// The header and sections of a chunk whose data is to be decoded (instrumented chunks hold codec statistics).
detail::code_status chunk_open(bytes_view chunk, chunk_header* h, chunk_layout* l) noexcept {
  TESSERA_TRY(detail::chunk_header_parse(chunk, *h));
  if (h->blosc2_flags & kChunkBlosc2Instrumented)
    return make_error(errc::unsupported, TESSERA_MSG("chunk: instrumented chunks hold codec statistics, not data"));
  return detail::chunk_layout_get(*h, chunk, *l);
}

// Fills [offset, offset + size) of a special-value chunk's decoded bytes.
detail::code_status special_fill(const chunk_header& h, bytes_view chunk, uint8_t* dst, size_t offset, size_t size) noexcept {
  static constexpr uint8_t kNan32[4] = {0x00, 0x00, 0xc0, 0x7f};  // quiet NaN, little-endian
  static constexpr uint8_t kNan64[8] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x7f};
  const uint8_t* pattern = nullptr;
  size_t period = 0;
  switch (h.special) {
    case chunk_special::zeros:
    case chunk_special::uninit:  // undefined content: zeros rather than stale memory
      memset(dst, 0, size);
      return ok_status();
    case chunk_special::nan:
      if (h.typesize == 4) pattern = kNan32;
      else if (h.typesize == 8) pattern = kNan64;
      else return make_error(errc::malformed, TESSERA_MSG("chunk: NaN chunk whose typesize is not 4 or 8"));
      period = h.typesize;
      break;
    case chunk_special::value:
      if (chunk.size() < static_cast<size_t>(h.cbytes)) return make_error(errc::truncated, TESSERA_MSG("chunk: special value past the bytes given"));
      pattern = chunk.data() + kChunkHeaderExtendedSize;
      period = static_cast<size_t>(h.value_size);
      break;
    default:
      return make_error(errc::malformed, TESSERA_MSG("chunk: not a special-value chunk"));
  }
  const size_t first = size < period ? size : period;
  for (size_t i = 0; i < first; ++i) dst[i] = pattern[(offset + i) % period];
  // Doubling copies of whole periods.
  size_t filled = first;
  while (filled < size) {
    const size_t n = filled < size - filled ? filled : size - filled;
    memcpy(dst + filled, dst, n);
    filled += n;
  }
  return ok_status();
}

}  // namespace

// ---- The decoder object ------------------------------------------------------------------------------------

struct chunk_decoder_access {
  static void workers_free(chunk_decoder& d) noexcept {
    if (d.workers_ != nullptr) {
      for (uint32_t i = 0; i < d.nworkers_; ++i) {
        chunk_decoder::worker& w = d.workers_[i];
        if (w.scratch != nullptr) allocator_deallocate(d.alloc_, w.scratch, w.scratch_size, kScratchAlign);
        detail::codec_context_release(w.codecs);
        w.~worker();
      }
      allocator_deallocate(d.alloc_, d.workers_, sizeof(chunk_decoder::worker) * d.nworkers_,
                           alignof(chunk_decoder::worker));
    }
    if (d.block0_ != nullptr) allocator_deallocate(d.alloc_, d.block0_, d.block0_size_, kScratchAlign);
    d.workers_ = nullptr;
    d.nworkers_ = 0;
    d.scratch_blocksize_ = 0;
    d.block0_ = nullptr;
    d.block0_size_ = 0;
  }

  // At least `blocks` (at most kScratchBlocks) blocks of `blocksize` bytes of scratch for the workers that may
  // run (all of them when `parallel`, else worker 0), allocated here on the caller's thread.
  static detail::code_status scratch_ensure(chunk_decoder& d, size_t blocks, size_t blocksize, bool parallel) noexcept {
    if (blocksize > SIZE_MAX / kScratchBlocks) return make_error(errc::overflow, TESSERA_MSG("chunk: block scratch overflows"));
    const size_t bytes = blocks * blocksize;
    for (uint32_t i = 0; i < (parallel ? d.nworkers_ : 1); ++i) {
      chunk_decoder::worker& w = d.workers_[i];
      if (bytes <= w.scratch_size) continue;
      if (d.options_.fixed_scratch)
        return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: blocks larger than the decoder's fixed scratch"));
      TESSERA_TRY(scratch_grow(w, bytes));
    }
    return ok_status();
  }

  // Codec state for the chunk's codec, made here on the caller's thread for the workers that may run its blocks
  // (all of them when `parallel`, else worker 0): tasks never allocate.
  static detail::code_status codecs_prepare(chunk_decoder& d, const chunk_header& h, bool parallel) noexcept {
    if (h.special != chunk_special::none || h.memcpyed) return ok_status();
    const uint32_t n = parallel ? d.nworkers_ : 1;
    for (uint32_t i = 0; i < n; ++i) {
      detail::codec_context& c = d.workers_[i].codecs;
      const detail::codec_decoder_impl* impl = detail::codec_decoder_find(h.format);
      if (impl != nullptr && impl->available && impl->prepare != nullptr) TESSERA_TRY(impl->prepare(c));
    }
    return ok_status();
  }

  static bool runs_parallel(const chunk_decoder& d, size_t ntasks) noexcept {
    return ntasks > 1 && d.nworkers_ > 1 && d.options_.exec.run != nullptr;
  }

  static result<uint8_t*> block0_ensure(chunk_decoder& d, size_t blocksize) noexcept {
    if (d.block0_size_ >= blocksize) return d.block0_;
    if (d.options_.fixed_scratch && d.block0_ != nullptr)
      return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: blocks larger than the decoder's fixed scratch"));
    if (d.block0_ != nullptr) allocator_deallocate(d.alloc_, d.block0_, d.block0_size_, kScratchAlign);
    d.block0_size_ = 0;
    d.block0_ = static_cast<uint8_t*>(allocator_allocate(d.alloc_, blocksize, kScratchAlign));
    if (d.block0_ == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("chunk: allocator refused the block-0 buffer"));
    d.block0_size_ = blocksize;
    return d.block0_;
  }

  static detail::code_status init(chunk_decoder& d, const allocator& alloc, const chunk_decoder_options& options) noexcept {
    workers_free(d);
    d.alloc_ = alloc;
    d.options_ = options;
    const uint32_t n = options.exec.workers == 0 ? 1 : options.exec.workers;
    void* p = allocator_allocate(alloc, sizeof(chunk_decoder::worker) * n, alignof(chunk_decoder::worker));
    if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("chunk: allocator refused the decoder's workers"));
    d.workers_ = static_cast<chunk_decoder::worker*>(p);
    d.nworkers_ = n;
    // Worker 0 set up in place, copied to the others: a copy is one block move, not every field's store, and no
    // prototype (its gather buffer included) sits on the caller's stack.
    chunk_decoder::worker& first = *new (tessera::cxx::place, &d.workers_[0]) chunk_decoder::worker();
    first.codecs.alloc = alloc;
    first.plugins = options.plugins;
    first.geometry = &d.options_.geometry;
    first.fixed = options.fixed_scratch;
    for (uint32_t i = 1; i < n; ++i) new (tessera::cxx::place, &d.workers_[i]) chunk_decoder::worker(first);
    if (options.fixed_scratch && options.max_blocksize > 0) {  // else allocated when a chunk needs it
      detail::code_status s = options.max_blocksize > SIZE_MAX / kScratchBlocks
                     ? make_error(errc::overflow, TESSERA_MSG("chunk: block scratch overflows"))
                     : ok_status();
      for (uint32_t i = 0; i < n && s.ok(); ++i) s = scratch_grow(d.workers_[i], kScratchBlocks * options.max_blocksize);
      if (!s.ok()) {
        workers_free(d);
        return s;
      }
    }
    return ok_status();
  }

  static void move(chunk_decoder& to, chunk_decoder& from) noexcept {
    to.alloc_ = from.alloc_;
    to.options_ = from.options_;
    to.workers_ = from.workers_;
    to.nworkers_ = from.nworkers_;
    to.scratch_blocksize_ = from.scratch_blocksize_;
    to.block0_ = from.block0_;
    to.block0_size_ = from.block0_size_;
    for (uint32_t i = 0; i < to.nworkers_; ++i) to.workers_[i].geometry = &to.options_.geometry;
    from.workers_ = nullptr;
    from.nworkers_ = 0;
    from.scratch_blocksize_ = 0;
    from.block0_ = nullptr;
    from.block0_size_ = 0;
  }

  // One task per block of a regular chunk.
  struct job {
    const chunk_header* h;
    const chunk_layout* l;
    uint8_t* out;
    const uint8_t* dref;
    chunk_decoder::worker* workers;
    uint32_t nworkers;
    size_t first;
    bool grow;  // the tasks run on the caller's thread (a serial executor) and grow scratch as needed
    tessera::cxx::atomic<bool> bad_worker{false};
  };

  static void task(void* context, size_t index, uint32_t worker) noexcept {
    auto& j = *static_cast<job*>(context);
    if (worker >= j.nworkers) {
      j.bad_worker.store(true, tessera::cxx::memory_order_relaxed);
      return;
    }
    chunk_decoder::worker& w = j.workers[worker];
    if (!w.err.ok()) return;
    const size_t nblock = j.first + index;
    const chunk_header& h = *j.h;
    const size_t bs = static_cast<size_t>(h.blocksize);
    const size_t bsize = (nblock + 1 == h.nblocks && h.leftover > 0) ? static_cast<size_t>(h.leftover) : bs;
    detail::code_status s = block_decode(h, *j.l, nblock, bsize, j.out + nblock * bs, j.dref, w, block_need{}, j.grow);
    if (!s.ok()) w.err = s;
  }

  static result<size_t> decode(chunk_decoder& d, bytes_view chunk, bytes_mut out) noexcept {
    chunk_header h;
    chunk_layout l;
    TESSERA_TRY(chunk_open(chunk, &h, &l));
    const size_t nbytes = static_cast<size_t>(h.nbytes);
    if (out.size() < nbytes) return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: output shorter than nbytes"));
    if (h.special != chunk_special::none) {
      TESSERA_TRY(special_fill(h, l.chunk, out.data(), 0, nbytes));
      return nbytes;
    }
    if (nbytes == 0) return size_t{0};
    if (h.memcpyed) {
      memcpy(out.data(), l.chunk.data() + h.header_size, nbytes);
      return nbytes;
    }
    if (d.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_decoder used before chunk_decoder_init"));
    const bool delta = chunk_has_delta(h);
    if (h.vlblocks) {
      if (delta) return make_error(errc::unsupported, TESSERA_MSG("chunk: delta over variable-length blocks"));
      auto largest = detail::vl_blocks_scan(h, l, SIZE_MAX, nullptr);
      if (!largest.ok()) return largest.err();
      TESSERA_TRY(codecs_prepare(d, h, false));
      size_t offset = 0;
      for (size_t i = 0; i < h.nblocks; ++i) {  // on the caller's thread: scratch grows as the blocks need
        auto vb = detail::vl_block_get(h, l, i);
        if (!vb.ok()) return vb.err();
        TESSERA_TRY(block_decode(h, l, i, vb->size, out.data() + offset, nullptr, d.workers_[0], block_need{}, true));
        offset += vb->size;
      }
      return nbytes;
    }
    // An executor's workers get the most any pipeline needs beforehand; a serial run grows it as blocks need.
    const bool serial = d.options_.exec.run == nullptr;
    if (!serial) TESSERA_TRY(scratch_ensure(d, kScratchBlocks - 1, static_cast<size_t>(h.blocksize), true));
    TESSERA_TRY(codecs_prepare(d, h, runs_parallel(d, h.nblocks)));
    for (uint32_t i = 0; i < d.nworkers_; ++i) d.workers_[i].err = ok_status();
    job j;
    j.h = &h;
    j.l = &l;
    j.out = out.data();
    j.dref = out.data();  // block 0, decoded first when delta needs it
    j.workers = d.workers_;
    j.nworkers = d.nworkers_;
    j.first = 0;
    j.grow = serial;
    if (delta && h.nblocks > 1) {
      task(&j, 0, 0);
      TESSERA_TRY(d.workers_[0].err);
      j.first = 1;
    }
    executor_run(d.options_.exec, h.nblocks - j.first, task, &j);
    if (j.bad_worker.load(tessera::cxx::memory_order_relaxed))
      return make_error(errc::invalid_argument, TESSERA_MSG("executor: a task ran with a worker index past executor.workers"));
    for (uint32_t i = 0; i < d.nworkers_; ++i) TESSERA_TRY(d.workers_[i].err);
    return nbytes;
  }

  static result<size_t> decode_block(chunk_decoder& d, bytes_view chunk, size_t nblock, bytes_mut out) noexcept {
    chunk_header h;
    chunk_layout l;
    TESSERA_TRY(chunk_open(chunk, &h, &l));
    auto er = chunk_block_extent_get(h, l.chunk, nblock);
    if (!er.ok()) return er.err();
    const chunk_block_extent e = *er;
    if (out.size() < e.size) return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: output shorter than the block"));
    if (h.special != chunk_special::none) {
      TESSERA_TRY(special_fill(h, l.chunk, out.data(), e.offset, e.size));
      return e.size;
    }
    if (h.memcpyed) {
      memcpy(out.data(), l.chunk.data() + h.header_size + e.offset, e.size);
      return e.size;
    }
    if (d.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_decoder used before chunk_decoder_init"));
    chunk_decoder::worker& w = d.workers_[0];
    TESSERA_TRY(codecs_prepare(d, h, false));
    if (h.vlblocks && chunk_has_delta(h))
      return make_error(errc::unsupported, TESSERA_MSG("chunk: delta over variable-length blocks"));
    const bool grow = true;  // on the caller's thread: scratch grows as the blocks need
    const uint8_t* dref = nullptr;
    if (nblock > 0 && !h.vlblocks && chunk_has_delta(h)) {
      const size_t bs = static_cast<size_t>(h.blocksize);
      auto b0 = block0_ensure(d, bs);
      if (!b0.ok()) return b0.err();
      TESSERA_TRY(block_decode(h, l, 0, bs, *b0, nullptr, w, block_need{}, grow));
      dref = *b0;
    }
    TESSERA_TRY(block_decode(h, l, nblock, e.size, out.data(), dref, w, block_need{}, grow));
    return e.size;
  }

  static const executor& exec(const chunk_decoder& d) noexcept { return d.options_.exec; }

  // For blocks decoded into every worker's scratch (chunk_block_decode_on): each block's output and temporaries.
  static detail::code_status prepare(chunk_decoder& d, const chunk_header& h) noexcept {
    if (d.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_decoder used before chunk_decoder_init"));
    TESSERA_TRY(scratch_ensure(d, kScratchBlocks, static_cast<size_t>(h.blocksize), true));
    return codecs_prepare(d, h, true);
  }

  // ---- Requested blocks, each decoded into a worker's scratch and consumed there ----

  struct blocks_job {
    const chunk_header* h = nullptr;
    const chunk_layout* l = nullptr;
    const chunk_block_request* request = nullptr;
    const uint8_t* dref = nullptr;  // block 0 decoded, for delta
    bool grow = false;              // serial runs: the tasks run on the caller's thread and grow scratch as needed
    chunk_decoder::worker* workers = nullptr;
    uint32_t nworkers = 0;
    tessera::cxx::atomic<bool> failed{false};
    tessera::cxx::atomic<bool> bad_worker{false};
  };

  template <bool vl = true>
  static detail::code_status block_one(blocks_job& j, chunk_decoder::worker& w, size_t nblock, block_need need,
                          bytes_view* out) noexcept {
    const chunk_header& h = *j.h;
    const chunk_layout& l = *j.l;
    chunk_block_extent e;
    if constexpr (vl) {
      auto er = chunk_block_extent_get(h, l.chunk, nblock);
      if (!er.ok()) return er.err();
      e = *er;
    } else {  // fixed-size blocks: chunk_block_extent_get's first case
      if (nblock >= h.nblocks) return make_error(errc::out_of_range, TESSERA_MSG("chunk: block index past the chunk's blocks"));
      e.offset = nblock * static_cast<size_t>(h.blocksize);
      e.size = nblock + 1 == h.nblocks && h.leftover > 0 ? static_cast<size_t>(h.leftover) : static_cast<size_t>(h.blocksize);
    }
    if (h.memcpyed && h.special == chunk_special::none) {  // in place: the chunk holds its cbytes (layout)
      if (h.header_size + e.offset + e.size > l.chunk.size())
        return make_error(errc::truncated, TESSERA_MSG("chunk: memcpyed block past cbytes"));
      *out = bytes_view(l.chunk.data() + h.header_size + e.offset, e.size);
      return ok_status();
    }
    uint8_t* dst = nullptr;
    if (h.special != chunk_special::none) {
      TESSERA_TRY(scratch_hold(w, 1, e.size, j.grow));
      dst = w.scratch;
      TESSERA_TRY(special_fill(h, l.chunk, dst, e.offset, e.size));
    } else {
      TESSERA_TRY(block_decode<vl>(h, l, nblock, e.size, nullptr, nblock > 0 ? j.dref : nullptr, w, need, j.grow, &dst));
    }
    *out = bytes_view(dst, e.size);
    return ok_status();
  }

  static void blocks_task(void* context, size_t index, uint32_t worker) noexcept {
    auto& j = *static_cast<blocks_job*>(context);
    if (worker >= j.nworkers) {
      j.bad_worker.store(true, tessera::cxx::memory_order_relaxed);
      j.failed.store(true, tessera::cxx::memory_order_relaxed);
      return;
    }
    if (j.failed.load(tessera::cxx::memory_order_relaxed)) return;
    chunk_decoder::worker& w = j.workers[worker];
    const chunk_block_request& r = *j.request;
    bytes_view decoded;
    block_need need;
    if (r.range != nullptr) r.range(r.context, index, &need.begin, &need.end);
    detail::code_status s = block_one(j, w, r.block(r.context, index), need, &decoded);
    if (s.ok()) s = r.consume(r.context, index, decoded, worker);
    if (!s.ok()) {
      if (w.err.ok()) w.err = s;
      j.failed.store(true, tessera::cxx::memory_order_relaxed);
    }
  }

  // dst (when not empty) receives the block, the worker's scratch holding only the pipeline's temporaries.
  static detail::code_status block_decode_on(chunk_decoder& d, uint32_t worker, bytes_view chunk, size_t nblock,
                                size_t begin, size_t end, bytes_view* decoded, bytes_mut dst = bytes_mut(),
                                detail::block_planes* planes = nullptr) noexcept {
    if (d.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_decoder used before chunk_decoder_init"));
    if (worker >= d.nworkers_)
      return make_error(errc::invalid_argument, TESSERA_MSG("executor: a task ran with a worker index past executor.workers"));
    chunk_header h;
    chunk_layout l;
    TESSERA_TRY(chunk_open(chunk, &h, &l));
    if (h.special != chunk_special::none || h.memcpyed || h.vlblocks || (nblock > 0 && chunk_has_delta(h)))
      return make_error(errc::invalid_argument, TESSERA_MSG("chunk: not a regular chunk whose blocks decode alone"));
    blocks_job j;  // no scratch grows: chunk_decoder_prepare made it
    j.h = &h;
    j.l = &l;
    block_need need;
    need.begin = begin;
    need.end = end;
    need.planes = planes;
    if (dst.data() == nullptr) return block_one(j, d.workers_[worker], nblock, need, decoded);
    auto extent = chunk_block_extent_get(h, l.chunk, nblock);
    if (!extent.ok()) return extent.err();
    const size_t size = extent->size;
    if (dst.size() < size) return make_error(errc::buffer_too_small, TESSERA_MSG("chunk: output shorter than the block"));
    TESSERA_TRY(block_decode(h, l, nblock, size, dst.data(), nullptr, d.workers_[worker], need));
    *decoded = bytes_view(dst.data(), size);
    return ok_status();
  }

  // The chunk's header and sections, and (not memcpyed, or special) what its blocks need before they run:
  // the codec state, and block 0 for delta (when a later block is requested), for the workers that may run.
  // A template: the serial reader's copy has no reference to the parallel scratch set-up.
  template <bool parallel, bool vl = true>
  [[gnu::always_inline]] static detail::code_status blocks_open(chunk_decoder& d, bytes_view chunk, const chunk_block_request& r, chunk_header& h,
                            chunk_layout& l, blocks_job& j) noexcept {
    if (r.count > 0 && (r.block == nullptr || r.consume == nullptr))
      return make_error(errc::invalid_argument, TESSERA_MSG("chunk_decode_blocks: request without block or consume"));
    TESSERA_TRY(chunk_open(chunk, &h, &l));
    if (r.count == 0) return ok_status();
    if (d.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_decoder used before chunk_decoder_init"));
    j.h = &h;
    j.l = &l;
    j.request = &r;
    j.workers = d.workers_;
    j.nworkers = d.nworkers_;
    j.grow = !parallel;
    if (h.memcpyed && h.special == chunk_special::none) return ok_status();  // special values win over memcpyed
    const bool regular = h.special == chunk_special::none;
    size_t largest = static_cast<size_t>(h.blocksize);
    if (h.vlblocks && regular) {
      if constexpr (!vl)
        return make_error(errc::unsupported, TESSERA_MSG("chunk: variable-length blocks where fixed-size ones are read"));
      if (chunk_has_delta(h)) return make_error(errc::unsupported, TESSERA_MSG("chunk: delta over variable-length blocks"));
      auto scan = detail::vl_blocks_scan(h, l, SIZE_MAX, nullptr);
      if (!scan.ok()) return scan.err();
      largest = *scan;
    }
    // Scratch for each block's output and its pipeline's temporaries (none when its few wanted elements are
    // gathered in place): made here for every worker when they run at once, else by each block as it comes.
    if constexpr (parallel) TESSERA_TRY(scratch_ensure(d, kScratchBlocks, largest, true));
    TESSERA_TRY(codecs_prepare(d, h, parallel));
    if (regular && !h.vlblocks && chunk_has_delta(h) && h.nblocks > 1) {
      bool later = false;
      for (size_t i = 0; i < r.count && !later; ++i) later = r.block(r.context, i) > 0;
      if (later) {
        const size_t bs = static_cast<size_t>(h.blocksize);
        auto b0 = block0_ensure(d, bs);
        if (!b0.ok()) return b0.err();
        TESSERA_TRY(block_decode<vl>(h, l, 0, bs, *b0, nullptr, d.workers_[0], block_need{}, true));
        j.dref = *b0;
      }
    }
    return ok_status();
  }

  // The requested blocks one after another on the caller's thread, worker 0's scratch growing as they need:
  // what a decoder without an executor runs, with nothing of the parallel machinery (array_view links only this).
  // vl = false: for fixed-size blocks only (array_view), a VL-block chunk is unsupported.
  template <bool vl>
  [[gnu::always_inline]] static detail::code_status decode_blocks_serial(chunk_decoder& d, bytes_view chunk,
                                                            const chunk_block_request& r) noexcept {
    chunk_header h;
    chunk_layout l;
    blocks_job j;
    TESSERA_TRY((blocks_open<false, vl>(d, chunk, r, h, l, j)));
    for (size_t i = 0; i < r.count; ++i) {
      bytes_view decoded;
      block_need need;
      if (r.range != nullptr) r.range(r.context, i, &need.begin, &need.end);
      TESSERA_TRY(block_one<vl>(j, d.workers_[0], r.block(r.context, i), need, &decoded));
      TESSERA_TRY(r.consume(r.context, i, decoded, 0));
    }
    return ok_status();
  }

  static detail::code_status decode_blocks(chunk_decoder& d, bytes_view chunk, const chunk_block_request& r) noexcept {
    if (!runs_parallel(d, r.count)) return detail::chunk_decode_blocks_serial(d, chunk, r);
    return decode_blocks_parallel(d, chunk, r);
  }

  // The blocks over the executor. Its own function: its header, layout and job are on the stack only on this
  // path, not above a serial decode.
  __attribute__((noinline)) static detail::code_status decode_blocks_parallel(chunk_decoder& d, bytes_view chunk,
                                                                 const chunk_block_request& r) noexcept {
    chunk_header h;
    chunk_layout l;
    blocks_job j;
    TESSERA_TRY(blocks_open<true>(d, chunk, r, h, l, j));
    for (uint32_t i = 0; i < d.nworkers_; ++i) d.workers_[i].err = ok_status();
    executor_run(d.options_.exec, r.count, blocks_task, &j);
    if (j.bad_worker.load(tessera::cxx::memory_order_relaxed))
      return make_error(errc::invalid_argument, TESSERA_MSG("executor: a task ran with a worker index past executor.workers"));
    for (uint32_t i = 0; i < d.nworkers_; ++i) TESSERA_TRY(d.workers_[i].err);
    return ok_status();
  }
};

chunk_decoder::chunk_decoder(chunk_decoder&& o) noexcept { chunk_decoder_access::move(*this, o); }

chunk_decoder& chunk_decoder::operator=(chunk_decoder&& o) noexcept {
  if (this != &o) {
    chunk_decoder_access::workers_free(*this);
    chunk_decoder_access::move(*this, o);
  }
  return *this;
}

chunk_decoder::~chunk_decoder() { chunk_decoder_access::workers_free(*this); }

size_t chunk_decoder_estimate(const chunk_decoder_options& options) noexcept {
  const size_t n = options.exec.workers == 0 ? 1 : options.exec.workers;
  const size_t slack = 2 * kScratchAlign;
  size_t total = sizeof(chunk_decoder::worker) * n + slack;
  total += n * (kScratchBlocks * options.max_blocksize + slack + detail::codec_decoder_state_estimate());
  total += options.max_blocksize + slack;  // block 0 for delta when decoding single blocks
  return total;
}

chunk_missing chunk_plugins_missing(const chunk_header& h, const chunk_plugins* plugins) noexcept {
  chunk_missing m;
  if (h.special != chunk_special::none || h.memcpyed) return m;  // no codec nor filter runs
  // In the order the decoder meets them: the filters (planned before any stream), then the codec.
  for (int i = kChunkMaxFilters - 1; i >= 0; --i) {
    const uint8_t f = h.filters[i];
    switch (static_cast<filter_id>(f)) {
      case filter_id::none:
      case filter_id::shuffle:
      case filter_id::bitshuffle:
      case filter_id::delta:
      case filter_id::trunc_prec:
      case filter_id::bytedelta:
      case filter_id::int_trunc: continue;
      default: break;
    }
    const chunk_user_filter* u = chunk_plugins_filter(plugins, f);
    // GCOVR_EXCL_BR_START: the host build links every filter and NDLZ (bare metal links them on demand).
    const bool own = (f == static_cast<uint8_t>(filter_id::ndcell) || f == static_cast<uint8_t>(filter_id::ndmean)) &&
                     detail::filter_linked(static_cast<filter_id>(f));
    // GCOVR_EXCL_BR_STOP
    if ((u == nullptr || u->backward == nullptr) && !own) {
      m.kind = chunk_missing_kind::filter;
      m.id = f;
      return m;
    }
  }
  if (h.format == codec_format::user) {
    const chunk_user_codec* u = chunk_plugins_codec(plugins, h.udcodec);
    const bool own = (h.udcodec == detail::kNdlzId && detail::ndlz_decoder_linked()) ||  // GCOVR_EXCL_BR_LINE: see above
                     (detail::zfp_id(h.udcodec) && detail::zfp_built());
    if ((u == nullptr || u->decode == nullptr) && !own) {
      m.kind = chunk_missing_kind::codec;
      m.id = h.udcodec;
    }
  }
  return m;
}

status chunk_decoder_init(chunk_decoder& d, const allocator& alloc, const chunk_decoder_options& options) noexcept {
  return chunk_decoder_access::init(d, alloc, options);
}

void chunk_decoder_release(chunk_decoder& d) noexcept { chunk_decoder_access::workers_free(d); }

result<size_t> chunk_decode(chunk_decoder& d, bytes_view chunk, bytes_mut out) noexcept {
  return chunk_decoder_access::decode(d, chunk, out);
}

result<size_t> chunk_decode_block(chunk_decoder& d, bytes_view chunk, size_t nblock, bytes_mut out) noexcept {
  return chunk_decoder_access::decode_block(d, chunk, nblock, out);
}

status chunk_decode_blocks(chunk_decoder& d, bytes_view chunk, const chunk_block_request& request) noexcept {
  return chunk_decoder_access::decode_blocks(d, chunk, request);
}

namespace detail {

detail::code_status chunk_decode_blocks_serial(chunk_decoder& d, bytes_view chunk, const chunk_block_request& request) noexcept {
  return chunk_decoder_access::decode_blocks_serial<true>(d, chunk, request);
}

detail::code_status chunk_decode_fixed_blocks(chunk_decoder& d, bytes_view chunk, const chunk_block_request& request) noexcept {
  return chunk_decoder_access::decode_blocks_serial<false>(d, chunk, request);
}

}  // namespace detail

namespace detail {

const executor& chunk_decoder_executor(const chunk_decoder& d) noexcept { return chunk_decoder_access::exec(d); }

detail::code_status chunk_decoder_prepare(chunk_decoder& d, const chunk_header& h) noexcept {
  if (h.blocksize < 0) return make_error(errc::malformed, TESSERA_MSG("chunk: negative blocksize"));
  return chunk_decoder_access::prepare(d, h);
}

detail::code_status chunk_block_decode_on(chunk_decoder& d, uint32_t worker, bytes_view chunk, size_t nblock, size_t begin,
                             size_t end, bytes_view* decoded) noexcept {
  return chunk_decoder_access::block_decode_on(d, worker, chunk, nblock, begin, end, decoded);
}

#if TESSERA_SPEED_PATHS
detail::code_status chunk_block_decode_into_on(chunk_decoder& d, uint32_t worker, bytes_view chunk, size_t nblock, size_t begin,
                                  size_t end, bytes_mut dst, bytes_view* decoded) noexcept {
  if (dst.data() == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk: no output for the block"));
  return chunk_decoder_access::block_decode_on(d, worker, chunk, nblock, begin, end, decoded, dst);
}

detail::code_status chunk_block_planes_on(chunk_decoder& d, uint32_t worker, bytes_view chunk, size_t nblock, size_t begin,
                             size_t end, bytes_view* decoded, block_planes* planes) noexcept {
  return chunk_decoder_access::block_decode_on(d, worker, chunk, nblock, begin, end, decoded, bytes_mut(), planes);
}
#endif

}  // namespace detail

}  // namespace tessera
