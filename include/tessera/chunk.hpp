// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Blosc/Blosc2 chunks (README_CHUNK_FORMAT.rst): reading the header, decoding a whole chunk or one block, and
/// encoding. Every integer of a chunk is little-endian; every size it claims is checked against the
/// bytes at hand, so any byte string yields either the right data or an error.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/allocator.hpp"
#include "tessera/config.hpp"
#include "tessera/error.hpp"
#include "tessera/executor.hpp"
#include "tessera/span.hpp"

namespace tessera {

inline constexpr size_t kChunkHeaderMinSize = 16;       ///< the Blosc1 header
inline constexpr size_t kChunkHeaderExtendedSize = 32;  ///< the Blosc2 extended header
inline constexpr size_t kChunkMaxOverhead = kChunkHeaderExtendedSize;  ///< the most a chunk adds to its data
inline constexpr int kChunkMaxFilters = 6;  ///< filter slots in a chunk's pipeline
inline constexpr int32_t kChunkMaxBlocksize = 536866816;  ///< the reference's BLOSC2_MAXBLOCKSIZE
inline constexpr int32_t kChunkMaxDictSize = 32 * 1024;   ///< BLOSC2_MAXDICTSIZE

/// \name Chunk format versions (header byte 0)
///@{
inline constexpr uint8_t kChunkVersionBlosc1 = 2;     ///< Blosc1
inline constexpr uint8_t kChunkVersionAlpha = 3;      ///< the Blosc2 alpha (its sixth filter slot is ignored)
inline constexpr uint8_t kChunkVersionStable = 5;     ///< Blosc2
inline constexpr uint8_t kChunkVersionVlBlocks = 6;   ///< Blosc2 with variable-length blocks
///@}

/// \name Header flags bits
///@{
inline constexpr uint8_t kChunkFlagShuffle = 0x01;     ///< byte shuffle (Blosc1); with bitshuffle: extended header
inline constexpr uint8_t kChunkFlagMemcpyed = 0x02;    ///< the data is stored verbatim
inline constexpr uint8_t kChunkFlagBitshuffle = 0x04;  ///< bit shuffle (Blosc1); with shuffle: extended header
inline constexpr uint8_t kChunkFlagDelta = 0x08;       ///< delta (Blosc1)
inline constexpr uint8_t kChunkFlagNoSplit = 0x10;     ///< blocks are not split into streams
///@}
/// \name blosc2_flags bits
///@{
inline constexpr uint8_t kChunkBlosc2Dict = 0x01;          ///< a dictionary follows bstarts
inline constexpr uint8_t kChunkBlosc2BigEndian = 0x02;     ///< written on a big-endian host
inline constexpr uint8_t kChunkBlosc2Lazy = 0x08;          ///< a lazy chunk: the blocks are in the frame
inline constexpr uint8_t kChunkBlosc2Instrumented = 0x80;  ///< BLOSC2_INSTR_CODEC: instrumentation, not data
///@}
/// \name blosc2_flags2 bits
///@{
inline constexpr uint8_t kChunkBlosc2VlBlocks = 0x01;  ///< variable-length blocks
///@}

/// The codec numbers of the Blosc2 API (compcode), as the frame header and users name them.
enum class codec : uint8_t {
  blosclz = 0,  ///< BloscLZ (always built)
  lz4 = 1,      ///< LZ4
  lz4hc = 2,    ///< LZ4HC (LZ4's format, slower and denser)
  zlib = 4,     ///< Zlib
  zstd = 5,     ///< Zstd
  /// NDLZ, c-blosc2's registered codec 32 (= chunk_user_codec_id(32)): 2-D blocks of bytes in cells of 4x4 or
  /// 8x8 (compcode_meta 4 or 8). Needs the block shape (chunk_nd_geometry) to write, not to read.
  ndlz = 32,
  /// ZFP, c-blosc2's registered codecs 33 to 35 (lossy; float32 and float64 items, blocks of 1 to 4 dimensions,
  /// each edge at least 4), through libzfp: a build without it reports codec_available false. Needs the block
  /// shape (chunk_nd_geometry) both ways. compcode_meta: zfp_acc, the tolerance's exponent as a signed byte
  /// (10^meta); zfp_prec, meta + 2 * ndim + 3 bit planes (at most 64); zfp_rate, meta percent of the items' bits.
  zfp_acc = 33,
  zfp_prec = 34,  ///< ZFP with fixed precision (see zfp_acc)
  zfp_rate = 35   ///< ZFP with fixed rate (see zfp_acc)
};
/// The codec *format* stored in flags bits 5..7 (lz4 and lz4hc share one format).
enum class codec_format : uint8_t {
  blosclz = 0,  ///< BloscLZ
  lz4 = 1,      ///< LZ4 and LZ4HC
  snappy = 2,   ///< Snappy (dropped by Blosc2: codec_unavailable)
  zlib = 3,     ///< Zlib
  zstd = 4,     ///< Zstd
  user = 6,     ///< a user codec, named by the udcodec byte
  schunk = 7    ///< reserved by the reference (not decoded)
};

/// The codec's name ("blosclz", "lz4", ...).
[[nodiscard]] const char* codec_name(codec c) noexcept;
/// Whether this build can decompress (and compress) data of this codec.
[[nodiscard]] bool codec_available(codec c) noexcept;
/// Whether chunks of codec c can carry a dictionary (use_dict): LZ4, LZ4HC and Zstd, as in the reference.
[[nodiscard]] constexpr bool codec_takes_dict(codec c) noexcept {
  return c == codec::lz4 || c == codec::lz4hc || c == codec::zstd;
}

/// Filter ids of the pipeline slots.
enum class filter_id : uint8_t {
  none = 0,         ///< an empty slot
  shuffle = 1,      ///< meta: bytes per element to shuffle (0: the chunk's typesize)
  bitshuffle = 2,   ///< bit shuffle of the chunk's typesize
  delta = 3,        ///< against the chunk's first block
  trunc_prec = 4,   ///< meta: mantissa bits to keep (lossy; nothing to undo)
  /// c-blosc2's registered NDCELL (meta: the cell edge): each block's items regrouped cell by cell, C order.
  /// Needs the block shape (chunk_nd_geometry) both ways.
  ndcell = 32,
  /// c-blosc2's registered NDMEAN (meta: the cell edge, 1..127; float32 or float64 items): every item of a cell
  /// replaced by the cell's mean, cell by cell (lossy). Needs the block shape (chunk_nd_geometry) both ways.
  ndmean = 33,
  bytedelta = 35,   ///< meta: typesize (0: the chunk's typesize)
  int_trunc = 36,   ///< meta: bits to keep (lossy; nothing to undo)
};

/// Whether this build applies the filter (encode) and undoes it (decode): small firmware compiles filters out
/// (CMake TESSERA_WITH_BITSHUFFLE, _DELTA, _BYTEDELTA, _TRUNC); a chunk that needs one is then unsupported.
/// trunc_prec and int_trunc have nothing to undo: chunks that used them always decode. ndcell and ndmean are
/// always built (on bare metal linked on demand, tessera/codecs.hpp).
[[nodiscard]] constexpr bool chunk_filter_available(filter_id f) noexcept {
  switch (f) {
    case filter_id::none:
    case filter_id::shuffle:
    case filter_id::ndcell:
    case filter_id::ndmean: return true;
    // NOLINTNEXTLINE(bugprone-branch-clone): the branches differ by build option, equal only in a full build
    case filter_id::bitshuffle: return TESSERA_WITH_BITSHUFFLE != 0;
    case filter_id::delta: return TESSERA_WITH_DELTA != 0;
    case filter_id::trunc_prec:
    case filter_id::int_trunc: return TESSERA_WITH_TRUNC != 0;
    case filter_id::bytedelta: return TESSERA_WITH_BYTEDELTA != 0;
  }
  return false;
}

/// Special-value chunks: the whole chunk is one value and has no blocks section.
enum class chunk_special : uint8_t {
  none = 0,    ///< a regular chunk
  zeros = 1,   ///< every byte is 0
  nan = 2,     ///< every item is a NaN (float32 or float64)
  value = 3,   ///< one value (after the header) repeated
  uninit = 4   ///< unspecified content (decoded as zeros)
};

/// A validated chunk header. Derived fields say how to walk the chunk.
struct chunk_header {
  uint8_t version = 0;    ///< byte 0: the format version (kChunkVersion*)
  uint8_t versionlz = 0;  ///< byte 1: the codec format's version
  uint8_t flags = 0;      ///< byte 2: kChunkFlag* bits, the codec format in bits 5..7
  uint8_t typesize = 0;   ///< byte 3: bytes per item (>= 1)
  int32_t nbytes = 0;     ///< the decoded size in bytes
  int32_t blocksize = 0;  ///< as stored, clamped to nbytes for regular chunks; for VL-block chunks the block count
  int32_t cbytes = 0;     ///< the chunk's stored size in bytes, header included
  uint8_t filters[kChunkMaxFilters] = {};       ///< for Blosc1 headers: derived from flags as the reference does
  uint8_t filters_meta[kChunkMaxFilters] = {};  ///< each filter slot's meta
  uint8_t udcodec = 0;        ///< the user codec's id (codec format user)
  uint8_t compcode_meta = 0;  ///< the codec's meta (handed to a user codec)
  uint8_t blosc2_flags = 0;   ///< byte 31: kChunkBlosc2* bits, the special kind in bits 4..6
  uint8_t blosc2_flags2 = 0;  ///< byte 30: kChunkBlosc2VlBlocks

