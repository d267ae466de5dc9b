// SPDX-License-Identifier: BSD-3-Clause
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

// The simulated part a test works on, and the allocator everything of the test takes from (counted: a leak
// fails the test when the fixture goes). open() (re)initializes the part with a geometry and, for a nonzero
// seed, random bytes (a used part); the part is released by the next open() and with the fixture.
struct sim_fixture {
  explicit sim_fixture(test::context& context) noexcept : t(context) {}
  sim_fixture(const sim_fixture&) = delete;
  sim_fixture& operator=(const sim_fixture&) = delete;
  ~sim_fixture() {
    flash_sim_release(sim);
    CHECK(!counting.leaked());
  }
  status open(const flash_sim_config& c, uint64_t seed = 0) noexcept {
    flash_sim_release(sim);
    TESSERA_TRY(flash_sim_init(sim, c, counting.get()));
    if (seed != 0) flash_sim_fill_random(sim, seed);
    return ok_status();
  }
  allocator alloc() noexcept { return counting.get(); }

  test::context& t;
  test::counting_allocator counting;
  flash_sim sim;
};

}  // namespace

TESSERA_TEST(flash_frame, finalized_region_is_a_cframe_that_decodes) {
  fixture_build(t);
  sim_fixture part(t);
  for (int gi = 0; gi < kGeometries; ++gi) {
    REQUIRE_OK(part.open(geometry(gi), 3));
    flash_sim& sim = part.sim;
    progress p;
    write_sequence(sim, part.alloc(), false, 0, p);
    REQUIRE(p.finalized);
    flash_frame ff;
    REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
    CHECK(ff.finalized);
    CHECK_EQ(ff.frame_start, 0u);  // a plain cframe from the region's first byte
    CHECK_EQ(ff.nchunks, static_cast<int64_t>(kChunks));
    check_frame(t, ff, kChunks, part.alloc());
    // The simulator is memory-mapped: the frame in place, as the storage reads it, opens in the decode-only
    // reader; an unmapped device has no view.
    {
      const bytes_view v = flash_frame_view(ff);
      REQUIRE_EQ(v.size(), static_cast<size_t>(ff.frame_len));
      uint8_t head[64];
      REQUIRE_OK(storage_read(flash_frame_storage(ff), 0, bytes_mut(head, sizeof head)));
      CHECK(std::memcmp(head, v.data(), sizeof head) == 0);
      array_view av;
      REQUIRE_OK(array_view_open(av, v, part.alloc()));
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
  }
}

// A read-only device over a simulated part: its reads, and programs and erases that fail and are counted.
uint32_t g_refused = 0;
status refuse_prog(void*, uint32_t, uint32_t, bytes_view) noexcept {
  ++g_refused;
  return make_error(errc::unsupported, TESSERA_MSG("read only"));
}
status refuse_erase(void*, uint32_t) noexcept {
  ++g_refused;
  return make_error(errc::unsupported, TESSERA_MSG("read only"));
}
flash_log_config read_only(flash_sim& sim) {
  flash_log_config c = region(sim);
  c.device.prog = refuse_prog;
  c.device.erase = refuse_erase;
  return c;
}

// flash_frame_mount_read (a host reading a dump, without the params): on a device that cannot write it finds the
// chunks of an array never finalized, not the one whose append a cut tore, reads and scrubs them, refuses to
// write; once finalized, the same frame as flash_frame_mount. Nothing is programmed or erased.
TESSERA_TEST(flash_frame, mount_read_needs_no_params_and_writes_nothing) {
  fixture_build(t);
  sim_fixture part(t);
  static uint8_t buf[kChunkBytes + kChunkMaxOverhead];
  for (int gi = 0; gi < kGeometries; ++gi) {
    REQUIRE_OK(part.open(geometry(gi), 5));
    flash_sim& sim = part.sim;
    flash_frame ff;
    CHECK_ERR(flash_frame_mount_read(ff, read_only(sim), part.alloc()), errc::malformed);  // no log yet
    REQUIRE_OK(flash_frame_create(ff, region(sim), part.alloc(), g_fx.params));
    for (uint32_t k = 0; k < 3; ++k) REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[k], g_fx.chunk_size[k])));
    flash_sim_cut_after(sim, 2, flash_tear::nothing, 9);  // chunk 3's record programmed, none of its bytes
    CHECK(!flash_frame_append(ff, bytes_view(g_fx.chunks[3], g_fx.chunk_size[3])).ok());
    flash_sim_power_on(sim);
    flash_frame_close(ff);
    const uint64_t progs = sim.progs, erases = sim.erases;
    g_refused = 0;
    REQUIRE_OK(flash_frame_mount_read(ff, read_only(sim), part.alloc()));
    CHECK(!ff.finalized);
    CHECK_EQ(ff.nchunks, int64_t{3});
    for (uint32_t k = 0; k < 3; ++k) {
      result<size_t> n = flash_frame_chunk_read(ff, k, bytes_mut(buf, sizeof buf));
      REQUIRE_OK(n);
      CHECK_EQ(*n, g_fx.chunk_size[k]);
      CHECK(std::memcmp(buf, g_fx.chunks[k], *n) == 0);
    }
    CHECK_OK(flash_frame_scrub(ff));
    CHECK_ERR(flash_frame_append(ff, bytes_view(g_fx.chunks[3], g_fx.chunk_size[3])), errc::invalid_argument);
    CHECK_ERR(flash_frame_finalize(ff), errc::invalid_argument);
    CHECK(flash_frame_storage(ff).read == nullptr);
    flash_frame_close(ff);
    CHECK_EQ(g_refused, 0u);
    CHECK_EQ(sim.progs, progs);
    CHECK_EQ(sim.erases, erases);
    // Finalized (by a writable mount): the read-only mount finds the same frame.
    REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
    REQUIRE_OK(flash_frame_finalize(ff));
    const uint32_t start = ff.frame_start;
    const uint64_t len = ff.frame_len;
    flash_frame_close(ff);
    REQUIRE_OK(flash_frame_mount_read(ff, read_only(sim), part.alloc()));
    CHECK(ff.finalized);
    CHECK_EQ(ff.frame_start, start);
    CHECK_EQ(ff.frame_len, len);
    CHECK_EQ(ff.nchunks, int64_t{3});
    CHECK(flash_frame_storage(ff).read != nullptr);
    CHECK_EQ(g_refused, 0u);
    flash_frame_close(ff);
  }
}

