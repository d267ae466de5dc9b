// SPDX-License-Identifier: BSD-3-Clause
// Encoding chunks as the reference writes them (c-blosc2 3.3.x, blosc2_compress_ctx): the filter pipeline and
// codec per block, streams that do not shrink stored raw, runs coded without data, the all-zeros chunk, and
// the memcpyed fallback when the chunk does not compress into the caller's buffer.
//
// Blocks may run in parallel (executor rounds of one block per output slot); the slots are then appended in
// block order, so the chunk is the one the reference's serial path writes whatever the executor. A block whose
// streams come close to the end of the output buffer (where the reference limits each codec's output to the
// room left) is re-encoded serially with that limit, so even that edge matches.
#include "tessera/cxx.hpp"
#include <string.h>

#include "chunk/chunk_internal.hpp"
#include "codecs/blosclz.hpp"
#include "codecs/codec.hpp"
#include "codecs/ndlz.hpp"
#include "codecs/zfp.hpp"
#include "filters/filters.hpp"
#include "tessera/shuffle.hpp"

namespace tessera {

using detail::chunk_store_i32;

struct chunk_encoder::worker {
  uint8_t* scratch = nullptr;    // 3 blocks: two pipeline buffers and the bit-shuffle scratch
  uint8_t* workspace = nullptr;  // BloscLZ's hash table (NDLZ's three tables, grown to them when NDLZ needs it)
  size_t workspace_size = 0;
  size_t blosclz_bytes = 0;      // the part BloscLZ uses: its table as the options chose it
  detail::codec_context codecs;
  detail::code_status err;
};

namespace {

// BloscLZ's match table per worker: the reference's largest unless the options ask for a smaller one.
size_t blosclz_table_bytes(const chunk_encoder_options& o) noexcept {
  return o.blosclz_hash_log == 0 ? detail::kBlosclzWorkspaceMax
                                 : detail::blosclz_workspace_size_for_log(o.blosclz_hash_log);
}

constexpr size_t kScratchAlign = 64;
constexpr size_t kScratchBlocks = 3;
constexpr size_t kUnlimited = SIZE_MAX / 4;
constexpr uint8_t kVersionLz = 1;  // every codec's format version (BLOSC_*_VERSION_FORMAT)
constexpr size_t kDictMinUseful = 256;  // BLOSC2_MINUSEFULDICT: a smaller dictionary is not worth its bytes

// Output slots per worker: a parallel round encodes this many blocks per worker before they are appended in
// order. One block per worker made every round end in a wait for its slowest block (a tenth of two threads'
// time went to waiting on a 4 MiB chunk of 16 blocks); four claim dynamically and end far fewer rounds.
constexpr size_t kSlotsPerWorker = 4;
constexpr size_t kMaxSlots = 64;  // blocks per round at most (the round's sizes live on the stack)

size_t slot_count(size_t workers) noexcept {
  const size_t n = workers * kSlotsPerWorker;
  return n < kMaxSlots ? n : kMaxSlots;
}

// A block's encoded size is at most its bytes plus, per stream, a csize and a run token.
size_t slot_size(size_t blocksize) noexcept { return blocksize + 5 * 255 + 16; }

// Everything one chunk_encode call shares with its block tasks.
struct encode_plan {
  const uint8_t* src = nullptr;
  size_t nbytes = 0;
  uint8_t typesize = 1;
  int clevel = 0;
  codec compressor = codec::blosclz;
  int codec_level = 0;  // the level (or LZ4 acceleration) handed to the library
  const chunk_encode_params* params = nullptr;  // the filters, their metas, the plugins (not copied per chunk)
  bool any_filter = false;
  size_t blocksize = 0;
  size_t nblocks = 0;
  size_t leftover = 0;
  bool split = false;
  bool use_dict = false;                   // a dictionary is asked for (the chunk may still get none)
  bytes_view dict;                         // the chunk's dictionary (empty: none), inside the output
#if TESSERA_SPEED_PATHS
  const detail::chunk_block_source* gather = nullptr;  // blocks gathered into scratch (src is then null)
#endif
};

size_t plan_block_size(const encode_plan& p, size_t nblock) noexcept {
  return (nblock + 1 == p.nblocks && p.leftover > 0) ? p.leftover : p.blocksize;
}

uint8_t codec_format_of(codec c) noexcept {
  switch (c) {
    case codec::blosclz: return static_cast<uint8_t>(codec_format::blosclz);
    case codec::lz4:
    case codec::lz4hc: return static_cast<uint8_t>(codec_format::lz4);
    case codec::zlib: return static_cast<uint8_t>(codec_format::zlib);
    case codec::zstd: return static_cast<uint8_t>(codec_format::zstd);
    case codec::ndlz:
    case codec::zfp_acc:
    case codec::zfp_prec:
    case codec::zfp_rate: break;
  }
  return static_cast<uint8_t>(codec_format::user);  // params_check let through only user codecs; udcodec holds the id
}

bool codec_known(codec c) noexcept {
  return c == codec::blosclz || c == codec::lz4 || c == codec::lz4hc || c == codec::zlib || c == codec::zstd;
}

// The library's level for a Blosc clevel 1..9 (the reference's mapping).
int codec_level_of(codec c, int clevel) noexcept {
  switch (c) {
    case codec::lz4: return 10 - clevel;  // LZ4's acceleration
    case codec::zstd: return clevel < 9 ? 2 * clevel - 1 : detail::kZstdMaxLevel;
    default: return clevel;
  }
}

// True when every byte of [p, end) equals the first (also for an empty range, as the reference's run test).
// Eight words at a time: the top byte streams of typed data often run for kilobytes before they differ, and a
// byte loop there cost several percent of a fast codec's time.
bool bytes_run(const uint8_t* p, const uint8_t* end) noexcept {
  if (p == end) return true;
  const uint8_t x = *p;
#ifdef __OPTIMIZE_SIZE__
  // A size build (firmware): 32-bit words, no unrolled 64-bit loop (a speed path for hosts).
  const uint32_t pattern = uint32_t{x} * 0x01010101u;
  while (end - p >= 4) {
    uint32_t w;
    memcpy(&w, p, 4);
    if (w != pattern) return false;
    p += 4;
  }
#else
  const uint64_t pattern = uint64_t{x} * 0x0101010101010101u;
  while (end - p >= 64) {
    uint64_t diff = 0;
    for (int k = 0; k < 8; ++k) {
      uint64_t w;
      memcpy(&w, p + 8 * k, 8);
      diff |= w ^ pattern;
    }
    if (diff != 0) return false;
    p += 64;
  }
  while (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    if (w != pattern) return false;
    p += 8;
  }
#endif
  while (p < end && *p == x) ++p;
  return p == end;
}

// Whether the codec of params is the library's NDLZ: codec 32 that params.plugins does not implement.
bool own_ndlz(const chunk_encode_params& params) noexcept {
  if (static_cast<uint8_t>(params.compressor) != detail::kNdlzId) return false;
  const chunk_user_codec* u = chunk_plugins_codec(params.plugins, detail::kNdlzId);
  return u == nullptr || u->encode == nullptr;
}

// Whether the codec of params is the library's ZFP: codec 33..35 that params.plugins does not implement.
bool own_zfp(const chunk_encode_params& params) noexcept {
  const uint8_t id = static_cast<uint8_t>(params.compressor);
  if (!detail::zfp_id(id)) return false;
  const chunk_user_codec* u = chunk_plugins_codec(params.plugins, id);
  return u == nullptr || u->encode == nullptr;
}

// The application's implementation of filter id f (with a forward pass) in params.plugins, or null.
const chunk_user_filter* user_forward(const chunk_encode_params& params, uint8_t f) noexcept {
  const chunk_user_filter* u = chunk_plugins_filter(params.plugins, f);
  return u != nullptr && u->forward != nullptr ? u : nullptr;
}

// Compresses one stream into out (the reference's maxout bytes); 0 when the codec does not fit it.
result<size_t> stream_compress(const encode_plan& p, chunk_encoder::worker& w, bytes_view in,
                               bytes_mut out) noexcept {
  switch (p.compressor) {
    case codec::blosclz:
      return detail::blosclz_compress(p.clevel, in, out, bytes_mut(w.workspace, w.blosclz_bytes));
    case codec::lz4:
    case codec::lz4hc:
    case codec::zlib:
    case codec::zstd: {
      const detail::codec_encoder_impl* impl = detail::codec_encoder_find(p.compressor);
      if (impl == nullptr || !impl->available)  // GCOVR_EXCL_BR_LINE: params_check refused it already
        return make_error(errc::codec_unavailable, TESSERA_MSG("chunk_encode: the codec is not linked"));  // GCOVR_EXCL_LINE
      return impl->compress(w.codecs, in, out, p.codec_level, p.dict);
    }
    case codec::ndlz:
      // The library's NDLZ unless params.plugins implements codec 32 (params_check found which; codecs_prepare
      // grew the workspace to NDLZ's tables).
      if (own_ndlz(*p.params))
        return detail::ndlz_compress(in, out, p.params->compcode_meta, p.params->geometry,
                                     bytes_mut(w.workspace, w.workspace_size));
      break;
    case codec::zfp_acc:
    case codec::zfp_prec:
    case codec::zfp_rate:
      // The library's ZFP (tessera_zfp, hosted: libzfp allocates) unless params.plugins implements the id.
      if (own_zfp(*p.params)) {
#if defined(TESSERA_HAVE_ZFP)
        return detail::zfp_compress(static_cast<uint8_t>(p.compressor), p.params->compcode_meta, p.typesize,
                                    p.params->geometry, in, out);
#else
        return make_error(errc::codec_unavailable, TESSERA_MSG("chunk_encode: ZFP is not in this build"));  // params_check refused it
#endif
      }
      break;
  }
  // A user codec: params_check found it, through the plugins link (so that is there). block_encode checks the
  // size it claims: 0 or in.size() is stored raw, past out an overrun error.
  return detail::encoder_plugins.compress(p.params->plugins, static_cast<uint8_t>(p.compressor),
                                          p.params->compcode_meta, in, out);
}

// Runs the forward filters on block `nblock` (bsize bytes) and puts in *out where the filtered bytes are: the
// source itself when no filter is active, else one of the worker's two pipeline buffers. (A status and an out
// pointer: no result<const uint8_t*> instantiated for this one caller pair.)
detail::code_status block_filter(const encode_plan& p, chunk_encoder::worker& w, size_t nblock, size_t bsize,
                    const uint8_t** out) noexcept {
  const uint8_t* cur;
#if TESSERA_SPEED_PATHS
  if (p.gather != nullptr) {  // the block gathered into the second pipeline buffer: the filters start from it
    uint8_t* const g = w.scratch + p.blocksize;
    TESSERA_TRY(p.gather->gather(p.gather->context, nblock, bytes_mut(g, bsize)));
    cur = g;
  } else  // (src is null then: no offset taken from it)
#endif
    cur = p.src + nblock * p.blocksize;
  *out = cur;
  if (!p.any_filter) return ok_status();
  uint8_t* const a = w.scratch;
  uint8_t* const b = w.scratch + p.blocksize;
  uint8_t* const bits = w.scratch + 2 * p.blocksize;
  for (int i = 0; i < kChunkMaxFilters; ++i) {
    const auto f = static_cast<filter_id>(p.params->filters[i]);
    if (f == filter_id::none) continue;
    uint8_t* next = cur == a ? b : a;
    const uint8_t meta = p.params->filters_meta[i];
    switch (f) {
      case filter_id::shuffle: shuffle(meta != 0 ? meta : p.typesize, bsize, cur, next); break;
      // Compiled-out filters never reach here (params_check refuses them); the guards drop their code.
      case filter_id::bitshuffle:
        if constexpr (TESSERA_WITH_BITSHUFFLE != 0) bitshuffle(p.typesize, bsize, cur, next, bits);
        break;
      case filter_id::delta:
        // Block 0 against itself as it stands in the pipeline; later blocks against the source's block 0, as
        // the reference does (the decoder XORs with the decoded block 0).
        if constexpr (TESSERA_WITH_DELTA != 0)
          detail::delta_encode(nblock == 0 ? cur : p.src, nblock == 0, p.typesize, cur, next, bsize);
        break;
      case filter_id::trunc_prec:
        if constexpr (TESSERA_WITH_TRUNC != 0)
          TESSERA_TRY(detail::trunc_prec_encode(static_cast<int8_t>(meta), p.typesize, cur, next, bsize));
        break;
      case filter_id::bytedelta:
        if constexpr (TESSERA_WITH_BYTEDELTA != 0)
          detail::bytedelta_encode(meta != 0 ? meta : p.typesize, cur, next, bsize);
        break;
      case filter_id::int_trunc:
        if constexpr (TESSERA_WITH_TRUNC != 0)
          TESSERA_TRY(detail::int_trunc_encode(static_cast<int8_t>(meta), p.typesize, cur, next, bsize));
        break;
      case filter_id::ndcell:
      case filter_id::ndmean:
        // The library's own unless params.plugins implements the id (then as any user filter, below).
        if (user_forward(*p.params, p.params->filters[i]) == nullptr) {
          if (f == filter_id::ndcell)
            TESSERA_TRY(detail::ndcell_forward(p.params->geometry, meta, p.typesize, cur, next, bsize));
          else
            TESSERA_TRY(detail::ndmean_forward(p.params->geometry, meta, p.typesize, cur, next, bsize));
          break;
        }
        [[fallthrough]];
      default:  // a user filter: params_check found it, through the plugins link
        TESSERA_TRY(detail::encoder_plugins.forward(p.params->plugins, p.params->filters[i], meta, p.typesize,
                                                    bytes_view(cur, bsize), bytes_mut(next, bsize)));
        break;
    }
    cur = next;
  }
  *out = cur;
  return ok_status();
}

// Encodes block `nblock` at dest, which lies at byte `ntbytes` of a chunk buffer of `destsize` bytes (the
// reference's blosc_c). Returns the bytes written, 0 when the block does not fit (the chunk then falls back to
// memcpy). Positions in size_t: a chunk is at most INT32_MAX bytes (no 64-bit arithmetic on 32-bit targets).
result<size_t> block_encode(const encode_plan& p, chunk_encoder::worker& w, size_t nblock, uint8_t* dest,
                            size_t ntbytes, size_t destsize) noexcept {
  const size_t bsize = plan_block_size(p, nblock);
  const uint8_t* data = nullptr;
  TESSERA_TRY(block_filter(p, w, nblock, bsize, &data));
  const bool leftover_block = bsize < p.blocksize;
  const size_t nstreams = (p.split && !leftover_block) ? p.typesize : 1;
  const size_t neblock = bsize / nstreams;
  uint8_t* const start = dest;
  for (size_t j = 0; j < nstreams; ++j) {
    uint8_t* const csize_at = dest;
    dest += 4;
    ntbytes += 4;
    const uint8_t* in = data + j * neblock;
    if (bytes_run(in, in + neblock)) {
      const uint8_t value = neblock > 0 ? in[0] : 0;
      if (ntbytes > destsize) return size_t{0};
      chunk_store_i32(csize_at, -static_cast<int32_t>(value));
      if (value != 0) {
        ntbytes += 1;
        if (ntbytes > destsize) return size_t{0};
        dest[0] = 0x01;  // the run-length token
        dest += 1;
      }
      continue;
    }
    // neblock >= 1 here (an empty stream is a run): the reference's maxout, the room left when less.
    if (ntbytes >= destsize) return size_t{0};
    const size_t room = destsize - ntbytes;
    const size_t maxout = neblock < room ? neblock : room;
    auto n = stream_compress(p, w, bytes_view(in, neblock), bytes_mut(dest, maxout));
    if (!n.ok()) return n.err();
    size_t csize = *n;
    if (csize > maxout) return make_error(errc::corrupt, TESSERA_MSG("chunk_encode: codec overran its output"));
    if (csize == 0 || csize == neblock) {
      // Not compressible: the stream is stored raw (csize == its length tells the decoder).
      if (neblock > room) return size_t{0};
      memcpy(dest, in, neblock);
      csize = neblock;
    }
    chunk_store_i32(csize_at, static_cast<int32_t>(csize));
    dest += csize;
    ntbytes += csize;
  }
  return static_cast<size_t>(dest - start);
}

// Whether a block encoded without a limit at `pos` would have met the end of a buffer of destsize bytes
// anywhere (then the reference's limited maxout applies and the block is encoded again with it).
bool block_meets_end(const encode_plan& p, size_t nblock, const uint8_t* enc, int64_t pos, int64_t destsize) noexcept {
  const size_t bsize = plan_block_size(p, nblock);
  const size_t nstreams = (p.split && bsize == p.blocksize) ? p.typesize : 1;
  const int64_t neblock = static_cast<int64_t>(bsize / nstreams);
  size_t at = 0;
  for (size_t j = 0; j < nstreams; ++j) {
    const int32_t csize = detail::chunk_load_i32(enc + at);
    at += 4;
    pos += 4;
    if (csize < 0) {
      at += 1;
      pos += 1;
      if (pos > destsize) return true;
    } else if (csize == 0) {
      if (pos > destsize) return true;
    } else {
      if (pos + neblock > destsize) return true;
      at += static_cast<size_t>(csize);
      pos += csize;
    }
  }
  return false;
}

void header_write(uint8_t* out, const chunk_encode_params& params, uint8_t flags, int32_t nbytes,
                  int32_t blocksize) noexcept {
  memset(out, 0, kChunkHeaderExtendedSize);
  out[0] = kChunkVersionStable;
  out[1] = kVersionLz;
  out[2] = flags;
  out[3] = params.typesize;
  chunk_store_i32(out + 4, nbytes);
  chunk_store_i32(out + 8, blocksize);
  memcpy(out + 16, params.filters, kChunkMaxFilters);
  out[22] = static_cast<uint8_t>(params.compressor);
  out[23] = params.compcode_meta;
  memcpy(out + 24, params.filters_meta, kChunkMaxFilters);
}

// The blocksize a chunk without blocks (memcpyed, all zeros) stores: the one asked for, clamped to nbytes, as
// the reference does, even when that is not the whole elements the blocks would have used.
int32_t stored_blocksize_of(const chunk_encode_params& params, int32_t blocksize, int32_t nbytes) noexcept {
  if (params.blocksize <= 0) return blocksize;
  int32_t b = params.blocksize;
  if (nbytes > 0 && b > nbytes) b = nbytes;
  return b > kChunkMaxBlocksize ? kChunkMaxBlocksize : b;
}

// Finishes a chunk whose blocks end at cbytes, the first block starting at `blocks_at`: when every stream is a
// run of zeros (its csize alone), the chunk becomes the special zeros chunk, header only. Stores and returns
// the chunk's size.
size_t chunk_finish(uint8_t* o, const encode_plan& p, size_t blocks_at, size_t cbytes, int32_t stored_blocksize) noexcept {
  const size_t nstreams = p.split ? (p.leftover > 0 ? (p.nblocks - 1) * p.typesize + 1 : p.nblocks * p.typesize)
                                  : p.nblocks;
  if (cbytes == blocks_at + 4 * nstreams) {
    o[31] = static_cast<uint8_t>((o[31] & ~kChunkBlosc2Dict) | static_cast<uint8_t>(chunk_special::zeros) << 4);
    chunk_store_i32(o + 8, stored_blocksize);
    cbytes = kChunkHeaderExtendedSize;
  }
  chunk_store_i32(o + 12, static_cast<int32_t>(cbytes));
  return cbytes;
}

// Whether the user codec and filter calls are linked (on bare metal only by encoder_link_plugins).
detail::code_status plugins_linked() noexcept {
#if TESSERA_CODECS_ON_DEMAND
  if (&detail::encoder_plugins == nullptr)
    return make_error(errc::unsupported, TESSERA_MSG("chunk_encode: user codecs and filters are not linked into this "
                                                     "program (call tessera::encoder_link_plugins)"));
#endif
  return ok_status();
}

detail::code_status params_check(const chunk_encode_params& params) noexcept {
  if (params.typesize == 0) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: typesize is zero"));
  if (params.clevel < 0 || params.clevel > kChunkMaxClevel)
    return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: clevel outside 0..9"));
  if (params.use_dict && !codec_takes_dict(params.compressor))
    return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: use_dict needs LZ4, LZ4HC or Zstd"));
#if TESSERA_CODECS_ON_DEMAND
  if (params.use_dict && &detail::encoder_dict_build == nullptr)
    return make_error(errc::codec_unavailable, TESSERA_MSG("chunk_encode: use_dict needs a dictionary encoder linked "
                                                           "(tessera::codec_link_lz4*_dict_encoder or codec_link_zstd_encoder)"));
#endif
  if (own_ndlz(params)) {
    // GCOVR_EXCL_BR_START: the host build links NDLZ (bare metal links it on demand).
    if (!detail::ndlz_encoder_linked())
      return make_error(errc::codec_unavailable, TESSERA_MSG("chunk_encode: this program does not link NDLZ's encoder "
                                                             "(tessera::codec_link_ndlz_encoder)"));
    // GCOVR_EXCL_BR_STOP
    // Its meta and geometry are checked where it runs, as the reference does: a chunk stored verbatim, or
    // whose streams are all runs, never calls it and is written whatever they are.
  } else if (own_zfp(params)) {
    if (!detail::zfp_built())
      return make_error(errc::codec_unavailable, TESSERA_MSG("chunk_encode: ZFP (codecs 33, 34, 35) is not in this build "
                                                             "(it needs libzfp: CMake TESSERA_WITH_ZFP, hosts only)"));
    // The reference refuses to make a context for ZFP with a shuffle: ZFP reads the items as numbers.
    for (int i = 0; i < kChunkMaxFilters; ++i)
      if (params.filters[i] == static_cast<uint8_t>(filter_id::shuffle) ||
          params.filters[i] == static_cast<uint8_t>(filter_id::bitshuffle))
        return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: ZFP takes no shuffle or bitshuffle filter"));
    // Its geometry, typesize and meta are checked where it runs, as the reference does.
  } else if (!codec_known(params.compressor)) {
    const uint8_t id = static_cast<uint8_t>(params.compressor);
    if (id < kChunkUserIdFirst) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: unknown codec"));
    TESSERA_TRY(plugins_linked());
    TESSERA_TRY(detail::encoder_plugins.codec_check(params.plugins, id));
  } else if (params.compressor != codec::blosclz) {
    const detail::codec_encoder_impl* impl = detail::codec_encoder_find(params.compressor);
    // GCOVR_EXCL_START: the host build links every codec library; builds without one and bare metal's codecs
    // on demand reach these.
    if (impl == nullptr)
      return make_error(errc::codec_unavailable, TESSERA_MSG("chunk_encode: this program does not link the codec's encoder "
                                                             "(tessera::codec_link_*_encoder, tessera/codecs.hpp)"));
    if (!impl->available)
      return make_error(errc::codec_unavailable, TESSERA_MSG("chunk_encode: the codec is not included in this build"));
    // GCOVR_EXCL_STOP
  }
  switch (params.split) {
    case split_mode::always:
    case split_mode::never:
    case split_mode::automatic:
    case split_mode::forward_compat: break;
    default: return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: unknown split mode"));
  }
  uint8_t probe[1] = {0};
  for (int i = 0; i < kChunkMaxFilters; ++i) {
    const uint8_t meta = params.filters_meta[i];
    const auto f = static_cast<filter_id>(params.filters[i]);
    switch (f) {
      case filter_id::none:
      case filter_id::shuffle:
      case filter_id::bitshuffle:
      case filter_id::delta:
      case filter_id::bytedelta:
      case filter_id::trunc_prec:
      case filter_id::int_trunc:
        // GCOVR_EXCL_BR_START: every filter is compiled in and linked on the host (bare metal links them on demand).
        if (!chunk_filter_available(f))
          return make_error(errc::unsupported, TESSERA_MSG("chunk_encode: a filter this build compiled out (TESSERA_WITH_*)"));  // GCOVR_EXCL_LINE
        if (!detail::filter_linked(f)) return detail::filter_unlinked_error(f);
        // GCOVR_EXCL_BR_STOP
        break;
      case filter_id::ndcell:
      case filter_id::ndmean:
        if (user_forward(params, params.filters[i]) == nullptr) {  // the library's own
          // GCOVR_EXCL_BR_START: the host build links every filter (bare metal links them on demand).
          if (!detail::filter_linked(f)) return detail::filter_unlinked_error(f);
          // GCOVR_EXCL_BR_STOP
          break;  // its meta and geometry are checked where it runs (a verbatim chunk runs no filter)
        }
        [[fallthrough]];
      default:
        TESSERA_TRY(plugins_linked());
        TESSERA_TRY(detail::encoder_plugins.filter_check(params.plugins, params.filters[i]));
        break;
    }
    switch (f) {
      case filter_id::trunc_prec:  // validates the meta and typesize on an empty block
        if constexpr (TESSERA_WITH_TRUNC != 0)
          TESSERA_TRY(detail::trunc_prec_encode(static_cast<int8_t>(meta), params.typesize, probe, probe, 0));
        break;
      case filter_id::int_trunc:
        if constexpr (TESSERA_WITH_TRUNC != 0)
          TESSERA_TRY(detail::int_trunc_encode(static_cast<int8_t>(meta), params.typesize, probe, probe, 0));
        break;
      default: break;
    }
  }
  return ok_status();
}

}  // namespace

// ---- The encoder object ------------------------------------------------------------------------------------

struct chunk_encoder_access {
  // Blocks go through output slots only when a second worker can take some: with one worker (a pool of one
  // thread) the slots would only add a copy of every block.
  static bool parallel(const chunk_encoder& e) noexcept { return e.options_.exec.run != nullptr && e.nworkers_ > 1; }

