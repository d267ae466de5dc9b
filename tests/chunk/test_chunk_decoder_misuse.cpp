// SPDX-License-Identifier: BSD-3-Clause
// The chunk decoder against callers that break its contract: a decoder never initialized, an executor that
// hands tasks a worker index past its own count, a fixed scratch smaller than the chunk's blocks, an allocator
// that refuses the fixed scratch. Each is refused with its code; nothing leaks.
#include <cstdint>
#include <cstring>
#include <utility>

#include "tessera/chunk.hpp"

#include "../../src/chunk/chunk_internal.hpp"  // the array reads' per-worker entry points (internal)

#include "../support/check.hpp"
#include "block_request.hpp"
#include "../support/test_allocators.hpp"
#include "chunk_builder.hpp"

using namespace tessera;
using namespace chunk_test;

namespace {

uint8_t g_src[4096];
uint8_t g_chunk[3][8192];
uint8_t g_out[4096];
uint8_t g_work[3 * 2048];

// A regular chunk of 2000 bytes (typesize 4, raw streams; delta in slot 4 when asked) in g_chunk[slot].
bytes_view regular_chunk(int slot, int32_t blocksize, bool delta) {
  build_spec s;
  s.typesize = 4;
  s.blocksize = blocksize;
  s.raw_streams_only = true;
  if (delta) s.filters[4] = 3;
  for (size_t i = 0; i < 2000; ++i) g_src[i] = static_cast<uint8_t>(i * 7 / 3);
  const size_t n = chunk_build(s, g_src, 2000, g_chunk[slot], sizeof g_chunk[slot], g_work);
  return bytes_view(g_chunk[slot], n);
}

// Runs every task with worker index `workers` (one past the last valid index).
void past_workers_run(void* context, size_t ntasks, executor_task task, void* task_context) noexcept {
  const uint32_t workers = *static_cast<const uint32_t*>(context);
  for (size_t i = 0; i < ntasks; ++i) task(task_context, i, workers);
}

struct block_list {
  const size_t* blocks = nullptr;
  size_t consumed = 0;
  static size_t block(void* c, size_t i) noexcept { return static_cast<block_list*>(c)->blocks[i]; }
  static status consume(void* c, size_t, bytes_view, uint32_t) noexcept {
    ++static_cast<block_list*>(c)->consumed;
    return ok_status();
  }
};

}  // namespace

TESSERA_TEST(chunk_decoder_misuse, a_decoder_never_initialized_is_refused) {
  const bytes_view c = regular_chunk(0, 512, false);
  REQUIRE(!c.empty());
  chunk_decoder d;
  CHECK_ERR(chunk_decode(d, c, bytes_mut(g_out, sizeof g_out)), errc::invalid_argument);
  CHECK_ERR(chunk_decode_block(d, c, 1, bytes_mut(g_out, sizeof g_out)), errc::invalid_argument);
  const size_t blocks[] = {0};
  block_list list;
  list.blocks = blocks;
  chunk_block_request r = chunk_test::block_request_of(list, 1);
  CHECK_ERR(chunk_decode_blocks(d, c, r), errc::invalid_argument);
  CHECK_EQ(list.consumed, 0u);
  // A special-value chunk needs no decoder state: it decodes all the same.
  chunk_encode_params p;
  p.typesize = 4;
  static uint8_t zeros[64 + kChunkMaxOverhead];
  auto z = chunk_encode_special(p, chunk_special::zeros, 64, bytes_view(), bytes_mut(zeros, sizeof zeros));
  REQUIRE_OK(z);
  std::memset(g_out, 0xee, 64);
  auto n = chunk_decode(d, bytes_view(zeros, *z), bytes_mut(g_out, 64));
  REQUIRE_OK(n);
  CHECK_EQ(*n, 64u);
  CHECK_EQ(g_out[0], 0);
  CHECK_EQ(g_out[63], 0);
}

