// SPDX-License-Identifier: BSD-3-Clause
// The frame's index read lazily: opening costs the same memory whatever the number of chunks, every entry reads
// back through the block cache (in place and through reads), and a writable frame builds its table on the first
// change and keeps every chunk.
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr size_t kNbytes = 256;
constexpr int32_t kBlock = 64;

bool is_special(int64_t i) { return i % 5 == 3; }

struct index_bufs {
  uint8_t src[kNbytes];
  uint8_t chunk[2 * kNbytes + 64];
  uint8_t work[3 * kBlock];
  uint8_t out[kNbytes];
  uint8_t expect[kNbytes];
};
index_bufs g;

// A frame of n chunks (every fifth a special zeros entry) in `buffer`; with a stored (uncompressed) index when
// `stored_index`, as writers that lay out frames themselves may write it.
bool frame_build(growable_buffer& buffer, int64_t n, const allocator& alloc) {
  growable_buffer_init(buffer, alloc);
  frame f;
  frame_create_params p;
  p.typesize = 4;
  if (!frame_create(f, growable_buffer_storage(buffer), alloc, p).ok()) return false;
  for (int64_t i = 0; i < n; ++i) {
    size_t size = 32;
    if (is_special(i)) special_make(1, kNbytes, g.chunk);
    else size = chunk_make(static_cast<uint64_t>(i) + 1, kNbytes, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
    if (size == 0 || !frame_chunk_append(f, bytes_view(g.chunk, size)).ok()) return false;
  }
  return frame_commit(f).ok() && frame_close(f).ok();
}

// Every chunk of an open frame reads back (sequentially, then in a scattered order).
void check_every_chunk(test::context& t, frame& f, int64_t n) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = pass == 0 ? k : (k * 7919) % n;  // 7919 is prime: a permutation
      auto ref = frame_chunk_locate(f, i);
      REQUIRE_OK(ref);
      CHECK_EQ(ref->nbytes, static_cast<int32_t>(kNbytes));
      if (is_special(i)) {
        CHECK(ref->special == chunk_special::zeros);
        std::memset(g.expect, 0, kNbytes);
      } else {
        CHECK(ref->special == chunk_special::none);
        CHECK_EQ(ref->blocksize, kBlock);
        content_fill(static_cast<uint64_t>(i) + 1, g.expect, kNbytes);
      }
      auto r = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
      REQUIRE_OK(r);
      CHECK_EQ(*r, kNbytes);
      CHECK(std::memcmp(g.out, g.expect, kNbytes) == 0);
    }
  }
  CHECK_ERR(frame_chunk_locate(f, n), errc::out_of_range);
}

}  // namespace

TESSERA_TEST(frame_index, opening_costs_the_same_memory_for_any_number_of_chunks) {
  size_t peak_open[2] = {};
  const int64_t counts[2] = {600, 9000};  // one index block, and five (2048 entries each)
  for (int k = 0; k < 2; ++k) {
    growable_buffer buffer;
    REQUIRE(frame_build(buffer, counts[k], test::system_allocator()));
    const_buffer in{buffer.bytes().data(), buffer.bytes().size()};
    test::counting_allocator ca;
    {
      frame f;
      REQUIRE_OK(frame_open(f, const_buffer_storage(in), ca.get()));
      peak_open[k] = ca.high_water_bytes;
      CHECK_EQ(frame_info_get(f)->nchunks, counts[k]);
      check_every_chunk(t, f, counts[k]);
      // One decoded index block and its decoder, whatever the count.
      CHECK_LT(ca.high_water_bytes, size_t{256} * 1024);
    }
    CHECK(!ca.leaked());
  }
  CHECK_EQ(peak_open[0], peak_open[1]);
}

