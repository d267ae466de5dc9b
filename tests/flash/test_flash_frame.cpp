// Writing a B2ND array (a cframe with the b2nd metalayer) to simulated NOR flash: the finalized region is a
// cframe the frame reader opens and decodes to the data written; a power cut at every program and erase of
// create + appends + finalize loses no acknowledged chunk, and the array can always be finished afterwards;
// a full region says no_space and still finalizes; every sector is erased once; a metalayer updated before
// finalize (a growing array's shape) is what finalize writes, and mount still takes the params of create. On a
// memory-mapped device the finalized frame is read in place (flash_frame_view, array_view).
#include <cstdio>
#include <cstring>

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "tessera/array_view.hpp"
#include "tessera/b2nd_meta.hpp"
#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/flash_frame.hpp"
#include "tessera/port/flash_sim.hpp"

using namespace tessera;

namespace {

constexpr int32_t kChunkElems = 256;  // int32 elements per chunk
constexpr int32_t kBlockElems = 64;
constexpr uint32_t kChunks = 6;
constexpr int32_t kChunkBytes = kChunkElems * 4;

struct array_fixture {
  uint8_t meta[128] = {};
  size_t meta_size = 0;
  frame_metalayer_init layer{};
  frame_create_params params{};
  uint8_t data[kChunks][kChunkBytes] = {};
  uint8_t chunks[kChunks][kChunkBytes + kChunkMaxOverhead] = {};
  size_t chunk_size[kChunks] = {};
};

array_fixture g_fx;  // static: too big for the bare-metal stack
bool g_fx_ready = false;

void fixture_build(test::context& t) {
  if (g_fx_ready) return;
  array_fixture& fx = g_fx;
  b2nd_meta m;
  m.ndim = 1;
  m.shape[0] = static_cast<int64_t>(kChunks) * kChunkElems - 100;  // the last chunk is padded, as b2nd does
  m.chunkshape[0] = kChunkElems;
  m.blockshape[0] = kBlockElems;
  static const char dtype[] = "<i4";
  m.dtype = span<const char>(dtype, 3);
  m.has_dtype = true;
  result<size_t> ms = b2nd_meta_encode(m, bytes_mut(fx.meta, sizeof fx.meta));
  REQUIRE_OK(ms);
  fx.meta_size = *ms;
  static const char name[] = "b2nd";
  fx.layer.name = span<const char>(name, 4);
  fx.layer.content = bytes_view(fx.meta, fx.meta_size);
  fx.params.typesize = 4;
  fx.params.blocksize = kBlockElems * 4;
  fx.params.chunksize = kChunkBytes;
  fx.params.compcode = 0;
  fx.params.clevel = 5;
  fx.params.metalayers = &fx.layer;
  fx.params.nmetalayers = 1;

  test::counting_allocator counting;
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, counting.get()));
  chunk_encode_params ep;
  ep.typesize = 4;
  ep.clevel = 5;
  ep.compressor = codec::blosclz;
  ep.blocksize = kBlockElems * 4;
  test::rng r(42);
  for (uint32_t c = 0; c < kChunks; ++c) {
    for (int32_t i = 0; i < kChunkElems; ++i) {
      // A ramp with noise: compressible, but not to nothing, and different per chunk.
      const int32_t v = static_cast<int32_t>(c * 100000 + i * 3) + static_cast<int32_t>(r.next() % (c + 2));
      std::memcpy(fx.data[c] + 4 * i, &v, 4);
    }
    result<size_t> n = chunk_encode(enc, ep, bytes_view(fx.data[c], kChunkBytes),
                                    bytes_mut(fx.chunks[c], sizeof fx.chunks[c]));
    REQUIRE_OK(n);
    fx.chunk_size[c] = *n;
  }
  chunk_encoder_release(enc);
  g_fx_ready = true;
}

flash_sim_config geometry(int i) {
  flash_sim_config c;
  c.sector_size = 512;
  c.sector_count = 20;
  if (i == 0) {  // serial NOR
    c.read_size = 1;
    c.prog_size = 1;
    c.page_size = 256;
  } else {  // ECC internal flash
    c.read_size = 4;
    c.prog_size = 16;
    c.page_size = 128;
  }
  return c;
}
constexpr int kGeometries = 2;

