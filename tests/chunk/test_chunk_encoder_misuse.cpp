// SPDX-License-Identifier: BSD-3-Clause
// The chunk encoder against callers that break its contract or fail under it: an executor that hands tasks a
// worker index past its own count, a user codec failing on a worker, a split mode that does not exist, block
// scratch that overflows, and an allocator refusing the parallel output slots. Each is refused with its code;
// nothing leaks; the encoder encodes again afterwards.
#include <cstdint>
#include <cstring>

#include "tessera/chunk.hpp"
#include "tessera/codecs.hpp"

#include "../../src/chunk/chunk_internal.hpp"  // chunk_encoder_prepare, chunk_encode_spliced (internal)

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

constexpr size_t kNbytes = 4096;
uint8_t g_src[kNbytes];
uint8_t g_chunk[kNbytes + kChunkMaxOverhead];
uint8_t g_out[kNbytes];

void fill() {
  for (size_t i = 0; i < kNbytes; ++i) g_src[i] = static_cast<uint8_t>((i / 16) * 7 + (i % 3));
}

// Runs the tasks in this thread with the worker index stored in its context.
void fixed_worker_run(void* context, size_t ntasks, executor_task task, void* task_context) noexcept {
  const uint32_t worker = *static_cast<const uint32_t*>(context);
  for (size_t i = 0; i < ntasks; ++i) task(task_context, i, worker);
}

chunk_encode_params params(int32_t blocksize) {
  chunk_encode_params p;
  p.typesize = 4;
  p.blocksize = blocksize;
  return p;
}

// Whether the encoder still makes a chunk that decodes to g_src.
bool round_trips(chunk_encoder& e, const chunk_encode_params& p) {
  auto n = chunk_encode(e, p, bytes_view(g_src, kNbytes), bytes_mut(g_chunk, sizeof g_chunk));
  if (!n.ok()) return false;
  chunk_decoder d;
  if (!chunk_decoder_init(d, test::system_allocator()).ok()) return false;
  auto m = chunk_decode(d, bytes_view(g_chunk, *n), bytes_mut(g_out, sizeof g_out));
  return m.ok() && *m == kNbytes && std::memcmp(g_out, g_src, kNbytes) == 0;
}

// A user codec that fails on every block.
status failing_encode(void*, bytes_view, bytes_mut, uint8_t, size_t*) noexcept {
  return make_error(errc::io, "test: the user codec failed");
}

// g_src encoded in blocks of 512 bytes through a user codec whose encode is `encode`.
result<size_t> user_codec_encode(chunk_encoder& e,
                                 status (*encode)(void*, bytes_view, bytes_mut, uint8_t, size_t*) noexcept) {
  chunk_user_codec codec;
  codec.id = kChunkUserIdFirst;
  codec.encode = encode;
  chunk_plugins plugins;
  plugins.codecs = &codec;
  plugins.ncodecs = 1;
  chunk_encode_params p = params(512);
  p.compressor = chunk_user_codec_id(kChunkUserIdFirst);
  p.plugins = &plugins;
  return chunk_encode(e, p, bytes_view(g_src, kNbytes), bytes_mut(g_chunk, sizeof g_chunk));
}

}  // namespace

TESSERA_TEST(chunk_encoder_misuse, an_executor_past_its_workers_is_refused) {
  encoder_link_parallel();
  fill();
  static uint32_t worker = 2;
  chunk_encoder_options o;
  o.exec.run = fixed_worker_run;
  o.exec.context = &worker;
  o.exec.workers = 2;
  o.max_blocksize = 1024;  // scratch for this file's blocks only (the default is a lot on the Cortex-M4)
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), o));
  CHECK_ERR(chunk_encode(e, params(512), bytes_view(g_src, kNbytes), bytes_mut(g_chunk, sizeof g_chunk)),
            errc::invalid_argument);
  worker = 1;  // a valid index: the same encoder works
  CHECK(round_trips(e, params(512)));
}

TESSERA_TEST(chunk_encoder_misuse, a_user_codec_failing_on_a_worker_is_returned) {
  encoder_link_parallel();
  encoder_link_plugins();
  fill();
  static uint32_t worker = 1;
  chunk_encoder_options o;
  o.exec.run = fixed_worker_run;
  o.exec.context = &worker;
  o.exec.workers = 2;
  o.max_blocksize = 1024;  // scratch for this file's blocks only (the default is a lot on the Cortex-M4)
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), o));
  CHECK_ERR(user_codec_encode(e, failing_encode), errc::io);
  CHECK(round_trips(e, params(512)));
}

TESSERA_TEST(chunk_encoder_misuse, a_split_mode_that_does_not_exist_is_refused) {
  fill();
  chunk_encoder_options o;
  o.max_blocksize = 1024;
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), o));
  chunk_encode_params p = params(512);
  p.split = static_cast<split_mode>(9);
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, kNbytes), bytes_mut(g_chunk, sizeof g_chunk)),
            errc::invalid_argument);
  CHECK(round_trips(e, params(512)));
}