TESSERA_TEST(frame_index, entries_read_through_a_storage_without_a_view) {
  growable_buffer buffer;
  const int64_t n = 5000;
  REQUIRE(frame_build(buffer, n, test::system_allocator()));
  const_buffer in{buffer.bytes().data(), buffer.bytes().size()};
  wrapped_storage w;
  w.inner = const_buffer_storage(in);
  test::counting_allocator ca;
  {
    frame f;
    REQUIRE_OK(frame_open(f, w.get(), ca.get()));
    check_every_chunk(t, f, n);
  }
  CHECK(!ca.leaked());
}

TESSERA_TEST(frame_index, a_writable_frame_keeps_every_chunk_through_changes) {
  growable_buffer buffer;
  const int64_t n = 4500;
  REQUIRE(frame_build(buffer, n, test::system_allocator()));
  test::counting_allocator ca;
  {
    frame f;
    frame_open_options o;
    o.writable = true;
    REQUIRE_OK(frame_open(f, growable_buffer_storage(buffer), ca.get(), o));
    // Reads before the change go through the lazy index; the change builds the table.
    check_every_chunk(t, f, n);
    const size_t size = chunk_make(static_cast<uint64_t>(n) + 1, kNbytes, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
    REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, size)));
    CHECK_LE(size_t{24} * static_cast<size_t>(n), ca.high_water_bytes);
    REQUIRE_OK(frame_commit(f));
    check_every_chunk(t, f, n + 1);
  }
  CHECK(!ca.leaked());
  const_buffer in{buffer.bytes().data(), buffer.bytes().size()};
  frame r;
  REQUIRE_OK(frame_open(r, const_buffer_storage(in), test::system_allocator()));
  check_every_chunk(t, r, n + 1);
}

TESSERA_TEST(frame_index, a_budget_below_the_table_refuses_the_change_cleanly) {
  growable_buffer buffer;
  const int64_t n = 3000;
  REQUIRE(frame_build(buffer, n, test::system_allocator()));
  frame f;
  frame_open_options o;
  o.writable = true;
  o.max_alloc = 32 * 1024;  // enough to read (one 16 KiB index block), not for a table of 3000 entries
  REQUIRE_OK(frame_open(f, growable_buffer_storage(buffer), test::system_allocator(), o));
  CHECK_OK(frame_chunk_locate(f, n - 1));
  CHECK_ERR(frame_chunk_delete(f, 0), errc::resource_limit);
  // Nothing changed: every chunk still reads.
  check_every_chunk(t, f, n);
}

TESSERA_TEST(frame_index, a_stored_index_reads_entry_by_entry) {
  // A frame laid out by hand with the index in its stored form (frame_index_encode without an encoder).
  const int64_t n = 2500;
  growable_buffer built;
  REQUIRE(frame_build(built, n, test::system_allocator()));
  frame src;
  REQUIRE_OK(frame_open(src, growable_buffer_storage(built), test::system_allocator()));
  const frame_info info = *frame_info_get(src);
  owned_array<uint8_t> entries;
  REQUIRE_OK(entries.allocate(test::system_allocator(), static_cast<size_t>(n) * 8));
  for (int64_t i = 0; i < n; ++i) {
    auto ref = frame_chunk_locate(src, i);
    REQUIRE_OK(ref);
    const int64_t v = ref->special != chunk_special::none ? frame_index_special(ref->special) : ref->offset;
    for (int b = 0; b < 8; ++b) entries[static_cast<size_t>(8 * i + b)] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b));
  }
  auto bound = frame_index_bound(n);
  REQUIRE_OK(bound);
  owned_array<uint8_t> index;
  REQUIRE_OK(index.allocate(test::system_allocator(), *bound));
  auto isize = frame_index_encode(nullptr, bytes_view(entries.data(), entries.size()), bytes_mut(index.data(), index.size()));
  REQUIRE_OK(isize);
  // header + chunks section (copied from the built frame) + stored index + trailer.
  frame_create_params p = frame_create_params_from(info);
  auto hl = frame_header_size(p);
  REQUIRE_OK(hl);
  REQUIRE_EQ(*hl, info.header_len);
  auto tl = frame_trailer_size(span<const frame_vlmetalayer>());
  REQUIRE_OK(tl);
  const size_t total = *hl + static_cast<size_t>(info.cbytes) + *isize + *tl;
  owned_array<uint8_t> out;
  REQUIRE_OK(out.allocate(test::system_allocator(), total));
  frame_header_fields hf;
  hf.frame_len = total;
  hf.nbytes = info.nbytes;
  hf.cbytes = info.cbytes;
  hf.chunksize = info.chunksize;
  REQUIRE_OK(frame_header_encode(p, hf, bytes_mut(out.data(), *hl)));
  std::memcpy(out.data() + *hl, built.bytes().data() + *hl, static_cast<size_t>(info.cbytes));
  std::memcpy(out.data() + *hl + info.cbytes, index.data(), *isize);
  REQUIRE_OK(frame_trailer_encode(span<const frame_vlmetalayer>(), bytes_mut(out.data() + total - *tl, *tl)));
  const_buffer in{out.data(), total};
  for (int view = 0; view < 2; ++view) {
    wrapped_storage w;
    w.inner = const_buffer_storage(in);
    w.hide_view = view == 0;
    test::counting_allocator ca;
    {
      frame f;
      REQUIRE_OK(frame_open(f, w.get(), ca.get()));
      check_every_chunk(t, f, n);
      CHECK_LT(ca.high_water_bytes, size_t{256} * 1024);
    }
    CHECK(!ca.leaked());
  }
}

