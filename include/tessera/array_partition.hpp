// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Automatic chunk and block shapes for a B2ND array, when the caller gives none (python-blosc2's
/// compute_chunks_blocks, the reference users meet, made deterministic: the core cannot ask the CPU for its cache
/// sizes, so the caller passes them, or the defaults below stand in for "unknown").
///
/// The rule:
///  1. Block bytes: hints.block_bytes (default 32 KiB, python-blosc2's default for the regular codecs: a block
///     is the unit one thread decompresses, so it should sit in L1/L2), raised to hints.min_block_bytes when that
///     is larger (python-blosc2 uses L2/4 on x86-64, L1 elsewhere) and to at least one item.
///  2. Blocks: partition(block_bytes / itemsize, maxshape) with maxshape = the chunkshape when given, else the
///     shape. partition(budget, maxshape, minpart) walks the dimensions from the last one: a dimension whose
///     extent (at least its minpart) fits the item budget takes it whole; one that does not takes the budget
///     (at least its minpart), snapped down to a divisor of its extent when one lies within a factor of 2. The
///     budget is divided by what each dimension took; once it is 1 or less the remaining dimensions get 1.
///     The divisor searches are python-blosc2's Cython nearest_divisor (array_partition_nearest_divisor).
///  3. Chunk bytes (when no chunkshape is given): 32 blocks when that is under 64 MiB, else one block; replaced
///     by hints.l3_bytes / 4 when the L3 size is known (and larger than L2), raised to hints.l2_bytes / 4 when
///     that is larger, raised to hints.min_chunk_bytes (default 4 MiB: python-blosc2's l3_minimum), capped at
///     the format's maximum chunk size, never below one block, and rounded down to a multiple of the block
///     bytes. Chunks: partition(chunk_bytes / itemsize, shape) with each dimension at least its block extent,
///     then each rounded up to a multiple of its block extent, capped at the shape.
///  4. A shape with a zero extent and neither shape given: chunks = blocks = shape (python-blosc2's choice; such
///     an array cannot grow along that axis).
/// Blocks given without chunks are kept as given (python-blosc2 would recompute them from their size).
/// On bare metal array_frame_setup_make (and array_create) reach this code only in a program that calls
/// partition_link_auto (tessera/codecs.hpp); calling array_partition_compute itself links it too.
#pragma once

#include <stdint.h>

#include "tessera/config.hpp"
#include "tessera/error.hpp"

namespace tessera {

/// What the rule above knows of the machine: sizes in bytes, 0 for unknown where allowed.
struct array_partition_hints {
  int64_t block_bytes = 32 * 1024;          ///< the target block size
  int64_t min_block_bytes = 0;              ///< e.g. L2 / 4 on x86-64 or L1 elsewhere (0: none)
  int64_t l2_bytes = 0;                     ///< the L2 cache size (0: unknown)
  int64_t l3_bytes = 0;                     ///< the L3 cache size (0: unknown)
  int64_t min_chunk_bytes = 4 * 1024 * 1024;  ///< the smallest automatic chunk
};

/// Fills chunkshape (when chunks_given is false) and blockshape (when blocks_given is false) for an array of
/// `shape` and itemsize bytes per item, by the rule above. Errors: invalid_argument (ndim outside 0..kMaxDims,
/// negative extents, itemsize < 1, a given shape with a 0 where the extent is not 0, a block larger than its
/// chunk), overflow (a block of more than the format's maximum block size).
[[nodiscard]] status array_partition_compute(int ndim, const int64_t* shape, int64_t itemsize, int32_t* chunkshape,
                                             bool chunks_given, int32_t* blockshape, bool blocks_given,
                                             const array_partition_hints& hints = array_partition_hints{}) noexcept;

/// python-blosc2's nearest_divisor(a, b, strict) (Cython version), exposed for tests.
[[nodiscard]] int64_t array_partition_nearest_divisor(int64_t a, int64_t b, bool strict) noexcept;

}  // namespace tessera