  static size_t slots_bytes(const chunk_encoder& e, size_t blocksize) noexcept {
    return parallel(e) ? slot_count(e.nworkers_) * slot_size(blocksize) : 0;
  }

  static void buffers_free(chunk_encoder& e) noexcept {
    for (uint32_t i = 0; i < e.nworkers_; ++i) {
      chunk_encoder::worker& w = e.workers_[i];
      if (w.scratch != nullptr)
        allocator_deallocate(e.alloc_, w.scratch, kScratchBlocks * e.scratch_blocksize_, kScratchAlign);
      w.scratch = nullptr;
    }
    if (e.slots_ != nullptr) allocator_deallocate(e.alloc_, e.slots_, slots_bytes(e, e.scratch_blocksize_), kScratchAlign);
    e.slots_ = nullptr;
    e.scratch_blocksize_ = 0;
  }

  static void workers_free(chunk_encoder& e) noexcept {
    if (e.workers_ != nullptr) {
      buffers_free(e);
      for (uint32_t i = 0; i < e.nworkers_; ++i) {
        chunk_encoder::worker& w = e.workers_[i];
        if (w.workspace != nullptr) allocator_deallocate(e.alloc_, w.workspace, w.workspace_size, 8);
        detail::codec_context_release(w.codecs);
        w.~worker();
      }
      allocator_deallocate(e.alloc_, e.workers_, sizeof(chunk_encoder::worker) * e.nworkers_,
                           alignof(chunk_encoder::worker));
    }
    e.workers_ = nullptr;
    e.nworkers_ = 0;
    e.scratch_blocksize_ = 0;
    e.slots_ = nullptr;
  }