flash_log_config region(flash_sim& sim, uint32_t sectors = 18) {
  flash_log_config c;
  c.device = flash_sim_device(sim);
  c.first_sector = 1;
  c.sector_count = sectors;
  return c;
}

// Opens the finalized frame through the frame reader and checks it holds chunks [0, n) of the fixture, decoding
// to the data written, with the b2nd metalayer.
void check_frame(test::context& t, flash_frame& ff, uint32_t n, const allocator& alloc) {
  REQUIRE(ff.finalized);
  const storage st = flash_frame_storage(ff);
  frame f;
  REQUIRE_OK(frame_open(f, st, alloc));
  const frame_info* info = frame_info_get(f);
  REQUIRE(info != nullptr);
  CHECK_EQ(info->nchunks, static_cast<int64_t>(n));
  CHECK_EQ(info->nbytes, static_cast<int64_t>(n) * kChunkBytes);
  CHECK_EQ(info->frame_len, ff.frame_len);
  static const char name[] = "b2nd";
  result<bytes_view> meta = frame_meta_find(f, span<const char>(name, 4));
  REQUIRE_OK(meta);
  CHECK(meta->size() == g_fx.meta_size && std::memcmp(meta->data(), g_fx.meta, g_fx.meta_size) == 0);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, alloc));
  static uint8_t out[kChunkBytes];
  for (uint32_t c = 0; c < n; ++c) {
    result<size_t> got = frame_chunk_decode(f, d, c, bytes_mut(out, sizeof out));
    CHECK_OK(got);
    if (got.ok()) CHECK(*got == static_cast<size_t>(kChunkBytes) && std::memcmp(out, g_fx.data[c], kChunkBytes) == 0);
  }
  chunk_decoder_release(d);
  CHECK_OK(frame_close(f));
}

struct progress {
  bool created = false;
  uint32_t acked = 0;
  bool in_flight = false;
  bool finalized = false;
};

// Creates (unless resume) and appends chunks from `first`, then finalizes; stops at the first error.
void write_sequence(flash_sim& sim, const allocator& alloc, bool resume, uint32_t first, progress& p) {
  flash_frame ff;
  if (resume) {
    if (!flash_frame_mount(ff, region(sim), alloc, g_fx.params).ok()) return;
  } else {
    if (!flash_frame_create(ff, region(sim), alloc, g_fx.params).ok()) return;
    p.created = true;
  }
  p.acked = first;
  bool ok = true;
  for (uint32_t c = first; c < kChunks && ok; ++c) {
    p.in_flight = true;
    ok = flash_frame_append(ff, bytes_view(g_fx.chunks[c], g_fx.chunk_size[c])).ok();
    if (ok) {
      p.in_flight = false;
      p.acked = c + 1;
    }
  }
  if (ok) p.finalized = flash_frame_finalize(ff).ok();
  flash_frame_close(ff);
}

// After power on: mounts (when create returned) and checks the chunks found; returns their count or -1.
int check_recovered(test::context& t, flash_sim& sim, const allocator& alloc, const progress& p, flash_frame& ff) {
  status e = flash_frame_mount(ff, region(sim), alloc, g_fx.params);
  if (!e.ok()) {
    CHECK(!p.created);
    CHECK_EQ(e.code, errc::malformed);
    return -1;
  }
  CHECK_LE(static_cast<int64_t>(p.acked), ff.nchunks);
  CHECK_LE(ff.nchunks, static_cast<int64_t>(p.acked + (p.in_flight ? 1 : 0)));
  if (p.finalized) CHECK(ff.finalized);
  static uint8_t buf[kChunkBytes + kChunkMaxOverhead];
  for (int64_t c = 0; c < ff.nchunks && c < static_cast<int64_t>(kChunks); ++c) {
    result<size_t> n = flash_frame_chunk_read(ff, c, bytes_mut(buf, sizeof buf));
    CHECK_OK(n);
    if (n.ok()) CHECK(*n == g_fx.chunk_size[c] && std::memcmp(buf, g_fx.chunks[c], *n) == 0);
  }
  return static_cast<int>(ff.nchunks);
}

}  // namespace