TESSERA_TEST(flash_frame, empty_array_and_wrong_params) {
  fixture_build(t);
  sim_fixture part(t);
  REQUIRE_OK(part.open(geometry(1)));
  flash_sim& sim = part.sim;
  flash_frame ff;
  REQUIRE_OK(flash_frame_create(ff, region(sim), part.alloc(), g_fx.params));
  CHECK_ERR(flash_frame_append(ff, bytes_view(g_fx.chunks[0], g_fx.chunk_size[0] - 1)), errc::invalid_argument);
  REQUIRE_OK(flash_frame_finalize(ff));
  check_frame(t, ff, 0, part.alloc());
  flash_frame_close(ff);
  frame_create_params other = g_fx.params;
  other.clevel = 9;
  CHECK_ERR(flash_frame_mount(ff, region(sim), part.alloc(), other), errc::invalid_argument);
  other = g_fx.params;
  other.chunksize = -1;
  CHECK_ERR(flash_frame_create(ff, region(sim), part.alloc(), other), errc::invalid_argument);
  REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
  CHECK(ff.finalized);
  check_frame(t, ff, 0, part.alloc());
  flash_frame_close(ff);
}

// What a flash frame refuses, with its code: every call on a frame that is not open, chunks of another size,
// chunk numbers outside the frame, a buffer smaller than the chunk; and the estimate covers what a create
// allocates (and refuses a device without a program size).
TESSERA_TEST(flash_frame, calls_and_chunks_it_refuses) {
  fixture_build(t);
  sim_fixture part(t);
  flash_frame closed;
  static const char name[] = "b2nd";
  static uint8_t buf[kChunkBytes + kChunkMaxOverhead];
  CHECK_ERR(flash_frame_append(closed, bytes_view(g_fx.chunks[0], g_fx.chunk_size[0])), errc::invalid_argument);
  CHECK_ERR(flash_frame_finalize(closed), errc::invalid_argument);
  CHECK_ERR(flash_frame_meta_update(closed, span<const char>(name, 4), bytes_view(g_fx.meta, g_fx.meta_size)),
            errc::invalid_argument);
  CHECK_ERR(flash_frame_chunk_read(closed, 0, bytes_mut(buf, sizeof buf)), errc::invalid_argument);
  CHECK_ERR(flash_frame_scrub(closed), errc::invalid_argument);
  CHECK(flash_frame_storage(closed).read == nullptr);
  CHECK(flash_frame_view(closed).empty());

  REQUIRE_OK(part.open(geometry(1)));
  flash_sim& sim = part.sim;
  result<size_t> estimate = flash_frame_estimate(region(sim), g_fx.params);
  REQUIRE_OK(estimate);
  flash_log_config no_prog = region(sim);
  no_prog.device.prog_size = 0;
  CHECK_ERR(flash_frame_estimate(no_prog, g_fx.params), errc::invalid_argument);
  const size_t live_before = part.counting.live_bytes;
  flash_frame ff;
  REQUIRE_OK(flash_frame_create(ff, region(sim), part.alloc(), g_fx.params));
  CHECK_LE(part.counting.live_bytes - live_before, *estimate);
  // A chunk of half the array's chunksize.
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, part.alloc()));
  chunk_encode_params ep;
  ep.typesize = 4;
  ep.compressor = codec::blosclz;
  uint8_t half[kChunkBytes / 2 + kChunkMaxOverhead];
  result<size_t> n = chunk_encode(enc, ep, bytes_view(g_fx.data[0], kChunkBytes / 2), bytes_mut(half, sizeof half));
  chunk_encoder_release(enc);
  REQUIRE_OK(n);
  CHECK_ERR(flash_frame_append(ff, bytes_view(half, *n)), errc::invalid_argument);
  REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[0], g_fx.chunk_size[0])));
  CHECK_ERR(flash_frame_chunk_read(ff, -1, bytes_mut(buf, sizeof buf)), errc::out_of_range);
  CHECK_ERR(flash_frame_chunk_read(ff, 1, bytes_mut(buf, sizeof buf)), errc::out_of_range);
  CHECK_ERR(flash_frame_chunk_read(ff, 0, bytes_mut(buf, g_fx.chunk_size[0] - 1)), errc::buffer_too_small);
  result<size_t> got = flash_frame_chunk_read(ff, 0, bytes_mut(buf, sizeof buf));
  CHECK(got.ok() && *got == g_fx.chunk_size[0] && std::memcmp(buf, g_fx.chunks[0], *got) == 0);
  CHECK(flash_frame_storage(ff).read == nullptr);  // not finalized: no cframe yet
  REQUIRE_OK(flash_frame_finalize(ff));
  CHECK_ERR(flash_frame_append(ff, bytes_view(g_fx.chunks[1], g_fx.chunk_size[1])), errc::invalid_argument);
  check_frame(t, ff, 1, part.alloc());
  flash_frame_close(ff);
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
  sim_fixture part(t);
  static const char b2nd[] = "b2nd";
  const span<const char> name(b2nd, 4);
  const uint8_t original0 = g_fx.meta[0];
  for (int gi = 0; gi < kGeometries; ++gi) {
    REQUIRE_OK(part.open(geometry(gi), 11));
    flash_sim& sim = part.sim;
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
    REQUIRE_OK(flash_frame_create(ff, region(sim), part.alloc(), g_fx.params));
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
    CHECK_ERR(flash_frame_mount(ff, region(sim), part.alloc(), op), errc::invalid_argument);
    changed = g_fx.layer;
    changed.name = span<const char>("b2ne", 4);
    CHECK_ERR(flash_frame_mount(ff, region(sim), part.alloc(), op), errc::invalid_argument);
    op = g_fx.params;
    op.clevel = 9;
    CHECK_ERR(flash_frame_mount(ff, region(sim), part.alloc(), op), errc::invalid_argument);
    REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
    CHECK(!ff.finalized);
    CHECK_EQ(ff.nchunks, 3);
    CHECK(std::memcmp(ff.params.metalayers[0].content.data(), g_fx.meta, g_fx.meta_size) == 0);

    REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[3], g_fx.chunk_size[3])));
    REQUIRE_OK(flash_frame_meta_update(ff, name, grown_view));
    REQUIRE_OK(flash_frame_finalize(ff));
    CHECK_ERR(flash_frame_meta_update(ff, name, bytes_view(g_fx.meta, g_fx.meta_size)), errc::invalid_argument);
    check_meta(t, ff, grown_view, part.alloc());
    // The frame reader sees the final shape and the chunks.
    {
      frame f;
      REQUIRE_OK(frame_open(f, flash_frame_storage(ff), part.alloc()));
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
      REQUIRE_OK(chunk_decoder_init(d, part.alloc()));
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
    REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
    CHECK(ff.finalized);
    check_meta(t, ff, grown_view, part.alloc());
    CHECK_ERR(flash_frame_meta_update(ff, name, grown_view), errc::invalid_argument);
    flash_frame_close(ff);
    CHECK_ERR(flash_frame_meta_update(ff, name, grown_view), errc::invalid_argument);  // closed

    // Updated, then reset and finalized without updating again: the content of create.
    REQUIRE_OK(flash_frame_create(ff, region(sim), part.alloc(), g_fx.params));
    REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[0], g_fx.chunk_size[0])));
    REQUIRE_OK(flash_frame_meta_update(ff, name, grown_view));
    flash_frame_close(ff);
    REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
    REQUIRE_OK(flash_frame_finalize(ff));
    check_meta(t, ff, bytes_view(g_fx.meta, g_fx.meta_size), part.alloc());
    flash_frame_close(ff);
  }
}