TESSERA_TEST(chunk_encoder_misuse, scratch_that_overflows_is_refused_at_init) {
  chunk_encoder_options o;
  o.max_blocksize = SIZE_MAX / 4;
  test::counting_allocator counter;
  {
    chunk_encoder e;
    CHECK_ERR(chunk_encoder_init(e, counter.get(), o), errc::overflow);
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_encoder_misuse, refused_parallel_buffers_fail_init_without_a_leak) {
  encoder_link_parallel();
  fill();
  static uint32_t worker = 1;
  chunk_encoder_options o;
  o.exec.run = fixed_worker_run;
  o.exec.context = &worker;
  o.exec.workers = 2;
  o.max_blocksize = 1024;
  bool made = false;
  size_t refused = 0;
  for (size_t fail = 1; fail < 32 && !made; ++fail) {
    test::counting_allocator counter;
    counter.fail_at = fail;
    {
      chunk_encoder e;
      status s = chunk_encoder_init(e, counter.get(), o);
      if (s.ok()) {
        made = true;
        CHECK(round_trips(e, params(1024)));
      } else {
        ++refused;
        CHECK_ERR(s, errc::out_of_memory);
      }
    }
    CHECK(!counter.leaked());
  }
  CHECK(made);
  CHECK(refused >= 3);  // the workers, their scratch and the output slots, each refused in turn
}

TESSERA_TEST(chunk_encoder_misuse, internal_entry_points_refuse_bad_encoders_and_params) {
  chunk_encoder none;
  CHECK_ERR(detail::chunk_encoder_prepare(none, params(1024), kNbytes), errc::invalid_argument);
  test::counting_allocator counter;
  {
    chunk_encoder e;
    REQUIRE_OK(chunk_encoder_init(e, counter.get()));
    chunk_encode_params bad = params(1024);
    bad.typesize = 0;
    CHECK_ERR(detail::chunk_encoder_prepare(e, bad, kNbytes), errc::invalid_argument);
    CHECK_ERR(detail::chunk_encoder_prepare(e, params(-1), kNbytes), errc::invalid_argument);
    // A chunk too short for blocks, or not compressed, is copied as it is: nothing to prepare.
    const size_t before = counter.allocations;
    REQUIRE_OK(detail::chunk_encoder_prepare(e, params(1024), 16));
    chunk_encode_params copy = params(1024);
    copy.clevel = 0;
    REQUIRE_OK(detail::chunk_encoder_prepare(e, copy, kNbytes));
    CHECK_EQ(counter.allocations, before);
#if TESSERA_SPEED_PATHS
    // Splicing: an uninitialized encoder and bad params are refused; what it does not splice (no compression,
    // a dictionary, a chunk under 32 bytes, delta) answers 0 and the caller encodes the whole chunk.
    static uint8_t runs[kNbytes];  // compressible: every block compressed, so the chunk can be spliced
    for (size_t i = 0; i < kNbytes; ++i) runs[i] = static_cast<uint8_t>(i / 256);
    const bytes_view src(runs, kNbytes);
    auto whole = chunk_encode(e, params(1024), src, bytes_mut(g_chunk, sizeof g_chunk));
    REQUIRE_OK(whole);
    REQUIRE(*whole < kNbytes);
    const bytes_view old(g_chunk, *whole);
    static uint8_t out[kNbytes + kChunkMaxOverhead];
    const uint8_t changed = 0x1;
    CHECK_ERR(detail::chunk_encode_spliced(none, params(1024), old, &changed, src, bytes_mut(out, sizeof out)),
              errc::invalid_argument);
    CHECK_ERR(detail::chunk_encode_spliced(e, bad, old, &changed, src, bytes_mut(out, sizeof out)),
              errc::invalid_argument);
    CHECK_ERR(detail::chunk_encode_spliced(e, params(-1), old, &changed, src, bytes_mut(out, sizeof out)),
              errc::invalid_argument);
    chunk_encode_params dict = params(1024);
    dict.use_dict = true;
    dict.compressor = codec::lz4;  // a codec that takes a dictionary
    chunk_encode_params delta = params(1024);
    delta.filters[0] = static_cast<uint8_t>(filter_id::delta);
    const chunk_encode_params* unspliced[] = {&copy, &dict, &delta};
    for (const chunk_encode_params* q : unspliced) {
      auto n = detail::chunk_encode_spliced(e, *q, old, &changed, src, bytes_mut(out, sizeof out));
      REQUIRE_OK(n);
      CHECK_EQ(*n, 0u);
    }
    auto shortn = detail::chunk_encode_spliced(e, params(1024), old, &changed, bytes_view(g_src, 16),
                                               bytes_mut(out, sizeof out));
    REQUIRE_OK(shortn);
    CHECK_EQ(*shortn, 0u);
    // The same chunk spliced with block 0 marked changed (and unchanged in fact): the chunk itself.
    auto same = detail::chunk_encode_spliced(e, params(1024), old, &changed, src, bytes_mut(out, sizeof out));
    REQUIRE_OK(same);
    CHECK_EQ(*same, *whole);
    CHECK(std::memcmp(out, g_chunk, *whole) == 0);
#endif
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_encoder_misuse, estimates_follow_the_options) {
  chunk_encoder_options o;
  o.max_blocksize = 4096;
  const size_t one = chunk_encoder_estimate(o);
  // Levels outside 1..9 count as the nearest; a parallel executor adds its output slots to its workers'.
  chunk_encoder_options low = o, lowest = o, high = o, highest = o;
  low.estimate_codec = lowest.estimate_codec = high.estimate_codec = highest.estimate_codec = codec::zstd;
  low.estimate_clevel = 1;
  lowest.estimate_clevel = -3;
  high.estimate_clevel = 9;
  highest.estimate_clevel = 12;
  CHECK_EQ(chunk_encoder_estimate(lowest), chunk_encoder_estimate(low));
  CHECK_EQ(chunk_encoder_estimate(highest), chunk_encoder_estimate(high));
  CHECK(chunk_encoder_estimate(low) >= one);
  chunk_encoder_options two = o, two_run = o;
  two.exec.workers = two_run.exec.workers = 2;
  two_run.exec.run = fixed_worker_run;
  CHECK(chunk_encoder_estimate(two) > one);
  CHECK(chunk_encoder_estimate(two_run) > chunk_encoder_estimate(two));
  // No workers counts as one; a codec id this library does not know has no state to count.
  chunk_encoder_options zero = o, unknown = o, lz4 = o;
  zero.exec.workers = 0;
  CHECK_EQ(chunk_encoder_estimate(zero), one);
  unknown.estimate_codec = static_cast<codec>(99);
  CHECK_EQ(chunk_encoder_estimate(unknown), one);
  lz4.estimate_codec = codec::lz4;
  CHECK(chunk_encoder_estimate(lz4) >= one);
  // An encoder made with no workers has one, and encodes.
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), zero));
  fill();
  CHECK(round_trips(e, params(1024)));
}

