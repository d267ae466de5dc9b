// SPDX-License-Identifier: BSD-3-Clause
// Arrays on the other homes and the automatic shapes: written chunk by chunk to simulated NOR flash (the
// finalized frame opens as an array), in a caller's fixed buffer, with metalayers and vlmetalayers; and the
// automatic partition rule checked on cases worked by hand from python-blosc2's compute_chunks_blocks.
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "tessera/array.hpp"
#include "tessera/array_partition.hpp"
#include "tessera/port/flash_frame.hpp"
#include "tessera/port/flash_sim.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

TESSERA_TEST(array_ports, flash_chunk_by_chunk) {
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  {
    flash_sim sim;
    flash_sim_config sc;
    sc.sector_size = 4096;
    sc.sector_count = 16;
    REQUIRE_OK(flash_sim_init(sim, sc, alloc));
    flash_log_config lc;
    lc.device = flash_sim_device(sim);

    array_params p;
    p.ndim = 2;
    p.shape[0] = 50;  // the last chunk row is partial
    p.shape[1] = 30;
    p.chunkshape[0] = 16;
    p.chunkshape[1] = 30;
    p.blockshape[0] = 4;
    p.blockshape[1] = 16;  // padded blocks inside each chunk
    p.dtype = str("<i2");
    p.compressor = codec::blosclz;
    p.clevel = 5;
    static array_frame_setup setup;  // not on the bare-metal stack
    REQUIRE_OK(array_frame_setup_make(setup, p));
    int16_t data[50 * 30];
    for (int i = 0; i < 50 * 30; ++i) data[i] = static_cast<int16_t>(i * 7 - 300);

    flash_frame ff;
    REQUIRE_OK(flash_frame_create(ff, lc, alloc, setup.frame));
    array_chunk_packer packer;
    REQUIRE_OK(array_chunk_packer_init(packer, setup, alloc));
    for (int64_t n = 0; n < setup.layout.nchunks; ++n) {
      // The chunk's rows, as an acquisition would deliver them.
      const int64_t r0 = n * 16;
      const int64_t rows = r0 + 16 <= 50 ? 16 : 50 - r0;
      auto chunk = array_chunk_pack(packer, n,
                                    bytes_view(reinterpret_cast<const uint8_t*>(data + r0 * 30),
                                               static_cast<size_t>(rows * 30 * 2)));
      REQUIRE_OK(chunk);
      REQUIRE_OK(flash_frame_append(ff, *chunk));
    }
    CHECK_ERR(array_chunk_pack(packer, 0, bytes_view(reinterpret_cast<const uint8_t*>(data), 10)),
              errc::invalid_argument);
    REQUIRE_OK(flash_frame_finalize(ff));
    const storage st = flash_frame_storage(ff);
    array a;
    REQUIRE_OK(array_open(a, st, alloc));
    int16_t got[50 * 30];
    REQUIRE_OK(array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(got), sizeof got)));
    CHECK(std::memcmp(got, data, sizeof got) == 0);
    // The same chunks as array_create writes.
    growable_buffer g;
    growable_buffer_init(g, alloc);
    const storage mem = growable_buffer_storage(g);
    array b;
    REQUIRE_OK(array_create(b, array_target_contiguous(mem, false), alloc, p,
                            array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(data), sizeof data))));
    owned_array<uint8_t> b1, b2;
    for (int64_t n = 0; n < setup.layout.nchunks; ++n) {
      auto c1 = frame_chunk_read(array_frame(a), n, b1);
      auto c2 = frame_chunk_read(array_frame(b), n, b2);
      REQUIRE_OK(c1);
      REQUIRE_OK(c2);
      CHECK(c1->size() == c2->size() && std::memcmp(c1->data(), c2->data(), c1->size()) == 0);
    }
    CHECK_ERR(array_slice_write(a, nullptr, nullptr, bytes_view{}), errc::read_only);  // read-only
    REQUIRE_OK(array_close(a));
    REQUIRE_OK(array_close(b));
    flash_frame_close(ff);
    flash_sim_release(sim);
  }
  CHECK(!counting.leaked());
}