TESSERA_TEST(flash_frame, full_region_is_no_space_and_still_finalizes) {
  fixture_build(t);
  sim_fixture part(t);
  REQUIRE_OK(part.open(geometry(1)));
  flash_sim& sim = part.sim;
  flash_frame ff;
  REQUIRE_OK(flash_frame_create(ff, region(sim, 6), part.alloc(), g_fx.params));  // 3 KiB: not all chunks fit
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
  check_frame(t, ff, n, part.alloc());
  flash_frame_close(ff);
  REQUIRE_OK(flash_frame_mount(ff, region(sim, 6), part.alloc(), g_fx.params));
  check_frame(t, ff, n, part.alloc());
  std::printf("flash_frame full region: %u of %u chunks fit in 3 KiB, then no_space; finalized frame_len %llu\n",
              static_cast<unsigned>(n), static_cast<unsigned>(kChunks), static_cast<unsigned long long>(ff.frame_len));
  flash_frame_close(ff);
}

// The power cut at each program and erase of create + 6 appends + finalize, in every tear mode. After each:
// acknowledged chunks are there and intact; then the array is finished (even cuts: the remaining chunks are
// appended; odd cuts: finalized as it is) and the finalized frame decodes.
TESSERA_TEST(flash_frame, power_cut_at_every_program_and_erase) {
  fixture_build(t);
  sim_fixture part(t);
  for (int gi = 0; gi < kGeometries; ++gi) {
    REQUIRE_OK(part.open(geometry(gi)));
    flash_sim& sim = part.sim;
    owned_array<uint8_t> old_bytes;
    REQUIRE_OK(old_bytes.allocate(part.alloc(), sim.bytes.size()));
    flash_sim_fill_random(sim, 99);
    std::memcpy(old_bytes.data(), sim.bytes.data(), sim.bytes.size());
    progress dry;
    flash_sim_cut_after(sim, 0, flash_tear::none, 0);
    write_sequence(sim, part.alloc(), false, 0, dry);
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
        write_sequence(sim, part.alloc(), false, 0, p);
        REQUIRE(sim.dead);
        flash_sim_power_on(sim);
        flash_frame ff;
        const int m = check_recovered(t, sim, part.alloc(), p, ff);
        if (m >= 0 && ff.finalized) ++finalized_by_cut;
        uint32_t expect = kChunks;
        if (m < 0) {
          flash_frame_close(ff);
          progress again;
          write_sequence(sim, part.alloc(), false, 0, again);
          REQUIRE(again.finalized);
          REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
        } else if (cut % 2 == 1 || ff.finalized) {
          expect = static_cast<uint32_t>(m);
          REQUIRE_OK(flash_frame_finalize(ff));
        } else {
          flash_frame_close(ff);
          progress rest;
          write_sequence(sim, part.alloc(), true, static_cast<uint32_t>(m), rest);
          REQUIRE(rest.finalized);
          REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
        }
        if (ff.frame_start != 0) ++slot1_frames;
        check_frame(t, ff, expect, part.alloc());
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
  }
}

