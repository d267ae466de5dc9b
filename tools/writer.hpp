// Writing a new array chunk by chunk in bounded memory, for create and convert: the caller fills one slab at a
// time (a box made of whole chunks, C order, slab_plan says which), the writer cuts it into chunks, encodes them
// on the thread pool (one packer per slot, `slots` chunks at a time) and appends them in chunk order. The frame
// is the one array_create writes for the same parameters, byte for byte, whatever the thread count (the header's
// nthreads fields are always 1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "target.hpp"
#include "tessera/array.hpp"

namespace tessera::cli {

/// Slabs of an array for writing: slab s fixes the chunk coordinates of dimensions 0..level and spans the
/// array in the others (level -1: the whole array is one slab). Visiting slabs in order appends chunks in order.
struct slab_plan {
  int level = -1;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  int64_t chunk[kMaxDims] = {};
  int64_t nslabs = 0;
  size_t max_bytes = 0;  ///< the largest slab
};
/// The coarsest slabs of at most `budget` bytes (one chunk when even that is more); `max_level` caps the level
/// (0 for a stream, whose slabs must be contiguous in C order).
void slab_plan_make(slab_plan& p, const array_layout& l, int64_t itemsize, size_t budget, int max_level) noexcept;
/// Slab s: [start, stop).
void slab_box(const slab_plan& p, int64_t s, int64_t* start, int64_t* stop) noexcept;

struct array_writer;
/// Opens the frame at t (the target's storage or directory) for `params` (its exec ignored) with `slots`
/// encoders. Reports failures itself (returns the exit status).
[[nodiscard]] int writer_open(const char* cmd, array_writer*& w, output_target& t, const array_params& params,
                              uint32_t slots) noexcept;
/// Encodes and appends the chunks of slab [start, stop) (its C-order items in `items`) on `exec`.
[[nodiscard]] int writer_put_slab(array_writer& w, const executor& exec, const int64_t* start, const int64_t* stop,
                                  bytes_view items) noexcept;
/// The frame, to add vlmetalayers before the commit.
[[nodiscard]] frame& writer_frame(array_writer& w) noexcept;
/// Commits and closes the frame (the caller then commits the target).
[[nodiscard]] int writer_finish(array_writer& w) noexcept;
void writer_free(array_writer*& w) noexcept;

/// The chunk size in bytes (padded) of params (after automatic shapes), for budgets.
[[nodiscard]] size_t params_chunk_nbytes(const array_params& params) noexcept;

}  // namespace tessera::cli