  static detail::code_status scratch_ensure(chunk_encoder& e, size_t blocksize, bool at_init = false) noexcept {
    if (e.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encoder used before chunk_encoder_init"));
    if (blocksize <= e.scratch_blocksize_) return ok_status();
    if (e.options_.fixed_scratch && !at_init)
      return make_error(errc::buffer_too_small, TESSERA_MSG("chunk_encode: blocks larger than the encoder's fixed scratch"));
    if (blocksize > (SIZE_MAX - 4096) / (kScratchBlocks * (e.nworkers_ + 1) + kMaxSlots))
      return make_error(errc::overflow, TESSERA_MSG("chunk_encode: block scratch overflows"));
    buffers_free(e);
    // The size first, so that buffers_free releases whatever was allocated when an allocation fails.
    e.scratch_blocksize_ = blocksize;
    for (uint32_t i = 0; i < e.nworkers_; ++i) {
      e.workers_[i].scratch = static_cast<uint8_t*>(allocator_allocate(e.alloc_, kScratchBlocks * blocksize, kScratchAlign));
      if (e.workers_[i].scratch == nullptr) {
        buffers_free(e);
        return make_error(errc::out_of_memory, TESSERA_MSG("chunk_encode: allocator refused the block scratch"));
      }
    }
    const size_t sb = slots_bytes(e, blocksize);
    if (sb > 0) {
      e.slots_ = static_cast<uint8_t*>(allocator_allocate(e.alloc_, sb, kScratchAlign));
      if (e.slots_ == nullptr) {
        buffers_free(e);
        return make_error(errc::out_of_memory, TESSERA_MSG("chunk_encode: allocator refused the output slots"));
      }
    }
    return ok_status();
  }

  // Codec state for this chunk's codec and level, made here on the caller's thread for every worker that may
  // encode its blocks: tasks never allocate. Sized for the scratch's block size, which only grows.
  static detail::code_status codecs_prepare(chunk_encoder& e, const encode_plan& p) noexcept {
    const uint32_t n = parallel(e) && p.nblocks > 1 ? e.nworkers_ : 1;
    if (own_ndlz(*p.params)) TESSERA_TRY(workspace_ensure(e, detail::kNdlzWorkspace, n));
    for (uint32_t i = 0; i < n; ++i) {
      detail::codec_context& c = e.workers_[i].codecs;
      // BloscLZ's workspace is made at init; the libraries' state here.
      const detail::codec_encoder_impl* impl = detail::codec_encoder_find(p.compressor);
      // A dictionary counts as input besides the block (Zstd sizes its tables by both, plus a little): room for
      // the largest, so that prepare and encode agree and a later encode never grows anything.
      const size_t dict_room = p.use_dict ? static_cast<size_t>(kChunkMaxDictSize) + 1024 : 0;
      if (impl != nullptr && impl->available && impl->prepare != nullptr)
        TESSERA_TRY(impl->prepare(c, p.codec_level, e.scratch_blocksize_ + dict_room));
    }
    return ok_status();
  }

  // The first n workers' workspaces hold at least `bytes` (NDLZ's tables; BloscLZ keeps using its part).
  static detail::code_status workspace_ensure(chunk_encoder& e, size_t bytes, uint32_t n) noexcept {
    for (uint32_t i = 0; i < n; ++i) {
      chunk_encoder::worker& w = e.workers_[i];
      if (w.workspace_size >= bytes) continue;
      if (e.options_.fixed_scratch)
        return make_error(errc::buffer_too_small, TESSERA_MSG("chunk_encode: NDLZ's tables do not fit the encoder's fixed "
                                                              "workspace (a BloscLZ table of 2^14 entries holds them)"));
      auto* grown = static_cast<uint8_t*>(allocator_allocate(e.alloc_, bytes, 8));
      if (grown == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("chunk_encode: allocator refused NDLZ's tables"));
      allocator_deallocate(e.alloc_, w.workspace, w.workspace_size, 8);
      w.workspace = grown;
      w.workspace_size = bytes;
    }
    return ok_status();
  }

  static detail::code_status init(chunk_encoder& e, const allocator& alloc, const chunk_encoder_options& options) noexcept {
#if TESSERA_CODECS_ON_DEMAND
    if (options.exec.run != nullptr && options.exec.workers > 1 && &detail::encoder_parallel_blocks == nullptr)
      return make_error(errc::unsupported, TESSERA_MSG("chunk_encoder: parallel blocks are not linked into this program "
                                                       "(call tessera::encoder_link_parallel)"));
#endif
    if (options.blosclz_hash_log != 0 && (options.blosclz_hash_log < detail::kBlosclzHashLogMin ||
                                          options.blosclz_hash_log > detail::kBlosclzHashLogMax))
      return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encoder: blosclz_hash_log must be 0 or 8..14"));
    workers_free(e);
    e.free_ = &workers_free;
    e.alloc_ = alloc;
    e.options_ = options;
    const uint32_t n = options.exec.workers == 0 ? 1 : options.exec.workers;
    void* p = allocator_allocate(alloc, sizeof(chunk_encoder::worker) * n, alignof(chunk_encoder::worker));
    if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("chunk_encoder: allocator refused the workers"));
    e.workers_ = static_cast<chunk_encoder::worker*>(p);
    e.nworkers_ = n;
    for (uint32_t i = 0; i < n; ++i) {
      auto* w = new (tessera::cxx::place, &e.workers_[i]) chunk_encoder::worker;
      w->codecs.alloc = alloc;
    }
    const size_t ws = blosclz_table_bytes(options);
    for (uint32_t i = 0; i < n; ++i) {
      e.workers_[i].workspace_size = ws;
      e.workers_[i].blosclz_bytes = ws;
      e.workers_[i].workspace = static_cast<uint8_t*>(allocator_allocate(alloc, ws, 8));
      if (e.workers_[i].workspace == nullptr) {
        workers_free(e);
        return make_error(errc::out_of_memory, TESSERA_MSG("chunk_encoder: allocator refused the BloscLZ workspace"));
      }
    }
    if (options.max_blocksize > 0) {
      detail::code_status s = scratch_ensure(e, options.max_blocksize, true);
      if (!s.ok()) {
        workers_free(e);
        return s;
      }
    }
    return ok_status();
  }

