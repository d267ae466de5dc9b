// SPDX-License-Identifier: BSD-3-Clause
// The chunk-table variants the array's writers use (frame_internal.hpp): they refuse a frame whose committed
// index is not in memory yet, work on the same chunks as the public calls once frame_table_load read it, and
// their refusals are those of the public calls.
#include <cstring>

#include "../../src/frame/frame_internal.hpp"  // the table variants (internal: the core keeps src/ private)
#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int32_t kChunk = 256;
constexpr int32_t kBlock = 64;

scratch_buffers<kChunk, kBlock> g_table;

bytes_view table_chunk(uint64_t seed) {
  const size_t n = chunk_make(seed, kChunk, kBlock, g_table.src, g_table.chunk, sizeof g_table.chunk, g_table.work);
  return bytes_view(g_table.chunk, n);
}

// Chunk i of f decodes to content seed's bytes.
bool table_chunk_is(frame& f, chunk_decoder& d, int64_t i, uint64_t seed) {
  auto n = frame_chunk_decode(f, d, i, bytes_mut(g_table.out, kChunk));
  if (!n.ok() || *n != static_cast<size_t>(kChunk)) return false;
  content_fill(seed, g_table.src, kChunk);
  return std::memcmp(g_table.out, g_table.src, kChunk) == 0;
}

// A committed frame of three chunks (seeds 1, 2, 3) in g.
void three_chunks_commit(test::context& t, growable_buffer& g) {
  growable_buffer_init(g, test::system_allocator());
  frame f;
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(g), test::system_allocator(), p, frame_open_options{}));
  for (uint64_t seed = 1; seed <= 3; ++seed) REQUIRE_OK(frame_chunk_append(f, table_chunk(seed)));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
}

}  // namespace

