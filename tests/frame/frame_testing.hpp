// SPDX-License-Identifier: BSD-3-Clause
// Test helpers for frames: storage wrappers (no view, counting, failing), a failing directory wrapper, and
// deterministic chunk contents built by hand (tests/chunk/chunk_builder.hpp, independent of any encoder).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../chunk/chunk_builder.hpp"
#include "../support/random.hpp"

namespace frame_test {

using namespace tessera;

// Which call fails: call number fail_at (1-based, every storage and directory call counted) fails with
// errc::io; with fail_after, every later call too (a crash).
struct fault_plan {
  uint64_t calls = 0;
  uint64_t fail_at = UINT64_MAX;
  bool fail_after = false;
  bool failed = false;
  bool tick() noexcept {
    ++calls;
    if (failed && fail_after) return false;
    if (calls == fail_at) {
      failed = true;
      return false;
    }
    return true;
  }
};

// Forwards to an inner storage; counts calls and read bytes; hides the view (so frames read lazily); fails
// as its plan says.
struct wrapped_storage {
  storage inner{};
  fault_plan own;
  fault_plan* plan = &own;
  bool hide_view = true;
  bool concurrent = false;  // claims concurrent reads (only ever run with serial test executors: counts are plain)
  uint64_t bytes_read = 0;
  uint64_t reads = 0;

  static status rd(void* c, uint64_t off, bytes_mut dst) noexcept {
    auto* w = static_cast<wrapped_storage*>(c);
    if (!w->plan->tick()) return make_error(errc::io, "test: injected read failure");
    ++w->reads;
    w->bytes_read += dst.size();
    return w->inner.read(w->inner.context, off, dst);
  }
  static status wr(void* c, uint64_t off, bytes_view src) noexcept {
    auto* w = static_cast<wrapped_storage*>(c);
    if (!w->plan->tick()) return make_error(errc::io, "test: injected write failure");
    return w->inner.write(w->inner.context, off, src);
  }
  static status sz(void* c, uint64_t* out) noexcept {
    auto* w = static_cast<wrapped_storage*>(c);
    if (!w->plan->tick()) return make_error(errc::io, "test: injected size failure");
    return w->inner.size(w->inner.context, out);
  }
  static status tr(void* c, uint64_t size) noexcept {
    auto* w = static_cast<wrapped_storage*>(c);
    if (!w->plan->tick()) return make_error(errc::io, "test: injected truncate failure");
    return w->inner.truncate(w->inner.context, size);
  }
  static status sy(void* c) noexcept {
    auto* w = static_cast<wrapped_storage*>(c);
    if (!w->plan->tick()) return make_error(errc::io, "test: injected sync failure");
    return ok_status();
  }
  static bytes_view vw(void* c) noexcept {
    auto* w = static_cast<wrapped_storage*>(c);
    if (w->hide_view || w->inner.view == nullptr) return bytes_view{};
    return w->inner.view(w->inner.context);
  }
  storage get() noexcept {
    storage s;
    s.read = rd;
    s.write = inner.write != nullptr ? wr : nullptr;
    s.size = sz;
    s.truncate = inner.truncate != nullptr ? tr : nullptr;
    s.sync = sy;
    s.view = vw;
    s.context = this;
    s.concurrent_reads = concurrent;
    return s;
  }
};

// A directory wrapper: its calls and those of the storages it opens follow one plan; its closes follow their own.
struct wrapped_directory {
  storage_directory inner{};
  fault_plan plan;
  fault_plan closes;  // the closes alone, counted apart (a failed close still releases the entry)
  static constexpr int kSlots = 8;
  wrapped_storage opened[kSlots];
  bool used[kSlots] = {};