// array_chunk_packer_estimate is an arena that never refuses the packer, with the reference's BloscLZ table and
// with a firmware's smaller one (60 KiB less); the smaller table's chunks decode to the same items.
TESSERA_TEST(array_ports, packer_estimate_is_an_arena_that_never_refuses) {
  array_params p;
  p.ndim = 2;
  p.shape[0] = 50;
  p.shape[1] = 30;
  p.chunkshape[0] = 16;
  p.chunkshape[1] = 30;
  p.blockshape[0] = 4;
  p.blockshape[1] = 16;
  p.dtype = str("<i2");
  p.compressor = codec::blosclz;
  p.clevel = 5;
  static array_frame_setup setup;  // not on the bare-metal stack
  REQUIRE_OK(array_frame_setup_make(setup, p));
  static int16_t data[50 * 30];
  for (int i = 0; i < 50 * 30; ++i) data[i] = static_cast<int16_t>(i * 7 - 300);
  static uint8_t heap_bytes[160 * 1024];
  size_t full = 0;
  for (uint8_t log : {uint8_t{0}, uint8_t{10}}) {
    setup.blosclz_hash_log = log;
    const size_t need = array_chunk_packer_estimate(setup);
    if (log == 0) full = need;
    else CHECK_EQ(full - need, (size_t{1} << 14) * 4 - (size_t{1} << 10) * 4);
    REQUIRE(need <= sizeof heap_bytes);
    arena heap;
    arena_init(heap, heap_bytes, need);
    {
      array_chunk_packer packer;
      REQUIRE_OK(array_chunk_packer_init(packer, setup, arena_allocator(heap)));
      chunk_decoder d;
      REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
      for (int64_t n = 0; n < setup.layout.nchunks; ++n) {
        const int64_t r0 = n * 16;
        const int64_t rows = r0 + 16 <= 50 ? 16 : 50 - r0;
        auto chunk = array_chunk_pack(packer, n, bytes_view(reinterpret_cast<const uint8_t*>(data + r0 * 30),
                                                            static_cast<size_t>(rows * 30 * 2)));
        REQUIRE_OK(chunk);
        // Decoded (the chunk's padded, block-ordered items): the same with either table.
        static uint8_t decoded[2][4][16 * 32 * 2];
        REQUIRE(n < 4);
        auto m = chunk_decode(d, *chunk, bytes_mut(decoded[log != 0][n], sizeof decoded[0][0]));
        REQUIRE_OK(m);
        CHECK_EQ(*m, static_cast<size_t>(setup.layout.extchunk_nitems * 2));
        if (log != 0) CHECK(std::memcmp(decoded[0][n], decoded[1][n], *m) == 0);
      }
    }
    CHECK_LE(heap.high_water, need);
  }
  setup.blosclz_hash_log = 0;
}

