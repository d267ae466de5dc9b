// Blosc/Blosc2 chunks (README_CHUNK_FORMAT.rst): reading the header, decoding a whole chunk or one block, and
// encoding. Every integer of a chunk is little-endian; every size it claims is checked against the
// bytes at hand, so any byte string yields either the right data or an error.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/executor.hpp"
#include "tessera/span.hpp"

namespace tessera {

inline constexpr size_t kChunkHeaderMinSize = 16;       ///< the Blosc1 header
inline constexpr size_t kChunkHeaderExtendedSize = 32;  ///< the Blosc2 extended header
inline constexpr size_t kChunkMaxOverhead = kChunkHeaderExtendedSize;
inline constexpr int kChunkMaxFilters = 6;
inline constexpr int32_t kChunkMaxBlocksize = 536866816;  ///< the reference's BLOSC2_MAXBLOCKSIZE
inline constexpr int32_t kChunkMaxDictSize = 32 * 1024;   ///< BLOSC2_MAXDICTSIZE

/// Chunk format versions (header byte 0).
inline constexpr uint8_t kChunkVersionBlosc1 = 2;
inline constexpr uint8_t kChunkVersionAlpha = 3;
inline constexpr uint8_t kChunkVersionStable = 5;
inline constexpr uint8_t kChunkVersionVlBlocks = 6;

/// Header `flags` bits.
inline constexpr uint8_t kChunkFlagShuffle = 0x01;
inline constexpr uint8_t kChunkFlagMemcpyed = 0x02;
inline constexpr uint8_t kChunkFlagBitshuffle = 0x04;
inline constexpr uint8_t kChunkFlagDelta = 0x08;
inline constexpr uint8_t kChunkFlagNoSplit = 0x10;
/// blosc2_flags bits.
inline constexpr uint8_t kChunkBlosc2Dict = 0x01;
inline constexpr uint8_t kChunkBlosc2BigEndian = 0x02;
inline constexpr uint8_t kChunkBlosc2Lazy = 0x08;
inline constexpr uint8_t kChunkBlosc2Instrumented = 0x80;
/// blosc2_flags2 bits.
inline constexpr uint8_t kChunkBlosc2VlBlocks = 0x01;

/// The codec numbers of the Blosc2 API (compcode), as the frame header and users name them.
enum class codec : uint8_t { blosclz = 0, lz4 = 1, lz4hc = 2, zlib = 4, zstd = 5 };
/// The codec *format* stored in flags bits 5..7 (lz4 and lz4hc share one format).
enum class codec_format : uint8_t { blosclz = 0, lz4 = 1, snappy = 2, zlib = 3, zstd = 4, user = 6, schunk = 7 };

[[nodiscard]] const char* codec_name(codec c) noexcept;
/// Whether this build can decompress (and compress) data of this codec.
[[nodiscard]] bool codec_available(codec c) noexcept;
/// Whether chunks of codec c can carry a dictionary (use_dict): LZ4, LZ4HC and Zstd, as in the reference.
[[nodiscard]] constexpr bool codec_takes_dict(codec c) noexcept {
  return c == codec::lz4 || c == codec::lz4hc || c == codec::zstd;
}

/// Filter ids of the pipeline slots.
enum class filter_id : uint8_t {
  none = 0,
  shuffle = 1,      ///< meta: bytes per element to shuffle (0: the chunk's typesize)
  bitshuffle = 2,
  delta = 3,        ///< against the chunk's first block
  trunc_prec = 4,   ///< meta: mantissa bits to keep (lossy; nothing to undo)
  bytedelta = 35,   ///< meta: typesize (0: the chunk's typesize)
  int_trunc = 36,   ///< meta: bits to keep (lossy; nothing to undo)
};

/// Whether this build applies the filter (encode) and undoes it (decode): small firmware compiles filters out
/// (CMake TESSERA_WITH_BITSHUFFLE, _DELTA, _BYTEDELTA, _TRUNC); a chunk that needs one is then unsupported.
/// trunc_prec and int_trunc have nothing to undo: chunks that used them always decode.
[[nodiscard]] constexpr bool chunk_filter_available(filter_id f) noexcept {
  switch (f) {
    case filter_id::none:
    case filter_id::shuffle: return true;
    case filter_id::bitshuffle: return TESSERA_WITH_BITSHUFFLE != 0;
    case filter_id::delta: return TESSERA_WITH_DELTA != 0;
    case filter_id::trunc_prec:
    case filter_id::int_trunc: return TESSERA_WITH_TRUNC != 0;
    case filter_id::bytedelta: return TESSERA_WITH_BYTEDELTA != 0;
  }
  return false;
}

/// Special-value chunks: the whole chunk is one value and has no blocks section.
enum class chunk_special : uint8_t { none = 0, zeros = 1, nan = 2, value = 3, uninit = 4 };

/// A validated chunk header. Derived fields say how to walk the chunk.
struct chunk_header {
  uint8_t version = 0;
  uint8_t versionlz = 0;
  uint8_t flags = 0;
  uint8_t typesize = 0;
  int32_t nbytes = 0;
  int32_t blocksize = 0;  ///< as stored, clamped to nbytes for regular chunks; for VL-block chunks the block count
  int32_t cbytes = 0;
  uint8_t filters[kChunkMaxFilters] = {};       ///< for Blosc1 headers: derived from flags as the reference does
  uint8_t filters_meta[kChunkMaxFilters] = {};
  uint8_t udcodec = 0;
  uint8_t compcode_meta = 0;
  uint8_t blosc2_flags = 0;
  uint8_t blosc2_flags2 = 0;