TESSERA_TEST(flash_frame, finalized_region_is_a_cframe_that_decodes) {
  fixture_build(t);
  test::counting_allocator counting;
  for (int gi = 0; gi < kGeometries; ++gi) {
    flash_sim sim;
    REQUIRE_OK(flash_sim_init(sim, geometry(gi), counting.get()));
    flash_sim_fill_random(sim, 3);
    progress p;
    write_sequence(sim, counting.get(), false, 0, p);
    REQUIRE(p.finalized);
    flash_frame ff;
    REQUIRE_OK(flash_frame_mount(ff, region(sim), counting.get(), g_fx.params));
    CHECK(ff.finalized);
    CHECK_EQ(ff.frame_start, 0u);  // a plain cframe from the region's first byte
    CHECK_EQ(ff.nchunks, static_cast<int64_t>(kChunks));
    check_frame(t, ff, kChunks, counting.get());
    // The simulator is memory-mapped: the frame in place, as the storage reads it, opens in the decode-only
    // reader; an unmapped device has no view.
    {
      const bytes_view v = flash_frame_view(ff);
      REQUIRE_EQ(v.size(), static_cast<size_t>(ff.frame_len));
      uint8_t head[64];
      REQUIRE_OK(storage_read(flash_frame_storage(ff), 0, bytes_mut(head, sizeof head)));
      CHECK(std::memcmp(head, v.data(), sizeof head) == 0);
      array_view av;
      REQUIRE_OK(array_view_open(av, v, counting.get()));
      CHECK_EQ(av.layout.shape[0], static_cast<int64_t>(kChunks) * kChunkElems - 100);
      const int64_t at = kChunkElems + 7;  // chunk 1, item 7
      uint8_t item[4] = {};
      CHECK_OK(array_view_element_read(av, &at, bytes_mut(item, sizeof item)));
      CHECK(std::memcmp(item, g_fx.data[1] + 7 * 4, 4) == 0);
      array_view_close(av);
      const uint8_t* mapped = ff.log.device.mapped;
      ff.log.device.mapped = nullptr;
      CHECK(flash_frame_view(ff).empty());
      ff.log.device.mapped = mapped;
    }
    // The same bytes read straight from the device: the frame starts at the region's start.
    const uint8_t* region_bytes = sim.bytes.data() + sim.config.sector_size;
    CHECK(std::memcmp(region_bytes, "\x9e\xa8" "b2frame", 9) == 0 || region_bytes[0] == 0x9e);
    CHECK_OK(flash_frame_finalize(ff));  // idempotent
    CHECK_ERR(flash_frame_append(ff, bytes_view(g_fx.chunks[0], g_fx.chunk_size[0])), errc::invalid_argument);
    std::printf("flash_frame geometry %d: frame_len %llu of a %u-byte region; erases per sector max %u\n", gi,
                static_cast<unsigned long long>(ff.frame_len), static_cast<unsigned>(ff.log.region_size),
                static_cast<unsigned>(flash_sim_max_erase_count(sim, 0, sim.config.sector_count)));
    CHECK_EQ(flash_sim_max_erase_count(sim, 0, sim.config.sector_count), 1u);
    flash_frame_close(ff);
    flash_sim_release(sim);
  }
  CHECK(!counting.leaked());
}

TESSERA_TEST(flash_frame, empty_array_and_wrong_params) {
  fixture_build(t);
  test::counting_allocator counting;
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, geometry(1), counting.get()));
  flash_frame ff;
  REQUIRE_OK(flash_frame_create(ff, region(sim), counting.get(), g_fx.params));
  CHECK_ERR(flash_frame_append(ff, bytes_view(g_fx.chunks[0], g_fx.chunk_size[0] - 1)), errc::invalid_argument);
  REQUIRE_OK(flash_frame_finalize(ff));
  check_frame(t, ff, 0, counting.get());
  flash_frame_close(ff);
  frame_create_params other = g_fx.params;
  other.clevel = 9;
  CHECK_ERR(flash_frame_mount(ff, region(sim), counting.get(), other), errc::invalid_argument);
  other = g_fx.params;
  other.chunksize = -1;
  CHECK_ERR(flash_frame_create(ff, region(sim), counting.get(), other), errc::invalid_argument);
  REQUIRE_OK(flash_frame_mount(ff, region(sim), counting.get(), g_fx.params));
  CHECK(ff.finalized);
  check_frame(t, ff, 0, counting.get());
  flash_frame_close(ff);
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}

