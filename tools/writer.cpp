// SPDX-License-Identifier: BSD-3-Clause
#include "writer.hpp"

#include <atomic>
#include <cinttypes>
#include <cstring>
#include <new>

#include "cli.hpp"
#include "progress.hpp"
#include "tessera/nd_copy.hpp"

namespace tessera::cli {

void slab_plan_make(slab_plan& p, const array_layout& l, int64_t itemsize, size_t budget, int max_level) noexcept {
  p = slab_plan{};
  p.ndim = l.ndim;
  p.itemsize = itemsize;
  for (int d = 0; d < l.ndim; ++d) {
    p.shape[d] = l.shape[d];
    p.chunk[d] = l.chunkshape[d];
  }
  // bytes(level) = prod(chunk[0..level]) * prod(shape[level+1..]) * itemsize (at most; edges are smaller)
  auto bytes_at = [&](int level) {
    double b = static_cast<double>(itemsize);
    for (int d = 0; d < l.ndim; ++d) b *= static_cast<double>(d <= level ? (p.chunk[d] < p.shape[d] ? p.chunk[d] : p.shape[d]) : p.shape[d]);
    return b;
  };
  int level = l.ndim - 1;
  for (int k = -1; k < l.ndim; ++k)
    if (bytes_at(k) <= static_cast<double>(budget)) {
      level = k;
      break;
    }
  if (level > max_level) level = max_level;
  p.level = level;
  p.max_bytes = static_cast<size_t>(bytes_at(level));
  p.nslabs = 1;
  for (int d = 0; d <= level; ++d) p.nslabs *= (p.shape[d] + p.chunk[d] - 1) / p.chunk[d];
  for (int d = 0; d < l.ndim; ++d)
    if (p.shape[d] == 0) p.nslabs = 0;
}

void slab_box(const slab_plan& p, int64_t s, int64_t* start, int64_t* stop) noexcept {
  for (int d = p.level; d >= 0; --d) {  // slab s in C order over the chunk grid of dimensions 0..level
    const int64_t n = (p.shape[d] + p.chunk[d] - 1) / p.chunk[d];
    const int64_t c = s % n;
    s /= n;
    start[d] = c * p.chunk[d];
    stop[d] = start[d] + p.chunk[d] < p.shape[d] ? start[d] + p.chunk[d] : p.shape[d];
  }
  for (int d = p.level + 1; d < p.ndim; ++d) {
    start[d] = 0;
    stop[d] = p.shape[d];
  }
}

int slabs_prepare(const char* cmd, const char* out_path, const array_params& params, uint32_t threads, int max_level,
                  slab_plan& plan, owned_array<uint8_t>& buffer) noexcept {
  array_frame_setup setup;
  if (auto e = array_frame_setup_make(setup, params); !e.ok()) return fail_error(cmd, out_path, e);
  const size_t chunk_bytes = static_cast<size_t>(setup.frame.chunksize);
  size_t budget = size_t{16} << 20;
  if (budget < 2 * chunk_bytes * threads) budget = 2 * chunk_bytes * threads;
  slab_plan_make(plan, setup.layout, setup.itemsize, budget, max_level);
  if (plan.nslabs > 0 && plan.max_bytes > 0)
    if (auto e = buffer.allocate(tool_allocator(), plan.max_bytes); !e.ok()) return fail_error(cmd, "the slab buffer", e);
  return 0;
}

struct array_writer {
  const char* cmd = "";
  output_target* target = nullptr;
  array_frame_setup setup;
  frame f;
  bool open = false;
  uint32_t slots = 1;
  array_chunk_packer* packers = nullptr;
  owned_array<uint8_t>* items = nullptr;  // one chunk's items per slot
  // The group being encoded.
  const int64_t* slab_start = nullptr;
  const int64_t* slab_shape = nullptr;
  bytes_view slab;
  int64_t first = 0;
  bytes_view out[kThreadPoolMaxWorkers];
  status st[kThreadPoolMaxWorkers];
};

namespace {

void encode_task(void* context, size_t i, uint32_t) noexcept {
  array_writer& w = *static_cast<array_writer*>(context);
  const array_layout& l = w.setup.layout;
  const int64_t nchunk = w.first + static_cast<int64_t>(i);
  int64_t cstart[kMaxDims] = {};
  int64_t cext[kMaxDims] = {};
  w.st[i] = layout_chunk_extent(l, nchunk, cstart, cext);
  if (!w.st[i].ok()) return;
  int64_t from[kMaxDims] = {};
  int64_t n = w.setup.itemsize;
  for (int d = 0; d < l.ndim; ++d) {
    from[d] = cstart[d] - w.slab_start[d];
    n *= cext[d];
  }
  const int64_t zero[kMaxDims] = {};
  const bytes_mut items(w.items[i].data(), static_cast<size_t>(n));
  w.st[i] = nd_copy_region(l.ndim, w.setup.itemsize, w.slab, w.slab_shape, from, items, cext, zero, cext);
  if (!w.st[i].ok()) return;
  auto r = array_chunk_pack(w.packers[i], nchunk, bytes_view(items.data(), items.size()));
  if (!r.ok()) {
    w.st[i] = r.err();
    return;
  }
  w.out[i] = *r;
}

}  // namespace

size_t params_chunk_nbytes(const array_params& params) noexcept {
  array_frame_setup s;
  if (!array_frame_setup_make(s, params).ok()) return 0;
  return static_cast<size_t>(s.frame.chunksize);
}

int writer_open(const char* cmd, array_writer*& w, output_target& t, const array_params& params,
                uint32_t slots) noexcept {
  w = new (std::nothrow) array_writer;
  if (w == nullptr) return fail(kExitFailure, cmd, "out of memory");
  w->cmd = cmd;
  w->target = &t;
  array_params p = params;
  p.exec = executor_serial();  // the header's nthreads: 1, whatever the thread count
  if (auto e = array_frame_setup_make(w->setup, p); !e.ok()) return fail_error(cmd, t.path, e);
  if (slots < 1) slots = 1;
  const int64_t nchunks = w->setup.layout.nchunks;
  if (nchunks < static_cast<int64_t>(slots)) slots = nchunks < 1 ? 1 : static_cast<uint32_t>(nchunks);
  w->slots = slots;
  w->packers = new (std::nothrow) array_chunk_packer[slots];
  w->items = new (std::nothrow) owned_array<uint8_t>[slots];
  if (w->packers == nullptr || w->items == nullptr) return fail(kExitFailure, cmd, "out of memory");
  frame_open_options o;
  o.writable = true;
  o.durable = false;  // a fresh temporary: nothing to protect; the layout is then the reference's own
  status s = t.sparse ? frame_create_sparse(w->f, t.sd, tool_allocator(), w->setup.frame, o)
                      : frame_create(w->f, t.st, tool_allocator(), w->setup.frame, o);
  if (!s.ok()) return fail_error(cmd, t.path, s);
  w->open = true;
  if (nchunks > 0) {
    const size_t chunk_items = static_cast<size_t>(w->setup.layout.chunk_nitems) * static_cast<size_t>(w->setup.itemsize);
    for (uint32_t i = 0; i < slots; ++i) {
      if (auto e = array_chunk_packer_init(w->packers[i], w->setup, tool_allocator()); !e.ok())
        return fail_error(cmd, "the chunk encoders", e);
      if (auto e = w->items[i].allocate(tool_allocator(), chunk_items); !e.ok())
        return fail_error(cmd, "the chunk buffers", e);
    }
  }
  return 0;
}

int writer_put_slab(array_writer& w, const executor& exec, const int64_t* start, const int64_t* stop,
                    bytes_view items) noexcept {
  const array_layout& l = w.setup.layout;
  int64_t shape[kMaxDims] = {};
  for (int d = 0; d < l.ndim; ++d) shape[d] = stop[d] - start[d];
  w.slab_start = start;
  w.slab_shape = shape;
  w.slab = items;
  // The slab's chunks are consecutive: chunk coordinates fixed up to some dimension, all of them after it.
  int64_t first = 0;
  int64_t count = 1;
  for (int d = 0; d < l.ndim; ++d) {
    const int64_t n = (l.shape[d] + l.chunkshape[d] - 1) / l.chunkshape[d];
    const int64_t c0 = start[d] / l.chunkshape[d];
    const int64_t c1 = (stop[d] + l.chunkshape[d] - 1) / l.chunkshape[d];
    first = first * n + c0;
    count *= c1 - c0;
  }
  for (int64_t g = 0; g < count; g += w.slots) {
    const int64_t n = count - g < static_cast<int64_t>(w.slots) ? count - g : static_cast<int64_t>(w.slots);
    w.first = first + g;
    executor_run(exec, static_cast<size_t>(n), encode_task, &w);
    for (int64_t i = 0; i < n; ++i) {
      if (!w.st[i].ok()) return fail_error(w.cmd, w.target->path, w.st[i]);
      if (auto e = frame_chunk_append(w.f, w.out[i]); !e.ok()) return fail_error(w.cmd, w.target->path, e);
    }
  }
  return 0;
}

int writer_start(const char* cmd, output_target& t, const char* path, bool sparse, const array_params& params,
                 uint32_t slots, writer_handle& w) noexcept {
  if (int rc = target_begin(cmd, t, path, sparse); rc != 0) return rc;
  return writer_open(cmd, w.w, t, params, slots);
}

int writer_put_slabs(const char* cmd, array_writer& w, const executor& exec, const slab_plan& plan, bytes_mut buffer,
                     uint64_t total, bool quiet, slab_fill fill, void* context) noexcept {
  progress pr;
  progress_start(pr, cmd, total, quiet);
  uint64_t done = 0;
  for (int64_t s = 0; s < plan.nslabs; ++s) {
    int64_t start[kMaxDims] = {};
    int64_t stop[kMaxDims] = {};
    slab_box(plan, s, start, stop);
    size_t bytes = static_cast<size_t>(plan.itemsize);
    for (int d = 0; d < plan.ndim; ++d) bytes *= static_cast<size_t>(stop[d] - start[d]);
    int rc = fill(context, plan, start, stop, bytes_mut(buffer.data(), bytes));
    if (rc == 0) rc = writer_put_slab(w, exec, start, stop, bytes_view(buffer.data(), bytes));
    if (rc != 0) {
      progress_end(pr);
      return rc;
    }
    done += bytes;
    progress_update(pr, done);
  }
  progress_end(pr);
  return 0;
}

frame& writer_frame(array_writer& w) noexcept { return w.f; }

int writer_finish(array_writer& w) noexcept {
  status s = frame_commit(w.f);
  const status c = frame_close(w.f);
  w.open = false;
  if (s.ok()) s = c;
  if (!s.ok()) return fail_error(w.cmd, w.target->path, s);
  return 0;
}

void writer_free(array_writer*& w) noexcept {
  if (w == nullptr) return;
  if (w->open) (void)frame_close(w->f);
  delete[] w->packers;
  delete[] w->items;
  delete w;
  w = nullptr;
}

}  // namespace tessera::cli
