// SPDX-License-Identifier: BSD-3-Clause
// The frame's header is msgpack in pinned encodings read by the bounded msgpack reader: each fixed field in
// another encoding (one that would hold the value) is refused as malformed, every cut of the fixed part is
// truncated, and the parser never reads past the bytes it is given. Metalayer sections cut short are truncated,
// and one that names a layer twice is malformed.
#include <cstring>
#include <initializer_list>

#include "tessera/frame.hpp"

#include "../../src/frame/frame_internal.hpp"  // the reader's header parser (internal: the core keeps src/ private)
#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

// An exact-size heap copy, so AddressSanitizer catches a read past the end.
struct heap_copy {
  allocator a = test::system_allocator();
  uint8_t* p = nullptr;
  size_t n = 0;
  heap_copy(const uint8_t* src, size_t size) : n(size) {
    if (n > 0) {
      p = static_cast<uint8_t*>(allocator_allocate(a, n, 1));
      std::memcpy(p, src, n);
    }
  }
  ~heap_copy() { allocator_deallocate(a, p, n, 1); }
  heap_copy(const heap_copy&) = delete;
  heap_copy& operator=(const heap_copy&) = delete;
  bytes_view view() const { return bytes_view(p, n); }
};

uint8_t g_header[512];

size_t header_make() {
  static const uint8_t kContent[] = {0x92, 0x01, 0x02};
  frame_metalayer_init ml{span<const char>("extra", 5), bytes_view(kContent, sizeof kContent)};
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = 256;
  p.chunksize = 1024;
  p.metalayers = &ml;
  p.nmetalayers = 1;
  frame_header_fields f;
  f.chunksize = 1024;
  f.nbytes = 4096;
  f.cbytes = 1000;
  f.frame_len = 2000;
  auto n = frame_header_encode(p, f, bytes_mut(g_header, sizeof g_header));
  return n.ok() ? *n : 0;
}

}  // namespace

TESSERA_TEST(frame_header_forms, fixed_fields_in_other_encodings_are_malformed) {
  const size_t n = header_make();
  REQUIRE(n > kFrameHeaderMinLen);
  {
    frame_info info;
    heap_copy whole(g_header, kFrameHeaderMinLen);
    REQUIRE_OK(detail::header_fixed_parse(whole.view(), info));
    CHECK_EQ(info.header_len, static_cast<uint32_t>(n));
    CHECK_EQ(info.frame_len, 2000u);
    CHECK_EQ(info.nbytes, 4096);
    CHECK_EQ(info.cbytes, 1000);
    CHECK_EQ(info.typesize, 4);
    CHECK_EQ(info.chunksize, 1024);
  }
  // Offset of each marker, and a neighbour encoding of the same kind.
  struct swap {
    size_t at;
    uint8_t other;
  };
  const swap swaps[] = {
      {0, 0xdc},  {1, 0xd9},  {10, 0xd3}, {15, 0xd3}, {24, 0xa5}, {29, 0xcf}, {38, 0xd2},
      {47, 0xce}, {52, 0xd1}, {57, 0xd3}, {62, 0xd2}, {65, 0xcd}, {68, 0xc0}, {69, 0xc7},
  };
  for (const swap& s : swaps) {
    uint8_t bytes[kFrameHeaderMinLen];
    std::memcpy(bytes, g_header, sizeof bytes);
    bytes[s.at] = s.other;
    heap_copy damaged(bytes, sizeof bytes);
    frame_info info;
    CHECK_ERR(detail::header_fixed_parse(damaged.view(), info), errc::malformed);
  }
  // The magic must be the magic.
  {
    uint8_t bytes[kFrameHeaderMinLen];
    std::memcpy(bytes, g_header, sizeof bytes);
    bytes[2] = 'B';
    frame_info info;
    CHECK_ERR(detail::header_fixed_parse(bytes_view(bytes, sizeof bytes), info), errc::malformed);
  }
  // Any cut of the fixed part is truncated.
  for (size_t len = 0; len < kFrameHeaderMinLen; ++len) {
    heap_copy cut(g_header, len);
    frame_info info;
    CHECK_ERR(detail::header_fixed_parse(cut.view(), info), errc::truncated);
  }
}