// ---- Faults other than a clean power cut (issue 31) -----------------------------------------------------------

namespace {

// A firmware's write: create, append chunks [0, count), finalize (when asked), calling each once more when it
// fails with errc::io (a transient device error). False when a call failed twice or with another error.
bool write_retrying(flash_sim& sim, const allocator& alloc, uint32_t count, bool finalize, uint32_t sectors = 18) {
  flash_frame ff;
  bool ok = flash_frame_create(ff, region(sim, sectors), alloc, g_fx.params).ok() ||
            flash_frame_create(ff, region(sim, sectors), alloc, g_fx.params).ok();
  for (uint32_t c = 0; c < count && ok; ++c) {
    const bytes_view chunk(g_fx.chunks[c], g_fx.chunk_size[c]);
    status e = flash_frame_append(ff, chunk);
    if (e.code == errc::io) e = flash_frame_append(ff, chunk);
    ok = e.ok();
  }
  if (ok && finalize) {
    status e = flash_frame_finalize(ff);
    if (e.code == errc::io) e = flash_frame_finalize(ff);
    ok = e.ok();
  }
  flash_frame_close(ff);
  return ok;
}

// The region holds exactly chunks [0, n) of the fixture, finalized or not: mount, chunk reads, scrub, frame.
void check_as_written(test::context& t, flash_sim& sim, const allocator& alloc, uint32_t n, bool finalized,
                      uint32_t sectors = 18) {
  flash_frame ff;
  REQUIRE_OK(flash_frame_mount(ff, region(sim, sectors), alloc, g_fx.params));
  CHECK_EQ(ff.nchunks, static_cast<int64_t>(n));
  CHECK_EQ(ff.finalized, finalized);
  static uint8_t buf[kChunkBytes + kChunkMaxOverhead];
  for (uint32_t c = 0; c < n && c < static_cast<uint32_t>(ff.nchunks); ++c) {
    result<size_t> got = flash_frame_chunk_read(ff, c, bytes_mut(buf, sizeof buf));
    CHECK_OK(got);
    if (got.ok()) CHECK(*got == g_fx.chunk_size[c] && std::memcmp(buf, g_fx.chunks[c], *got) == 0);
  }
  CHECK_OK(flash_frame_scrub(ff));
  if (finalized && ff.finalized) check_frame(t, ff, n, alloc);
  flash_frame_close(ff);
}

// The device offset of record slot `record` of a region (see flash_log.hpp's layout).
size_t record_device_offset(const flash_frame& ff, uint32_t record) {
  return static_cast<size_t>(ff.log.first_sector) * ff.log.device.sector_size + ff.log.region_size -
         static_cast<size_t>(record + 1) * ff.log.slot_size;
}

constexpr flash_tear kEffects[] = {flash_tear::nothing, flash_tear::none, flash_tear::prefix, flash_tear::partial,
                                   flash_tear::garbage};

}  // namespace

// Issue 31, row 1: the driver's prog fails (an SPI timeout, nothing programmed) during append #1 and the caller
// retries once: after a remount the array has the 4 chunks appended, in order (the old log advanced its write
// position before programming and never aborted the blob: 5 chunks, one garbage, the later ones shifted).
TESSERA_TEST(flash_frame, prog_error_in_append_then_retry_appends_once) {
  fixture_build(t);
  sim_fixture part(t);
  for (int gi = 0; gi < kGeometries; ++gi) {
    for (flash_tear effect : kEffects) {
      for (uint64_t nth = 1; nth <= 3; ++nth) {  // the record, the chunk's first page, its second
        REQUIRE_OK(part.open(geometry(gi)));
        flash_sim& sim = part.sim;
        flash_frame ff;
        REQUIRE_OK(flash_frame_create(ff, region(sim), part.alloc(), g_fx.params));
        REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[0], g_fx.chunk_size[0])));
        flash_sim_fail_after(sim, flash_sim_op_prog, nth, 1, effect, nth * 7 + static_cast<uint64_t>(effect));
        CHECK_ERR(flash_frame_append(ff, bytes_view(g_fx.chunks[1], g_fx.chunk_size[1])), errc::io);
        for (uint32_t c = 1; c < 4; ++c) REQUIRE_OK(flash_frame_append(ff, bytes_view(g_fx.chunks[c], g_fx.chunk_size[c])));
        CHECK_EQ(ff.nchunks, 4);
        flash_frame_close(ff);
        check_as_written(t, sim, part.alloc(), 4, false);
      }
    }
  }
}

