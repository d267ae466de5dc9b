// SPDX-License-Identifier: BSD-3-Clause
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
  int64_t itemsize = 0;
};
/// The coarsest slabs of at most `budget` bytes (one chunk when even that is more); `max_level` caps the level
/// (0 for a stream, whose slabs must be contiguous in C order).
void slab_plan_make(slab_plan& p, const array_layout& l, int64_t itemsize, size_t budget, int max_level) noexcept;
/// Slab s: [start, stop).
void slab_box(const slab_plan& p, int64_t s, int64_t* start, int64_t* stop) noexcept;

/// The slabs for writing the array of `params` with `threads` workers (a few chunks per worker, at least 16 MiB;
/// max_level as slab_plan_make's), and a buffer for the largest. Reports failures itself (returns the exit
/// status, 0 on success).
[[nodiscard]] int slabs_prepare(const char* cmd, const char* out_path, const array_params& params, uint32_t threads,
                                int max_level, slab_plan& plan, owned_array<uint8_t>& buffer) noexcept;

struct array_writer;
/// Opens the frame at t (the target's storage or directory) for `params` (its exec ignored) with `slots`
/// encoders. Reports failures itself (returns the exit status).
[[nodiscard]] int writer_open(const char* cmd, array_writer*& w, output_target& t, const array_params& params,
                              uint32_t slots) noexcept;
/// Encodes and appends the chunks of slab [start, stop) (its C-order items in `items`) on `exec`.
[[nodiscard]] int writer_put_slab(array_writer& w, const executor& exec, const int64_t* start, const int64_t* stop,
                                  bytes_view items) noexcept;
/// Fills slab [start, stop) of plan with its C-order items (exactly items.size() bytes). Reports failures itself
/// (returns the exit status, 0 on success).
using slab_fill = int (*)(void* context, const slab_plan& plan, const int64_t* start, const int64_t* stop,
                          bytes_mut items) noexcept;
/// Every slab of plan in order, filled by fill(context, ...) into buffer and put through w on exec, with the
/// progress line of a `total` bytes command (unless quiet).
[[nodiscard]] int writer_put_slabs(const char* cmd, array_writer& w, const executor& exec, const slab_plan& plan,
                                   bytes_mut buffer, uint64_t total, bool quiet, slab_fill fill,
                                   void* context) noexcept;
/// The frame, to add vlmetalayers before the commit.
[[nodiscard]] frame& writer_frame(array_writer& w) noexcept;
/// Commits and closes the frame (the caller then commits the target).
[[nodiscard]] int writer_finish(array_writer& w) noexcept;
void writer_free(array_writer*& w) noexcept;

/// A command's writer, freed with it. *w is the writer once writer_start succeeded.
struct writer_handle {
  writer_handle() noexcept = default;
  writer_handle(const writer_handle&) = delete;
  writer_handle& operator=(const writer_handle&) = delete;
  ~writer_handle() { writer_free(w); }
  array_writer& operator*() const noexcept { return *w; }
  array_writer* w = nullptr;
};
/// target_begin(cmd, t, path, sparse), then writer_open over t. Reports failures itself (returns the exit status).
[[nodiscard]] int writer_start(const char* cmd, output_target& t, const char* path, bool sparse,
                               const array_params& params, uint32_t slots, writer_handle& w) noexcept;

/// The chunk size in bytes (padded) of params (after automatic shapes), for budgets.
[[nodiscard]] size_t params_chunk_nbytes(const array_params& params) noexcept;

}  // namespace tessera::cli