TESSERA_TEST(frame_table_variants, refused_until_the_table_is_loaded_then_the_same_as_the_public_calls) {
  growable_buffer g;
  three_chunks_commit(t, g);
  const storage st = growable_buffer_storage(g);
  test::counting_allocator counting;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), chunk_decoder_options{}));
  {
    frame f;
    frame_open_options o;
    o.writable = true;
    REQUIRE_OK(frame_open(f, st, counting.get(), o));
    // Opened writable, the committed index stays where it is until a change needs it.
    CHECK_ERR(detail::frame_chunk_locate_table(f, 0), errc::invalid_argument);
    CHECK_ERR(detail::frame_chunk_decode_table(f, d, 0, bytes_mut(g_table.out, kChunk)), errc::invalid_argument);
    CHECK_ERR(detail::frame_chunk_update_table(f, 0, table_chunk(9)), errc::invalid_argument);
    CHECK_ERR(detail::frame_chunk_insert_table(f, 0, table_chunk(9)), errc::invalid_argument);
    CHECK_ERR(detail::frame_chunk_delete_table(f, 0), errc::invalid_argument);
    CHECK(!frame_dirty(f));
    REQUIRE_OK(detail::frame_table_load(f));
    REQUIRE_OK(detail::frame_table_load(f));  // once is enough: the second is a no-op
    // Located and decoded as the public calls do.
    for (int64_t i = 0; i < 3; ++i) {
      auto a = detail::frame_chunk_locate_table(f, i);
      auto b = frame_chunk_locate(f, i);
      REQUIRE(a.ok() && b.ok());
      CHECK(a->special == b->special && a->nbytes == b->nbytes && a->cbytes == b->cbytes &&
            a->blocksize == b->blocksize && a->offset == b->offset);
      auto n = detail::frame_chunk_decode_table(f, d, i, bytes_mut(g_table.out, kChunk));
      REQUIRE(n.ok());
      CHECK(*n == static_cast<size_t>(kChunk));
      content_fill(static_cast<uint64_t>(i + 1), g_table.src, kChunk);
      CHECK(std::memcmp(g_table.out, g_table.src, kChunk) == 0);
    }
    // Past the chunks: out_of_range, as the public calls.
    CHECK_ERR(detail::frame_chunk_locate_table(f, 3), errc::out_of_range);
    CHECK_ERR(detail::frame_chunk_locate_table(f, -1), errc::out_of_range);
    CHECK_ERR(detail::frame_chunk_decode_table(f, d, 3, bytes_mut(g_table.out, kChunk)), errc::out_of_range);
    CHECK_ERR(detail::frame_chunk_update_table(f, 3, table_chunk(9)), errc::out_of_range);
    CHECK_ERR(detail::frame_chunk_insert_table(f, 4, table_chunk(9)), errc::out_of_range);
    CHECK_ERR(detail::frame_chunk_delete_table(f, 3), errc::out_of_range);
    CHECK_ERR(detail::frame_chunk_delete_table(f, -1), errc::out_of_range);
    // A special-value chunk is located from its index entry.
    uint8_t zeros[kChunkHeaderExtendedSize];
    auto zn = chunk_encode_special(chunk_encode_params{}, chunk_special::zeros, kChunk, bytes_view{},
                                   bytes_mut(zeros, sizeof zeros));
    REQUIRE(zn.ok());
    // The changes: [1, 2, 3] -> update 1 to 7 -> insert 8 at 0 -> delete 3 (chunk 3) -> zeros at the end.
    REQUIRE_OK(detail::frame_chunk_update_table(f, 1, table_chunk(7)));
    REQUIRE_OK(detail::frame_chunk_insert_table(f, 0, table_chunk(8)));
    REQUIRE_OK(detail::frame_chunk_delete_table(f, 3));
    REQUIRE_OK(detail::frame_chunk_insert_table(f, 3, bytes_view(zeros, *zn)));
    auto z = detail::frame_chunk_locate_table(f, 3);
    REQUIRE(z.ok());
    CHECK(z->special == chunk_special::zeros);
    CHECK(z->nbytes == kChunk);
    CHECK(frame_dirty(f));
    REQUIRE_OK(frame_commit(f));
    REQUIRE_OK(frame_close(f));
  }
  CHECK(!counting.leaked());
  // What a reader sees: [8, 1, 7, zeros].
  frame r;
  REQUIRE_OK(frame_open(r, st, test::system_allocator()));
  REQUIRE(frame_info_get(r)->nchunks == 4);
  CHECK(table_chunk_is(r, d, 0, 8));
  CHECK(table_chunk_is(r, d, 1, 1));
  CHECK(table_chunk_is(r, d, 2, 7));
  auto n = frame_chunk_decode(r, d, 3, bytes_mut(g_table.out, kChunk));
  REQUIRE(n.ok());
  bool all_zero = true;
  for (int32_t i = 0; i < kChunk; ++i) all_zero &= g_table.out[i] == 0;
  CHECK(all_zero);
  // A read-only frame is refused by the load and by the changes, a frame not open by every variant.
  CHECK_ERR(detail::frame_table_load(r), errc::read_only);
  CHECK_ERR(detail::frame_chunk_update_table(r, 0, table_chunk(9)), errc::read_only);
  CHECK_ERR(detail::frame_chunk_insert_table(r, 0, table_chunk(9)), errc::read_only);
  CHECK_ERR(detail::frame_chunk_delete_table(r, 0), errc::read_only);
  REQUIRE_OK(frame_close(r));
  CHECK_ERR(detail::frame_table_load(r), errc::invalid_argument);
  CHECK_ERR(detail::frame_chunk_locate_table(r, 0), errc::invalid_argument);
  CHECK_ERR(detail::frame_chunk_decode_table(r, d, 0, bytes_mut(g_table.out, kChunk)), errc::invalid_argument);
  CHECK_ERR(detail::frame_chunk_delete_table(r, 0), errc::invalid_argument);
  chunk_decoder_release(d);
  growable_buffer_release(g);
}