// A transient error at each program and erase (then at each read) of create + 6 appends + finalize, with each
// effect a failed operation can leave; the caller retries a failed call once. The region always ends up holding
// the array as written.
TESSERA_TEST(flash_frame, transient_error_at_every_operation_then_retry) {
  fixture_build(t);
  sim_fixture part(t);
  for (int gi = 0; gi < kGeometries; ++gi) {
    REQUIRE_OK(part.open(geometry(gi)));
    flash_sim& sim = part.sim;
    for (int reads = 0; reads < 2; ++reads) {
      const uint8_t ops = reads ? flash_sim_op_read : flash_sim_op_prog | flash_sim_op_erase;
      flash_sim_fill_random(sim, 5);
      flash_sim_fail_after(sim, ops, 0, 0, flash_tear::nothing, 0);  // count only
      REQUIRE(write_retrying(sim, part.alloc(), kChunks, true));
      const uint64_t total = flash_sim_fail_ops(sim);
      uint64_t runs = 0;
      for (flash_tear effect : kEffects) {
        if (reads && effect != flash_tear::nothing) break;  // a failed read has one effect (noise)
        for (uint64_t k = 1; k <= total; ++k) {
          flash_sim_fill_random(sim, 5 + k);
          const uint64_t faults_before = sim.faults;
          flash_sim_fail_after(sim, ops, k, 1, effect, k * 31 + static_cast<uint64_t>(effect));
          CHECK(write_retrying(sim, part.alloc(), kChunks, true));
          CHECK_EQ(sim.faults, faults_before + 1);
          flash_sim_fail_after(sim, 0, 0, 0, flash_tear::nothing, 0);
          check_as_written(t, sim, part.alloc(), kChunks, true);
          ++runs;
        }
      }
      std::printf("flash_frame geometry %d: a transient %s error at each of %llu operations of create + %u appends + "
                  "finalize (%llu runs), one retry: the array as written every time\n",
                  gi, reads ? "read" : "program/erase", static_cast<unsigned long long>(total),
                  static_cast<unsigned>(kChunks), static_cast<unsigned long long>(runs));
    }
  }
}

// Issue 31, row 2: one bit of a middle record flips at rest after 4 appends. Mount says corrupt and names the
// chunk whose record is lost; the chunks before it read as written; nothing is renumbered (the old mount listed
// 3 chunks, 2 of them another chunk's bytes).
TESSERA_TEST(flash_frame, flipped_middle_record_is_corrupt_naming_the_chunk) {
  fixture_build(t);
  sim_fixture part(t);
  for (int gi = 0; gi < kGeometries; ++gi) {
    REQUIRE_OK(part.open(geometry(gi)));
    flash_sim& sim = part.sim;
    REQUIRE(write_retrying(sim, part.alloc(), 4, false));
    flash_frame ff;
    REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
    flash_log_cursor cursor;
    flash_blob b;
    uint32_t record_of_1 = 0;
    for (int i = 0; i < 2; ++i) {
      result<bool> more = flash_log_next(ff.log, cursor, &b);
      REQUIRE_OK(more);
      record_of_1 = b.record;
    }
    const size_t at = record_device_offset(ff, record_of_1) + 13;
    flash_frame_close(ff);
    flash_sim_flip_bit(sim, at, 3);
    CHECK_ERR(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params), errc::corrupt);
    CHECK(ff.fault == flash_frame_fault::chunk_missing);
    CHECK_EQ(ff.fault_chunk, 1);
    CHECK_EQ(ff.nchunks, 1);
    static uint8_t buf[kChunkBytes + kChunkMaxOverhead];
    result<size_t> got = flash_frame_chunk_read(ff, 0, bytes_mut(buf, sizeof buf));
    CHECK_OK(got);
    if (got.ok()) CHECK(*got == g_fx.chunk_size[0] && std::memcmp(buf, g_fx.chunks[0], *got) == 0);
    CHECK_ERR(flash_frame_chunk_read(ff, 1, bytes_mut(buf, sizeof buf)), errc::out_of_range);
    CHECK_ERR(flash_frame_append(ff, bytes_view(g_fx.chunks[4], g_fx.chunk_size[4])), errc::corrupt);
    CHECK_ERR(flash_frame_finalize(ff), errc::corrupt);
    flash_frame_close(ff);
  }
}

namespace {

// After one flipped bit somewhere in what the array wrote: mount, every chunk read and scrub either give the
// array as written, or fail loudly (corrupt, naming the chunk when a chunk is hit) -- never other bytes.
struct flip_stats {
  int intact = 0, mount_corrupt = 0, read_corrupt = 0, scrub_corrupt = 0;
};

void check_after_flip(test::context& t, flash_sim& sim, const allocator& alloc, uint32_t n, bool finalized,
                      flip_stats& st) {
  flash_frame ff;
  const status m = flash_frame_mount(ff, region(sim), alloc, g_fx.params);
  if (!m.ok()) {
    CHECK_EQ(m.code, errc::corrupt);
    CHECK(ff.fault != flash_frame_fault::none);
    CHECK_LE(ff.nchunks, static_cast<int64_t>(n));
    ++st.mount_corrupt;
  } else {
    CHECK_EQ(ff.nchunks, static_cast<int64_t>(n));
    CHECK_EQ(ff.finalized, finalized);
  }
  static uint8_t buf[kChunkBytes + kChunkMaxOverhead];
  bool read_failed = false;
  for (int64_t c = 0; c < ff.nchunks; ++c) {
    result<size_t> got = flash_frame_chunk_read(ff, c, bytes_mut(buf, sizeof buf));
    if (!got.ok()) {
      CHECK_EQ(got.err().code, errc::corrupt);
      CHECK_EQ(ff.fault_chunk, c);
      read_failed = true;
      continue;
    }
    CHECK(*got == g_fx.chunk_size[c] && std::memcmp(buf, g_fx.chunks[c], *got) == 0);
  }
  if (read_failed) ++st.read_corrupt;
  const status s = flash_frame_scrub(ff);
  if (!s.ok()) {
    CHECK_EQ(s.code, errc::corrupt);
    ++st.scrub_corrupt;
  }
  CHECK(!read_failed || !s.ok());  // what a read finds, scrub finds
  if (m.ok() && s.ok() && !read_failed) {
    ++st.intact;
    if (finalized) check_frame(t, ff, n, alloc);
  }
  flash_frame_close(ff);
}

}  // namespace