TESSERA_TEST(chunk_decoder_misuse, an_executor_past_its_workers_is_refused) {
  static uint32_t workers = 2;
  chunk_decoder_options o;
  o.exec.run = past_workers_run;
  o.exec.context = &workers;
  o.exec.workers = workers;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator(), o));
  const bytes_view c = regular_chunk(0, 512, false);
  REQUIRE(!c.empty());
  CHECK_ERR(chunk_decode(d, c, bytes_mut(g_out, sizeof g_out)), errc::invalid_argument);
  const size_t blocks[] = {3, 1, 0};
  block_list list;
  list.blocks = blocks;
  chunk_block_request r = chunk_test::block_request_of(list, 3);
  CHECK_ERR(chunk_decode_blocks(d, c, r), errc::invalid_argument);
  CHECK_EQ(list.consumed, 0u);  // no task ran on a worker that does not exist
}

TESSERA_TEST(chunk_decoder_misuse, a_fixed_scratch_refuses_larger_blocks) {
  test::counting_allocator counter;
  {
    chunk_decoder_options o;
    o.max_blocksize = 256;
    o.fixed_scratch = true;
    static uint32_t workers = 2;  // a real executor: runs the tasks serially with a valid worker index
    o.exec.run = [](void*, size_t ntasks, executor_task task, void* tc) noexcept {
      for (size_t i = 0; i < ntasks; ++i) task(tc, i, static_cast<uint32_t>(i % 2));
    };
    o.exec.context = &workers;
    o.exec.workers = workers;
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, counter.get(), o));
    const size_t after_init = counter.allocations;
    // Blocks that fit decode; blocks of 1024 bytes do not fit the workers' fixed scratch.
    const bytes_view small = regular_chunk(0, 256, true);
    const bytes_view large = regular_chunk(1, 1024, true);
    REQUIRE(!small.empty() && !large.empty());
    auto n = chunk_decode(d, small, bytes_mut(g_out, sizeof g_out));
    REQUIRE_OK(n);
    CHECK(std::memcmp(g_out, g_src, 2000) == 0);
    CHECK_ERR(chunk_decode(d, large, bytes_mut(g_out, sizeof g_out)), errc::buffer_too_small);
    // A later block of a delta chunk decodes block 0 into its own buffer, made once at the first size asked.
    auto b = chunk_decode_block(d, small, 2, bytes_mut(g_out, sizeof g_out));
    REQUIRE_OK(b);
    CHECK_EQ(*b, 256u);
    CHECK(std::memcmp(g_out, g_src + 512, 256) == 0);
    CHECK_ERR(chunk_decode_block(d, large, 1, bytes_mut(g_out, sizeof g_out)), errc::buffer_too_small);
    CHECK_EQ(counter.allocations, after_init + 1);  // the block-0 buffer, and nothing else grew
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_decoder_misuse, a_refused_fixed_scratch_fails_init_without_a_leak) {
  chunk_decoder_options o;
  o.max_blocksize = 1024;
  o.fixed_scratch = true;
  o.exec.workers = 3;
  bool made = false;
  for (size_t fail = 1; fail < 16 && !made; ++fail) {
    test::counting_allocator counter;
    counter.fail_at = fail;
    {
      chunk_decoder d;
      status s = chunk_decoder_init(d, counter.get(), o);
      if (s.ok()) {
        made = true;
        CHECK(fail > 4);  // the workers, then one scratch each: all refused in turn before this
      } else {
        CHECK_ERR(s, errc::out_of_memory);
        CHECK_EQ(counter.live_blocks, 0u);  // a failed init keeps nothing
        CHECK_ERR(chunk_decode(d, regular_chunk(0, 512, false), bytes_mut(g_out, sizeof g_out)),
                  errc::invalid_argument);
      }
    }
    CHECK(!counter.leaked());
  }
  CHECK(made);
  // A block size whose scratch overflows size_t is refused before any scratch is asked for.
  o.max_blocksize = SIZE_MAX / 2;
  test::counting_allocator counter;
  {
    chunk_decoder d;
    CHECK_ERR(chunk_decoder_init(d, counter.get(), o), errc::overflow);
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_decoder_misuse, a_moved_decoder_decodes_and_its_source_is_released) {
  test::counting_allocator counter;
  {
    chunk_decoder a;
    REQUIRE_OK(chunk_decoder_init(a, counter.get()));
    const bytes_view c = regular_chunk(0, 512, false);
    REQUIRE_OK(chunk_decode(a, c, bytes_mut(g_out, sizeof g_out)));
    chunk_decoder b(std::move(a));
    std::memset(g_out, 0, sizeof g_out);
    auto n = chunk_decode(b, c, bytes_mut(g_out, sizeof g_out));
    REQUIRE_OK(n);
    CHECK_EQ(*n, 2000u);
    CHECK(std::memcmp(g_out, g_src, 2000) == 0);
    CHECK_ERR(chunk_decode(a, c, bytes_mut(g_out, sizeof g_out)), errc::invalid_argument);  // NOLINT(bugprone-use-after-move)
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_decoder_misuse, per_worker_block_reads_refuse_what_they_cannot_decode_alone) {
  // What array reads call on each worker after chunk_decoder_prepare: a decoder never initialized, a worker
  // index past the executor's, and chunks whose blocks do not decode alone (special values, memcpyed, a later
  // block under delta) are refused.
  const bytes_view c = regular_chunk(0, 512, false);
  const bytes_view delta = regular_chunk(1, 512, true);
  REQUIRE(!c.empty() && !delta.empty());
  auto h = chunk_header_read(c);
  REQUIRE_OK(h);
  bytes_view decoded;
  chunk_decoder none;
  CHECK_ERR(detail::chunk_decoder_prepare(none, *h), errc::invalid_argument);
  CHECK_ERR(detail::chunk_block_decode_on(none, 0, c, 0, 0, 512, &decoded), errc::invalid_argument);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  // Without chunk_decoder_prepare the workers have no scratch, and a worker's task never allocates.
  CHECK_ERR(detail::chunk_block_decode_on(d, 0, c, 0, 0, 512, &decoded), errc::buffer_too_small);
  REQUIRE_OK(detail::chunk_decoder_prepare(d, *h));
  CHECK_ERR(detail::chunk_block_decode_on(d, 1, c, 0, 0, 512, &decoded), errc::invalid_argument);  // one worker
  CHECK_ERR(detail::chunk_block_decode_on(d, 0, delta, 1, 0, 512, &decoded), errc::invalid_argument);
  chunk_encode_params p;
  p.typesize = 4;
  static uint8_t zeros[64 + kChunkMaxOverhead];
  auto z = chunk_encode_special(p, chunk_special::zeros, 64, bytes_view(), bytes_mut(zeros, sizeof zeros));
  REQUIRE_OK(z);
  CHECK_ERR(detail::chunk_block_decode_on(d, 0, bytes_view(zeros, *z), 0, 0, 64, &decoded), errc::invalid_argument);
  // A block that decodes alone does.
  REQUIRE_OK(detail::chunk_block_decode_on(d, 0, c, 2, 0, 512, &decoded));
  REQUIRE_EQ(decoded.size(), 512u);
  CHECK(std::memcmp(decoded.data(), g_src + 1024, 512) == 0);
}

TESSERA_TEST(chunk_decoder_misuse, internal_block_reads_refuse_bad_blocks_and_outputs) {
  // chunk_decoder_prepare refuses a header with a negative blocksize; a block decoded into the caller's buffer
  // needs a buffer, a block of the chunk and room for it; the fixed-blocks reader refuses a block past the chunk.
  const bytes_view c = regular_chunk(0, 512, false);
  REQUIRE(!c.empty());
  auto h = chunk_header_read(c);
  REQUIRE_OK(h);
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  chunk_header negative = *h;
  negative.blocksize = -1;
  CHECK_ERR(detail::chunk_decoder_prepare(d, negative), errc::malformed);
  REQUIRE_OK(detail::chunk_decoder_prepare(d, *h));
  bytes_view decoded;
#if TESSERA_SPEED_PATHS
  static uint8_t block[512];
  CHECK_ERR(detail::chunk_block_decode_into_on(d, 0, c, 0, 0, 512, bytes_mut(), &decoded), errc::invalid_argument);
  CHECK_ERR(detail::chunk_block_decode_into_on(d, 0, c, 4, 0, 512, bytes_mut(block, 512), &decoded),
            errc::out_of_range);  // 2000 bytes: blocks 0..3
  CHECK_ERR(detail::chunk_block_decode_into_on(d, 0, c, 1, 0, 512, bytes_mut(block, 511), &decoded),
            errc::buffer_too_small);
  REQUIRE_OK(detail::chunk_block_decode_into_on(d, 0, c, 1, 0, 512, bytes_mut(block, 512), &decoded));
  CHECK(decoded.data() == block && decoded.size() == 512u);
  CHECK(std::memcmp(block, g_src + 512, 512) == 0);
#endif
  const size_t past[] = {4};
  block_list list;
  list.blocks = past;
  chunk_block_request r = chunk_test::block_request_of(list, 1);
  CHECK_ERR(detail::chunk_decode_fixed_blocks(d, c, r), errc::out_of_range);
  CHECK_EQ(list.consumed, 0u);
  // A request with blocks but no block or no consume callback is refused before any block decodes.
  r.block = nullptr;
  CHECK_ERR(chunk_decode_blocks(d, c, r), errc::invalid_argument);
  r.block = block_list::block;
  r.consume = nullptr;
  CHECK_ERR(chunk_decode_blocks(d, c, r), errc::invalid_argument);
  CHECK_EQ(list.consumed, 0u);
}

namespace {

// Consumes blocks until the one numbered fail_at, whose consume fails; records the ranges asked for.
struct failing_consumer {
  size_t fail_at = 0;
  size_t consumed = 0;
  size_t ranged = 0;
  static size_t block(void*, size_t i) noexcept { return i; }
  static status consume(void* c, size_t i, bytes_view decoded, uint32_t) noexcept {
    auto& f = *static_cast<failing_consumer*>(c);
    if (i == f.fail_at) return make_error(errc::io, TESSERA_MSG("test: consume failed"));
    if (decoded.size() >= 8 && std::memcmp(decoded.data(), g_src + 512 * i, 8) != 0)
      return make_error(errc::corrupt, TESSERA_MSG("test: wrong block"));
    ++f.consumed;
    return ok_status();
  }
  static void range(void* c, size_t, size_t* begin, size_t* end) noexcept {
    ++static_cast<failing_consumer*>(c)->ranged;
    *begin = 0;
    *end = 8;
  }
};

}  // namespace

TESSERA_TEST(chunk_decoder_misuse, a_failing_consume_stops_the_blocks_with_its_error) {
  const bytes_view c = regular_chunk(0, 512, false);
  REQUIRE(!c.empty());
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  for (int fixed = 0; fixed < 2; ++fixed) {
    failing_consumer f;
    f.fail_at = 2;
    const chunk_block_request r = chunk_test::block_request_of(f, 4);
    const status s = fixed ? status(detail::chunk_decode_fixed_blocks(d, c, r)) : chunk_decode_blocks(d, c, r);
    CHECK_ERR(s, errc::io);
    CHECK_EQ(f.consumed, 2u);  // blocks 0 and 1, then block 2's consume failed and block 3 never ran
    CHECK_EQ(f.ranged, 3u);
  }
}

TESSERA_TEST(chunk_decoder_misuse, workers_without_a_run_function_decode_serially) {
  // An executor with workers but no run function: the decoder keeps its workers and runs every block on the
  // caller's thread; the estimate grows with the workers.
  chunk_decoder_options o;
  o.exec.workers = 3;
  chunk_decoder_options one, zero;
  zero.exec.workers = 0;  // counts as one
  CHECK(chunk_decoder_estimate(o) > chunk_decoder_estimate(one));
  CHECK_EQ(chunk_decoder_estimate(zero), chunk_decoder_estimate(one));
  test::counting_allocator counter;
  {
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, counter.get(), o));
    const bytes_view c = regular_chunk(0, 512, false);
    REQUIRE(!c.empty());
    std::memset(g_out, 0, sizeof g_out);
    auto n = chunk_decode(d, c, bytes_mut(g_out, sizeof g_out));
    REQUIRE_OK(n);
    CHECK_EQ(*n, 2000u);
    CHECK(std::memcmp(g_out, g_src, 2000) == 0);
  }
  CHECK(!counter.leaked());
  // A fixed scratch of no block size (and no workers, counted as one): init makes none, and it never grows, so a
  // chunk with blocks is refused (buffer_too_small) while one without (memcpyed) decodes.
  chunk_decoder_options f;
  f.fixed_scratch = true;
  f.max_blocksize = 0;
  f.exec.workers = 0;
  {
    chunk_decoder d;
    REQUIRE_OK(chunk_decoder_init(d, counter.get(), f));
    CHECK_ERR(chunk_decode(d, regular_chunk(0, 512, false), bytes_mut(g_out, sizeof g_out)), errc::buffer_too_small);
    chunk_encoder e;
    REQUIRE_OK(chunk_encoder_init(e, counter.get()));
    chunk_encode_params p;
    p.typesize = 4;
    p.clevel = 0;
    auto m = chunk_encode(e, p, bytes_view(g_src, 2000), bytes_mut(g_chunk[2], sizeof g_chunk[2]));
    REQUIRE_OK(m);
    std::memset(g_out, 0, sizeof g_out);
    auto n = chunk_decode(d, bytes_view(g_chunk[2], *m), bytes_mut(g_out, sizeof g_out));
    REQUIRE_OK(n);
    CHECK_EQ(*n, 2000u);
    CHECK(std::memcmp(g_out, g_src, 2000) == 0);
  }
  CHECK(!counter.leaked());
}

