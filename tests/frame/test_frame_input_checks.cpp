// SPDX-License-Identifier: BSD-3-Clause
// What the frame API checks of the values it is handed, and with which code: chunks it cannot store, chunk
// positions, vlmetalayer chunks, creation parameters and header fields out of range, directories without
// callbacks, sparse chunk names. Every refusal leaves the frame as it was.
#include <cstring>

#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/storage_directory.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int32_t kChunk = 256;
constexpr int32_t kBlock = 64;

span<const char> nm(const char* s) { return span<const char>(s, std::strlen(s)); }

struct chunk_scratch {
  uint8_t src[kChunk];
  uint8_t chunk[2 * kChunk + 64];
  uint8_t work[3 * kBlock];
  uint8_t bad[2 * kChunk + 64];
};
chunk_scratch g_scratch;

bytes_view chunk_of(uint64_t seed) {
  const size_t n = chunk_make(seed, kChunk, kBlock, g_scratch.src, g_scratch.chunk, sizeof g_scratch.chunk,
                              g_scratch.work);
  return bytes_view(g_scratch.chunk, n);
}

frame_create_params create_params() {
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  return p;
}

}  // namespace

TESSERA_TEST(frame_input_checks, chunks_the_frame_cannot_store_are_refused) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  test::counting_allocator ca;
  {
    frame f;
    REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), ca.get(), create_params()));
    REQUIRE_OK(frame_chunk_append(f, chunk_of(1)));
    const bytes_view good = chunk_of(2);
    std::memcpy(g_scratch.bad, good.data(), good.size());
    // Not a chunk header at all.
    CHECK_ERR(frame_chunk_append(f, bytes_view(g_scratch.bad, 8)), errc::truncated);
    // Fewer bytes than the header's cbytes.
    CHECK_ERR(frame_chunk_append(f, bytes_view(g_scratch.bad, good.size() - 1)), errc::truncated);
    CHECK_ERR(frame_chunk_update(f, 0, bytes_view(g_scratch.bad, good.size() - 1)), errc::truncated);
    // A lazy chunk (its blocks live in another frame) cannot be stored.
    g_scratch.bad[31] |= kChunkBlosc2Lazy;
    CHECK_ERR(frame_chunk_append(f, bytes_view(g_scratch.bad, good.size())), errc::invalid_argument);
    // Nor an empty one (the reference would lose it).
    chunk_test::header_spec h;
    h.typesize = 4;
    h.nbytes = 0;
    h.blocksize = kBlock;
    h.cbytes = 32;
    h.flags = 0x15;  // extended header, memcpyed
    chunk_test::header_write(g_scratch.bad, h);
    CHECK_ERR(frame_chunk_insert(f, 0, bytes_view(g_scratch.bad, 32)), errc::invalid_argument);
    // Nothing changed: one chunk, committed and read back.
    CHECK_EQ(frame_info_get(f)->nchunks, 1);
    REQUIRE_OK(frame_commit(f));
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
    uint8_t out[kChunk];
    auto n = frame_chunk_decode(f, d, 0, bytes_mut(out, sizeof out));
    REQUIRE_OK(n);
    chunk_of(1);
    CHECK(*n == static_cast<size_t>(kChunk) && std::memcmp(out, g_scratch.src, kChunk) == 0);
  }
  CHECK(!ca.leaked());
}

TESSERA_TEST(frame_input_checks, deleting_past_either_end_is_out_of_range) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  frame f;
  REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), test::system_allocator(), create_params()));
  REQUIRE_OK(frame_chunk_append(f, chunk_of(1)));
  REQUIRE_OK(frame_chunk_append(f, chunk_of(2)));
  CHECK_ERR(frame_chunk_delete(f, -1), errc::out_of_range);
  CHECK_ERR(frame_chunk_delete(f, 2), errc::out_of_range);
  CHECK_EQ(frame_info_get(f)->nchunks, 2);
  CHECK_OK(frame_chunk_delete(f, 1));
  CHECK_EQ(frame_info_get(f)->nchunks, 1);
}

TESSERA_TEST(frame_input_checks, vlmetalayer_chunks_are_checked_before_they_are_kept) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  test::counting_allocator ca;
  {
    frame f;
    REQUIRE_OK(frame_create(f, growable_buffer_storage(buf), ca.get(), create_params()));
    const bytes_view c = chunk_of(5);
    CHECK_ERR(frame_vlmeta_set_chunk(f, span<const char>(), c), errc::invalid_argument);
    CHECK_ERR(frame_vlmeta_set_chunk(f, nm("a_name_of_thirty_two_bytes_long_"), c), errc::invalid_argument);
    CHECK_ERR(frame_vlmeta_set_chunk(f, nm("v"), bytes_view(c.data(), 8)), errc::truncated);
    // The chunk must be exactly its cbytes: a byte more is refused too.
    std::memcpy(g_scratch.bad, c.data(), c.size());
    CHECK_ERR(frame_vlmeta_set_chunk(f, nm("v"), bytes_view(g_scratch.bad, c.size() + 1)), errc::invalid_argument);
    CHECK(!frame_vlmeta_raw(f, nm("v")).ok());
    REQUIRE_OK(frame_vlmeta_set_chunk(f, nm("v"), c));
    REQUIRE_OK(frame_commit(f));
    auto raw = frame_vlmeta_raw(f, nm("v"));
    REQUIRE_OK(raw);
    CHECK(raw->size() == c.size() && std::memcmp(raw->data(), c.data(), c.size()) == 0);
  }
  CHECK(!ca.leaked());
  // Opened read-only, the frame takes no vlmetalayer.
  frame r;
  REQUIRE_OK(frame_open(r, growable_buffer_storage(buf), test::system_allocator()));
  CHECK_ERR(frame_vlmeta_set_chunk(r, nm("w"), chunk_of(6)), errc::read_only);
}