  // One round of parallel blocks: task i encodes block first + i into slot i without an output limit.
  struct job {
    const encode_plan* plan;
    chunk_encoder::worker* workers;
    uint32_t nworkers;
    uint8_t* slots;
    size_t slot_bytes;
    int64_t* sizes;  // per slot
    size_t first;
    tessera::cxx::atomic<bool> bad_worker{false};
  };

  static void task(void* context, size_t index, uint32_t worker) noexcept {
    auto& j = *static_cast<job*>(context);
    if (worker >= j.nworkers) {
      j.bad_worker.store(true, tessera::cxx::memory_order_relaxed);
      return;
    }
    chunk_encoder::worker& w = j.workers[worker];
    if (!w.err.ok()) return;
    auto n = block_encode(*j.plan, w, j.first + index, j.slots + index * j.slot_bytes, 0, kUnlimited);
    if (!n.ok()) {
      w.err = n.err();
      return;
    }
    j.sizes[index] = static_cast<int64_t>(*n);
  }

  // Encodes every block at out[ntbytes...] and returns the chunk's length, 0 when it does not fit.
  static result<size_t> blocks_encode(chunk_encoder& e, const encode_plan& p, uint8_t* out, size_t ntbytes,
                                      size_t destsize) noexcept {
    uint8_t* const bstarts = out + kChunkHeaderExtendedSize;
    // The parallel rounds: on bare metal linked only by encoder_link_parallel (init refuses a parallel executor
    // without it, so the pointer is there whenever parallel(e) holds).
    if (parallel(e) && p.nblocks > 1) {
      auto r = detail::encoder_parallel_blocks(e, &p, out, static_cast<int64_t>(ntbytes), static_cast<int64_t>(destsize));
      if (!r.ok()) return r.err();
      return static_cast<size_t>(*r);
    }
    for (size_t j = 0; j < p.nblocks; ++j) {
      chunk_store_i32(bstarts + 4 * j, static_cast<int32_t>(ntbytes));
      auto n = block_encode(p, e.workers_[0], j, out + ntbytes, ntbytes, destsize);
      if (!n.ok()) return n.err();
      if (*n == 0) return size_t{0};
      ntbytes += *n;
    }
    return ntbytes;
  }