TESSERA_TEST(array_ports, fixed_buffer_and_metalayers) {
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  {
    static uint8_t storage_bytes[16 * 1024];
    fixed_buffer fb;
    fixed_buffer_init(fb, storage_bytes, sizeof storage_bytes);
    const storage st = fixed_buffer_storage(fb);
    static const uint8_t units[] = {0x92, 0x01, 0x02};
    frame_metalayer_init extra[1];
    extra[0].name = str("units");
    extra[0].content = bytes_view(units, sizeof units);
    array_params p;
    p.ndim = 3;
    p.shape[0] = 6;
    p.shape[1] = 7;
    p.shape[2] = 5;
    p.chunkshape[0] = 4;
    p.chunkshape[1] = 3;
    p.chunkshape[2] = 5;
    p.blockshape[0] = 3;
    p.blockshape[1] = 2;
    p.blockshape[2] = 2;
    p.dtype = str("<f8");
    p.metalayers = extra;
    p.nmetalayers = 1;
    array a;
    const double v = 2.5;
    REQUIRE_OK(array_create(a, array_target_contiguous(st), alloc, p,
                            array_fill_full(bytes_view(reinterpret_cast<const uint8_t*>(&v), 8))));
    auto m = array_meta_find(a, str("units"));
    REQUIRE_OK(m);
    CHECK(m->size() == 3 && std::memcmp(m->data(), units, 3) == 0);
    CHECK(array_meta_find(a, str("b2nd")).ok());
    const uint8_t other[] = {0x92, 0x03, 0x04};
    REQUIRE_OK(array_meta_update(a, str("units"), bytes_view(other, 3)));
    CHECK_ERR(array_meta_update(a, str("b2nd"), bytes_view(other, 3)), errc::invalid_argument);
    const char note[] = "\xa5hello";
    REQUIRE_OK(array_vlmeta_write(a, str("note"), bytes_view(reinterpret_cast<const uint8_t*>(note), 6)));
    // Change an element, then reopen from the fixed buffer: everything persisted.
    const int64_t at[3] = {5, 6, 4};
    const double w = -1.0;
    REQUIRE_OK(array_element_write(a, at, bytes_view(reinterpret_cast<const uint8_t*>(&w), 8)));
    REQUIRE_OK(array_close(a));
    REQUIRE_OK(array_open(a, st, alloc));
    auto m2 = array_meta_find(a, str("units"));
    REQUIRE_OK(m2);
    CHECK(m2->size() == 3 && std::memcmp(m2->data(), other, 3) == 0);
    auto n = array_vlmeta_nbytes(a, str("note"));
    REQUIRE_OK(n);
    CHECK_EQ(*n, 6u);
    uint8_t vl[6];
    REQUIRE_OK(array_vlmeta_read(a, str("note"), bytes_mut(vl, 6)));
    CHECK(std::memcmp(vl, note, 6) == 0);
    double all[6 * 7 * 5];
    REQUIRE_OK(array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(all), sizeof all)));
    for (int i = 0; i < 6 * 7 * 5 - 1; ++i) CHECK(all[i] == 2.5);
    CHECK(all[6 * 7 * 5 - 1] == -1.0);
    CHECK_ERR(array_vlmeta_write(a, str("x"), bytes_view(vl, 1)), errc::read_only);  // read-only
    // Listings: "b2nd" and "units" in header order; one vlmetalayer; exists is a boolean, not a failed get.
    CHECK_EQ(array_meta_count(a), 2u);
    auto n0 = array_meta_name(a, 0);
    auto n1 = array_meta_name(a, 1);
    REQUIRE_OK(n0);
    REQUIRE_OK(n1);
    CHECK(n0->size() == 4 && std::memcmp(n0->data(), "b2nd", 4) == 0);
    CHECK(n1->size() == 5 && std::memcmp(n1->data(), "units", 5) == 0);
    CHECK_ERR(array_meta_name(a, 2), errc::out_of_range);
    CHECK(array_meta_exists(a, str("units")));
    CHECK(!array_meta_exists(a, str("unit")));
    CHECK_EQ(array_vlmeta_count(a), 1u);
    auto v0 = array_vlmeta_name(a, 0);
    REQUIRE_OK(v0);
    CHECK(v0->size() == 4 && std::memcmp(v0->data(), "note", 4) == 0);
    CHECK_ERR(array_vlmeta_name(a, 1), errc::out_of_range);
    CHECK(array_vlmeta_exists(a, str("note")));
    CHECK(!array_vlmeta_exists(a, str("units")));
    REQUIRE_OK(array_close(a));
    CHECK_EQ(array_meta_count(a), 0u);  // a closed array has none
    CHECK(!array_vlmeta_exists(a, str("note")));
    array_open_options w_opts;
    w_opts.frame.writable = true;
    REQUIRE_OK(array_open(a, st, alloc, w_opts));
    REQUIRE_OK(array_vlmeta_delete(a, str("note")));
    CHECK(!array_vlmeta_nbytes(a, str("note")).ok());
    CHECK_EQ(array_vlmeta_count(a), 0u);
    REQUIRE_OK(array_close(a));
  }
  CHECK(!counting.leaked());
}

