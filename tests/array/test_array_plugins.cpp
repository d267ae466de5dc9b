// SPDX-License-Identifier: BSD-3-Clause
// Arrays with a user codec (id 200) and a user filter (id 170) passed in array_params / array_open_options: the
// frame records them as the reference does (codec 6 with udcodec, the filter slot), the array reads back
// exactly after create, reopen, a partial write, array_open_again and array_copy (which keep the plugins),
// created serially or a chunk per worker; opened without them, reads fail naming the missing kind.
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../chunk/plugins_testing.hpp"
#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;
using namespace plugins_test;

namespace {

// 64 x 96 int32, chunks 32 x 48 (4 chunks), blocks 16 x 16.
constexpr int64_t kRows = 64;
constexpr int64_t kCols = 96;
constexpr size_t kBytes = static_cast<size_t>(kRows * kCols * 4);

array_params params_with(const chunk_plugins* plugins) {
  array_params p;
  p.ndim = 2;
  p.shape[0] = kRows;
  p.shape[1] = kCols;
  p.chunkshape[0] = 32;
  p.chunkshape[1] = 48;
  p.blockshape[0] = 16;
  p.blockshape[1] = 16;
  p.dtype = str("<i4");
  p.compressor = chunk_user_codec_id(kRleId);
  p.compcode_meta = 0x21;
  p.filters[4] = kAddId;
  p.filters_meta[4] = 9;
  p.filters[5] = static_cast<uint8_t>(filter_id::shuffle);
  p.plugins = plugins;
  return p;
}

void data_make(buf& d) {
  test::rng r(5);
  for (size_t i = 0; i < d.n; i += 4) {
    const uint32_t v = static_cast<uint32_t>(i / 4 / 40) + ((r.next() & 63) == 0 ? 1000u : 0u);
    std::memcpy(d.data() + i, &v, 4);
  }
}

void scramble_run(void*, size_t ntasks, executor_task task, void* ctx) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(ctx, i, static_cast<uint32_t>((i * 5) % 3));
}

error error_of_read(array& a, buf& out) {
  status s = array_read(a, out.mut());
  return s;
}

bool message_names(const error& e, const char* what) {
#if TESSERA_ERROR_MESSAGES
  return std::strstr(e.message, what) != nullptr;
#else
  (void)e;
  (void)what;
  return true;
#endif
}

}  // namespace

TESSERA_TEST(array_plugins, written_with_a_user_codec_and_filter_and_read_back) {
  executor scrambled;
  scrambled.run = scramble_run;
  scrambled.workers = 3;
  const executor execs[] = {executor_serial(), scrambled};  // serial create, then a chunk per worker
  for (const executor& ex : execs) {
    test::counting_allocator counting;
    const allocator alloc = counting.get();
    {
      registry reg;
      buf data, out;
      REQUIRE(data.make(kBytes));
      REQUIRE(out.make(kBytes));
      data_make(data);
      growable_buffer g;
      growable_buffer_init(g, alloc);
      const storage st = growable_buffer_storage(g);
      array_params params = params_with(&reg.both);
      params.exec = ex;
      array a;
      REQUIRE_OK(array_create(a, array_target_contiguous(st, false), alloc, params, array_fill_buffer(data.view())));
      CHECK(reg.codec_calls.encodes > 0);
      CHECK(reg.filter_calls.encodes > 0);
      const frame_info* info = frame_info_get(array_frame(a));
      REQUIRE(info != nullptr);
      CHECK_EQ(info->compcode, kRleId);
      CHECK_EQ(info->udcodec, kRleId);
      CHECK_EQ(info->compcode_meta, 0x21);
      CHECK_EQ(info->filters[4], kAddId);
      CHECK(array_params_get(a).plugins == &reg.both);
      CHECK_LT(static_cast<size_t>(info->cbytes), kBytes / 2);  // the codec compressed (runs of 40 items)
      REQUIRE_OK(array_read(a, out.mut()));
      CHECK(std::memcmp(out.data(), data.data(), kBytes) == 0);
      REQUIRE_OK(array_close(a));

      // Reopened with the plugins: reads, a partial write (decode, change, encode), reads again.
      array_open_options oo;
      oo.frame.writable = true;
      oo.plugins = &reg.both;
      REQUIRE_OK(array_open(a, st, alloc, oo));
      const size_t decodes = reg.codec_calls.decodes;
      std::memset(out.data(), 0, kBytes);
      REQUIRE_OK(array_read(a, out.mut()));
      CHECK(std::memcmp(out.data(), data.data(), kBytes) == 0);
      CHECK(reg.codec_calls.decodes > decodes);
      CHECK(reg.filter_calls.decodes > 0);
      const int64_t s0[2] = {10, 30};
      const int64_t s1[2] = {40, 70};
      buf patch;
      REQUIRE(patch.make(30 * 40 * 4));
      for (size_t i = 0; i < patch.n; ++i) patch.data()[i] = static_cast<uint8_t>(i / 64);
      REQUIRE_OK(array_slice_write(a, s0, s1, patch.view()));
      for (int64_t r = 0; r < 30; ++r)
        std::memcpy(data.data() + ((10 + r) * kCols + 30) * 4, patch.data() + r * 40 * 4, 40 * 4);
      REQUIRE_OK(array_read(a, out.mut()));
      CHECK(std::memcmp(out.data(), data.data(), kBytes) == 0);

      // Handles and copies made from it keep the plugins.
      array again;
      REQUIRE_OK(array_open_again(again, a, alloc));
      std::memset(out.data(), 0, kBytes);
      REQUIRE_OK(array_read(again, out.mut()));
      CHECK(std::memcmp(out.data(), data.data(), kBytes) == 0);
      growable_buffer g2;
      growable_buffer_init(g2, alloc);
      const storage st2 = growable_buffer_storage(g2);
      array copy;
      REQUIRE_OK(array_copy(copy, array_target_contiguous(st2, false), alloc, a));
      CHECK_EQ(frame_info_get(array_frame(copy))->compcode, kRleId);
      std::memset(out.data(), 0, kBytes);
      REQUIRE_OK(array_read(copy, out.mut()));
      CHECK(std::memcmp(out.data(), data.data(), kBytes) == 0);
      REQUIRE_OK(array_close(copy));
      REQUIRE_OK(array_close(again));
      REQUIRE_OK(array_close(a));

      // Without the plugins the array opens (nothing decoded yet) but its chunks do not read; with only the
      // filter, the codec is what is missing.
      REQUIRE_OK(array_open(a, st, alloc));
      auto e = error_of_read(a, out);
      CHECK_EQ(e.code, errc::unsupported);
      CHECK(message_names(e, "user filter"));
      REQUIRE_OK(array_close(a));
      const chunk_plugins filter_only{nullptr, 0, &reg.filter, 1};
      array_open_options fo;
      fo.plugins = &filter_only;
      REQUIRE_OK(array_open(a, st, alloc, fo));
      e = error_of_read(a, out);
      CHECK_EQ(e.code, errc::codec_unavailable);
      CHECK(message_names(e, "user codec"));
      REQUIRE_OK(array_close(a));
      fo.frame.writable = true;
      REQUIRE_OK(array_open(a, st, alloc, fo));
      CHECK_ERR(array_slice_write(a, s0, s1, patch.view()), errc::codec_unavailable);
      REQUIRE_OK(array_close(a));
      growable_buffer_release(g2);
      growable_buffer_release(g);
    }
    CHECK(!counting.leaked());
  }
}