  // blocks_encode's parallel rounds (through detail::encoder_parallel_blocks).
  static result<int64_t> blocks_parallel(chunk_encoder& e, const encode_plan& p, uint8_t* out, int64_t ntbytes,
                                         int64_t destsize) noexcept {
    uint8_t* const bstarts = out + kChunkHeaderExtendedSize;
    int64_t sizes[kMaxSlots];
    const size_t round = slot_count(e.nworkers_);
    const size_t sbytes = slot_size(e.scratch_blocksize_);
    for (size_t first = 0; first < p.nblocks; first += round) {
      const size_t count = p.nblocks - first < round ? p.nblocks - first : round;
      for (uint32_t i = 0; i < e.nworkers_; ++i) e.workers_[i].err = ok_status();
      job jb;
      jb.plan = &p;
      jb.workers = e.workers_;
      jb.nworkers = e.nworkers_;
      jb.slots = e.slots_;
      jb.slot_bytes = sbytes;
      jb.sizes = sizes;
      jb.first = first;
      executor_run(e.options_.exec, count, task, &jb);
      if (jb.bad_worker.load(tessera::cxx::memory_order_relaxed))
        return make_error(errc::invalid_argument, TESSERA_MSG("executor: a task ran with a worker index past executor.workers"));
      for (uint32_t i = 0; i < e.nworkers_; ++i) TESSERA_TRY(e.workers_[i].err);
      for (size_t i = 0; i < count; ++i) {
        const size_t j = first + i;
        chunk_store_i32(bstarts + 4 * j, static_cast<int32_t>(ntbytes));
        const uint8_t* enc = e.slots_ + i * sbytes;
        if (block_meets_end(p, j, enc, ntbytes, destsize)) {
          auto n = block_encode(p, e.workers_[0], j, out + ntbytes, static_cast<size_t>(ntbytes),
                                static_cast<size_t>(destsize));
          if (!n.ok()) return n.err();
          if (*n == 0) return int64_t{0};
          ntbytes += static_cast<int64_t>(*n);
        } else {
          memcpy(out + ntbytes, enc, static_cast<size_t>(sizes[i]));
          ntbytes += sizes[i];
        }
      }
    }
    return ntbytes;
  }