TESSERA_TEST(array_ports, bad_parameters_are_errors) {
  test::counting_allocator counting;
  const allocator alloc = counting.get();
  growable_buffer g;
  growable_buffer_init(g, alloc);
  const storage st = growable_buffer_storage(g);
  array a;
  array_params p;
  p.ndim = 2;
  p.shape[0] = 4;
  p.shape[1] = 4;
  p.dtype = str("<i4");
  p.chunkshape[0] = 2;
  p.chunkshape[1] = 2;
  p.blockshape[0] = 3;  // larger than its chunk
  p.blockshape[1] = 1;
  CHECK_ERR(array_create(a, array_target_contiguous(st), alloc, p, array_fill_zeros()), errc::invalid_argument);
  p.blockshape[0] = 1;
  p.itemsize = 8;  // disagrees with <i4
  CHECK_ERR(array_create(a, array_target_contiguous(st), alloc, p, array_fill_zeros()), errc::invalid_argument);
  p.itemsize = 0;
  p.dtype = str("<i2");
  CHECK_ERR(array_create(a, array_target_contiguous(st), alloc, p, array_fill_nans()), errc::invalid_argument);
  uint8_t small[4] = {};
  CHECK_ERR(array_create(a, array_target_contiguous(st), alloc, p, array_fill_buffer(bytes_view(small, 4))),
            errc::buffer_too_small);
  p.dtype = str("|V536866817");  // one byte past the reference's largest type
  CHECK_ERR(array_create(a, array_target_contiguous(st), alloc, p, array_fill_zeros()), errc::unsupported);
  p.dtype = str("<i2");
  p.ndim = kMaxDims + 1;
  CHECK_ERR(array_create(a, array_target_contiguous(st), alloc, p, array_fill_zeros()), errc::invalid_argument);
  p.ndim = 2;
  REQUIRE_OK(array_create(a, array_target_contiguous(st), alloc, p, array_fill_zeros()));
  const int64_t s0[2] = {0, 0};
  const int64_t s1[2] = {5, 1};
  uint8_t out[64];
  CHECK_ERR(array_slice_read(a, s0, s1, bytes_mut(out, sizeof out)), errc::out_of_range);
  const int64_t s2[2] = {4, 4};
  CHECK_ERR(array_slice_read(a, s0, s2, bytes_mut(out, 8)), errc::buffer_too_small);
  const int64_t bad[2] = {4, 0};
  CHECK_ERR(array_element_read(a, bad, bytes_mut(out, 2)), errc::out_of_range);
  const int64_t idx0[1] = {4};
  const int64_t idx1[1] = {0};
  const int64_t* sel[2] = {idx0, idx1};
  const int64_t counts[2] = {1, 1};
  CHECK_ERR(array_orthogonal_read(a, sel, counts, bytes_mut(out, 2)), errc::out_of_range);
  CHECK_ERR(array_insert(a, 2, 0, 1, bytes_view(out, 8)), errc::invalid_argument);
  CHECK_ERR(array_delete(a, 0, 3, 2), errc::out_of_range);
  REQUIRE_OK(array_close(a));
  // Not an array: a frame without a b2nd metalayer.
  growable_buffer g2;
  growable_buffer_init(g2, alloc);
  const storage st2 = growable_buffer_storage(g2);
  frame f;
  frame_create_params fp;
  REQUIRE_OK(frame_create(f, st2, alloc, fp));
  REQUIRE_OK(frame_close(f));
  CHECK_ERR(array_open(a, st2, alloc), errc::malformed);
}