// The sweep: a bit flipped in each byte of the records and (every 5th byte) of the chunks, index and header,
// before and after finalize.
TESSERA_TEST(flash_frame, bit_flip_at_rest_anywhere_is_loud_or_harmless) {
  fixture_build(t);
  sim_fixture part(t);
  for (int gi = 0; gi < kGeometries; ++gi) {
    REQUIRE_OK(part.open(geometry(gi)));
    flash_sim& sim = part.sim;
    owned_array<uint8_t> written;
    REQUIRE_OK(written.allocate(part.alloc(), sim.bytes.size()));
    for (int fin = 0; fin < 2; ++fin) {
      const uint32_t n = fin ? kChunks : 4;
      REQUIRE(write_retrying(sim, part.alloc(), n, fin != 0));
      std::memcpy(written.data(), sim.bytes.data(), sim.bytes.size());
      flash_frame ff;
      REQUIRE_OK(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params));
      const size_t base = static_cast<size_t>(ff.log.first_sector) * ff.log.device.sector_size;
      const size_t records_lo = record_device_offset(ff, ff.log.next_record - 1);
      const size_t records_hi = base + ff.log.region_size;
      const size_t data_hi = base + ff.log.data_end;
      flash_frame_close(ff);
      flip_stats st;
      for (size_t at = base; at < records_hi; ++at) {
        const bool in_records = at >= records_lo;
        if (!in_records && (at >= data_hi || (at - base) % 5 != 0)) continue;
        const uint8_t erased = sim.config.erased_value;
        if (written[at] == erased && !in_records) continue;  // only bytes the array wrote (pads stay erased)
        std::memcpy(sim.bytes.data(), written.data(), sim.bytes.size());
        flash_sim_flip_bit(sim, at, static_cast<unsigned>(at % 8));
        check_after_flip(t, sim, part.alloc(), n, fin != 0, st);
      }
      std::printf("flash_frame geometry %d, %s: one flipped bit, %d intact, %d mounts corrupt, %d chunk reads "
                  "corrupt, %d scrubs corrupt; never other bytes\n", gi, fin ? "finalized" : "4 chunks",
                  st.intact, st.mount_corrupt, st.read_corrupt, st.scrub_corrupt);
      CHECK_LT(0, st.mount_corrupt);
      CHECK_LT(0, st.read_corrupt);
    }
    written.reset();
  }
}

// Issue 31, row 3: a region filled to no_space, then a power cut at each program and erase of finalize, in every
// tear mode: after power-on, mount + finalize completes and the frame holds every chunk appended (the old
// reserve held one index+trailer: finalize failed with no_space for good at 114 of 120 cuts). The same with a
// transient error instead of the cut, and a retry.
TESSERA_TEST(flash_frame, full_region_finalize_completes_after_any_cut) {
  fixture_build(t);
  sim_fixture part(t);
  for (int gi = 0; gi < kGeometries; ++gi) {
    for (uint32_t sectors = 6; sectors <= 8; ++sectors) {
      REQUIRE_OK(part.open(geometry(gi)));
      flash_sim& sim = part.sim;
      owned_array<uint8_t> full;
      REQUIRE_OK(full.allocate(part.alloc(), sim.bytes.size()));
      // Fill: append until no_space.
      flash_frame ff;
      REQUIRE_OK(flash_frame_create(ff, region(sim, sectors), part.alloc(), g_fx.params));
      uint32_t n = 0;
      status e;
      while (n < kChunks && (e = flash_frame_append(ff, bytes_view(g_fx.chunks[n], g_fx.chunk_size[n]))).ok()) ++n;
      flash_frame_close(ff);
      if (n == kChunks) continue;  // not full: not this test's case
      CHECK_EQ(e.code, errc::no_space);
      std::memcpy(full.data(), sim.bytes.data(), sim.bytes.size());
      flash_sim_cut_after(sim, 0, flash_tear::none, 0);
      REQUIRE_OK(flash_frame_mount(ff, region(sim, sectors), part.alloc(), g_fx.params));
      REQUIRE_OK(flash_frame_finalize(ff));
      flash_frame_close(ff);
      const uint64_t total = flash_sim_ops(sim);
      int runs = 0;
      for (int mode = 0; mode < 6; ++mode) {
        for (uint64_t cut = 1; cut <= total; ++cut) {
          std::memcpy(sim.bytes.data(), full.data(), sim.bytes.size());
          flash_sim_power_on(sim);
          REQUIRE_OK(flash_frame_mount(ff, region(sim, sectors), part.alloc(), g_fx.params));
          if (mode < 4) {
            flash_sim_cut_after(sim, cut, static_cast<flash_tear>(mode), cut * 17 + mode);
            CHECK(!flash_frame_finalize(ff).ok());
            flash_frame_close(ff);
            flash_sim_power_on(sim);
            REQUIRE_OK(flash_frame_mount(ff, region(sim, sectors), part.alloc(), g_fx.params));
            CHECK_OK(flash_frame_finalize(ff));
          } else {  // a transient error (nothing done / done but reported) and one retry
            flash_sim_fail_after(sim, flash_sim_op_prog, cut, 1, mode == 4 ? flash_tear::nothing : flash_tear::partial,
                                 cut);
            status f = flash_frame_finalize(ff);
            if (f.code == errc::io) f = flash_frame_finalize(ff);
            CHECK_OK(f);
          }
          flash_frame_close(ff);
          flash_sim_power_on(sim);
          check_as_written(t, sim, part.alloc(), n, true, sectors);
          ++runs;
        }
      }
      std::printf("flash_frame geometry %d, %u sectors: full at %u chunks; a cut at each of %llu operations of "
                  "finalize in 4 tear modes, or a transient error and a retry (%d runs): finalize completes every time\n",
                  gi, static_cast<unsigned>(sectors), static_cast<unsigned>(n), static_cast<unsigned long long>(total), runs);
      full.reset();
    }
  }
}

