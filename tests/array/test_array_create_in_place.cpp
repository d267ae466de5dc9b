// SPDX-License-Identifier: BSD-3-Clause
// A create into a storage that lends room past its end (storage::lend: a growable memory buffer) encodes its
// chunks there and appends them without a copy; the frame is the one a storage without lend gets, byte for byte
// (chunks gathered block by block or packed first, compressible or stored verbatim, edge chunks, both write
// orders), and reads back as the items.
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/forwarding_storage.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

// 15 x 18 x 20 float32 items, chunks 8^3 (18, most cut at an edge), blocks 4^3.
constexpr int64_t kShape[3] = {15, 18, 20};
constexpr int64_t kItems = 15 * 18 * 20;
constexpr int64_t kChunks = 2 * 3 * 3;

// A growable buffer's storage that sees which chunk writes take the bytes where its last lend put them.
struct lend_watch : test::forwarding_storage<lend_watch> {
  const uint8_t* lent = nullptr;
  int lends = 0;
  int in_place = 0;
  static status wr(void* c, uint64_t off, bytes_view src) noexcept {
    lend_watch& w = self(c);
    if (w.lent != nullptr && src.data() == w.lent) ++w.in_place;
    w.lent = nullptr;
    return write_forward(c, off, src);
  }
  static bytes_mut ln(void* c, uint64_t off, size_t n) noexcept {
    lend_watch& w = self(c);
    const bytes_mut m = lend_forward(c, off, n);
    w.lent = m.data();
    ++w.lends;
    return m;
  }
  storage get() noexcept {
    storage s = forwarded();
    s.write = wr;
    s.lend = ln;
    return s;
  }
};

array_params params_of(codec c, int clevel, bool delta) {
  array_params p;
  p.ndim = 3;
  for (int d = 0; d < 3; ++d) {
    p.shape[d] = kShape[d];
    p.chunkshape[d] = 8;
    p.blockshape[d] = 4;
  }
  p.dtype = str("<f4");
  p.compressor = c;
  p.clevel = clevel;
  if (delta) p.filters[4] = static_cast<uint8_t>(filter_id::delta);  // packed first, not gathered
  return p;
}

}  // namespace

TESSERA_TEST(array_create_in_place, chunks_encoded_in_the_lent_room_make_the_frame_of_a_storage_without_lend) {
  buf smooth, noise, back;
  REQUIRE(smooth.make(kItems * 4) && noise.make(kItems * 4) && back.make(kItems * 4));
  test::rng r(45);
  for (int64_t i = 0; i < kItems; ++i) {
    const float v = static_cast<float>(i % 97) * 0.5f;
    std::memcpy(smooth.data() + i * 4, &v, 4);
  }
  for (int64_t i = 0; i < kItems * 4; ++i) noise.data()[i] = static_cast<uint8_t>(r.next());
  struct variant {
    codec c;
    int clevel;
    bool delta;
    const buf* items;
  };
  const codec fast = codec_available(codec::lz4) ? codec::lz4 : codec::blosclz;  // builds without LZ4 exist
  const variant variants[] = {
      {fast, 5, false, &smooth},           // gathered block by block into the encoder
      {codec::blosclz, 5, true, &smooth},  // packed first (delta needs block 0)
      {fast, 5, false, &noise},            // streams stored raw
      {fast, 0, false, &smooth},           // stored verbatim (memcpyed chunks)
  };
  for (const variant& v : variants) {
    const bool orders[] = {false, true};
    for (const bool durable : orders) {
      growable_buffer lent, copied;
      growable_buffer_init(lent, test::system_allocator());
      growable_buffer_init(copied, test::system_allocator());
      lend_watch watch;
      watch.inner = growable_buffer_storage(lent);
      storage no_lend = growable_buffer_storage(copied);
      no_lend.lend = nullptr;
      const array_params p = params_of(v.c, v.clevel, v.delta);
      array a, b;
      REQUIRE_OK(array_create(a, array_target_contiguous(watch.get(), durable), test::system_allocator(), p,
                              array_fill_buffer(v.items->view())));
      REQUIRE_OK(array_close(a));
      REQUIRE_OK(array_create(b, array_target_contiguous(no_lend, durable), test::system_allocator(), p,
                              array_fill_buffer(v.items->view())));
      REQUIRE_OK(array_close(b));
      CHECK(lent.size() == copied.size() && std::memcmp(lent.bytes().data(), copied.bytes().data(), lent.size()) == 0);
#if defined(__OPTIMIZE_SIZE__)
      CHECK_EQ(watch.in_place, 0);  // size builds encode into their own buffer (no speed paths)
#else
      // Every chunk but perhaps the first (the created frame's index and trailer lie past its data).
      CHECK(watch.in_place >= kChunks - 1);
      CHECK(watch.lends >= watch.in_place);
#endif
      REQUIRE_OK(array_open(a, growable_buffer_storage(lent), test::system_allocator()));
      REQUIRE_OK(array_read(a, back.mut()));
      CHECK(std::memcmp(back.data(), v.items->data(), kItems * 4) == 0);
      REQUIRE_OK(array_close(a));
      growable_buffer_release(lent);
      growable_buffer_release(copied);
    }
  }
}