TESSERA_TEST(frame_index, an_index_in_large_blocks_costs_one_block) {
  // 131072 special entries in an index chunk of 512 KiB blocks (the reference's tuner for typesize 8 at clevel 5,
  // which older versions used for the index), laid out by hand: header, no chunk bytes, index, trailer.
  const int64_t n = 131072;
  owned_array<uint8_t> entries;
  REQUIRE_OK(entries.allocate(test::system_allocator(), static_cast<size_t>(n) * 8));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = frame_index_special(i % 3 == 0 ? chunk_special::nan : chunk_special::zeros);
    for (int b = 0; b < 8; ++b) entries[static_cast<size_t>(8 * i + b)] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b));
  }
  chunk_encoder enc;
  chunk_encoder_options eo;
  eo.max_blocksize = 512 * 1024;
  REQUIRE_OK(chunk_encoder_init(enc, test::system_allocator(), eo));
  chunk_encode_params ep;
  ep.typesize = 8;
  ep.blocksize = 512 * 1024;
  owned_array<uint8_t> index;
  REQUIRE_OK(index.allocate(test::system_allocator(), chunk_encode_bound(entries.size())));
  auto isize = chunk_encode(enc, ep, bytes_view(entries.data(), entries.size()), bytes_mut(index.data(), index.size()));
  REQUIRE_OK(isize);
  frame_create_params p;
  p.typesize = 4;
  p.chunksize = 4096;
  auto hl = frame_header_size(p);
  REQUIRE_OK(hl);
  auto tl = frame_trailer_size(span<const frame_vlmetalayer>());
  REQUIRE_OK(tl);
  const size_t total = *hl + *isize + *tl;
  owned_array<uint8_t> out;
  REQUIRE_OK(out.allocate(test::system_allocator(), total));
  frame_header_fields hf;
  hf.frame_len = total;
  hf.nbytes = n * 4096;
  hf.cbytes = 0;
  hf.chunksize = 4096;
  REQUIRE_OK(frame_header_encode(p, hf, bytes_mut(out.data(), *hl)));
  std::memcpy(out.data() + *hl, index.data(), *isize);
  REQUIRE_OK(frame_trailer_encode(span<const frame_vlmetalayer>(), bytes_mut(out.data() + total - *tl, *tl)));
  const_buffer in{out.data(), total};
  test::counting_allocator ca;
  {
    frame f;
    REQUIRE_OK(frame_open(f, const_buffer_storage(in), ca.get()));
    for (int64_t i = 0; i < n; i += 997) {
      auto ref = frame_chunk_locate(f, i);
      REQUIRE_OK(ref);
      CHECK(ref->special == (i % 3 == 0 ? chunk_special::nan : chunk_special::zeros));
    }
    std::fprintf(stderr, "index of %zu-byte chunk in 512 KiB blocks: peak %zu bytes\n", *isize, ca.high_water_bytes);
    CHECK_LT(ca.high_water_bytes, size_t{4} * 1024 * 1024);
  }
  CHECK(!ca.leaked());
}