// A power cut during create's erases that leaves the sector weak (it reads blank): creating again erases every
// sector, so the array written afterwards survives time (the old format skipped sectors that read blank).
TESSERA_TEST(flash_frame, weak_erase_in_a_cut_create_is_erased_again) {
  fixture_build(t);
  sim_fixture part(t);
  REQUIRE_OK(part.open(geometry(0)));
  flash_sim& sim = part.sim;
  for (uint32_t cut = 1; cut <= 18; ++cut) {
    flash_sim_fill_random(sim, cut);
    flash_sim_cut_after(sim, cut, flash_tear::weak, cut);
    CHECK(!write_retrying(sim, part.alloc(), kChunks, true));
    flash_sim_power_on(sim);
    flash_frame ff;
    CHECK_ERR(flash_frame_mount(ff, region(sim), part.alloc(), g_fx.params), errc::malformed);
    flash_frame_close(ff);
    REQUIRE(write_retrying(sim, part.alloc(), kChunks, true));
    flash_sim_age(sim, cut * 3);
    check_as_written(t, sim, part.alloc(), kChunks, true);
  }
}

// Many small chunks (8 bytes each, stored): finalize streams an index of 16.8 KiB (past one 16 KiB block)
// through a 64-byte cache without allocating; reading the chunks back in order costs the same reads per chunk
// whatever their number; create can run a sector per call; flash_frame_estimate covers what create and mount
// allocate.
TESSERA_TEST(flash_frame, many_chunks_constant_ram_and_reads) {
  constexpr uint32_t kMany = 2100;
  sim_fixture part(t);
  flash_sim_config sc = geometry(0);
  sc.sector_size = 4096;
  sc.sector_count = 48;
  REQUIRE_OK(part.open(sc));
  flash_sim& sim = part.sim;
  flash_log_config lc;
  lc.device = flash_sim_device(sim);
  frame_create_params fp;
  fp.typesize = 8;
  fp.chunksize = 8;
  result<size_t> estimate = flash_frame_estimate(lc, fp);
  REQUIRE_OK(estimate);
  const size_t live_before = part.counting.live_bytes;
  flash_frame ff;
  // The incremental create: one sector per step, then the begin records.
  REQUIRE_OK(flash_frame_create_start(ff, lc, part.alloc(), fp));
  uint8_t chunk[8 + kChunkMaxOverhead];
  const uint8_t zero[8] = {};
  REQUIRE_OK(frame_index_encode_stored(bytes_view(zero, 8), bytes_mut(chunk, sizeof chunk)));
  CHECK_ERR(flash_frame_append(ff, bytes_view(chunk, sizeof chunk)), errc::invalid_argument);  // not created yet
  uint32_t steps = 0;
  for (;;) {
    result<bool> done = flash_frame_create_step(ff);
    REQUIRE_OK(done);
    ++steps;
    if (*done) break;
    CHECK_EQ(sim.erases, static_cast<uint64_t>(steps));
  }
  CHECK_EQ(steps, sc.sector_count + 1);
  CHECK_LE(part.counting.live_bytes - live_before, *estimate);
  for (uint32_t c = 0; c < kMany; ++c) {
    const uint64_t v = c * 1000003ull;
    uint8_t value[8];
    std::memcpy(value, &v, 8);
    result<size_t> n = frame_index_encode_stored(bytes_view(value, 8), bytes_mut(chunk, sizeof chunk));  // a stored chunk
    REQUIRE_OK(n);
    REQUIRE_OK(flash_frame_append(ff, bytes_view(chunk, *n)));
  }
  part.counting.reset_high_water();
  const size_t live = part.counting.live_bytes;
  REQUIRE_OK(flash_frame_finalize(ff));
  CHECK_EQ(part.counting.high_water_bytes, live);  // nothing allocated: the index is streamed
  flash_frame_close(ff);

  REQUIRE_OK(flash_frame_mount(ff, lc, part.alloc(), fp));
  CHECK_LE(part.counting.live_bytes - live_before, *estimate);
  CHECK(ff.finalized);
  CHECK_EQ(ff.nchunks, static_cast<int64_t>(kMany));
  const uint64_t reads0 = sim.reads;
  for (uint32_t c = 0; c < kMany; ++c) {
    result<size_t> n = flash_frame_chunk_read(ff, c, bytes_mut(chunk, sizeof chunk));
    REQUIRE_OK(n);
    uint64_t v;
    std::memcpy(&v, chunk + kChunkMaxOverhead, 8);
    CHECK_EQ(v, c * 1000003ull);
  }
  const uint64_t per_chunk = (sim.reads - reads0 + kMany - 1) / kMany;
  CHECK_LE(per_chunk, 4u);  // its record, the next record (an abort?), its bytes
  const uint64_t reads1 = sim.reads;
  REQUIRE_OK(flash_frame_chunk_read(ff, kMany - 1, bytes_mut(chunk, sizeof chunk)));  // from a checkpoint
  const uint64_t random_reads = sim.reads - reads1;
  CHECK_LE(random_reads, 3u * (kMany / (kFlashFrameCheckpoints / 2)) + 4u);
  CHECK_OK(flash_frame_scrub(ff));
  // The frame reader opens the finalized region and reads chunks back.
  frame f;
  REQUIRE_OK(frame_open(f, flash_frame_storage(ff), part.alloc()));
  CHECK_EQ(frame_info_get(f)->nchunks, static_cast<int64_t>(kMany));
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, part.alloc()));
  const uint32_t picks[] = {0, 1, 2047, 2048, kMany - 1};
  for (uint32_t c : picks) {
    uint64_t v = 0;
    result<size_t> got = frame_chunk_decode(f, d, c, bytes_mut(reinterpret_cast<uint8_t*>(&v), 8));
    CHECK_OK(got);
    CHECK_EQ(v, c * 1000003ull);
  }
  chunk_decoder_release(d);
  CHECK_OK(frame_close(f));
  std::printf("flash_frame %u chunks: frame_len %llu; allocator %zu bytes (estimate %zu), none in finalize; "
              "%llu device reads per chunk read in order, %llu for the last chunk alone (checkpoint stride %u)\n",
              static_cast<unsigned>(kMany), static_cast<unsigned long long>(ff.frame_len), part.counting.live_bytes - live_before, *estimate,
              static_cast<unsigned long long>(per_chunk), static_cast<unsigned long long>(random_reads),
              static_cast<unsigned>(ff.checkpoint_stride));
  flash_frame_close(ff);
}