  // The reference's dictionary (use_dict): the first bytes of the chunk's filtered blocks, as many as
  // min(32 KiB, nbytes / 20) and the samples it would train from (nbytes / 16, in one sample per stream and
  // at least 8), none below 256 bytes. It goes after bstarts as an int32 size and the bytes, and the blocks are
  // compressed against it. LZ4 and LZ4HC load it as the reference does, so their chunks are the reference's;
  // the reference trains Zstd's with ZDICT, which allocates behind any allocator's back: Tessera gives Zstd the
  // same bytes as a raw-content dictionary, which every Zstd decoder (the reference's too) reads. Returns the
  // bytes the dictionary takes at out[ntbytes...], 0 when the chunk gets none.
  static result<int64_t> dict_build(chunk_encoder& e, encode_plan& p, uint8_t* out, int64_t ntbytes,
                                    int64_t destsize) noexcept {
    const size_t dict_max = p.nbytes / 20 < static_cast<size_t>(kChunkMaxDictSize) ? p.nbytes / 20
                                                                                    : static_cast<size_t>(kChunkMaxDictSize);
    size_t nsamples = p.split ? p.nblocks * p.typesize : p.nblocks;
    if (nsamples < 8) nsamples = 8;
    const size_t sample = p.nbytes / nsamples / 16;
    if (dict_max < kDictMinUseful || sample == 0) return int64_t{0};
    const size_t dsize = nsamples * sample < dict_max ? nsamples * sample : dict_max;
    if (ntbytes + 4 + static_cast<int64_t>(dsize) > destsize) return int64_t{0};
    uint8_t* const dict = out + ntbytes + 4;
    size_t filled = 0;
    for (size_t j = 0; filled < dsize; ++j) {
      const size_t bsize = plan_block_size(p, j);
      const uint8_t* filtered = nullptr;
      TESSERA_TRY(block_filter(p, e.workers_[0], j, bsize, &filtered));
      const size_t take = dsize - filled < bsize ? dsize - filled : bsize;
      memcpy(dict + filled, filtered, take);
      filled += take;
    }
    // The reference samples the filtered blocks at the chunk's data offset and stores the dictionary's size
    // (where bstarts end) before it copies the samples: for LZ4 and LZ4HC the four bytes at 4 * nblocks of the
    // dictionary hold its own size. Reproduced, so that the chunks are the reference's byte for byte.
    if (p.compressor != codec::zstd) {
      const size_t at = 4 * p.nblocks;
      for (size_t k = 0; k < 4 && at + k < dsize; ++k) dict[at + k] = static_cast<uint8_t>(dsize >> (8 * k));
    }
    // Zstd decoders take a dictionary that starts with its magic number for a trained one: raw bytes that
    // happen to start so would not read back. Such a chunk goes without.
    constexpr uint8_t kZstdDictMagic[4] = {0x37, 0xa4, 0x30, 0xec};
    if (p.compressor == codec::zstd && memcmp(dict, kZstdDictMagic, 4) == 0) return int64_t{0};
    chunk_store_i32(out + ntbytes, static_cast<int32_t>(dsize));
    p.dict = bytes_view(dict, dsize);
    return static_cast<int64_t>(4 + dsize);
  }