// The automatic partition, worked by hand from python-blosc2's compute_chunks_blocks with no cache info
// (block 32 KiB, chunk at least 4 MiB).
TESSERA_TEST(array_ports, automatic_partition) {
  // nearest_divisor, Cython flavour: ties go to the first found (i, then a / i, for i = 1, 2, ...).
  CHECK_EQ(array_partition_nearest_divisor(12, 5, false), 6);
  CHECK_EQ(array_partition_nearest_divisor(12, 5, true), 4);
  CHECK_EQ(array_partition_nearest_divisor(100, 30, false), 25);
  CHECK_EQ(array_partition_nearest_divisor(97, 50, false), 97);  // a prime: 1 and 97, 97 is nearer
  CHECK_EQ(array_partition_nearest_divisor(1000000, 4096, false), 4000);  // large: downwards only
  {
    // 1-d float64, 10^6 items: blocks of 32 KiB = 4096 items (not a divisor of 10^6: snapped to 4000);
    // chunks of 4 MiB = 524288 items, snapped to a divisor within a factor 2 (500000), a multiple of 4000.
    const int64_t shape[1] = {1000000};
    int32_t chunks[1] = {};
    int32_t blocks[1] = {};
    REQUIRE_OK(array_partition_compute(1, shape, 8, chunks, false, blocks, false));
    CHECK_EQ(blocks[0], 4000);
    CHECK_EQ(chunks[0], 500000);
  }
  {
    // 2-d float32 1000 x 1000: block budget 8192 items; the last dim (1000) fits whole, then 8 rows.
    // Chunk budget 1 MiB items over (1000, 1000) with blocks (8, 1000) as minimum: the last dim whole, then
    // 1048 rows... capped at the shape: budget 1048 > 1000 fits whole.
    const int64_t shape[2] = {1000, 1000};
    int32_t chunks[2] = {};
    int32_t blocks[2] = {};
    REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, false, blocks, false));
    CHECK_EQ(blocks[0], 8);
    CHECK_EQ(blocks[1], 1000);
    CHECK_EQ(chunks[0], 1000);
    CHECK_EQ(chunks[1], 1000);
  }
  {
    // Given chunks: blocks come from the chunk shape (budget 32768 uint8 items over (100, 50, 40)).
    const int64_t shape[3] = {1000, 500, 400};
    int32_t chunks[3] = {100, 50, 40};
    int32_t blocks[3] = {};
    REQUIRE_OK(array_partition_compute(3, shape, 1, chunks, true, blocks, false));
    CHECK_EQ(blocks[2], 40);
    CHECK_EQ(blocks[1], 50);
    CHECK_EQ(blocks[0], 10);  // 32768 / 2000 = 16 rows, not a divisor of 100: down to 10 (within a factor 2)
    CHECK_EQ(chunks[0], 100);
  }
  {
    // A zero extent with nothing given: the shape itself (python-blosc2).
    const int64_t shape[2] = {0, 10};
    int32_t chunks[2] = {};
    int32_t blocks[2] = {};
    REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, false, blocks, false));
    CHECK_EQ(chunks[0], 0);
    CHECK_EQ(chunks[1], 10);
    CHECK_EQ(blocks[1], 10);
  }
  // Random shapes: the result is always a valid geometry with blocks inside chunks inside the format's limits.
  test::rng r(5);
  for (int k = 0; k < 300; ++k) {
    const int ndim = static_cast<int>(r.range(1, kMaxDims));
    int64_t shape[kMaxDims] = {};
    // Extents whose product fits int64 at every ndim (60^8, 12^16): more items are an overflow, not a geometry.
    for (int i = 0; i < ndim; ++i) shape[i] = r.range(1, ndim <= 2 ? 100000 : ndim <= 8 ? 60 : 12);
    int32_t chunks[kMaxDims] = {};
    int32_t blocks[kMaxDims] = {};
    const int64_t itemsize = r.range(1, 16);
    REQUIRE_OK(array_partition_compute(ndim, shape, itemsize, chunks, false, blocks, false));
    array_layout l;
    CHECK_OK(layout_init(l, ndim, shape, chunks, blocks));
    int64_t bn = itemsize;
    for (int i = 0; i < ndim; ++i) {
      CHECK(blocks[i] >= 1 && blocks[i] <= chunks[i]);
      CHECK(chunks[i] <= shape[i]);
      bn *= blocks[i];
    }
    CHECK_LE(bn, 32 * 1024);
  }
}