TESSERA_TEST(chunk_encoder_misuse, special_chunks_refuse_what_they_cannot_hold) {
  static uint8_t out[64];
  chunk_encode_params p = params(0);
  p.typesize = 0;
  CHECK_ERR(chunk_encode_special(p, chunk_special::zeros, 64, bytes_view(), bytes_mut(out, sizeof out)),
            errc::invalid_argument);
  CHECK_ERR(chunk_encode_special(params(-1), chunk_special::zeros, 64, bytes_view(), bytes_mut(out, sizeof out)),
            errc::invalid_argument);
  static const uint8_t value[300] = {1, 2, 3};
  // A value of another width than typesize (typesize 4; typesize 1 with a value of 2 bytes).
  CHECK_ERR(chunk_encode_special(params(0), chunk_special::value, 64, bytes_view(value, 2), bytes_mut(out, sizeof out)),
            errc::invalid_argument);
  chunk_encode_params bytes = params(0);
  bytes.typesize = 1;
  CHECK_ERR(chunk_encode_special(bytes, chunk_special::value, 64, bytes_view(value, 2), bytes_mut(out, sizeof out)),
            errc::invalid_argument);
  // A wide value (typesize 1, more than 255 bytes) must divide nbytes and fit a chunk; its size alone decides
  // (the bytes of the value too large to fit are never read).
  CHECK_ERR(chunk_encode_special(bytes, chunk_special::value, 301, bytes_view(value, 300), bytes_mut(out, sizeof out)),
            errc::invalid_argument);
  CHECK_ERR(chunk_encode_special(bytes, chunk_special::value, 600,
                                 bytes_view(value, static_cast<size_t>(INT32_MAX)), bytes_mut(out, sizeof out)),
            errc::invalid_argument);
  static uint8_t wide[400];
  auto n = chunk_encode_special(bytes, chunk_special::value, 600, bytes_view(value, 300), bytes_mut(wide, sizeof wide));
  REQUIRE_OK(n);
  CHECK_EQ(*n, kChunkHeaderExtendedSize + 300);
}

namespace {

// A user codec that reports one byte more than the room it was given.
status overrunning_encode(void*, bytes_view, bytes_mut out, uint8_t, size_t* written) noexcept {
  *written = out.size() + 1;
  return ok_status();
}

}  // namespace

TESSERA_TEST(chunk_encoder_misuse, a_user_codec_claiming_more_than_its_room_is_refused) {
  encoder_link_plugins();
  fill();
  chunk_encoder_options o;
  o.max_blocksize = 1024;
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator(), o));
  CHECK_ERR(user_codec_encode(e, overrunning_encode), errc::corrupt);
  CHECK(round_trips(e, params(512)));
}