  static status open(void* c, const char* name, storage_open mode, storage* out) noexcept {
    auto* d = static_cast<wrapped_directory*>(c);
    if (!d->plan.tick()) return make_error(errc::io, "test: injected open failure");
    int slot = -1;
    for (int i = 0; i < kSlots && slot < 0; ++i)
      if (!d->used[i]) slot = i;
    if (slot < 0) return make_error(errc::io, "test: too many open entries");
    storage in;
    TESSERA_TRY(d->inner.open(d->inner.context, name, mode, &in));
    wrapped_storage& w = d->opened[slot];
    w = wrapped_storage{};
    w.inner = in;
    w.plan = &d->plan;
    d->used[slot] = true;
    *out = w.get();
    return ok_status();
  }
  static status close(void* c, storage* s) noexcept {
    auto* d = static_cast<wrapped_directory*>(c);
    for (int i = 0; i < kSlots; ++i)
      if (d->used[i] && s->context == &d->opened[i]) {
        d->used[i] = false;
        storage in = d->opened[i].inner;
        const status closed = d->inner.close(d->inner.context, &in);
        if (!d->closes.tick()) return make_error(errc::io, "test: injected close failure");
        return closed;
      }
    return make_error(errc::invalid_argument, "test: close of an unknown storage");
  }
  static status remove(void* c, const char* name) noexcept {
    auto* d = static_cast<wrapped_directory*>(c);
    if (!d->plan.tick()) return make_error(errc::io, "test: injected remove failure");
    return d->inner.remove(d->inner.context, name);
  }
  static status rename(void* c, const char* from, const char* to) noexcept {
    auto* d = static_cast<wrapped_directory*>(c);
    if (!d->plan.tick()) return make_error(errc::io, "test: injected rename failure");
    return d->inner.rename(d->inner.context, from, to);
  }
  static status list(void* c, storage_directory_visit visit, void* arg) noexcept {
    auto* d = static_cast<wrapped_directory*>(c);
    if (!d->plan.tick()) return make_error(errc::io, "test: injected list failure");
    return storage_directory_list(d->inner, visit, arg);
  }
  [[nodiscard]] int open_count() const noexcept {
    int n = 0;
    for (bool u : used) n += u ? 1 : 0;
    return n;
  }
  storage_directory get() noexcept {
    storage_directory s;
    s.open = open;
    s.close = close;
    s.remove = remove;
    s.rename = rename;
    s.context = this;
    s.list = inner.list != nullptr ? list : nullptr;
    return s;
  }
};

// Whether a sparse frame's directory holds exactly `chunks.b2frame`, one entry per stored chunk the frame's index
// references, and `foreign` entries more (names a sweep leaves alone): no orphaned chunk entry, none missing.
inline bool directory_holds_exactly(const memory_directory& md, frame& f, uint32_t foreign = 0) {
  const frame_info* info = frame_info_get(f);
  if (info == nullptr || memory_directory_find(md, kSparseIndexName).empty()) return false;
  uint32_t expected = 1 + foreign;
  char name[16];
  for (int64_t i = 0; i < info->nchunks; ++i) {
    auto r = frame_chunk_locate(f, i);
    if (!r.ok()) return false;
    if (r->special != chunk_special::none) continue;
    if (!frame_sparse_chunk_name(r->offset, name, sizeof name).ok() || memory_directory_find(md, name).empty()) return false;
    ++expected;
  }
  return memory_directory_count(md) == expected;
}

// Deterministic chunk content: nbytes bytes drawn from `seed` (runs and noise, so streams vary).
inline void content_fill(uint64_t seed, uint8_t* out, size_t n) {
  tessera::test::rng r(seed);
  size_t i = 0;
  while (i < n) {
    const size_t run = static_cast<size_t>(r.range(1, 40));
    const uint8_t v = static_cast<uint8_t>(r.next());
    const bool noise = r.chance(50);
    for (size_t k = 0; k < run && i < n; ++k, ++i) out[i] = noise ? static_cast<uint8_t>(r.next()) : v;
  }
}

// A chunk of that content (typesize 4, blocks of `blocksize`, shuffle and sometimes delta); returns its size.
// `work` holds 3 * blocksize bytes, `src` nbytes, `out` nbytes + 32 + 5 * streams.
inline size_t chunk_make(uint64_t seed, size_t nbytes, int32_t blocksize, uint8_t* src, uint8_t* out, size_t cap,
                         uint8_t* work) {
  content_fill(seed, src, nbytes);
  chunk_test::build_spec b;
  b.typesize = 4;
  b.blocksize = blocksize;
  b.split = (seed & 1) != 0;
  b.filters[5] = 1;
  if ((seed & 6) == 6) b.filters[4] = 3;
  return chunk_test::chunk_build(b, src, nbytes, out, cap, work);
}

// A 32-byte special chunk (zeros 1, nan 2, uninit 4) of nbytes, typesize 4.
inline void special_make(uint8_t kind, int32_t nbytes, uint8_t* out) {
  chunk_test::header_spec h;
  h.typesize = 4;
  h.nbytes = nbytes;
  h.blocksize = nbytes;
  h.cbytes = 32;
  h.flags = 0x15;
  h.blosc2_flags = static_cast<uint8_t>(kind << 4);
  chunk_test::header_write(out, h);
}

// Buffers for chunks of Chunk bytes in blocks of Block built by hand (chunk_make: src, chunk, work) and for
// checking their decodes (out, expect).
template <int32_t Chunk, int32_t Block>
struct scratch_buffers {
  uint8_t src[Chunk];
  uint8_t chunk[2 * Chunk + 64];
  uint8_t work[3 * Block];
  uint8_t out[Chunk];
  uint8_t expect[Chunk];
  // A chunk of content seed in `chunk`, or a zeros special chunk (32 bytes) for seed 0.
  bytes_view chunk_of(uint64_t seed) {
    if (seed == 0) {
      special_make(1, Chunk, chunk);
      return bytes_view(chunk, 32);
    }
    return bytes_view(chunk, chunk_make(seed, Chunk, Block, src, chunk, sizeof chunk, work));
  }
};

}  // namespace frame_test