namespace {

// The frame's b2nd metalayer, read through the frame reader from the finalized region.
void check_meta(test::context& t, flash_frame& ff, bytes_view want, const allocator& alloc) {
  REQUIRE(ff.finalized);
  frame f;
  REQUIRE_OK(frame_open(f, flash_frame_storage(ff), alloc));
  static const char name[] = "b2nd";
  result<bytes_view> meta = frame_meta_find(f, span<const char>(name, 4));
  CHECK_OK(meta);
  if (meta.ok()) CHECK(meta->size() == want.size() && std::memcmp(meta->data(), want.data(), want.size()) == 0);
  CHECK_OK(frame_close(f));
}

}  // namespace

// A growing array: the b2nd shape given at create is replaced before finalize (same size). The update is
// in memory only: a mount (after a reset) takes the params of create and the update is made again.
TESSERA_TEST(flash_frame, meta_update_before_finalize_is_what_finalize_writes) {
  fixture_build(t);
  test::counting_allocator counting;
  static const char b2nd[] = "b2nd";
  const span<const char> name(b2nd, 4);
  const uint8_t original0 = g_fx.meta[0];
  for (int gi = 0; gi < kGeometries; ++gi) {
    flash_sim sim;
    REQUIRE_OK(flash_sim_init(sim, geometry(gi), counting.get()));
    flash_sim_fill_random(sim, 11);
    // The final shape: 4 chunks, the last one partial. Same encoded size (int64 shape fields).
    result<b2nd_meta> created = b2nd_meta_decode(bytes_view(g_fx.meta, g_fx.meta_size));
    REQUIRE_OK(created);
    b2nd_meta m = *created;
    const int64_t final_rows = 4 * int64_t{kChunkElems} - 7 - gi;
    m.shape[0] = final_rows;
    static uint8_t grown[128];
    result<size_t> gs = b2nd_meta_encode(m, bytes_mut(grown, sizeof grown));
    REQUIRE_OK(gs);
    REQUIRE_EQ(*gs, g_fx.meta_size);
    const bytes_view grown_view(grown, *gs);

    flash_frame ff;
    REQUIRE_OK(flash_frame_create(ff, region(sim), counting.get(), g_fx.params));
    for (uint32_t c = 0; c < 3; ++c) REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[c], g_fx.chunk_size[c])));
    // Refused: another size (shorter or longer), an unknown name.
    CHECK_ERR(flash_frame_meta_update(ff, name, bytes_view(grown, *gs - 1)), errc::invalid_argument);
    CHECK_ERR(flash_frame_meta_update(ff, name, bytes_view(grown, *gs + 1)), errc::invalid_argument);
    CHECK_ERR(flash_frame_meta_update(ff, span<const char>(b2nd, 3), grown_view), errc::invalid_argument);
    CHECK_ERR(flash_frame_meta_update(ff, span<const char>("b2ne", 4), grown_view), errc::invalid_argument);
    CHECK_ERR(flash_frame_meta_update(ff, span<const char>(), grown_view), errc::invalid_argument);
    REQUIRE_OK(flash_frame_meta_update(ff, name, grown_view));
    CHECK_EQ(g_fx.meta[0], original0);  // the caller's params are not written
    CHECK(std::memcmp(ff.params.metalayers[0].content.data(), grown, *gs) == 0);

    // A reset before finalize: mount with the params of create works (the tag ignores metalayer contents),
    // the chunks are there, the update is gone.
    flash_frame_close(ff);
    // Params of another geometry are still refused: another metalayer size or name, another clevel.
    frame_metalayer_init changed = g_fx.layer;
    changed.content = bytes_view(g_fx.meta, g_fx.meta_size - 1);
    frame_create_params op = g_fx.params;
    op.metalayers = &changed;
    CHECK_ERR(flash_frame_mount(ff, region(sim), counting.get(), op), errc::invalid_argument);
    changed = g_fx.layer;
    changed.name = span<const char>("b2ne", 4);
    CHECK_ERR(flash_frame_mount(ff, region(sim), counting.get(), op), errc::invalid_argument);
    op = g_fx.params;
    op.clevel = 9;
    CHECK_ERR(flash_frame_mount(ff, region(sim), counting.get(), op), errc::invalid_argument);
    REQUIRE_OK(flash_frame_mount(ff, region(sim), counting.get(), g_fx.params));
    CHECK(!ff.finalized);
    CHECK_EQ(ff.nchunks, 3);
    CHECK(std::memcmp(ff.params.metalayers[0].content.data(), g_fx.meta, g_fx.meta_size) == 0);

    REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[3], g_fx.chunk_size[3])));
    REQUIRE_OK(flash_frame_meta_update(ff, name, grown_view));
    REQUIRE_OK(flash_frame_finalize(ff));
    CHECK_ERR(flash_frame_meta_update(ff, name, bytes_view(g_fx.meta, g_fx.meta_size)), errc::invalid_argument);
    check_meta(t, ff, grown_view, counting.get());
    // The frame reader sees the final shape and the chunks.
    {
      frame f;
      REQUIRE_OK(frame_open(f, flash_frame_storage(ff), counting.get()));
      result<bytes_view> meta = frame_meta_find(f, name);
      REQUIRE_OK(meta);
      result<b2nd_meta> got = b2nd_meta_decode(*meta);
      REQUIRE_OK(got);
      CHECK_EQ(got->shape[0], final_rows);
      CHECK_EQ(got->chunkshape[0], kChunkElems);
      const frame_info* info = frame_info_get(f);
      REQUIRE(info != nullptr);
      CHECK_EQ(info->nchunks, 4);
      chunk_decoder d;
      REQUIRE_OK(chunk_decoder_init(d, counting.get()));
      static uint8_t out[kChunkBytes];
      for (uint32_t c = 0; c < 4; ++c) {
        result<size_t> n = frame_chunk_decode(f, d, c, bytes_mut(out, sizeof out));
        CHECK_OK(n);
        if (n.ok()) CHECK(*n == static_cast<size_t>(kChunkBytes) && std::memcmp(out, g_fx.data[c], kChunkBytes) == 0);
      }
      chunk_decoder_release(d);
      CHECK_OK(frame_close(f));
    }
    // After a reset the finalized array mounts with the params of create and keeps what finalize wrote.
    flash_frame_close(ff);
    REQUIRE_OK(flash_frame_mount(ff, region(sim), counting.get(), g_fx.params));
    CHECK(ff.finalized);
    check_meta(t, ff, grown_view, counting.get());
    CHECK_ERR(flash_frame_meta_update(ff, name, grown_view), errc::invalid_argument);
    flash_frame_close(ff);
    CHECK_ERR(flash_frame_meta_update(ff, name, grown_view), errc::invalid_argument);  // closed

    // Updated, then reset and finalized without updating again: the content of create.
    REQUIRE_OK(flash_frame_create(ff, region(sim), counting.get(), g_fx.params));
    REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[0], g_fx.chunk_size[0])));
    REQUIRE_OK(flash_frame_meta_update(ff, name, grown_view));
    flash_frame_close(ff);
    REQUIRE_OK(flash_frame_mount(ff, region(sim), counting.get(), g_fx.params));
    REQUIRE_OK(flash_frame_finalize(ff));
    check_meta(t, ff, bytes_view(g_fx.meta, g_fx.meta_size), counting.get());
    flash_frame_close(ff);
    flash_sim_release(sim);
  }
  CHECK(!counting.leaked());
}