// Appends in place: frame_append_room lends the place the next chunk goes (past the storage's end), a chunk built
// there is appended without being copied, and the frame's bytes are those of the same appends from the caller's
// buffer, in both write orders and at a base offset. No room where the place is decided only at the append (a
// frame that reuses space, a sparse frame), where the storage lends none, or where the frame takes no writes.
TESSERA_TEST(frame_table_variants, chunks_built_in_the_room_the_storage_lends_make_the_same_frame) {
  const allocator sys = test::system_allocator();
  const uint8_t prefix[16] = {0xAB};
  struct config {
    bool durable;
    uint64_t base;
  };
  const config configs[] = {{false, 0}, {true, 0}, {true, 16}};
  for (const config& c : configs) {
    growable_buffer lent, copied;
    growable_buffer_init(lent, sys);
    growable_buffer_init(copied, sys);
    storage no_lend = growable_buffer_storage(copied);
    no_lend.lend = nullptr;
    if (c.base > 0) {
      REQUIRE_OK(storage_write(growable_buffer_storage(lent), 0, bytes_view(prefix, sizeof prefix)));
      REQUIRE_OK(storage_write(no_lend, 0, bytes_view(prefix, sizeof prefix)));
    }
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    frame_open_options o;
    o.durable = c.durable;
    o.base_offset = c.base;
    frame a, b;
    REQUIRE_OK(frame_create(a, growable_buffer_storage(lent), sys, p, o));
    REQUIRE_OK(frame_create(b, no_lend, sys, p, o));
    int in_place = 0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const bytes_view chunk = table_chunk(seed);
      CHECK(detail::frame_append_room(b, chunk.size()).empty());
      REQUIRE_OK(detail::frame_chunk_append_table(b, chunk));
      const bytes_mut room = detail::frame_append_room(a, chunk.size());
      if (room.empty()) {  // the first chunk where the created frame's index and trailer lie past its data
        REQUIRE_OK(detail::frame_chunk_append_table(a, chunk));
        continue;
      }
      REQUIRE_EQ(room.size(), chunk.size());
      std::memcpy(room.data(), chunk.data(), chunk.size());
      REQUIRE_OK(detail::frame_chunk_append_table(a, bytes_view(room.data(), room.size())));
      // The chunk is where it was built: inside the buffer's content, not moved.
      const bytes_view all = lent.bytes();
      CHECK(room.data() >= all.data() && room.data() + room.size() <= all.data() + all.size());
      ++in_place;
    }
    CHECK(in_place >= 3);
    REQUIRE_OK(frame_commit(a));
    REQUIRE_OK(frame_commit(b));
    CHECK(lent.size() == copied.size() && std::memcmp(lent.bytes().data(), copied.bytes().data(), lent.size()) == 0);
    // An update lets the frame reuse space: the place of a chunk is known only at its append.
    REQUIRE_OK(detail::frame_chunk_update_table(a, 0, table_chunk(9)));
    CHECK(detail::frame_append_room(a, 64).empty());
    REQUIRE_OK(frame_commit(a));
    REQUIRE_OK(frame_close(a));
    REQUIRE_OK(frame_close(b));
    CHECK(detail::frame_append_room(a, 64).empty());  // closed
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, sys, chunk_decoder_options{}));
    frame r;
    REQUIRE_OK(frame_open(r, growable_buffer_storage(lent), sys, o));
    CHECK(detail::frame_append_room(r, 64).empty());  // read-only
    CHECK(table_chunk_is(r, d, 0, 9));
    for (int64_t i = 1; i < 4; ++i) CHECK(table_chunk_is(r, d, i, static_cast<uint64_t>(i + 1)));
    REQUIRE_OK(frame_close(r));
    chunk_decoder_release(d);
    growable_buffer_release(lent);
    growable_buffer_release(copied);
  }
  // A sparse frame stores each chunk in an entry of its own, made at the append.
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, sys, 8));
  frame s;
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  REQUIRE_OK(frame_create_sparse(s, memory_directory_interface(md), sys, p, frame_open_options{}));
  CHECK(detail::frame_append_room(s, 64).empty());
  REQUIRE_OK(frame_close(s));
}