// A region written by the first format of the log (one begin record, slots without a commit mark, blobs from
// record 1) still mounts and reads: built here record by record as that format wrote them.
TESSERA_TEST(flash_log, first_format_regions_still_mount) {
  sim_fixture part(t);
  flash_sim_config sc;
  sc.sector_size = 512;
  sc.sector_count = 4;
  REQUIRE_OK(part.open(sc));
  flash_sim& sim = part.sim;
  uint8_t* region = sim.bytes.data();
  const uint32_t size = 4 * 512;
  auto put32 = [](uint8_t* p, uint32_t v) {
    for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(v >> (8 * k));
  };
  auto record = [&](uint32_t seq, uint8_t kind, uint32_t aux, uint32_t offset, uint32_t bytes, uint32_t crc) {
    uint8_t* r = region + size - (seq + 1) * 32;
    put32(r, 0x4C465354u);
    r[4] = kind;
    r[5] = 0;
    r[6] = 1;
    r[7] = 0;
    put32(r + 8, seq);
    put32(r + 12, aux);
    put32(r + 16, offset);
    put32(r + 20, bytes);
    put32(r + 24, crc);
    put32(r + 28, flash_crc32_update(0, bytes_view(r, 28)));
  };
  uint8_t g[17] = {};
  put32(g, 1);
  put32(g + 4, 1);
  put32(g + 8, 512);
  put32(g + 12, 4);
  g[16] = 0xFF;
  record(0, 1, 77, 10, 32, flash_crc32_update(0, bytes_view(g, 17)));
  const char blob[] = "first format blob";
  std::memcpy(region + 10, blob, 17);
  record(1, 2, 5, 10, 17, flash_crc32_update(0, bytes_view(reinterpret_cast<const uint8_t*>(blob), 17)));
  flash_log log;
  flash_log_config lc;
  lc.device = flash_sim_device(sim);
  REQUIRE_OK(flash_log_mount(log, lc, part.alloc()));
  CHECK_EQ(log.user_tag, 77u);
  CHECK_EQ(log.first_record, 1u);
  flash_log_cursor cursor;
  flash_blob b;
  result<bool> more = flash_log_next(log, cursor, &b);
  REQUIRE_OK(more);
  REQUIRE(*more);
  CHECK_EQ(b.aux, 5u);
  CHECK_OK(flash_log_verify(log, b));
  // It keeps its format: another blob goes after, and mounts again.
  const bytes_view piece(reinterpret_cast<const uint8_t*>(blob), 5);
  REQUIRE_OK(flash_log_append(log, 1, 6, span<const bytes_view>(&piece, 1)));
  flash_log_release(log);
  REQUIRE_OK(flash_log_mount(log, lc, part.alloc()));
  uint32_t m = 0;
  cursor = flash_log_cursor{};
  while (true) {
    result<bool> next = flash_log_next(log, cursor, &b);
    REQUIRE_OK(next);
    if (!*next) break;
    CHECK_OK(flash_log_verify(log, b));
    ++m;
  }
  CHECK_EQ(m, 2u);
  flash_log_release(log);
}

// The begin record is stored twice: a flipped bit in either copy still mounts.
TESSERA_TEST(flash_log, either_begin_copy_suffices) {
  sim_fixture part(t);
  flash_sim_config sc;
  sc.sector_size = 512;
  sc.sector_count = 4;
  REQUIRE_OK(part.open(sc));
  flash_sim& sim = part.sim;
  flash_log log;
  flash_log_config lc;
  lc.device = flash_sim_device(sim);
  REQUIRE_OK(flash_log_format(log, lc, part.alloc(), 0, 42));
  const uint32_t slot = log.slot_size;
  flash_log_release(log);
  for (uint32_t copy = 0; copy < 3; ++copy) {
    if (copy < 2) flash_sim_flip_bit(sim, 4 * 512 - (copy + 1) * slot + 9, 1);
    if (copy < 2) {
      REQUIRE_OK(flash_log_mount(log, lc, part.alloc()));
      CHECK_EQ(log.user_tag, 42u);
      flash_log_release(log);
      flash_sim_flip_bit(sim, 4 * 512 - (copy + 1) * slot + 9, 1);  // back
    } else {  // both copies flipped: no log
      flash_sim_flip_bit(sim, 4 * 512 - slot + 9, 1);
      flash_sim_flip_bit(sim, 4 * 512 - 2 * slot + 9, 1);
      CHECK_ERR(flash_log_mount(log, lc, part.alloc()), errc::malformed);
      flash_log_release(log);
    }
  }
}