TESSERA_TEST(chunk_decoder_misuse, missing_plugins_are_named_only_for_chunks_that_run_them) {
  chunk_header h;
  h.format = codec_format::user;
  h.udcodec = 50;
  h.filters[kChunkMaxFilters - 1] = 40;
  // Special-value and memcpyed chunks run no codec nor filter: nothing is missing.
  h.special = chunk_special::zeros;
  CHECK(chunk_plugins_missing(h, nullptr).kind == chunk_missing_kind::none);
  h.special = chunk_special::none;
  h.memcpyed = true;
  CHECK(chunk_plugins_missing(h, nullptr).kind == chunk_missing_kind::none);
  h.memcpyed = false;
  // A filter whose backward is missing is named first; then a codec that cannot decode.
  chunk_user_filter filter;
  filter.id = 40;
  chunk_user_codec codec;
  codec.id = 50;
  chunk_plugins plugins{&codec, 1, &filter, 1};
  chunk_missing m = chunk_plugins_missing(h, &plugins);
  CHECK(m.kind == chunk_missing_kind::filter && m.id == 40);
  filter.backward = [](void*, bytes_view, bytes_mut, uint8_t, uint8_t) noexcept { return ok_status(); };
  m = chunk_plugins_missing(h, &plugins);
  CHECK(m.kind == chunk_missing_kind::codec && m.id == 50);
  codec.decode = [](void*, bytes_view, bytes_mut, uint8_t, size_t*) noexcept { return ok_status(); };
  CHECK(chunk_plugins_missing(h, &plugins).kind == chunk_missing_kind::none);
}