TESSERA_TEST(frame_header_forms, metalayer_entries_are_read_in_their_encodings) {
  const size_t n = header_make();
  REQUIRE(n > kFrameHeaderMinLen);
  // 0x93 cd idx(2) de n(2) a5 "extra" d2 offset(4) dc n(2) c6 len(4) content
  const size_t name_at = kFrameHeaderMinLen + 7;
  const size_t offset_at = name_at + 6;
  const size_t content_at = offset_at + 5 + 3;
  REQUIRE_EQ(g_header[offset_at], 0xd2);
  REQUIRE_EQ(g_header[content_at], 0xc6);
  allocator a = test::system_allocator();
  auto run = [&](size_t at, uint8_t value, size_t len) -> status {
    uint8_t bytes[512];
    std::memcpy(bytes, g_header, n);
    bytes[at] = value;
    heap_copy h(bytes, len);
    auto s = detail::state_new(a);
    if (!s.ok()) return s.err();
    (*s)->header = h.p;
    (*s)->info.header_len = static_cast<uint32_t>(len);
    status e = detail::header_metas_parse(**s);
    (*s)->header = nullptr;
    detail::state_free(*s);
    return e;
  };
  CHECK_OK(run(0, g_header[0], n));
  CHECK_ERR(run(kFrameHeaderMinLen + 1, 0xce, n), errc::malformed);  // the index size as a uint32
  CHECK_ERR(run(kFrameHeaderMinLen + 4, 0x81, n), errc::malformed);  // the map as a fixmap
  CHECK_ERR(run(name_at, 0xd9, n), errc::malformed);                // the name as a str8
  CHECK_ERR(run(offset_at, 0xce, n), errc::malformed);              // the offset as a uint32
  CHECK_ERR(run(content_at, 0xc4, n), errc::malformed);             // the content as a bin8
  // A header cut inside the content: the content's length outruns it.
  CHECK_ERR(run(0, g_header[0], n - 1), errc::truncated);
}

TESSERA_TEST(frame_header_forms, metalayer_sections_cut_short_or_naming_one_layer_twice) {
  static const uint8_t kContent[] = {0x92, 0x01, 0x02};
  const frame_metalayer_init ml[2] = {{span<const char>("ab", 2), bytes_view(kContent, sizeof kContent)},
                                      {span<const char>("cd", 2), bytes_view(kContent, sizeof kContent)}};
  frame_create_params p;
  p.typesize = 4;
  p.metalayers = ml;
  p.nmetalayers = 2;
  frame_header_fields f;
  f.frame_len = 2000;
  auto n = frame_header_encode(p, f, bytes_mut(g_header, sizeof g_header));
  REQUIRE_OK(n);
  detail::frame_meta_entry entries[kFrameMaxMetalayers];
  uint32_t count = 0;
  bool found = false;
  uint32_t off = 0, len = 0;
  {
    heap_copy h(g_header, *n);
    CHECK_OK(detail::header_metas_read(h.view(), entries, &count));
    CHECK_EQ(count, 2u);
    CHECK_OK(detail::header_meta_find(h.view(), span<const char>("cd", 2), span<const char>("xx", 2), &found, &off, &len));
    CHECK(found && len == sizeof kContent && std::memcmp(h.p + off, kContent, len) == 0);
  }
  // Cut before the section's count, and right after its first bytes.
  for (const size_t cut : {size_t{detail::kFhMetalayers + 5}, size_t{detail::kFhMetalayers + 6}}) {
    heap_copy h(g_header, cut);
    CHECK_ERR(detail::header_metas_read(h.view(), entries, &count), errc::truncated);
    CHECK_ERR(detail::header_meta_find(h.view(), span<const char>("ab", 2), span<const char>(), &found, &off, &len),
              errc::truncated);
  }
  // The second name made the first's: refused by both readers.
  size_t at = 0;
  for (size_t i = detail::kFhMetalayers; i + 2 <= *n; ++i)
    if (g_header[i] == 'c' && g_header[i + 1] == 'd') at = i;
  REQUIRE(at > 0);
  g_header[at] = 'a';
  g_header[at + 1] = 'b';
  heap_copy h(g_header, *n);
  CHECK_ERR(detail::header_metas_read(h.view(), entries, &count), errc::malformed);
  CHECK_ERR(detail::header_meta_find(h.view(), span<const char>("ab", 2), span<const char>(), &found, &off, &len),
            errc::malformed);
  // A trailer shorter than its length field.
  CHECK_ERR(detail::trailer_len_parse(bytes_view(g_header, 8)), errc::truncated);
}