namespace {

// Runs of special entries: chunk i is zeros (kind 1) in [10, 2600) and [4000, 4100), NaN (kind 2) in [2600,
// 2700), stored elsewhere, with one stored chunk at 1000 breaking the first run. The runs cross index blocks
// (2048 entries each).
uint8_t run_kind(int64_t i) {
  if (i == 1000) return 0;
  if ((i >= 10 && i < 2600) || (i >= 4000 && i < 4100)) return 1;
  if (i >= 2600 && i < 2700) return 2;
  return 0;
}

bool runs_build(growable_buffer& buffer, int64_t n, const allocator& alloc) {
  growable_buffer_init(buffer, alloc);
  frame f;
  frame_create_params p;
  p.typesize = 4;
  if (!frame_create(f, growable_buffer_storage(buffer), alloc, p).ok()) return false;
  for (int64_t i = 0; i < n; ++i) {
    size_t size = 32;
    if (run_kind(i) != 0) special_make(run_kind(i), kNbytes, g.chunk);
    else size = chunk_make(static_cast<uint64_t>(i) + 1, kNbytes, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
    if (size == 0 || !frame_chunk_append(f, bytes_view(g.chunk, size)).ok()) return false;
  }
  return frame_commit(f).ok() && frame_close(f).ok();
}

// frame_chunk_special_run at every chunk against the runs worked out backwards from run_kind.
void check_runs(test::context& t, frame& f, int64_t n) {
  int64_t expect = 0;
  for (int64_t i = n - 1; i >= 0; --i) {
    const uint8_t k = run_kind(i);
    expect = k == 0 ? 0 : (i + 1 < n && run_kind(i + 1) == k ? expect + 1 : 1);
    auto run = frame_chunk_special_run(f, i);
    REQUIRE_OK(run);
    if (*run != expect) {
      char text[96];
      std::snprintf(text, sizeof text, "chunk %lld: run %lld, expected %lld", static_cast<long long>(i),
                    static_cast<long long>(*run), static_cast<long long>(expect));
      test::report_failure(t, __FILE__, __LINE__, text);
      return;
    }
  }
  CHECK_ERR(frame_chunk_special_run(f, n), errc::out_of_range);
  CHECK_ERR(frame_chunk_special_run(f, -1), errc::out_of_range);
}

}  // namespace

TESSERA_TEST(frame_index, special_runs_are_counted_in_the_lazy_index_and_in_the_table) {
  const int64_t n = 4200;
  growable_buffer buffer;
  REQUIRE(runs_build(buffer, n, test::system_allocator()));
  const_buffer in{buffer.bytes().data(), buffer.bytes().size()};
  {  // Read only, in place: the lazy index, a block at a time.
    frame f;
    REQUIRE_OK(frame_open(f, const_buffer_storage(in), test::system_allocator()));
    check_runs(t, f, n);
  }
  {  // Through a storage without a view.
    wrapped_storage w;
    w.inner = const_buffer_storage(in);
    frame f;
    REQUIRE_OK(frame_open(f, w.get(), test::system_allocator()));
    check_runs(t, f, n);
  }
  {  // Writable, after a change: the table.
    frame f;
    frame_open_options o;
    o.writable = true;
    REQUIRE_OK(frame_open(f, growable_buffer_storage(buffer), test::system_allocator(), o));
    special_make(1, kNbytes, g.chunk);
    REQUIRE_OK(frame_chunk_update(f, 1000, bytes_view(g.chunk, 32)));  // joins [10, 1000) and [1001, 2600)
    int64_t expect_first = 2600 - 10;
    auto run = frame_chunk_special_run(f, 10);
    REQUIRE_OK(run);
    CHECK_EQ(*run, expect_first);
    {
      auto r = frame_chunk_special_run(f, 2599);
      REQUIRE_OK(r);
      CHECK_EQ(*r, int64_t{1});
    }  // NaN follows
    {
      auto r = frame_chunk_special_run(f, 5);
      REQUIRE_OK(r);
      CHECK_EQ(*r, int64_t{0});
    }
  }
}

namespace {

// Three chunks of seeds 50, 51, 52; the index chunk's position (the frame's header length plus its chunks
// section) in *index_pos, chunk 1's offset in *offset1.
void three_chunks(tessera::test::context& t, growable_buffer& buf, uint64_t* index_pos, int64_t* offset1) {
  growable_buffer_init(buf, tessera::test::system_allocator());
  frame f;
  frame_create_params p;
  p.typesize = 4;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), tessera::test::system_allocator(), p));
  for (uint64_t i = 0; i < 3; ++i) {
    const size_t n = chunk_make(50 + i, kNbytes, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
    REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, n)));
  }
  REQUIRE_OK(frame_commit(f));
  const frame_info* info = frame_info_get(f);
  *index_pos = info->header_len + static_cast<uint64_t>(info->cbytes);
  auto ref = frame_chunk_locate(f, 1);
  REQUIRE_OK(ref);
  *offset1 = ref->offset;
  REQUIRE_OK(frame_close(f));
}