TESSERA_TEST(frame_input_checks, a_frame_is_not_created_in_a_read_only_storage) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  storage ro = growable_buffer_storage(buf);
  ro.write = nullptr;
  ro.truncate = nullptr;
  test::counting_allocator ca;
  frame f;
  CHECK_ERR(frame_create(f, ro, ca.get(), create_params()), errc::read_only);
  CHECK(frame_info_get(f) == nullptr);
  const storage rw = growable_buffer_storage(buf);
  uint64_t size = 1;
  REQUIRE_OK(rw.size(rw.context, &size));
  CHECK_EQ(size, 0u);  // nothing written
  CHECK(!ca.leaked());
}

TESSERA_TEST(frame_input_checks, creation_parameters_out_of_range) {
  CHECK_OK(frame_header_size(create_params()));
  frame_create_params p = create_params();
  p.typesize = 0;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p.typesize = kChunkMaxBlocksize + 1;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p = create_params();
  p.blocksize = -1;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p = create_params();
  p.chunksize = -2;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p = create_params();
  p.clevel = 16;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p = create_params();
  p.splitmode = 0;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  p.splitmode = 5;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  // Metalayer names: 1 to 31 bytes that exist.
  const uint8_t content[2] = {0xc0, 0xc0};
  frame_metalayer_init ml{span<const char>(nullptr, 3), bytes_view(content, 2)};
  p = create_params();
  p.metalayers = &ml;
  p.nmetalayers = 1;
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  ml.name = nm("a_name_of_thirty_two_bytes_long_");
  CHECK_ERR(frame_header_size(p), errc::invalid_argument);
  ml.name = nm("b2nd");
  CHECK_OK(frame_header_size(p));
}

TESSERA_TEST(frame_input_checks, header_fields_out_of_range) {
  static uint8_t out[256];
  const frame_create_params p = create_params();
  frame_header_fields ok_fields;
  ok_fields.frame_len = 1000;
  CHECK_OK(frame_header_encode(p, ok_fields, bytes_mut(out, sizeof out)));
  frame_header_fields f = ok_fields;
  f.frame_len = static_cast<uint64_t>(INT64_MAX) + 1;
  CHECK_ERR(frame_header_encode(p, f, bytes_mut(out, sizeof out)), errc::invalid_argument);
  f = ok_fields;
  f.nbytes = -1;
  CHECK_ERR(frame_header_encode(p, f, bytes_mut(out, sizeof out)), errc::invalid_argument);
  f = ok_fields;
  f.cbytes = -1;
  CHECK_ERR(frame_header_encode(p, f, bytes_mut(out, sizeof out)), errc::invalid_argument);
  f = ok_fields;
  f.chunksize = -2;
  CHECK_ERR(frame_header_encode(p, f, bytes_mut(out, sizeof out)), errc::invalid_argument);
  f = ok_fields;
  f.kind = static_cast<frame_kind>(2);
  CHECK_ERR(frame_header_encode(p, f, bytes_mut(out, sizeof out)), errc::invalid_argument);
  // A trailer holds at most kFrameMaxVlmetalayers (the count is checked before any entry is read).
  const frame_vlmetalayer one{nm("v"), bytes_view()};
  CHECK_ERR(frame_trailer_size(span<const frame_vlmetalayer>(&one, size_t{kFrameMaxVlmetalayers} + 1)),
            errc::invalid_argument);
}

TESSERA_TEST(frame_input_checks, directories_without_callbacks_and_sparse_chunk_names) {
  storage_directory none;
  storage st;
  CHECK_ERR(storage_directory_open(none, "x", storage_open::read, &st), errc::unsupported);
  CHECK_OK(storage_directory_close(none, &st));  // nothing to close
  CHECK_ERR(storage_directory_remove(none, "x"), errc::unsupported);
  CHECK_ERR(storage_directory_rename(none, "x", "y"), errc::unsupported);
  CHECK_ERR(storage_directory_list(none, nullptr, nullptr), errc::unsupported);
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, test::system_allocator(), 2));
  CHECK_ERR(storage_directory_list(memory_directory_interface(md), nullptr, nullptr), errc::invalid_argument);
  // Chunk names: 8 hex digits and ".chunk", in 15 bytes.
  char name[16];
  CHECK_ERR(frame_sparse_chunk_name(-1, name, sizeof name), errc::out_of_range);
  CHECK_ERR(frame_sparse_chunk_name(int64_t{UINT32_MAX} + 1, name, sizeof name), errc::out_of_range);
  CHECK_ERR(frame_sparse_chunk_name(1, nullptr, sizeof name), errc::buffer_too_small);
  CHECK_ERR(frame_sparse_chunk_name(1, name, 14), errc::buffer_too_small);
  REQUIRE_OK(frame_sparse_chunk_name(UINT32_MAX, name, 15));
  CHECK(std::strcmp(name, "FFFFFFFF.chunk") == 0);
}