  /// Derived.
  bool extended = false;       ///< 32-byte header
  bool memcpyed = false;       ///< blocks stored verbatim after the header, no bstarts
  bool split = false;          ///< full blocks hold `typesize` streams (flags bit 4 clear)
  bool dict = false;           ///< a dictionary follows bstarts
  bool lazy = false;           ///< blocks live elsewhere (in the frame); header, bstarts and a trailer are here
  bool vlblocks = false;       ///< variable-length blocks
  chunk_special special = chunk_special::none;
  codec_format format = codec_format::blosclz;
  uint32_t header_size = 0;    ///< 16 or 32
  uint32_t nblocks = 0;
  int32_t leftover = 0;        ///< bytes of a shorter last block (regular chunks), else 0
  int32_t value_size = 0;      ///< special value chunks: bytes of the repeated value (cbytes - 32)
};

/// Reads and validates the header at the start of `chunk`. Needs only the header bytes (16 or 32), so a frame
/// can learn a chunk's cbytes before reading the rest. Errors: truncated, malformed, unsupported.
[[nodiscard]] result<chunk_header> chunk_header_read(bytes_view chunk) noexcept;

// ---- User codecs and filters ------------------------------------------------------------------------------

/// Codec and filter ids an application may implement (the reference's registered ids 32..159, such as NDLZ 32
/// and ZFP 33..35, and user ids 160..255). A chunk with a user codec stores codec format 6 (codec_format::user)
/// and the id in its udcodec byte, and hands compcode_meta to the codec; user filters sit in the filter slots
/// with their meta. Encoding selects a user codec with `chunk_encode_params::compressor = chunk_user_codec_id(id)`.
inline constexpr uint8_t kChunkUserIdFirst = 32;
inline constexpr uint8_t kChunkUserIdPrivate = 160;  ///< the first id the reference leaves to applications
[[nodiscard]] constexpr codec chunk_user_codec_id(uint8_t id) noexcept { return static_cast<codec>(id); }

/// A codec the application implements. Both functions may be null (a program that only reads needs decode).
/// encode: compress `in` into `out` (out.size() is the most it may write) and set *written; 0 (or in.size())
///   means "does not shrink" and the stream is stored raw, as the reference does.
/// decode: decompress `in` into all of `out` (the stream's decoded size) and set *written (must be out.size()).
/// Errors they return are passed on as they are. They run on the executor's workers, possibly several at once:
/// they must be thread-safe (or the caller uses a serial executor) and must not allocate (no hidden heap: give
/// them what they need through `context`). `meta` is the chunk's compcode_meta.
struct chunk_user_codec {
  uint8_t id = 0;
  status (*encode)(void* context, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept = nullptr;
  status (*decode)(void* context, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept = nullptr;
  void* context = nullptr;
};

/// A filter the application implements: forward on encode, backward on decode, each from `in` to `out` of the
/// same size (one block; `typesize` is the chunk's, `meta` the slot's). Either may be null. Same rules as
/// chunk_user_codec (thread-safe, no allocation). Ids the library implements itself (0..4, 35, 36) never reach
/// a user filter.
struct chunk_user_filter {
  uint8_t id = 0;
  status (*forward)(void* context, bytes_view in, bytes_mut out, uint8_t meta, uint8_t typesize) noexcept = nullptr;
  status (*backward)(void* context, bytes_view in, bytes_mut out, uint8_t meta, uint8_t typesize) noexcept = nullptr;
  void* context = nullptr;
};

/// The codecs and filters an application supplies to one decoder, encode call or array: caller-owned tables
/// (no global registry) that must outlive their users. The first entry with an id wins.
struct chunk_plugins {
  const chunk_user_codec* codecs = nullptr;
  size_t ncodecs = 0;
  const chunk_user_filter* filters = nullptr;
  size_t nfilters = 0;
};

[[nodiscard]] constexpr const chunk_user_codec* chunk_plugins_codec(const chunk_plugins* p, uint8_t id) noexcept {
  if (p == nullptr || p->codecs == nullptr) return nullptr;
  for (size_t i = 0; i < p->ncodecs; ++i)
    if (p->codecs[i].id == id) return &p->codecs[i];
  return nullptr;
}
[[nodiscard]] constexpr const chunk_user_filter* chunk_plugins_filter(const chunk_plugins* p, uint8_t id) noexcept {
  if (p == nullptr || p->filters == nullptr) return nullptr;
  for (size_t i = 0; i < p->nfilters; ++i)
    if (p->filters[i].id == id) return &p->filters[i];
  return nullptr;
}

/// What decoding a chunk with this header needs that neither the library nor `plugins` provides: the kind and
/// id, for a report naming it (error messages are static and cannot hold the id); the first the decoder meets
/// (a user filter before the user codec). none when nothing is missing.
enum class chunk_missing_kind : uint8_t { none, codec, filter };
struct chunk_missing {
  chunk_missing_kind kind = chunk_missing_kind::none;
  uint8_t id = 0;  ///< the udcodec (kind codec) or the filter id
};
[[nodiscard]] chunk_missing chunk_plugins_missing(const chunk_header& h, const chunk_plugins* plugins) noexcept;


/// Where block `nblock` lands in the decoded chunk. For VL-block chunks it reads the block's bstart entry.
struct chunk_block_extent {
  size_t offset = 0;
  size_t size = 0;
};
[[nodiscard]] result<chunk_block_extent> chunk_block_extent_get(const chunk_header& header, bytes_view chunk,
                                                                size_t nblock) noexcept;

/// The lazy-chunk trailer: where the chunk lives in its frame and the compressed size of every block.
struct chunk_lazy_trailer {
  int32_t nchunk = 0;
  int64_t offset = 0;
  bytes_view block_csizes;  ///< nblocks little-endian int32
};
[[nodiscard]] result<chunk_lazy_trailer> chunk_lazy_trailer_read(const chunk_header& header,
                                                                 bytes_view chunk) noexcept;

// ---- Decoding ----------------------------------------------------------------------------------------------

struct chunk_decoder_options {
  /// Scratch is sized at init for blocks up to this size; larger blocks grow it from the allocator unless
  /// fixed_scratch is set (then they fail with buffer_too_small).
  size_t max_blocksize = 256 * 1024;
  bool fixed_scratch = false;
  executor exec = executor_serial();  ///< exec.workers sets the number of per-worker scratch sets
  /// User codecs and filters this decoder may run (chunks that need others fail codec_unavailable / unsupported).
  const chunk_plugins* plugins = nullptr;
};

/// The decoder's state: per-worker scratch and codec contexts, all from the allocator. Not copyable; movable.
/// One decoder serves one call at a time.
class chunk_decoder {
 public:
  chunk_decoder() noexcept = default;
  chunk_decoder(const chunk_decoder&) = delete;
  chunk_decoder& operator=(const chunk_decoder&) = delete;
  chunk_decoder(chunk_decoder&& o) noexcept;
  chunk_decoder& operator=(chunk_decoder&& o) noexcept;
  ~chunk_decoder();

  struct worker;  ///< internal

 private:
  friend struct chunk_decoder_access;
  allocator alloc_{};
  chunk_decoder_options options_{};
  worker* workers_ = nullptr;
  uint32_t nworkers_ = 0;
  size_t scratch_blocksize_ = 0;  ///< the block size every worker's scratch can hold
  uint8_t* block0_ = nullptr;     ///< block 0 decoded for delta when decoding a single later block
  size_t block0_size_ = 0;
};

/// Bytes an arena needs to init a decoder with these options (scratch for max_blocksize; codec contexts that are
/// created on first use are included for the codecs of this build).
[[nodiscard]] size_t chunk_decoder_estimate(const chunk_decoder_options& options) noexcept;
[[nodiscard]] status chunk_decoder_init(chunk_decoder& d, const allocator& alloc,
                                        const chunk_decoder_options& options = chunk_decoder_options{}) noexcept;
/// Frees everything (also done by the destructor).
void chunk_decoder_release(chunk_decoder& d) noexcept;

/// Decodes the whole chunk into out[0, nbytes) and returns nbytes. out may be larger; bytes past nbytes are not
/// touched. Errors: buffer_too_small (out shorter than nbytes), truncated/malformed/corrupt (bad chunk),
/// codec_unavailable (a codec this build lacks, a user codec options.plugins lacks), unsupported (lazy chunks,
/// unknown filters, a user filter options.plugins lacks: chunk_plugins_missing names its id), out_of_memory.
[[nodiscard]] result<size_t> chunk_decode(chunk_decoder& d, bytes_view chunk, bytes_mut out) noexcept;

/// Decodes block `nblock` alone into out[0, block size) and returns the block size. Only block 0 is decoded in
/// addition when the delta filter needs it. Errors as chunk_decode, plus out_of_range for nblock.
[[nodiscard]] result<size_t> chunk_decode_block(chunk_decoder& d, bytes_view chunk, size_t nblock,
                                                bytes_mut out) noexcept;

/// A set of blocks to decode and where each goes. `block(context, i)` names the i-th block (i < count);
/// `consume(context, i, decoded, worker)` receives it: `decoded` is valid only during the call (the worker's
/// scratch). consume runs on the executor's workers: calls for different i may run at the same time, never two
/// with the same worker. A failed consume stops the remaining blocks and is returned.
///
/// Optional `range(context, i, &begin, &end)`: consume reads only bytes [begin, end) of the i-th decoded block.
/// The decoder may then decode less: streams only as far as that range needs (LZ4 and BloscLZ stop early) and,
/// under a plain shuffle, only those elements; the other bytes of `decoded` are unspecified.
struct chunk_block_request {
  size_t count = 0;
  size_t (*block)(void* context, size_t i) noexcept = nullptr;
  status (*consume)(void* context, size_t i, bytes_view decoded, uint32_t worker) noexcept = nullptr;
  void* context = nullptr;
  void (*range)(void* context, size_t i, size_t* begin, size_t* end) noexcept = nullptr;
};

/// Decodes the requested blocks of a chunk over the decoder's executor, each into a worker's scratch, and hands
/// them to request.consume (a slice read copies its part straight out, so blocks stay in cache and no chunk-sized
/// buffer is needed). Errors as chunk_decode_block; the order in which blocks fail is not defined.
[[nodiscard]] status chunk_decode_blocks(chunk_decoder& d, bytes_view chunk, const chunk_block_request& request) noexcept;

// ---- Encoding ----------------------------------------------------------------------------------------------

/// How blocks are split into one stream per byte of the element (the reference's BLOSC_*_SPLIT).
/// automatic and forward_compat behave the same (as in the reference 3.3.x): split for BloscLZ, LZ4, and Zstd
/// at clevel <= 5, when a shuffle filter is in the pipeline, typesize <= 16 and blocksize / typesize >= 32.
enum class split_mode : uint8_t { always = 1, never = 2, automatic = 3, forward_compat = 4 };

inline constexpr int kChunkMaxClevel = 9;

struct chunk_encode_params {
  uint8_t typesize = 1;                 ///< 1..255
  int clevel = 5;                       ///< 0..9; 0 stores the data verbatim (a memcpyed chunk)
  codec compressor = codec::blosclz;
  uint8_t compcode_meta = 0;            ///< stored in the header as is
  /// The pipeline, applied in slot order on compression (the reference's default: shuffle in the last slot).
  uint8_t filters[kChunkMaxFilters] = {0, 0, 0, 0, 0, static_cast<uint8_t>(filter_id::shuffle)};
  uint8_t filters_meta[kChunkMaxFilters] = {};
  split_mode split = split_mode::forward_compat;
  int32_t blocksize = 0;                ///< 0: automatic (as the reference chooses; bare metal: partition_link_auto);
                                        // else rounded down to whole elements and clamped to nbytes
  /// Implementations of a user codec (compressor = chunk_user_codec_id(id)) and of user filters in `filters`.
  /// With the parameters rather than the encoder: they go wherever the parameters go (an array's chunk writers).
  const chunk_plugins* plugins = nullptr;
  /// A dictionary in each chunk (the reference's use_dict; LZ4, LZ4HC and Zstd only, else invalid_argument):
  /// the first min(32 KiB, nbytes / 20) filtered bytes, which every block is compressed against. Chunks too
  /// small for a useful one (under 256 bytes) go without. LZ4/LZ4HC chunks are the reference's byte for byte;
  /// Zstd's dictionary is those bytes as raw content (the reference trains one with ZDICT, which allocates
  /// outside any allocator), read by the reference and every Zstd decoder.
  bool use_dict = false;
};

/// The block size the encoder uses for `nbytes` bytes with these parameters (the reference's stune choice when
/// params.blocksize is 0). Errors: invalid_argument for bad parameters; on bare metal, unsupported for the
/// automatic choice unless the program calls partition_link_auto (tessera/codecs.hpp).
[[nodiscard]] result<int32_t> chunk_blocksize_compute(const chunk_encode_params& params, size_t nbytes) noexcept;

/// Whether blocks of `blocksize` bytes are split into typesize streams with these parameters.
[[nodiscard]] bool chunk_split_decide(const chunk_encode_params& params, int32_t blocksize) noexcept;

/// The largest chunk the encoder writes for nbytes of data: every chunk fits in nbytes + kChunkMaxOverhead.
[[nodiscard]] constexpr size_t chunk_encode_bound(size_t nbytes) noexcept { return nbytes + kChunkMaxOverhead; }

struct chunk_encoder_options {
  /// Scratch is sized at init for blocks up to this size; larger blocks grow it from the allocator unless
  /// fixed_scratch is set (then they fail with buffer_too_small).
  size_t max_blocksize = 256 * 1024;
  bool fixed_scratch = false;
  executor exec = executor_serial();  ///< exec.workers sets the number of per-worker scratch sets
  /// For chunk_encoder_estimate only: the codec and level whose compression state to count.
  codec estimate_codec = codec::blosclz;
  int estimate_clevel = kChunkMaxClevel;
};

/// The encoder's state: per-worker scratch, BloscLZ workspaces and codec contexts, and (with a parallel
/// executor) per-task output slots, all from the allocator. Not copyable; movable. One call at a time.
class chunk_encoder {
 public:
  chunk_encoder() noexcept = default;
  chunk_encoder(const chunk_encoder&) = delete;
  chunk_encoder& operator=(const chunk_encoder&) = delete;
  chunk_encoder(chunk_encoder&& o) noexcept { take(o); }
  chunk_encoder& operator=(chunk_encoder&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~chunk_encoder() { release(); }

  struct worker;  ///< internal

 private:
  friend struct chunk_encoder_access;
  friend inline void chunk_encoder_release(chunk_encoder& e) noexcept { e.release(); }
  // Inline, through free_ (set by chunk_encoder_init): a program that holds encoders (in an array, a frame) but
  // never inits one, such as a read-only firmware, links none of the encoder.
  void release() noexcept {
    if (free_ != nullptr) free_(*this);
  }
  void take(chunk_encoder& o) noexcept {
    free_ = o.free_;
    alloc_ = o.alloc_;
    options_ = o.options_;
    workers_ = o.workers_;
    nworkers_ = o.nworkers_;
    scratch_blocksize_ = o.scratch_blocksize_;
    slots_ = o.slots_;
    o.workers_ = nullptr;
    o.nworkers_ = 0;
    o.scratch_blocksize_ = 0;
    o.slots_ = nullptr;
  }
  void (*free_)(chunk_encoder&) noexcept = nullptr;  ///< releases the workers, scratch and slots
  allocator alloc_{};
  chunk_encoder_options options_{};
  worker* workers_ = nullptr;
  uint32_t nworkers_ = 0;
  size_t scratch_blocksize_ = 0;  ///< the block size every worker's scratch (and every slot) can hold
  uint8_t* slots_ = nullptr;      ///< nworkers_ output slots for parallel rounds (nullptr when serial)
};

/// Bytes an arena needs to init an encoder with these options (scratch for max_blocksize, the compression
/// state of options.estimate_codec at estimate_clevel).
[[nodiscard]] size_t chunk_encoder_estimate(const chunk_encoder_options& options) noexcept;
[[nodiscard]] status chunk_encoder_init(chunk_encoder& e, const allocator& alloc,
                                        const chunk_encoder_options& options = chunk_encoder_options{}) noexcept;
void chunk_encoder_release(chunk_encoder& e) noexcept;

/// Encodes src (at most INT32_MAX - 32 bytes) into one chunk in out and returns its size (cbytes). The chunk
/// is the one the reference (c-blosc2 3.3.x, blosc2_compress_ctx with one thread) writes for the same
/// parameters and an output buffer of out.size() bytes: block order, the split rule, raw streams when a codec
/// does not gain, runs, the all-zeros special chunk, the memcpyed fallback. It does not depend on the executor.
/// Errors: invalid_argument (parameters), buffer_too_small (out cannot hold the chunk; out.size() >=
/// chunk_encode_bound(src.size()) always suffices), codec_unavailable, out_of_memory.
[[nodiscard]] result<size_t> chunk_encode(chunk_encoder& e, const chunk_encode_params& params, bytes_view src,
                                          bytes_mut out) noexcept;

/// Writes a special-value chunk of nbytes bytes (no blocks): zeros, nan (typesize 4 or 8), uninit, or value
/// (`value` holds typesize bytes, repeated). As the reference's blosc2_chunk_zeros/nans/uninit/repeatval: the
/// header names no filters nor codec; the blocksize is the automatic one for params. Returns 32 (+ typesize for
/// value). Errors: invalid_argument (nbytes not a multiple of typesize, wrong value size), buffer_too_small.
[[nodiscard]] result<size_t> chunk_encode_special(const chunk_encode_params& params, chunk_special kind,
                                                  size_t nbytes, bytes_view value, bytes_mut out) noexcept;

}  // namespace tessera