// The index chunk replaced by a special-value chunk of 3 entries (value: `value`).
void index_special(tessera::test::context& t, const storage& st, uint64_t pos, chunk_special kind, int64_t value) {
  chunk_encode_params p;
  p.typesize = 8;
  uint8_t v[8];
  for (int i = 0; i < 8; ++i) v[i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i));
  uint8_t c[64];
  auto n = chunk_encode_special(p, kind, 24, kind == chunk_special::value ? bytes_view(v, 8) : bytes_view(),
                                bytes_mut(c, sizeof c));
  REQUIRE_OK(n);
  REQUIRE_OK(storage_write(st, pos, bytes_view(c, *n)));
}

}  // namespace

TESSERA_TEST(frame_index, an_index_chunk_of_special_values) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  // One repeated offset (chunk 1's): every chunk is chunk 1.
  {
    growable_buffer buf;
    uint64_t pos = 0;
    int64_t offset1 = 0;
    three_chunks(t, buf, &pos, &offset1);
    const storage st = growable_buffer_storage(buf);
    index_special(t, st, pos, chunk_special::value, offset1);
    frame f;
    REQUIRE_OK(frame_open(f, st, tessera::test::system_allocator()));
    content_fill(51, g.expect, kNbytes);
    for (int64_t i = 0; i < 3; ++i) {
      auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
      REQUIRE_OK(n);
      CHECK(std::memcmp(g.out, g.expect, kNbytes) == 0);
    }
    REQUIRE_OK(frame_close(f));
    // Written to, chunks that share their bytes are never reused nor moved: a new version goes past them,
    // and compaction is refused.
    frame_open_options o;
    o.writable = true;
    REQUIRE_OK(frame_open(f, st, tessera::test::system_allocator(), o));
    const size_t n = chunk_make(60, kNbytes, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
    REQUIRE_OK(frame_chunk_update(f, 0, bytes_view(g.chunk, n)));
    REQUIRE_OK(frame_commit(f));
    CHECK_ERR(frame_compact(f), errc::unsupported);
    for (int64_t i = 0; i < 3; ++i) {
      auto m = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
      REQUIRE_OK(m);
      content_fill(i == 0 ? 60 : 51, g.expect, kNbytes);
      CHECK(std::memcmp(g.out, g.expect, kNbytes) == 0);
    }
  }
  // Zeros: every entry is offset 0 (here not where a chunk starts: durable frames begin their section with
  // what the first commit wrote). The index is accepted as it is; the entries are what the chunks' reads meet.
  {
    growable_buffer buf;
    uint64_t pos = 0;
    int64_t offset1 = 0;
    three_chunks(t, buf, &pos, &offset1);
    const storage st = growable_buffer_storage(buf);
    index_special(t, st, pos, chunk_special::zeros, 0);
    frame f;
    REQUIRE_OK(frame_open(f, st, tessera::test::system_allocator()));
    CHECK_EQ(frame_info_get(f)->nchunks, 3);
  }
  // NaNs or uninitialized entries are no offsets.
  for (chunk_special kind : {chunk_special::nan, chunk_special::uninit}) {
    growable_buffer buf;
    uint64_t pos = 0;
    int64_t offset1 = 0;
    three_chunks(t, buf, &pos, &offset1);
    const storage st = growable_buffer_storage(buf);
    index_special(t, st, pos, kind, 0);
    frame f;
    CHECK_ERR(frame_open(f, st, tessera::test::system_allocator()), errc::corrupt);
  }
}