  // Everything chunk_encode of nbytes with these parameters will need (scratch, codec state), made now on the
  // caller's thread, so that a later chunk_encode on another thread allocates nothing.
  static detail::code_status prepare(chunk_encoder& e, const chunk_encode_params& params, size_t nbytes) noexcept {
    if (e.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encoder used before chunk_encoder_init"));
    TESSERA_TRY(params_check(params));
    auto bsr = detail::chunk_blocksize_of(params, nbytes);
    if (!bsr.ok()) return bsr.err();
    if (params.clevel == 0 || nbytes < 32) return ok_status();  // memcpyed: no blocks to encode
    encode_plan p;
    p.params = &params;
    p.compressor = params.compressor;
    p.codec_level = codec_level_of(params.compressor, params.clevel);
    p.blocksize = static_cast<size_t>(*bsr);
    p.nblocks = (nbytes + p.blocksize - 1) / p.blocksize;
    p.use_dict = params.use_dict;
    TESSERA_TRY(scratch_ensure(e, p.blocksize));
    return codecs_prepare(e, p);
  }

#if TESSERA_SPEED_PATHS
  static result<size_t> encode(chunk_encoder& e, const chunk_encode_params& params, bytes_view src,
                               bytes_mut out, const detail::chunk_block_source* gather = nullptr) noexcept {
    const size_t nbytes_in = gather != nullptr ? gather->nbytes : src.size();
#else
  static result<size_t> encode(chunk_encoder& e, const chunk_encode_params& params, bytes_view src,
                               bytes_mut out) noexcept {
    const size_t nbytes_in = src.size();
#endif
    if (e.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encoder used before chunk_encoder_init"));
    TESSERA_TRY(params_check(params));
    auto bsr = detail::chunk_blocksize_of(params, nbytes_in);
    if (!bsr.ok()) return bsr.err();
    const size_t destsize = out.size() > static_cast<size_t>(INT32_MAX) ? static_cast<size_t>(INT32_MAX) : out.size();
    if (destsize < kChunkHeaderExtendedSize)
      return make_error(errc::buffer_too_small, TESSERA_MSG("chunk_encode: output shorter than the 32-byte header"));

    encode_plan p;
    p.src = src.data();
    p.nbytes = src.size();
#if TESSERA_SPEED_PATHS
    if (gather != nullptr) {
      p.nbytes = gather->nbytes;
      p.gather = gather;
      if (static_cast<size_t>(*bsr) != gather->blocksize || gather->gather == nullptr)
        return make_error(errc::unsupported, TESSERA_MSG("chunk_encode_gathered: the encoder's blocks are not the source's"));
    }
#endif
    p.typesize = params.typesize;
    p.clevel = params.clevel;
    p.compressor = params.compressor;
    p.codec_level = params.clevel > 0 ? codec_level_of(params.compressor, params.clevel) : 0;
    p.params = &params;
    p.use_dict = params.use_dict;
    bool delta = false;
    for (uint8_t f : params.filters) {
      if (f != 0) p.any_filter = true;
      if (f == static_cast<uint8_t>(filter_id::delta)) delta = true;
    }
#if TESSERA_SPEED_PATHS
    if (delta && gather != nullptr)
      return make_error(errc::unsupported, TESSERA_MSG("chunk_encode_gathered: delta needs the whole chunk"));
#endif
    p.blocksize = static_cast<size_t>(*bsr);
    p.nblocks = p.nbytes / p.blocksize;
    p.leftover = p.nbytes % p.blocksize;
    if (p.leftover > 0) ++p.nblocks;

    const int32_t nbytes = static_cast<int32_t>(p.nbytes);
    uint8_t* const o = out.data();
    uint8_t flags = kChunkFlagShuffle | kChunkFlagBitshuffle;  // the extended-header marker
    bool memcpyed = params.clevel == 0 || p.nbytes < 32;
    // Not even the block starts fit (nblocks checked first: 4 * nblocks may wrap a 32-bit size_t).
    size_t ntbytes = kChunkHeaderExtendedSize + 4 * p.nblocks;
    if (!memcpyed && (p.nblocks > destsize / 4 || ntbytes > destsize)) memcpyed = true;
    if (memcpyed) {
      flags |= kChunkFlagMemcpyed;
    } else {
      if (delta) flags |= kChunkFlagDelta;
      // Split streams need whole elements in every full block; the reference would split a block of fewer
      // bytes than typesize into empty streams (and lose its data), so such chunks are not split here.
      p.split = chunk_split_decide(params, *bsr) && p.blocksize % p.typesize == 0;
      if (!p.split) flags |= kChunkFlagNoSplit;
      flags = static_cast<uint8_t>(flags | codec_format_of(params.compressor) << 5);
    }
    const int32_t stored_blocksize = stored_blocksize_of(params, *bsr, nbytes);
    header_write(o, params, flags, nbytes, memcpyed ? stored_blocksize : *bsr);

    if (!memcpyed) {
      TESSERA_TRY(scratch_ensure(e, p.blocksize));
      if (p.use_dict) {  // params_check let it through only for a codec whose encoder links dict_build
        auto d = detail::encoder_dict_build(e, &p, o, static_cast<int64_t>(ntbytes), static_cast<int64_t>(destsize));
        if (!d.ok()) return d.err();
        ntbytes += static_cast<size_t>(*d);
      }
      TESSERA_TRY(codecs_prepare(e, p));
      if (!p.dict.empty()) o[31] = static_cast<uint8_t>(o[31] | kChunkBlosc2Dict);
      auto r = blocks_encode(e, p, o, ntbytes, destsize);
      if (!r.ok()) return r.err();
      if (*r > 0) return chunk_finish(o, p, ntbytes, *r, stored_blocksize);
      // The blocks did not fit: the data is stored verbatim instead, keeping the header written so far.
      o[2] = static_cast<uint8_t>(o[2] | kChunkFlagMemcpyed);
      o[31] = static_cast<uint8_t>(o[31] & ~kChunkBlosc2Dict);  // verbatim data has no dictionary section
      chunk_store_i32(o + 8, stored_blocksize);
    }
    if (p.nbytes > destsize - kChunkHeaderExtendedSize)
      return make_error(errc::buffer_too_small, TESSERA_MSG("chunk_encode: output cannot hold the chunk (needs nbytes + 32)"));
#if TESSERA_SPEED_PATHS
    if (gather != nullptr) {  // verbatim: the blocks gathered straight into place
      for (size_t j = 0; j < p.nblocks; ++j)
        TESSERA_TRY(gather->gather(gather->context, j,
                                   bytes_mut(o + kChunkHeaderExtendedSize + j * p.blocksize, plan_block_size(p, j))));
    } else
#endif
    if (p.nbytes > 0) memcpy(o + kChunkHeaderExtendedSize, p.src, p.nbytes);
    const size_t cbytes = p.nbytes + kChunkHeaderExtendedSize;
    chunk_store_i32(o + 12, static_cast<int32_t>(cbytes));
    return cbytes;
  }
#if TESSERA_SPEED_PATHS
  // Whether the streams of block `nblock` in [at, end) of an old chunk are what block_encode writes: each
  // stream's csize and bytes (a run: its token when the value is not 0), ending exactly at `end`.
  static bool block_walk(const encode_plan& p, size_t nblock, const uint8_t* at, const uint8_t* end) noexcept {
    const size_t bsize = plan_block_size(p, nblock);
    const size_t nstreams = (p.split && bsize == p.blocksize) ? p.typesize : 1;
    const size_t neblock = bsize / nstreams;
    for (size_t j = 0; j < nstreams; ++j) {
      if (end - at < 4) return false;
      const int32_t csize = detail::chunk_load_i32(at);
      at += 4;
      if (csize < 0) {
        if (csize < -255 || end - at < 1) return false;
        at += 1;
      } else if (csize > 0) {
        if (static_cast<size_t>(csize) > neblock || static_cast<size_t>(end - at) < static_cast<size_t>(csize))
          return false;
        at += csize;
      }
    }
    return at == end;
  }

  // chunk_encode of a chunk whose blocks marked in `changed` (a bit per block) are new in src and whose other
  // blocks are old's: those blocks' streams are copied. Every block of a chunk is compressed on its own (no
  // dictionary, no delta against block 0), so the result is chunk_encode's of the new content whenever old is
  // chunk_encode's of its own. Returns 0, and the caller encodes the whole chunk, when old is not such a chunk
  // for these parameters (another header, a dictionary, special or verbatim, blocks out of order, streams that
  // do not add up) or when a block would meet the end of out (the reference's limited output applies).
  static result<size_t> encode_spliced(chunk_encoder& e, const chunk_encode_params& params, bytes_view old,
                                       const uint8_t* changed, bytes_view src, bytes_mut out) noexcept {
    if (e.workers_ == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encoder used before chunk_encoder_init"));
    TESSERA_TRY(params_check(params));
    if (params.clevel == 0 || params.use_dict || src.size() < 32 || src.size() > static_cast<size_t>(INT32_MAX))
      return size_t{0};
    if (static_cast<uint8_t>(params.compressor) >= kChunkUserIdFirst) return size_t{0};
    for (uint8_t f : params.filters)
      if (f == static_cast<uint8_t>(filter_id::delta) || f == static_cast<uint8_t>(filter_id::ndcell) ||
          f == static_cast<uint8_t>(filter_id::ndmean) || (f != 0 && !chunk_filter_available(static_cast<filter_id>(f))))
        return size_t{0};
    auto bsr = detail::chunk_blocksize_of(params, src.size());
    if (!bsr.ok()) return bsr.err();
    const size_t destsize = out.size() > static_cast<size_t>(INT32_MAX) ? static_cast<size_t>(INT32_MAX) : out.size();
    encode_plan p;
    p.src = src.data();
    p.nbytes = src.size();
    p.typesize = params.typesize;
    p.clevel = params.clevel;
    p.compressor = params.compressor;
    p.codec_level = codec_level_of(params.compressor, params.clevel);
    p.params = &params;
    for (uint8_t f : params.filters)
      if (f != 0) p.any_filter = true;
    p.blocksize = static_cast<size_t>(*bsr);
    p.nblocks = p.nbytes / p.blocksize;
    p.leftover = p.nbytes % p.blocksize;
    if (p.leftover > 0) ++p.nblocks;
    size_t ntbytes = kChunkHeaderExtendedSize + 4 * p.nblocks;
    if (p.nblocks > destsize / 4 || ntbytes > destsize || ntbytes > old.size()) return size_t{0};
    p.split = chunk_split_decide(params, *bsr) && p.blocksize % p.typesize == 0;
    uint8_t flags = kChunkFlagShuffle | kChunkFlagBitshuffle;
    if (!p.split) flags |= kChunkFlagNoSplit;
    flags = static_cast<uint8_t>(flags | codec_format_of(params.compressor) << 5);
    uint8_t* const o = out.data();
    header_write(o, params, flags, static_cast<int32_t>(p.nbytes), *bsr);
    // The old header must be the one just written (cbytes aside): same pipeline, blocks, split, no flags2.
    const uint8_t* const b = old.data();
    if (memcmp(b, o, 12) != 0 || memcmp(b + 16, o + 16, kChunkHeaderExtendedSize - 16) != 0) return size_t{0};
    const int32_t old_cbytes = detail::chunk_load_i32(b + 12);
    if (old_cbytes < 0 || static_cast<size_t>(old_cbytes) != old.size()) return size_t{0};
    TESSERA_TRY(scratch_ensure(e, p.blocksize));
    TESSERA_TRY(codecs_prepare(e, p));
    uint8_t* const bstarts = o + kChunkHeaderExtendedSize;
    const uint8_t* const old_bstarts = b + kChunkHeaderExtendedSize;
    for (size_t j = 0; j < p.nblocks; ++j) {
      chunk_store_i32(bstarts + 4 * j, static_cast<int32_t>(ntbytes));
      if ((changed[j / 8] >> (j % 8) & 1) != 0) {
        auto n = block_encode(p, e.workers_[0], j, o + ntbytes, ntbytes, destsize);
        if (!n.ok()) return n.err();
        if (*n == 0) return size_t{0};
        ntbytes += *n;
        continue;
      }
      const int32_t first = detail::chunk_load_i32(old_bstarts + 4 * j);
      const int32_t last = j + 1 < p.nblocks ? detail::chunk_load_i32(old_bstarts + 4 * (j + 1)) : old_cbytes;
      if (first < static_cast<int32_t>(kChunkHeaderExtendedSize + 4 * p.nblocks) || last <= first || last > old_cbytes)
        return size_t{0};
      const size_t len = static_cast<size_t>(last - first);
      if (!block_walk(p, j, b + first, b + last) || len > destsize - ntbytes ||
          block_meets_end(p, j, b + first, static_cast<int64_t>(ntbytes), static_cast<int64_t>(destsize)))
        return size_t{0};
      memcpy(o + ntbytes, b + first, len);
      ntbytes += len;
    }
    return chunk_finish(o, p, kChunkHeaderExtendedSize + 4 * p.nblocks, ntbytes,
                        stored_blocksize_of(params, *bsr, static_cast<int32_t>(p.nbytes)));
  }
#endif
};

size_t chunk_encoder_estimate(const chunk_encoder_options& options) noexcept {
  const size_t n = options.exec.workers == 0 ? 1 : options.exec.workers;
  const size_t slack = 2 * kScratchAlign;
  size_t total = sizeof(chunk_encoder::worker) * n + slack;
  const int clevel = options.estimate_clevel < 1 ? 1 : (options.estimate_clevel > 9 ? 9 : options.estimate_clevel);
  size_t state = 0;
  if (options.estimate_codec != codec::blosclz) {
    const detail::codec_encoder_impl* impl = detail::codec_encoder_find(options.estimate_codec);
    if (impl != nullptr && impl->available && impl->state_estimate != nullptr)
      state = impl->state_estimate(codec_level_of(options.estimate_codec, clevel), options.max_blocksize);
  }
  size_t table = blosclz_table_bytes(options);
  // NDLZ grows the workspace to its tables (a new block: an arena does not get the old one back).
  if (options.estimate_codec == codec::ndlz && table < detail::kNdlzWorkspace) table += detail::kNdlzWorkspace + slack;
  total += n * (kScratchBlocks * options.max_blocksize + slack + table + slack + state);
  if (options.exec.run != nullptr && n > 1) total += slot_count(n) * slot_size(options.max_blocksize) + slack;
  return total;
}

status chunk_encoder_init(chunk_encoder& e, const allocator& alloc, const chunk_encoder_options& options) noexcept {
  return chunk_encoder_access::init(e, alloc, options);
}


result<size_t> chunk_encode(chunk_encoder& e, const chunk_encode_params& params, bytes_view src,
                            bytes_mut out) noexcept {
  return chunk_encoder_access::encode(e, params, src, out);
}

result<size_t> chunk_encode_special(const chunk_encode_params& params, chunk_special kind, size_t nbytes,
                                    bytes_view value, bytes_mut out) noexcept {
  if (params.typesize == 0) return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode_special: typesize is zero"));
  auto bsr = chunk_blocksize_compute(params, nbytes);
  if (!bsr.ok()) return bsr.err();
  if (nbytes % params.typesize != 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode_special: nbytes not a multiple of typesize"));
  size_t cbytes = kChunkHeaderExtendedSize;
  switch (kind) {
    case chunk_special::zeros:
    case chunk_special::uninit: break;
    case chunk_special::nan:
      if (params.typesize != 4 && params.typesize != 8)
        return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode_special: NaN chunks need typesize 4 or 8"));
      break;
    case chunk_special::value:
      // An item wider than 255 bytes has typesize 1 in the header (the reference's wide types): the value's
      // width is cbytes minus the header, and nbytes holds whole values.
      if (value.size() != params.typesize && !(params.typesize == 1 && value.size() > 255))
        return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode_special: the value must have typesize bytes"));
      if (value.size() > static_cast<size_t>(INT32_MAX) - kChunkHeaderExtendedSize || nbytes % value.size() != 0)
        return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode_special: nbytes not a multiple of the value"));
      cbytes += value.size();
      break;
    default: return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode_special: not a special-value kind"));
  }
  if (out.size() < cbytes) return make_error(errc::buffer_too_small, TESSERA_MSG("chunk_encode_special: output too short"));
  uint8_t* o = out.data();
  memset(o, 0, kChunkHeaderExtendedSize);
  o[0] = kChunkVersionStable;
  o[1] = kVersionLz;
  o[2] = kChunkFlagShuffle | kChunkFlagBitshuffle;
  o[3] = params.typesize;
  chunk_store_i32(o + 4, static_cast<int32_t>(nbytes));
  chunk_store_i32(o + 8, *bsr);
  chunk_store_i32(o + 12, static_cast<int32_t>(cbytes));
  o[31] = static_cast<uint8_t>(static_cast<uint8_t>(kind) << 4);
  if (kind == chunk_special::value) memcpy(o + kChunkHeaderExtendedSize, value.data(), value.size());
  return cbytes;
}

namespace detail {

#if TESSERA_SPEED_PATHS
result<size_t> chunk_encode_gathered(chunk_encoder& e, const chunk_encode_params& params,
                                     const chunk_block_source& src, bytes_mut out) noexcept {
  return chunk_encoder_access::encode(e, params, bytes_view(), out, &src);
}

result<size_t> chunk_encode_spliced(chunk_encoder& e, const chunk_encode_params& params, bytes_view old,
                                    const uint8_t* changed, bytes_view src, bytes_mut out) noexcept {
  return chunk_encoder_access::encode_spliced(e, params, old, changed, src, out);
}
#endif

// What encoder_plugins_link.cpp's table points at.
status encoder_user_codec_check(const chunk_plugins* plugins, uint8_t id) noexcept {
  const chunk_user_codec* u = chunk_plugins_codec(plugins, id);
  if (u == nullptr || u->encode == nullptr)
    return make_error(errc::codec_unavailable, TESSERA_MSG("chunk_encode: a user codec that params.plugins does not register "
                                                           "(with an encode function)"));
  return ok_status();
}

status encoder_user_filter_check(const chunk_plugins* plugins, uint8_t id) noexcept {
  const chunk_user_filter* u = chunk_plugins_filter(plugins, id);
  if (u == nullptr || u->forward == nullptr)
    return make_error(errc::unsupported, TESSERA_MSG("chunk_encode: a filter this library cannot apply (only shuffle, "
                                         "bitshuffle, delta, trunc_prec, ndcell 32, ndmean 33, bytedelta 35, "
                                         "int_trunc 36) and that params.plugins does not register as a user filter"));
  return ok_status();
}

result<size_t> encoder_user_compress(const chunk_plugins* plugins, uint8_t id, uint8_t compcode_meta, bytes_view in,
                                     bytes_mut out) noexcept {
  const chunk_user_codec* u = chunk_plugins_codec(plugins, id);
  if (u == nullptr || u->encode == nullptr)  // GCOVR_EXCL_BR_LINE: params_check refused it already
    return make_error(errc::invalid_argument, TESSERA_MSG("chunk_encode: unknown codec"));  // GCOVR_EXCL_LINE
  size_t n = 0;
  TESSERA_TRY(u->encode(u->context, in, out, compcode_meta, &n));
  return n;
}

status encoder_user_forward(const chunk_plugins* plugins, uint8_t id, uint8_t meta, uint8_t typesize, bytes_view in,
                            bytes_mut out) noexcept {
  const chunk_user_filter* u = chunk_plugins_filter(plugins, id);
  if (u == nullptr || u->forward == nullptr)  // GCOVR_EXCL_BR_LINE: params_check refused it already
    return make_error(errc::unsupported, TESSERA_MSG("chunk_encode: unsupported filter"));  // GCOVR_EXCL_LINE
  return u->forward(u->context, in, out, meta, typesize);
}

// What encoder_link.cpp's pointers point at (the plans are encode_plans).
result<int64_t> encoder_parallel_blocks_run(chunk_encoder& e, const void* plan, uint8_t* out, int64_t ntbytes,
                                            int64_t destsize) noexcept {
  return chunk_encoder_access::blocks_parallel(e, *static_cast<const encode_plan*>(plan), out, ntbytes, destsize);
}

result<int64_t> encoder_dict_build_run(chunk_encoder& e, void* plan, uint8_t* out, int64_t ntbytes,
                                       int64_t destsize) noexcept {
  return chunk_encoder_access::dict_build(e, *static_cast<encode_plan*>(plan), out, ntbytes, destsize);
}

detail::code_status chunk_encoder_prepare(chunk_encoder& e, const chunk_encode_params& params, size_t nbytes) noexcept {
  return chunk_encoder_access::prepare(e, params, nbytes);
}

}  // namespace detail

}  // namespace tessera