namespace {

// A user filter that fails every forward call (a codec library that breaks mid-write).
status failing_forward(void*, bytes_view, bytes_mut, uint8_t, uint8_t) noexcept {
  return make_error(errc::io, "test: the user filter failed");
}

// An executor that claims 2 workers but hands task 1 worker index 2 (a broken executor).
void bad_worker_run(void*, size_t ntasks, executor_task task, void* ctx) noexcept {
  for (size_t i = 0; i < ntasks; ++i) task(ctx, i, static_cast<uint32_t>(i == 1 ? 2 : 0));
}

}  // namespace

// A user filter that fails while a create encodes (serially, on workers from a buffer, on workers from a copy's
// source), and an executor that breaks its contract: the error comes back, the new array is left closed and
// nothing leaks.
TESSERA_TEST(array_plugins, a_failing_filter_or_executor_fails_the_create_and_leaves_it_closed) {
  chunk_user_filter bad{kAddId, failing_forward, add_backward, nullptr};
  chunk_plugins plugins{nullptr, 0, &bad, 1};
  buf data;
  REQUIRE(data.make(kBytes));
  data_make(data);
  executor scrambled;
  scrambled.run = scramble_run;
  scrambled.workers = 3;
  executor broken;
  broken.run = bad_worker_run;
  broken.workers = 2;
  test::counting_allocator counting;
  growable_buffer source;
  growable_buffer_init(source, test::system_allocator());
  array src;
  {
    array_params sp = params_with(nullptr);
    sp.compressor = codec::blosclz;
    sp.filters[4] = 0;
    REQUIRE_OK(array_create(src, array_target_contiguous(growable_buffer_storage(source)), test::system_allocator(), sp,
                            array_fill_buffer(data.view())));
  }
  for (int k = 0; k < 5; ++k) {
    growable_buffer g;
    growable_buffer_init(g, test::system_allocator());
    array_params p = params_with(&plugins);
    p.compressor = codec::blosclz;
    if (k == 1 || k == 2) p.exec = scrambled;
    if (k >= 3) {
      p.plugins = nullptr;  // the executor alone fails
      p.filters[4] = 0;
      p.exec = broken;
    }
    array a;
    status s;
    if (k == 2 || k == 4) {
      s = array_copy(a, array_target_contiguous(growable_buffer_storage(g)), counting.get(), src, &p);
    } else {
      s = array_create(a, array_target_contiguous(growable_buffer_storage(g)), counting.get(), p,
                       array_fill_buffer(data.view()));
    }
    CHECK_ERR(s, k >= 3 ? errc::invalid_argument : errc::io);
    CHECK(!array_is_open(a));
    CHECK(!counting.leaked());
  }
  CHECK_OK(array_close(src));
}