TESSERA_TEST(frame_index, a_sparse_index_of_one_repeated_value) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 8));
  const storage_directory dir = memory_directory_interface(md);
  uint32_t header_len = 0;
  {
    frame f;
    frame_create_params p;
    p.typesize = 4;
    REQUIRE_OK(frame_create_sparse(f, dir, tessera::test::system_allocator(), p));
    for (uint64_t i = 0; i < 3; ++i) {
      const size_t n = chunk_make(50 + i, kNbytes, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
      REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, n)));
    }
    REQUIRE_OK(frame_commit(f));
    header_len = frame_info_get(f)->header_len;
    REQUIRE_OK(frame_close(f));
  }
  // Every entry names chunk file 2 (a sparse frame's index holds entry numbers, right after the header).
  storage st;
  REQUIRE_OK(storage_directory_open(dir, "chunks.b2frame", storage_open::read_write, &st));
  index_special(t, st, header_len, chunk_special::value, 2);
  REQUIRE_OK(storage_directory_close(dir, &st));
  frame f;
  REQUIRE_OK(frame_open_sparse(f, dir, tessera::test::system_allocator()));
  content_fill(52, g.expect, kNbytes);
  for (int64_t i = 0; i < 3; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    REQUIRE_OK(n);
    CHECK(std::memcmp(g.out, g.expect, kNbytes) == 0);
  }
}

namespace {

// The two kinds of index chunk of one repeated value, each in its frame: one repeated offset (chunk 1's: every
// chunk is chunk 1), one repeated special entry (every chunk zeros).
struct special_index_frame {
  growable_buffer buf;
  int64_t value = 0;
  uint64_t expect_seed = 0;  // every chunk's content (0: zeros)
};

void special_index_build(tessera::test::context& t, special_index_frame& s, int variant) {
  uint64_t pos = 0;
  int64_t offset1 = 0;
  three_chunks(t, s.buf, &pos, &offset1);
  if (variant == 0) {
    s.value = offset1;
    s.expect_seed = 51;
  } else {
    s.value = frame_index_special(chunk_special::zeros);
    s.expect_seed = 0;
  }
  index_special(t, growable_buffer_storage(s.buf), pos, chunk_special::value, s.value);
}

// Every chunk read, the special runs counted and the space figured: an error from any of them.
status special_index_reads(frame& f, chunk_decoder& d, uint64_t expect_seed) {
  if (expect_seed != 0) content_fill(expect_seed, g.expect, kNbytes);
  else std::memset(g.expect, 0, kNbytes);
  for (int64_t i = 0; i < 3; ++i) {
    auto n = frame_chunk_decode(f, d, i, bytes_mut(g.out, sizeof g.out));
    if (!n.ok()) return n.err();
    if (*n != kNbytes || std::memcmp(g.out, g.expect, kNbytes) != 0) return make_error(errc::corrupt, "test: wrong chunk");
    auto run = frame_chunk_special_run(f, i);
    if (!run.ok()) return run.err();
    if (*run != (expect_seed == 0 ? 3 - i : 0)) return make_error(errc::corrupt, "test: wrong special run");
  }
  auto sp = frame_space_get(f);
  if (!sp.ok()) return sp.err();
  if ((sp->chunk_bytes == 0) != (expect_seed == 0)) return make_error(errc::corrupt, "test: wrong chunk bytes");
  return ok_status();
}

}  // namespace

