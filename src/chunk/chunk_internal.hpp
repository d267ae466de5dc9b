// SPDX-License-Identifier: BSD-3-Clause
// Shared internals of the chunk reader and writer: little-endian access and the walk of a chunk's sections.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "../base/byte_order.hpp"  // relative: tests include this header without src/ on their path
#include "../base/on_demand.hpp"
#include "tessera/chunk.hpp"

namespace tessera::detail {

inline uint32_t chunk_load_u32(const uint8_t* p) noexcept {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
inline int32_t chunk_load_i32(const uint8_t* p) noexcept {
  const uint32_t u = chunk_load_u32(p);
  // Two's complement without relying on implementation-defined conversion.
  return u <= 0x7fffffffu ? static_cast<int32_t>(u) : -static_cast<int32_t>(~u) - 1;
}
// One (unaligned) store on little-endian hosts: size builds kept the four byte stores as a call per field.
inline void chunk_store_u32(uint8_t* p, uint32_t v) noexcept { le_store32(p, v); }
inline void chunk_store_i32(uint8_t* p, int32_t v) noexcept { chunk_store_u32(p, static_cast<uint32_t>(v)); }

// The streams block nblock of a fixed-block chunk holds: typesize when split (a shorter last block: one), else one.
[[nodiscard]] inline size_t block_nstreams(const chunk_header& h, size_t nblock) noexcept {
  const bool short_block = nblock + 1 == h.nblocks && h.leftover > 0;
  return h.split && !short_block ? static_cast<size_t>(h.typesize) : 1;
}
// Whether the nstreams streams of a block starting at c[start] end by c[end], stepped over as the decoder reads
// them (an int32 size, then that many bytes; a negative size and a one-byte token; zero and nothing). A copy of
// a block's stored extent holds the block only if they do.
[[nodiscard]] bool block_streams_within(const uint8_t* c, uint64_t start, uint64_t end, size_t nstreams) noexcept;

// chunk_decode_blocks run serially on the caller's thread whatever the decoder's executor (its serial path).
[[nodiscard]] detail::code_status chunk_decode_blocks_serial(chunk_decoder& d, bytes_view chunk,
                                                const chunk_block_request& request) noexcept;
// The same for chunks of fixed-size blocks only (a VL-block chunk is unsupported): for a reader that never runs
// blocks in parallel nor meets VL blocks (array_view: a b2nd array's chunks), which links neither's code.
[[nodiscard]] detail::code_status chunk_decode_fixed_blocks(chunk_decoder& d, bytes_view chunk,
                                               const chunk_block_request& request) noexcept;

// chunk_header_read into h (reset first; on an error its fields are unspecified).
[[nodiscard]] detail::code_status chunk_header_parse(bytes_view chunk, chunk_header& h) noexcept;

// The sections of a complete (non-lazy) chunk with blocks, validated against its cbytes.
struct chunk_layout {
  bytes_view chunk;        // exactly cbytes bytes
  // Offsets inside `chunk`, so size_t (a 32-bit target's cheap arithmetic) holds them.
  size_t bstarts = 0;      // offset of the bstarts array
  size_t data_start = 0;   // first byte past bstarts and the dictionary
  bytes_view dict;         // empty when the chunk has none
};

// Checks the chunk holds cbytes bytes and its bstarts and dictionary; for memcpyed and special chunks only
// the size. Errors for lazy chunks (their blocks are elsewhere). l is unspecified after an error.
[[nodiscard]] detail::code_status chunk_layout_get(const chunk_header& h, bytes_view chunk, chunk_layout& l) noexcept;

// One VL block: where its stream lies and where its bytes go.
struct vl_block {
  uint64_t stream = 0;      // offset of the stream (past the int32 size)
  uint64_t stream_size = 0; // compressed bytes
  uint64_t offset = 0;      // in the decoded chunk
  uint32_t size = 0;        // decoded bytes
};

// Reads VL block `nblock` (bstarts[nblock], the next start, and its size field), checking bounds and order.
// `offset` is filled only by vl_blocks_scan.
[[nodiscard]] result<vl_block> vl_block_get(const chunk_header& h, const chunk_layout& l, size_t nblock) noexcept;

// Validates every VL block (increasing starts, sizes adding to nbytes) and returns the largest block size.
// When `offsets_of` is not SIZE_MAX, also returns that block's offset in *offset_out.
[[nodiscard]] result<uint32_t> vl_blocks_scan(const chunk_header& h, const chunk_layout& l, size_t offsets_of,
                                              uint64_t* offset_out) noexcept;

// For callers that run their own tasks on a decoder's workers (a frame reading and decoding the blocks of a
// slice in parallel): the executor, scratch and codec state prepared beforehand for chunks with header h (on the
// caller's thread: it allocates), then one block of a regular
// chunk (no delta: it needs block 0) decoded by worker `worker` into that worker's scratch, at least its bytes
// [begin, end) (chunk_block_request.range).
[[nodiscard]] const executor& chunk_decoder_executor(const chunk_decoder& d) noexcept;
[[nodiscard]] detail::code_status chunk_decoder_prepare(chunk_decoder& d, const chunk_header& h) noexcept;
// For callers that encode whole chunks on their own tasks (array writes, one chunk per worker, each with its own
// serial encoder): scratch and codec state for chunk_encode of nbytes with these parameters, made on the
// caller's thread, so the encode in the task allocates nothing.
[[nodiscard]] detail::code_status chunk_encoder_prepare(chunk_encoder& e, const chunk_encode_params& params, size_t nbytes) noexcept;
// Speed-only paths of the host build, compiled out where the build optimizes for size (-Os: bare metal).
#if defined(__OPTIMIZE_SIZE__)
#define TESSERA_SPEED_PATHS 0
#else
#define TESSERA_SPEED_PATHS 1
#endif

// A chunk whose blocks are gathered one at a time straight into the encoder's filter input (an array's C-order
// source: no staging copy of the whole chunk). gather writes block nblock's dst.size() bytes (every block is
// `blocksize` bytes but a last partial one); it runs wherever the block is encoded, executor tasks included, so
// it must not allocate.
struct chunk_block_source {
  status (*gather)(void* context, size_t nblock, bytes_mut dst) noexcept = nullptr;
  void* context = nullptr;
  size_t nbytes = 0;     // the chunk's bytes
  size_t blocksize = 0;  // the blocks gather writes: must be the encoder's for these parameters
};
#if TESSERA_SPEED_PATHS
// chunk_encode of the chunk `src` describes: the same bytes. unsupported for the delta filter (it reads the
// source's block 0 while encoding later blocks) or when the encoder's blocksize is not src.blocksize.
[[nodiscard]] result<size_t> chunk_encode_gathered(chunk_encoder& e, const chunk_encode_params& params,
                                                   const chunk_block_source& src, bytes_mut out) noexcept;
// chunk_encode of src (a whole chunk's bytes) when only the blocks marked in `changed` (bit j % 8 of byte j / 8)
// differ from `old`, a stored chunk: the other blocks' streams are copied from old instead of being encoded
// again (a slice write that touches a few blocks of a chunk). The same bytes as chunk_encode whenever old is
// chunk_encode's output for its content with these parameters; src's unchanged blocks are not read. Returns 0
// when old cannot be spliced (another codec or pipeline, a dictionary, the delta filter, a user codec or
// filter, a special or verbatim chunk, blocks out of order or streams that do not add up, a block near the end
// of out): the caller then encodes the whole chunk.
[[nodiscard]] result<size_t> chunk_encode_spliced(chunk_encoder& e, const chunk_encode_params& params, bytes_view old,
                                                  const uint8_t* changed, bytes_view src, bytes_mut out) noexcept;
#endif
[[nodiscard]] detail::code_status chunk_block_decode_on(chunk_decoder& d, uint32_t worker, bytes_view chunk, size_t nblock,
                                           size_t begin, size_t end, bytes_view* decoded) noexcept;
// A block left as its byte planes: element k's byte b at plane[b][k]. At most 16 planes (the reference splits
// blocks into streams for typesize <= 16 only). A stream stored as it is stays in the chunk, pointed to.
struct block_planes {
  static constexpr size_t kMaxPlanes = 16;
  size_t typesize = 0;  // 0: the block came back decoded
  const uint8_t* plane[kMaxPlanes] = {};
  // Set by the caller, or null: called as soon as plane b turns out to be stored as it is (in the chunk, maybe
  // far in memory), before the block's other streams decode, so that a caller reading a few scattered rows of it
  // can have them fetched meanwhile.
  void (*stored)(void* context, size_t typesize, size_t b, const uint8_t* plane) noexcept = nullptr;
  void* context = nullptr;
};
#if TESSERA_SPEED_PATHS
// The same, the block decoded into dst (at least its size) instead of the worker's scratch, which then holds only
// the pipeline's temporaries; *decoded is dst's first block-size bytes.
[[nodiscard]] detail::code_status chunk_block_decode_into_on(chunk_decoder& d, uint32_t worker, bytes_view chunk, size_t nblock,
                                                size_t begin, size_t end, bytes_mut dst, bytes_view* decoded) noexcept;
// chunk_block_decode_on for a caller that unshuffles only the elements it wants: a block whose only filter is a
// plain shuffle of elements of at most 16 bytes comes back as its byte planes, *planes says where (only the
// elements of [begin, end) are sure to be decoded; the chunk and the worker's scratch must stay as they are
// while they are read); any other block comes back decoded in *decoded and planes->typesize is 0.
[[nodiscard]] detail::code_status chunk_block_planes_on(chunk_decoder& d, uint32_t worker, bytes_view chunk, size_t nblock,
                                           size_t begin, size_t end, bytes_view* decoded, block_planes* planes) noexcept;
#endif

// The block size for params and nbytes bytes (chunk_blocksize_compute without its checks of typesize and clevel,
// which the encoder has made): params.blocksize when given, else the automatic one.
[[nodiscard]] result<int32_t> chunk_blocksize_of(const chunk_encode_params& p, size_t nbytes) noexcept;
// The automatic block size before its clamps (blocksize_auto.cpp; nbytes >= typesize): on bare metal linked only
// by partition_link_auto (null otherwise), which calls blocksize_link_auto.
[[nodiscard]] TESSERA_ON_DEMAND int32_t chunk_blocksize_auto(const chunk_encode_params& p, int32_t nbytes) noexcept;
void blocksize_link_auto() noexcept;

// chunk_encode's parts a bare-metal program links only when it asks (encoder.cpp has them; the pointers are
// in their own object files, null there unless linked): blocks in parallel rounds (encoder_parallel_link.cpp,
// by encoder_link_parallel) and dictionaries (encoder_dict_link.cpp, by the LZ4/LZ4HC dictionary and Zstd
// encoders' codec_link_* functions: use_dict needs one of them). `plan` is the encoder's plan of the chunk.
using encoder_blocks_fn = result<int64_t> (*)(chunk_encoder& e, const void* plan, uint8_t* out, int64_t ntbytes,
                                              int64_t destsize) noexcept;
using encoder_dict_fn = result<int64_t> (*)(chunk_encoder& e, void* plan, uint8_t* out, int64_t ntbytes,
                                            int64_t destsize) noexcept;
extern const encoder_blocks_fn encoder_parallel_blocks TESSERA_ON_DEMAND;
extern const encoder_dict_fn encoder_dict_build TESSERA_ON_DEMAND;
[[nodiscard]] result<int64_t> encoder_parallel_blocks_run(chunk_encoder& e, const void* plan, uint8_t* out,
                                                          int64_t ntbytes, int64_t destsize) noexcept;
[[nodiscard]] result<int64_t> encoder_dict_build_run(chunk_encoder& e, void* plan, uint8_t* out, int64_t ntbytes,
                                                     int64_t destsize) noexcept;
void encoder_dict_link() noexcept;

// User plugins in chunk_encode (a user codec or user filters from params.plugins), the same way: the encoder
// reaches them only through this table (encoder_plugins_link.cpp, linked by encoder_link_plugins), and
// params_check refuses a user codec or filter where it is not linked. The functions are encoder.cpp's.
struct encoder_plugin_ops {
  status (*codec_check)(const chunk_plugins* plugins, uint8_t id) noexcept;
  status (*filter_check)(const chunk_plugins* plugins, uint8_t id) noexcept;
  result<size_t> (*compress)(const chunk_plugins* plugins, uint8_t id, uint8_t compcode_meta, bytes_view in,
                             bytes_mut out) noexcept;
  status (*forward)(const chunk_plugins* plugins, uint8_t id, uint8_t meta, uint8_t typesize, bytes_view in,
                    bytes_mut out) noexcept;
};
extern const encoder_plugin_ops encoder_plugins TESSERA_ON_DEMAND;
[[nodiscard]] status encoder_user_codec_check(const chunk_plugins* plugins, uint8_t id) noexcept;
[[nodiscard]] status encoder_user_filter_check(const chunk_plugins* plugins, uint8_t id) noexcept;
[[nodiscard]] result<size_t> encoder_user_compress(const chunk_plugins* plugins, uint8_t id, uint8_t compcode_meta,
                                                   bytes_view in, bytes_mut out) noexcept;
[[nodiscard]] status encoder_user_forward(const chunk_plugins* plugins, uint8_t id, uint8_t meta, uint8_t typesize,
                                          bytes_view in, bytes_mut out) noexcept;

}  // namespace tessera::detail
