// The chunk encoder against callers that break its contract or fail under it: an executor that hands tasks a
// worker index past its own count, a user codec failing on a worker, a split mode that does not exist, block
// scratch that overflows, and an allocator refusing the parallel output slots. Each is refused with its code;
// nothing leaks; the encoder encodes again afterwards.
#include <cstdint>
#include <cstring>

#include "tessera/chunk.hpp"
#include "tessera/codecs.hpp"

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
  chunk_user_codec codec;
  codec.id = kChunkUserIdFirst;
  codec.encode = failing_encode;
  chunk_plugins plugins;
  plugins.codecs = &codec;
  plugins.ncodecs = 1;
  chunk_encode_params p = params(512);
  p.compressor = chunk_user_codec_id(kChunkUserIdFirst);
  p.plugins = &plugins;
  CHECK_ERR(chunk_encode(e, p, bytes_view(g_src, kNbytes), bytes_mut(g_chunk, sizeof g_chunk)), errc::io);
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