// The automatic partition's refusals, each with its code, and the hints of the rule (tessera/array_partition.hpp):
// a larger minimum block, a known L3 (a quarter of it per chunk) or L2 (a quarter of it at least), blocks given
// without chunks (kept, and cut to a shape smaller than them).
TESSERA_TEST(array_ports, automatic_partition_refusals_and_hints) {
  int32_t chunks[2] = {};
  int32_t blocks[2] = {};
  const int64_t shape[2] = {100, 200};
  CHECK_ERR(array_partition_compute(-1, shape, 4, chunks, false, blocks, false), errc::invalid_argument);
  CHECK_ERR(array_partition_compute(kMaxDims + 1, shape, 4, chunks, false, blocks, false), errc::invalid_argument);
  CHECK_ERR(array_partition_compute(2, shape, 0, chunks, false, blocks, false), errc::invalid_argument);
  const int64_t negative[2] = {10, -1};
  CHECK_ERR(array_partition_compute(2, negative, 4, chunks, false, blocks, false), errc::invalid_argument);
  chunks[0] = 10;
  chunks[1] = 0;
  CHECK_ERR(array_partition_compute(2, shape, 4, chunks, true, blocks, false), errc::invalid_argument);
  blocks[0] = -1;
  blocks[1] = 5;
  CHECK_ERR(array_partition_compute(2, shape, 4, chunks, false, blocks, true), errc::invalid_argument);
  chunks[1] = 10;
  blocks[0] = 11;
  CHECK_ERR(array_partition_compute(2, shape, 4, chunks, true, blocks, true), errc::invalid_argument);
  blocks[0] = 10;
  REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, true, blocks, true));  // both given: kept
  CHECK(chunks[0] == 10 && chunks[1] == 10 && blocks[0] == 10 && blocks[1] == 5);
  const int64_t huge_zero[2] = {0, int64_t{3} << 30};
  CHECK_ERR(array_partition_compute(2, huge_zero, 1, chunks, false, blocks, false), errc::overflow);
  blocks[0] = 1 << 16;
  blocks[1] = 1 << 16;  // 32 GiB of int64 per block
  const int64_t big[2] = {int64_t{1} << 20, int64_t{1} << 20};
  CHECK_ERR(array_partition_compute(2, big, 8, chunks, false, blocks, true), errc::overflow);
  array_partition_hints too_big;
  too_big.block_bytes = int64_t{kChunkMaxBlocksize} + 1;
  CHECK_ERR(array_partition_compute(2, shape, 4, chunks, false, blocks, false, too_big), errc::overflow);

  // Blocks given, chunks chosen: the blocks stay, each chunk extent a multiple of its block's (or the shape).
  blocks[0] = 8;
  blocks[1] = 16;
  REQUIRE_OK(array_partition_compute(2, shape, 4, chunks, false, blocks, true));
  CHECK(blocks[0] == 8 && blocks[1] == 16);
  CHECK(chunks[0] == 100 && chunks[1] == 200);  // 4 MiB at least: the whole array
  const int64_t small[1] = {5};
  int32_t c1[1] = {};
  int32_t b1[1] = {8};
  REQUIRE_OK(array_partition_compute(1, small, 4, c1, false, b1, true));
  CHECK(c1[0] == 5 && b1[0] == 5);

  // The hints, over 2^30 bytes (their divisors are the powers of 2: nothing to snap).
  const int64_t line[1] = {int64_t{1} << 30};
  array_partition_hints h;
  h.min_block_bytes = 64 * 1024;
  REQUIRE_OK(array_partition_compute(1, line, 1, c1, false, b1, false, h));
  CHECK_EQ(b1[0], 64 * 1024);
  CHECK_EQ(c1[0], 4 * 1024 * 1024);  // 32 blocks are 2 MiB: the 4 MiB minimum
  h = array_partition_hints{};
  h.l2_bytes = 1 << 20;
  h.l3_bytes = 32 << 20;
  REQUIRE_OK(array_partition_compute(1, line, 1, c1, false, b1, false, h));
  CHECK_EQ(b1[0], 32 * 1024);
  CHECK_EQ(c1[0], 8 << 20);  // a quarter of L3
  h.l3_bytes = 0;
  h.l2_bytes = 64 << 20;
  REQUIRE_OK(array_partition_compute(1, line, 1, c1, false, b1, false, h));
  CHECK_EQ(c1[0], 16 << 20);  // a quarter of L2 as the floor
}
