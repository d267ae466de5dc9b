// SPDX-License-Identifier: BSD-3-Clause
// The POSIX thread pool: what an idle pool costs, how fast a run starts, and what a second worker gains on whole
// chunks. Prints numbers and asserts nothing (timings belong here, never in ctest).
//   tessera_bench_pool [--idle-ms N] [--samples N]
// Idle: a 2-worker pool is left idle for --idle-ms (default 200) right after thread_pool_init, and again right
// after a burst of short runs. Printed: the process's CPU time over the idle period (getrusage, user + system,
// all threads) next to its wall time. Sleeping threads cost ~0%; a thread that spins costs ~100% (a core).
// Latency: back-to-back runs of 2 empty tasks, and runs after a 1 ms gap (the workers asleep by then); the CPU
// time each such gap costs (the threads watch for the next run for a bounded time before they sleep).
// Speed: decoding and encoding chunks with 1 worker (serial) and over the 2-worker pool, each the best of
// --samples (default 10) interleaved bursts; ratio = 2 workers / 1 worker (below 1: the second worker pays).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "tessera/chunk.hpp"
#include "tessera/executor.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/thread_pool.hpp"

namespace {

using namespace tessera;
using clock_type = std::chrono::steady_clock;

double now_s() { return std::chrono::duration<double>(clock_type::now().time_since_epoch()).count(); }

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void die(const char* what, const error& e) {
  std::fprintf(stderr, "tessera_bench_pool: %s: %s\n", what, e.ok() ? "failed" : e.message);
  std::exit(1);
}

// ---- Idle cost and run latency -----------------------------------------------------------------------------

void idle_report(const char* what, int idle_ms) {
  const double c0 = cpu_s(), w0 = now_s();
  std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
  const double cpu = cpu_s() - c0, wall = now_s() - w0;
  std::printf("idle %-28s wall %7.1f ms, process CPU %6.2f ms (%5.1f%% of one core)\n", what, wall * 1e3,
              cpu * 1e3, 100.0 * cpu / wall);
}

void spin_task(void* context, size_t index, uint32_t) noexcept {
  auto* sums = static_cast<volatile uint64_t*>(context);
  uint64_t x = index;
  for (int i = 0; i < 2000; ++i) x = x * 6364136223846793005ull + 1;
  sums[index % 64] = x;
}

void empty_task(void*, size_t, uint32_t) noexcept {}

void idle_and_latency(int idle_ms) {
  thread_pool pool;
  if (auto e = thread_pool_init(pool, 2); !e.ok()) die("thread_pool_init", e);
  const executor ex = thread_pool_executor(pool);
  idle_report("after init", idle_ms);

  volatile uint64_t sums[64] = {};
  constexpr int kBurst = 2000;
  const double c0 = cpu_s(), w0 = now_s();
  for (int r = 0; r < kBurst; ++r) executor_run(ex, 16, spin_task, const_cast<uint64_t*>(sums));
  const double cpu = cpu_s() - c0, wall = now_s() - w0;
  std::printf("burst of %d runs x 16 tasks       wall %7.1f ms, process CPU %6.2f ms (%5.1f%% of one core)\n",
              kBurst, wall * 1e3, cpu * 1e3, 100.0 * cpu / wall);
  idle_report("after the burst", idle_ms);

  constexpr int kRuns = 20000;
  double t0 = now_s();
  for (int r = 0; r < kRuns; ++r) executor_run(ex, 2, empty_task, nullptr);
  std::printf("run of 2 empty tasks, back to back:    %8.2f us per run\n", (now_s() - t0) / kRuns * 1e6);
  constexpr int kGapRuns = 100;
  double total = 0;
  for (int r = 0; r < kGapRuns; ++r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    t0 = now_s();
    executor_run(ex, 2, empty_task, nullptr);
    total += now_s() - t0;
  }
  std::printf("run of 2 empty tasks, after 1 ms idle: %8.2f us per run\n", total / kGapRuns * 1e6);

  // A run every millisecond: each gap costs the pool's bounded watch for the next run, then the threads sleep.
  const double c1 = cpu_s(), w1 = now_s();
  for (int r = 0; r < kGapRuns; ++r) {
    executor_run(ex, 2, empty_task, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double gap_cpu = cpu_s() - c1, gap_wall = now_s() - w1;
  std::printf("a run every 1 ms: process CPU %6.1f us per gap (%4.1f%% of one core)\n", gap_cpu / kGapRuns * 1e6,
              100.0 * gap_cpu / gap_wall);
}

// ---- 1 vs 2 workers on whole chunks --------------------------------------------------------------------------

// Smooth int32 series with noise: compresses about 2-4x after shuffle, like typical numeric data.
std::vector<uint8_t> make_data(size_t nbytes, uint64_t seed) {
  std::vector<uint8_t> v(nbytes);
  uint64_t s = seed;
  for (size_t i = 0; i + 4 <= nbytes; i += 4) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t x = static_cast<uint32_t>(i / 4 * 3 + (s >> 58));
    std::memcpy(v.data() + i, &x, 4);
  }
  return v;
}

struct timing {
  double serial = 1e30;
  double parallel = 1e30;
};

// The best (shortest) seconds of one call of each op over `samples` alternating bursts of `inner` calls (a burst
// keeps the pool's threads awake, as chunk after chunk does), so the best call is one no other process delayed.
template <class S, class P>
timing best_of(int samples, int inner, S&& serial_op, P&& parallel_op) {
  timing best;
  for (int s = 0; s < samples; ++s) {
    for (int i = 0; i < inner; ++i) {
      const double t0 = now_s();
      serial_op();
      best.serial = std::min(best.serial, now_s() - t0);
    }
    for (int i = 0; i < inner; ++i) {
      const double t0 = now_s();
      parallel_op();
      best.parallel = std::min(best.parallel, now_s() - t0);
    }
  }
  return best;
}

void report(const char* what, const timing& tm) {
  std::printf("%-36s 1 worker %9.1f us, 2 workers %9.1f us, ratio %.3f\n", what, tm.serial * 1e6,
              tm.parallel * 1e6, tm.parallel / tm.serial);
  std::fflush(stdout);
}

struct codecs {
  chunk_encoder serial_enc, parallel_enc;
  chunk_decoder serial_dec, parallel_dec;
};

void codecs_init(codecs& c, thread_pool& pool) {
  chunk_encoder_options eo1, eo2;
  eo2.exec = thread_pool_executor(pool);
  chunk_decoder_options do1, do2;
  do2.exec = thread_pool_executor(pool);
  if (auto e = chunk_encoder_init(c.serial_enc, posix_allocator(), eo1); !e.ok()) die("chunk_encoder_init", e);
  if (auto e = chunk_encoder_init(c.parallel_enc, posix_allocator(), eo2); !e.ok()) die("chunk_encoder_init", e);
  if (auto e = chunk_decoder_init(c.serial_dec, posix_allocator(), do1); !e.ok()) die("chunk_decoder_init", e);
  if (auto e = chunk_decoder_init(c.parallel_dec, posix_allocator(), do2); !e.ok()) die("chunk_decoder_init", e);
}

chunk_encode_params params_of(codec c, size_t blocksize) {
  chunk_encode_params p;
  p.typesize = 4;
  p.compressor = c;
  p.clevel = 5;
  p.blocksize = static_cast<int32_t>(blocksize);
  return p;
}

void decode_case(codecs& c, const std::vector<uint8_t>& src, codec cd, size_t blocksize, int samples, int inner) {
  std::vector<uint8_t> chunk(chunk_encode_bound(src.size()));
  auto n = chunk_encode(c.serial_enc, params_of(cd, blocksize), bytes_view(src.data(), src.size()),
                        bytes_mut(chunk.data(), chunk.size()));
  if (!n.ok()) die("chunk_encode", n.err());
  const bytes_view cv(chunk.data(), *n);
  std::vector<uint8_t> out1(src.size()), out2(src.size());
  const timing tm = best_of(
      samples, inner, [&] { (void)chunk_decode(c.serial_dec, cv, bytes_mut(out1.data(), out1.size())); },
      [&] { (void)chunk_decode(c.parallel_dec, cv, bytes_mut(out2.data(), out2.size())); });
  if (out1 != src || out2 != src) die("chunk_decode", make_error(errc::corrupt, "decoded data differs"));
  char what[80];
  if (src.size() >= 1024 * 1024) {
    std::snprintf(what, sizeof what, "decode %zu MiB %s, %zu KiB blocks", src.size() >> 20, codec_name(cd),
                  blocksize / 1024);
  } else {
    std::snprintf(what, sizeof what, "decode %zu x %zu KiB blocks %s", src.size() / blocksize, blocksize / 1024,
                  codec_name(cd));
  }
  report(what, tm);
}

void encode_case(codecs& c, const std::vector<uint8_t>& src, codec cd, int samples) {
  const chunk_encode_params p = params_of(cd, 0);
  const bytes_view sv(src.data(), src.size());
  std::vector<uint8_t> out1(chunk_encode_bound(src.size())), out2(out1.size());
  const timing tm = best_of(
      samples, 3, [&] { (void)chunk_encode(c.serial_enc, p, sv, bytes_mut(out1.data(), out1.size())); },
      [&] { (void)chunk_encode(c.parallel_enc, p, sv, bytes_mut(out2.data(), out2.size())); });
  char what[80];
  std::snprintf(what, sizeof what, "encode %zu MiB %s clevel 5", src.size() >> 20, codec_name(cd));
  report(what, tm);
}

void speed(int samples) {
  thread_pool pool;
  if (auto e = thread_pool_init(pool, 2); !e.ok()) die("thread_pool_init", e);
  codecs c;
  codecs_init(c, pool);
  const codec cd = codec_available(codec::lz4) ? codec::lz4 : codec::blosclz;
  const auto big = make_data(4 * 1024 * 1024, 1);
  for (size_t blocksize : {size_t{32} * 1024, size_t{256} * 1024}) decode_case(c, big, cd, blocksize, samples, 4);
  for (size_t nblocks : {size_t{2}, size_t{3}, size_t{4}}) {
    for (size_t blocksize : {size_t{8} * 1024, size_t{32} * 1024}) {
      const auto src = make_data(nblocks * blocksize, 2);
      decode_case(c, src, cd, blocksize, samples, static_cast<int>(std::max<size_t>(4, 512 * 1024 / src.size())));
    }
  }
  for (codec e : {codec::blosclz, codec::lz4}) {
    if (codec_available(e)) encode_case(c, big, e, samples);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int idle_ms = 200;
  int samples = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--idle-ms") == 0) idle_ms = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--samples") == 0) samples = std::max(1, std::atoi(argv[i + 1]));
  }
  std::printf("tessera_bench_pool: %u cores available%s\n", cpu_count(),
              cpu_count() < 2 ? " (a second worker cannot pay on one core)" : "");
  idle_and_latency(idle_ms);
  speed(samples);
  return 0;
}