TESSERA_TEST(flash_frame, full_region_is_no_space_and_still_finalizes) {
  fixture_build(t);
  test::counting_allocator counting;
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, geometry(1), counting.get()));
  flash_frame ff;
  REQUIRE_OK(flash_frame_create(ff, region(sim, 6), counting.get(), g_fx.params));  // 3 KiB: not all chunks fit
  uint32_t n = 0;
  status e;
  for (; n < kChunks; ++n) {
    e = flash_frame_append(ff, bytes_view(g_fx.chunks[n], g_fx.chunk_size[n]));
    if (!e.ok()) break;
  }
  CHECK_EQ(e.code, errc::no_space);
  CHECK_LT(0u, n);
  CHECK_LT(n, kChunks);
  // Smaller chunks could still go in; finalize fits in the room kept for it.
  REQUIRE_OK(flash_frame_finalize(ff));
  check_frame(t, ff, n, counting.get());
  flash_frame_close(ff);
  REQUIRE_OK(flash_frame_mount(ff, region(sim, 6), counting.get(), g_fx.params));
  check_frame(t, ff, n, counting.get());
  std::printf("flash_frame full region: %u of %u chunks fit in 3 KiB, then no_space; finalized frame_len %llu\n",
              static_cast<unsigned>(n), static_cast<unsigned>(kChunks), static_cast<unsigned long long>(ff.frame_len));
  flash_frame_close(ff);
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}