TESSERA_TEST(frame_index, index_chunks_of_special_values_read_without_a_view_with_each_storage_call_failing) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  for (int variant = 0; variant < 2; ++variant) {
    special_index_frame s;
    special_index_build(t, s, variant);
    if (t.failures > 0) return;
    bool completed = false;
    int failed_runs = 0;
    for (uint64_t n = 1; n < 200 && !completed; ++n) {
      test::counting_allocator ca;
      wrapped_storage w;
      w.inner = growable_buffer_storage(s.buf);
      w.plan->fail_at = n;
      status st;
      {
        frame f;
        st = frame_open(f, w.get(), ca.get());
        if (st.ok()) st = special_index_reads(f, d, s.expect_seed);
      }
      if (st.ok()) {
        completed = !w.plan->failed;
      } else {
        ++failed_runs;
        CHECK(w.plan->failed);
        CHECK_EQ(st.code, errc::io);
      }
      CHECK(!ca.leaked());
      if (t.failures > 0) return;
    }
    CHECK(completed);
    CHECK(failed_runs >= 4);  // size, header, index, trailer, chunks
  }
}

TESSERA_TEST(frame_index, a_sparse_index_of_one_repeated_value_with_each_directory_call_failing) {
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  for (int variant = 0; variant < 2; ++variant) {
    memory_directory md;
    REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 8));
    const storage_directory plain = memory_directory_interface(md);
    uint32_t header_len = 0;
    {
      frame f;
      frame_create_params p;
      p.typesize = 4;
      REQUIRE_OK(frame_create_sparse(f, plain, tessera::test::system_allocator(), p));
      for (uint64_t i = 0; i < 3; ++i) {
        const size_t n = chunk_make(50 + i, kNbytes, kBlock, g.src, g.chunk, sizeof g.chunk, g.work);
        REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, n)));
      }
      REQUIRE_OK(frame_commit(f));
      header_len = frame_info_get(f)->header_len;
      REQUIRE_OK(frame_close(f));
    }
    // Every entry names chunk file 2, or every chunk is zeros.
    const int64_t value = variant == 0 ? 2 : frame_index_special(chunk_special::zeros);
    const uint64_t expect_seed = variant == 0 ? 52 : 0;
    {
      storage st;
      REQUIRE_OK(storage_directory_open(plain, "chunks.b2frame", storage_open::read_write, &st));
      index_special(t, st, header_len, chunk_special::value, value);
      REQUIRE_OK(storage_directory_close(plain, &st));
    }
    bool completed = false;
    int failed_runs = 0;
    for (uint64_t n = 1; n < 200 && !completed; ++n) {
      test::counting_allocator ca;
      wrapped_directory w;
      w.inner = plain;
      w.plan.fail_at = n;
      status st;
      {
        frame f;
        st = frame_open_sparse(f, w.get(), ca.get());
        if (st.ok()) st = special_index_reads(f, d, expect_seed);
      }
      if (st.ok()) {
        completed = !w.plan.failed;
      } else {
        ++failed_runs;
        CHECK(w.plan.failed);
        CHECK_EQ(st.code, errc::io);
      }
      CHECK_EQ(w.open_count(), 0);
      CHECK(!ca.leaked());
      if (t.failures > 0) return;
    }
    CHECK(completed);
    CHECK(failed_runs >= 3);
  }
}