  /// Derived.
  bool extended = false;       ///< 32-byte header
  bool memcpyed = false;       ///< blocks stored verbatim after the header, no bstarts
  bool split = false;          ///< full blocks hold `typesize` streams (flags bit 4 clear)
  bool dict = false;           ///< a dictionary follows bstarts
  bool lazy = false;           ///< blocks live elsewhere (in the frame); header, bstarts and a trailer are here
  bool vlblocks = false;       ///< variable-length blocks
  chunk_special special = chunk_special::none;  ///< a special-value chunk's kind
  codec_format format = codec_format::blosclz;  ///< flags bits 5..7
  uint32_t header_size = 0;    ///< 16 or 32
  uint32_t nblocks = 0;        ///< the number of blocks
  int32_t leftover = 0;        ///< bytes of a shorter last block (regular chunks), else 0
  int32_t value_size = 0;      ///< special value chunks: bytes of the repeated value (cbytes - 32)
};

/// Reads and validates the header at the start of `chunk`. Needs only the header bytes (16 or 32), so a frame
/// can learn a chunk's cbytes before reading the rest. Errors: truncated, malformed, unsupported.
[[nodiscard]] result<chunk_header> chunk_header_read(bytes_view chunk) noexcept;

// ---- User codecs and filters ------------------------------------------------------------------------------

/// Codec and filter ids an application may implement (the reference's registered ids 32..159 and user ids
/// 160..255). A chunk with a user codec stores codec format 6 (codec_format::user) and the
/// id in its udcodec byte, and hands compcode_meta to the codec; user filters sit in the filter slots with their
/// meta. Encoding selects a user codec with `chunk_encode_params::compressor = chunk_user_codec_id(id)`.
///
/// Some of the reference's registered plugins are the library's own, chosen by the chunk header's ids with
/// nothing to register: codecs NDLZ 32 (codec::ndlz) and, in builds with libzfp, ZFP 33..35 (codec::zfp_acc,
/// zfp_prec, zfp_rate); filters NDCELL 32 and NDMEAN 33 (filter_id::ndcell, filter_id::ndmean). They work on the block's n-d shape, which the decoder and encoder learn from a
/// chunk_nd_geometry (the array layer gives its own). A codec or filter of chunk_plugins with the same id takes
/// precedence over the library's (the reference, which refuses user registrations below 160, always runs its own).
inline constexpr uint8_t kChunkUserIdFirst = 32;  ///< the first id of a user codec or filter
inline constexpr uint8_t kChunkUserIdPrivate = 160;  ///< the first id the reference leaves to applications
/// The codec value that selects user codec `id` (kChunkUserIdFirst..255) in chunk_encode_params::compressor.
[[nodiscard]] constexpr codec chunk_user_codec_id(uint8_t id) noexcept { return static_cast<codec>(id); }

/// The n-d geometry of the blocks of the chunks a decoder or encoder works on: what c-blosc2's n-d plugins
/// (NDLZ, ZFP, NDCELL, NDMEAN) read from the array's b2nd metalayer. The array layer fills it for its chunks
/// (array_chunk_geometry, tessera/array.hpp); chunk-level callers set it from the array they work for. ndim 0
/// (the default) says the geometry is unknown: chunks that need it fail with unsupported. Only those plugins
/// read it; every other chunk encodes and decodes the same with or without it.
struct chunk_nd_geometry {
  int8_t ndim = 0;                   ///< 0: unknown; else the blocks' number of dimensions (1..kMaxDims)
  int32_t blockshape[kMaxDims] = {};  ///< items per block per dimension (the b2nd blockshape)
};

/// A codec the application implements. Both functions may be null (a program that only reads needs decode).
/// encode: compress `in` into `out` (out.size() is the most it may write) and set *written; 0 (or in.size())
///   means "does not shrink" and the stream is stored raw, as the reference does.
/// decode: decompress `in` into all of `out` (the stream's decoded size) and set *written (must be out.size()).
/// Errors they return are passed on as they are. They run on the executor's workers, possibly several at once:
/// they must be thread-safe (or the caller uses a serial executor) and must not allocate (no hidden heap: give
/// them what they need through `context`). `meta` is the chunk's compcode_meta.
struct chunk_user_codec {
  uint8_t id = 0;  ///< kChunkUserIdFirst..255
  /// Compresses (see above); null when the program only reads.
  status (*encode)(void* context, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept = nullptr;
  /// Decompresses (see above); null when the program only writes.
  status (*decode)(void* context, bytes_view in, bytes_mut out, uint8_t meta, size_t* written) noexcept = nullptr;
  void* context = nullptr;  ///< passed to encode and decode
};

/// A filter the application implements: forward on encode, backward on decode, each from `in` to `out` of the
/// same size (one block; `typesize` is the chunk's, `meta` the slot's). Either may be null. Same rules as
/// chunk_user_codec (thread-safe, no allocation). Ids the library implements itself (0..4, 35, 36) never reach
/// a user filter; ndcell 32 and ndmean 33 do when one is given (it takes precedence).
struct chunk_user_filter {
  uint8_t id = 0;  ///< kChunkUserIdFirst..255
  /// Applies the filter (encode).
  status (*forward)(void* context, bytes_view in, bytes_mut out, uint8_t meta, uint8_t typesize) noexcept = nullptr;
  /// Undoes it (decode).
  status (*backward)(void* context, bytes_view in, bytes_mut out, uint8_t meta, uint8_t typesize) noexcept = nullptr;
  void* context = nullptr;  ///< passed to forward and backward
};

/// The codecs and filters an application supplies to one decoder, encode call or array: caller-owned tables
/// (no global registry) that must outlive their users. The first entry with an id wins.
struct chunk_plugins {
  const chunk_user_codec* codecs = nullptr;    ///< ncodecs user codecs
  size_t ncodecs = 0;                          ///< entries in codecs
  const chunk_user_filter* filters = nullptr;  ///< nfilters user filters
  size_t nfilters = 0;                         ///< entries in filters
};

/// The first codec of p with this id; nullptr when p is null or has none.
[[nodiscard]] constexpr const chunk_user_codec* chunk_plugins_codec(const chunk_plugins* p, uint8_t id) noexcept {
  if (p == nullptr || p->codecs == nullptr) return nullptr;
  for (size_t i = 0; i < p->ncodecs; ++i)
    if (p->codecs[i].id == id) return &p->codecs[i];
  return nullptr;
}
/// The first filter of p with this id; nullptr when p is null or has none.
[[nodiscard]] constexpr const chunk_user_filter* chunk_plugins_filter(const chunk_plugins* p, uint8_t id) noexcept {
  if (p == nullptr || p->filters == nullptr) return nullptr;
  for (size_t i = 0; i < p->nfilters; ++i)
    if (p->filters[i].id == id) return &p->filters[i];
  return nullptr;
}

/// What decoding a chunk with this header needs that neither the library nor `plugins` provides: the kind and
/// id, for a report naming it (error messages are static and cannot hold the id); the first the decoder meets
/// (a user filter before the user codec). none when nothing is missing.
enum class chunk_missing_kind : uint8_t {
  none,    ///< nothing is missing
  codec,   ///< a user codec
  filter   ///< a user filter
};
/// What chunk_plugins_missing found missing.
struct chunk_missing {
  chunk_missing_kind kind = chunk_missing_kind::none;  ///< what is missing
  uint8_t id = 0;  ///< the udcodec (kind codec) or the filter id
};
/// The first user codec or filter the chunk of header h needs that `plugins` (may be null) lacks and the library
/// does not implement itself (NDLZ, NDCELL and NDMEAN are the library's, on bare metal when linked; ZFP in
/// builds with libzfp).
[[nodiscard]] chunk_missing chunk_plugins_missing(const chunk_header& h, const chunk_plugins* plugins) noexcept;


/// Where block `nblock` lands in the decoded chunk. For VL-block chunks it reads the block's bstart entry.
struct chunk_block_extent {
  size_t offset = 0;  ///< the block's first byte in the decoded chunk
  size_t size = 0;    ///< its decoded size in bytes
};
/// The extent of block `nblock` of the chunk of `header` (`chunk` is read only for VL-block chunks).
/// Errors: out_of_range (nblock), and for VL-block chunks truncated or malformed.
[[nodiscard]] result<chunk_block_extent> chunk_block_extent_get(const chunk_header& header, bytes_view chunk,
                                                                size_t nblock) noexcept;

/// The lazy-chunk trailer: where the chunk lives in its frame and the compressed size of every block.
struct chunk_lazy_trailer {
  int32_t nchunk = 0;       ///< the chunk's number in its frame
  int64_t offset = 0;       ///< the chunk's offset in its frame
  bytes_view block_csizes;  ///< nblocks little-endian int32
};
/// Reads the trailer of a lazy chunk (it views `chunk`). Errors: invalid_argument (not a lazy chunk), truncated,
/// malformed.
[[nodiscard]] result<chunk_lazy_trailer> chunk_lazy_trailer_read(const chunk_header& header,
                                                                 bytes_view chunk) noexcept;

// ---- Decoding ----------------------------------------------------------------------------------------------

/// How chunk_decoder_init sizes a decoder.
struct chunk_decoder_options {
  /// Scratch is sized at init for blocks up to this size; larger blocks grow it from the allocator unless
  /// fixed_scratch is set (then they fail with buffer_too_small).
  size_t max_blocksize = 256 * 1024;
  bool fixed_scratch = false;  ///< never grow the scratch after init
  executor exec = executor_serial();  ///< exec.workers sets the number of per-worker scratch sets
  /// User codecs and filters this decoder may run (chunks that need others fail codec_unavailable / unsupported).
  const chunk_plugins* plugins = nullptr;
  /// The blocks' n-d shape, for the chunks that use ZFP, NDCELL or NDMEAN (see chunk_nd_geometry).
  chunk_nd_geometry geometry{};
};

/// The decoder's state: per-worker scratch and codec contexts, all from the allocator. Not copyable; movable.
/// One decoder serves one call at a time.
class chunk_decoder {
 public:
  chunk_decoder() noexcept = default;  ///< not initialized: call chunk_decoder_init
  chunk_decoder(const chunk_decoder&) = delete;
  chunk_decoder& operator=(const chunk_decoder&) = delete;
  chunk_decoder(chunk_decoder&& o) noexcept;  ///< takes o's state; o is left released
  chunk_decoder& operator=(chunk_decoder&& o) noexcept;  ///< releases this one, then takes o's state
  ~chunk_decoder();  ///< chunk_decoder_release

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
/// Makes d ready (releasing what it held) with scratch and contexts from alloc, which must outlive d.
/// Errors: out_of_memory, overflow (a scratch size).
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
  size_t count = 0;  ///< the number of blocks to decode
  size_t (*block)(void* context, size_t i) noexcept = nullptr;  ///< the block number of the i-th request
  /// Receives the i-th decoded block (see above).
  status (*consume)(void* context, size_t i, bytes_view decoded, uint32_t worker) noexcept = nullptr;
  void* context = nullptr;  ///< passed to the callbacks
  /// Optional: the bytes of the i-th block consume reads (see above).
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
enum class split_mode : uint8_t {
  always = 1,         ///< BLOSC_ALWAYS_SPLIT
  never = 2,          ///< BLOSC_NEVER_SPLIT
  automatic = 3,      ///< BLOSC_AUTO_SPLIT
  forward_compat = 4  ///< BLOSC_FORWARD_COMPAT_SPLIT (the reference's default)
};

inline constexpr int kChunkMaxClevel = 9;  ///< the highest compression level

/// What chunk_encode writes: the reference's compression parameters.
struct chunk_encode_params {
  uint8_t typesize = 1;                 ///< 1..255
  int clevel = 5;                       ///< 0..9; 0 stores the data verbatim (a memcpyed chunk)
  codec compressor = codec::blosclz;    ///< the codec (or chunk_user_codec_id(id))
  uint8_t compcode_meta = 0;            ///< stored in the header as is
  /// The pipeline, applied in slot order on compression (the reference's default: shuffle in the last slot).
  uint8_t filters[kChunkMaxFilters] = {0, 0, 0, 0, 0, static_cast<uint8_t>(filter_id::shuffle)};
  uint8_t filters_meta[kChunkMaxFilters] = {};  ///< each slot's meta (see filter_id)
  split_mode split = split_mode::forward_compat;  ///< whether blocks are split into streams
  int32_t blocksize = 0;                ///< 0: automatic (as the reference chooses; bare metal: partition_link_auto);
                                        ///< else rounded down to whole elements and clamped to nbytes
  /// Implementations of a user codec (compressor = chunk_user_codec_id(id)) and of user filters in `filters`.
  /// With the parameters rather than the encoder: they go wherever the parameters go (an array's chunk writers).
  const chunk_plugins* plugins = nullptr;
  /// A dictionary in each chunk (the reference's use_dict; LZ4, LZ4HC and Zstd only, else invalid_argument):
  /// the first min(32 KiB, nbytes / 20) filtered bytes, which every block is compressed against. Chunks too
  /// small for a useful one (under 256 bytes) go without. LZ4/LZ4HC chunks are the reference's byte for byte;
  /// Zstd's dictionary is those bytes as raw content (the reference trains one with ZDICT, which allocates
  /// outside any allocator), read by the reference and every Zstd decoder.
  bool use_dict = false;
  /// The blocks' n-d shape, for NDLZ, ZFP, NDCELL and NDMEAN (see chunk_nd_geometry): with them, blocksize must be
  /// prod(geometry.blockshape) * typesize.
  chunk_nd_geometry geometry{};
};

/// The block size the encoder uses for `nbytes` bytes with these parameters (the reference's stune choice when
/// params.blocksize is 0). Errors: invalid_argument for bad parameters; on bare metal, unsupported for the
/// automatic choice unless the program calls partition_link_auto (tessera/codecs.hpp).
[[nodiscard]] result<int32_t> chunk_blocksize_compute(const chunk_encode_params& params, size_t nbytes) noexcept;

/// Whether blocks of `blocksize` bytes are split into typesize streams with these parameters.
[[nodiscard]] bool chunk_split_decide(const chunk_encode_params& params, int32_t blocksize) noexcept;

/// The largest chunk the encoder writes for nbytes of data: every chunk fits in nbytes + kChunkMaxOverhead.
[[nodiscard]] constexpr size_t chunk_encode_bound(size_t nbytes) noexcept { return nbytes + kChunkMaxOverhead; }

/// How chunk_encoder_init sizes an encoder.
struct chunk_encoder_options {
  /// Scratch is sized at init for blocks up to this size; larger blocks grow it from the allocator unless
  /// fixed_scratch is set (then they fail with buffer_too_small).
  size_t max_blocksize = 256 * 1024;
  bool fixed_scratch = false;  ///< never grow the scratch after init
  executor exec = executor_serial();  ///< exec.workers sets the number of per-worker scratch sets
  /// For chunk_encoder_estimate only: the codec and level whose compression state to count.
  codec estimate_codec = codec::blosclz;
  int estimate_clevel = kChunkMaxClevel;  ///< for chunk_encoder_estimate only: the level of estimate_codec
  /// BloscLZ's match table per worker: 2^blosclz_hash_log entries of 4 bytes. 0 (the default) is the
  /// reference's table, 64 KiB (16 and 32 KiB at clevel 1 and 2), which writes the reference's very bytes. A
  /// firmware may choose 8 to 13 (1 to 32 KiB): its chunks are valid BloscLZ that c-blosc2 and every reader
  /// decode, but not the reference's bytes, and they compress a little less. Other values: invalid_argument.
  uint8_t blosclz_hash_log = 0;
};

/// The encoder's state: per-worker scratch, BloscLZ workspaces and codec contexts, and (with a parallel
/// executor) per-task output slots, all from the allocator. Not copyable; movable. One call at a time.
class chunk_encoder {
 public:
  chunk_encoder() noexcept = default;  ///< not initialized: call chunk_encoder_init
  chunk_encoder(const chunk_encoder&) = delete;
  chunk_encoder& operator=(const chunk_encoder&) = delete;
  chunk_encoder(chunk_encoder&& o) noexcept { take(o); }  ///< takes o's state; o is left released
  /// Releases this one, then takes o's state.
  chunk_encoder& operator=(chunk_encoder&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~chunk_encoder() { release(); }  ///< chunk_encoder_release

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
/// Makes e ready (releasing what it held) with scratch and contexts from alloc, which must outlive e.
/// Errors: out_of_memory, unsupported (on bare metal, a parallel executor without
/// encoder_link_parallel).
[[nodiscard]] status chunk_encoder_init(chunk_encoder& e, const allocator& alloc,
                                        const chunk_encoder_options& options = chunk_encoder_options{}) noexcept;
/// Frees everything (also done by the destructor).
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