// The power cut at each program and erase of create + 6 appends + finalize, in every tear mode. After each:
// acknowledged chunks are there and intact; then the array is finished (even cuts: the remaining chunks are
// appended; odd cuts: finalized as it is) and the finalized frame decodes.
TESSERA_TEST(flash_frame, power_cut_at_every_program_and_erase) {
  fixture_build(t);
  test::counting_allocator counting;
  for (int gi = 0; gi < kGeometries; ++gi) {
    flash_sim sim;
    REQUIRE_OK(flash_sim_init(sim, geometry(gi), counting.get()));
    owned_array<uint8_t> old_bytes;
    REQUIRE_OK(old_bytes.allocate(counting.get(), sim.bytes.size()));
    flash_sim_fill_random(sim, 99);
    std::memcpy(old_bytes.data(), sim.bytes.data(), sim.bytes.size());
    progress dry;
    flash_sim_cut_after(sim, 0, flash_tear::none, 0);
    write_sequence(sim, counting.get(), false, 0, dry);
    REQUIRE(dry.finalized);
    const uint64_t total = flash_sim_ops(sim);
    int slot1_frames = 0, finalized_by_cut = 0;
    uint32_t worst_erase = 0;
    for (int mode = 0; mode < 4; ++mode) {
      for (uint64_t cut = 1; cut <= total; ++cut) {
        std::memcpy(sim.bytes.data(), old_bytes.data(), sim.bytes.size());
        flash_sim_reset_erase_counts(sim);
        flash_sim_power_on(sim);
        flash_sim_cut_after(sim, cut, static_cast<flash_tear>(mode), cut * 13 + mode);
        progress p;
        write_sequence(sim, counting.get(), false, 0, p);
        REQUIRE(sim.dead);
        flash_sim_power_on(sim);
        flash_frame ff;
        const int m = check_recovered(t, sim, counting.get(), p, ff);
        if (m >= 0 && ff.finalized) ++finalized_by_cut;
        uint32_t expect = kChunks;
        if (m < 0) {
          flash_frame_close(ff);
          progress again;
          write_sequence(sim, counting.get(), false, 0, again);
          REQUIRE(again.finalized);
          REQUIRE_OK(flash_frame_mount(ff, region(sim), counting.get(), g_fx.params));
        } else if (cut % 2 == 1 || ff.finalized) {
          expect = static_cast<uint32_t>(m);
          REQUIRE_OK(flash_frame_finalize(ff));
        } else {
          flash_frame_close(ff);
          progress rest;
          write_sequence(sim, counting.get(), true, static_cast<uint32_t>(m), rest);
          REQUIRE(rest.finalized);
          REQUIRE_OK(flash_frame_mount(ff, region(sim), counting.get(), g_fx.params));
        }
        if (ff.frame_start != 0) ++slot1_frames;
        check_frame(t, ff, expect, counting.get());
        flash_frame_close(ff);
        const uint32_t worst = flash_sim_max_erase_count(sim, 0, sim.config.sector_count);
        CHECK_LE(worst, p.created ? 1u : 2u);
        if (worst > worst_erase) worst_erase = worst;
      }
    }
    std::printf("flash_frame geometry %d: %llu programs+erases per array, cut at each in 4 tear modes: "
                "finalized before the cut %d, frames in header slot #1 after a torn header %d, max erases of a "
                "sector %u (2 only when the cut fell in create's erases)\n",
                gi, static_cast<unsigned long long>(total), finalized_by_cut, slot1_frames, static_cast<unsigned>(worst_erase));
    CHECK_LT(0, slot1_frames);
    old_bytes.reset();
    flash_sim_release(sim);
  }
  CHECK(!counting.leaked());
}
