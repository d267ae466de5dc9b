// SPDX-License-Identifier: BSD-3-Clause
// The non-shuffle filters of the Blosc2 pipeline (delta, trunc_prec, bytedelta, int_trunc), each forward
// (compression) and backward (decompression) on one block. Elements are little-endian, as chunks store them.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../base/byte_order.hpp"  // relative: tests include this header without src/ on the path
#include "tessera/chunk.hpp"
#include "tessera/error.hpp"

// On bare metal (TESSERA_CODECS_ON_DEMAND) the chunk code refers to the filters other than shuffle only weakly,
// as to the codec libraries: a firmware links one by calling its filter_link_* function (tessera/codecs.hpp).
#if TESSERA_CODECS_ON_DEMAND
#define TESSERA_FILTER_LINK __attribute__((weak))
#else
#define TESSERA_FILTER_LINK
#endif

namespace tessera::detail {

// Little-endian element access (n <= 8 bytes), the same on every host: base/byte_order.hpp's, in the order the
// filters pass their arguments.
inline uint64_t filter_load_le(const uint8_t* p, size_t n) noexcept { return le_load(p, n); }
inline void filter_store_le(uint8_t* p, size_t n, uint64_t v) noexcept { le_store(p, v, n); }

// Zeroes the `zeroed` low bits (< 64) of every element of `typesize` bytes (1, 2, 4 or 8) from src into dst;
// the bytes past the last whole element are copied. What trunc_prec and int_trunc do once they know the count.
inline void filter_zero_low_bits(int zeroed, size_t typesize, const uint8_t* src, uint8_t* dst, size_t size) noexcept {
  const uint64_t mask = ~((uint64_t{1} << zeroed) - 1);
  const size_t n = size / typesize;
  for (size_t i = 0; i < n; ++i) filter_store_le(dst + i * typesize, typesize, filter_load_le(src + i * typesize, typesize) & mask);
  memcpy(dst + n * typesize, src + n * typesize, size - n * typesize);
}

// Delta (filter 3) works on elements of `typesize` bytes as the reference does: typesize 1, 2, 4, 8 as is,
// other multiples of 8 as 8-byte elements, anything else as bytes; bytes past the last whole element are left.
// Block 0 is coded against itself (each element XOR the previous one); other blocks against block 0 (`dref`,
// the chunk's first block: original data on encode, decoded data on decode; at least `size` bytes).
// Encode: for block 0 pass dref = src. Decode works in place.
TESSERA_FILTER_LINK void delta_encode(const uint8_t* dref, bool block0, size_t typesize, const uint8_t* src,
                                      uint8_t* dst, size_t size) noexcept;
TESSERA_FILTER_LINK void delta_decode(const uint8_t* dref, bool block0, size_t typesize, uint8_t* data,
                                      size_t size) noexcept;

// Truncate precision (filter 4): keeps `prec_bits` mantissa bits of float32 (typesize 4) or float64 (8);
// negative prec_bits removes that many bits. Lossy; nothing to undo on decode.
// Errors: invalid_argument for other typesizes or out-of-range bit counts.
[[nodiscard]] TESSERA_FILTER_LINK status trunc_prec_encode(int8_t prec_bits, size_t typesize, const uint8_t* src,
                                                           uint8_t* dst, size_t size) noexcept;

// Bytedelta (filter 35): the block is `typesize` channels of size / typesize bytes (as byte shuffle leaves
// it); each channel is byte-wise delta coded from 0; the size % typesize trailing bytes pass unchanged.
TESSERA_FILTER_LINK void bytedelta_encode(size_t typesize, const uint8_t* src, uint8_t* dst, size_t size) noexcept;
TESSERA_FILTER_LINK void bytedelta_decode(size_t typesize, const uint8_t* src, uint8_t* dst, size_t size) noexcept;

// Integer truncation (filter 36): keeps `prec_bits` bits of unsigned integers of typesize 1, 2, 4 or 8
// (negative: removes that many low bits). Lossy; decode is a copy.
[[nodiscard]] TESSERA_FILTER_LINK status int_trunc_encode(int8_t prec_bits, size_t typesize, const uint8_t* src,
                                                          uint8_t* dst, size_t size) noexcept;
// int_trunc.cpp's link anchor: filter_link_trunc (in trunc_prec.cpp) calls it, which links both files.
void int_trunc_link() noexcept;

// c-blosc2's registered n-d filters (ndcell.cpp, ndmean.cpp; the cells are nd_cells.hpp's): one block of `size`
// bytes from src to dst (not overlapping), its shape from the geometry, `meta` the filter slot's meta (the cell
// edge), elements of `typesize` bytes (ndmean's little-endian floats). NDCELL regroups the items cell by cell;
// NDMEAN writes each cell as its mean, repeated (lossy; its backward pass only puts the cells back).
// Errors: unsupported (no geometry, more than 8 dimensions, a cell larger than the block for ndcell, ndmean
// forward on items that are not float32 or float64, ndmean's geometries the reference cannot read back),
// malformed (meta out of range, a block that is not prod(blockshape) items).
[[nodiscard]] TESSERA_FILTER_LINK status ndcell_forward(const chunk_nd_geometry& g, uint8_t meta, size_t typesize,
                                                        const uint8_t* src, uint8_t* dst, size_t size) noexcept;
[[nodiscard]] TESSERA_FILTER_LINK status ndcell_backward(const chunk_nd_geometry& g, uint8_t meta, size_t typesize,
                                                         const uint8_t* src, uint8_t* dst, size_t size) noexcept;
[[nodiscard]] TESSERA_FILTER_LINK status ndmean_forward(const chunk_nd_geometry& g, uint8_t meta, size_t typesize,
                                                        const uint8_t* src, uint8_t* dst, size_t size) noexcept;
[[nodiscard]] TESSERA_FILTER_LINK status ndmean_backward(const chunk_nd_geometry& g, uint8_t meta, size_t typesize,
                                                         const uint8_t* src, uint8_t* dst, size_t size) noexcept;

// The scalar bit kernels (bitshuffle_scalar.cpp), in their own object file so that bare metal links them only
// through filter_link_bitshuffle; the scalar kernel table refers to them weakly there.
TESSERA_FILTER_LINK void bitshuffle_scalar(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst,
                                           uint8_t* scratch) noexcept;
TESSERA_FILTER_LINK void bitunshuffle_scalar(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst,
                                             uint8_t* scratch) noexcept;

// Whether the program links filter f (bare metal: whether it called its filter_link_* function; hosts: always),
// and that function's name for the error when it did not. Shuffle and none are always linked.
[[nodiscard]] bool filter_linked(filter_id f) noexcept;
[[nodiscard]] detail::code_status filter_unlinked_error(filter_id f) noexcept;

}  // namespace tessera::detail
