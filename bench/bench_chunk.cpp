// SPDX-License-Identifier: BSD-3-Clause
// Throughput of whole-chunk encoding and decoding: every codec x filter on four kinds of data, with 1 and 2
// threads of the POSIX thread pool, next to memcpy in the same run. Rates are bytes of *uncompressed* data per
// second of wall time (decimal GB/s), as Blosc reports them; `ratio` is nbytes / cbytes. The summary printed at
// the end gives each benchmark's best repetition and its ratio to memcpy of 4 MiB and of 256 KiB (the
// reference's usual block size), the numbers that compare across machines.
//   tessera_bench_chunk [--benchmark_filter=...] [--benchmark_repetitions=N] [--benchmark_min_time=...]
// Headline cases (a minute or so):
//   tessera_bench_chunk --benchmark_filter='^memcpy|f32smooth/(lz4|blosclz)/c5/shuffle/'
//
// Names: {encode,decode}/<data>/<codec>/c<clevel>/<filter>/t<threads>/<chunk size>. Data (typesize):
// f32smooth (4) sin(i/97)*1000 + i*0.01; i32ramp (4) i; f64walk (8) a random walk of uniform steps in
// [-0.5, 0.5); random (4) uniformly random bytes. Blocks are the encoder's automatic choice. Small chunks of a few
// blocks (512 KiB, 1 MiB) show whether a second thread pays for itself on short runs.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tessera/chunk.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/thread_pool.hpp"

namespace {

constexpr size_t kChunk = 4 * 1024 * 1024;
constexpr int kMaxThreads = 2;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

enum class data_kind { f32smooth, i32ramp, f64walk, random };

struct data_set {
  data_kind kind;
  const char* name;
  uint8_t typesize;
};

constexpr data_set kDataSets[] = {{data_kind::f32smooth, "f32smooth", 4},
                                  {data_kind::i32ramp, "i32ramp", 4},
                                  {data_kind::f64walk, "f64walk", 8},
                                  {data_kind::random, "random", 4}};

// kChunk bytes of one kind; smaller chunks are its prefixes.
const std::vector<uint8_t>& data_get(data_kind kind) {
  static std::map<data_kind, std::vector<uint8_t>> cache;
  auto it = cache.find(kind);
  if (it != cache.end()) return it->second;
  std::vector<uint8_t> d(kChunk);
  uint64_t seed = 0x7e55e7a;
  switch (kind) {
    case data_kind::f32smooth:
      for (size_t i = 0; i < kChunk / 4; ++i) {
        const float v = static_cast<float>(std::sin(static_cast<double>(i) / 97.0) * 1000.0 + static_cast<double>(i) * 0.01);
        std::memcpy(&d[4 * i], &v, 4);
      }
      break;
    case data_kind::i32ramp:
      for (size_t i = 0; i < kChunk / 4; ++i) {
        const int32_t v = static_cast<int32_t>(i);
        std::memcpy(&d[4 * i], &v, 4);
      }
      break;
    case data_kind::f64walk: {
      double x = 0;
      for (size_t i = 0; i < kChunk / 8; ++i) {
        x += static_cast<double>(splitmix64(seed) >> 11) * 0x1.0p-53 - 0.5;
        std::memcpy(&d[8 * i], &x, 8);
      }
      break;
    }
    case data_kind::random:
      for (size_t i = 0; i < kChunk; i += 8) {
        const uint64_t v = splitmix64(seed);
        std::memcpy(&d[i], &v, 8);
      }
      break;
  }
  return cache.emplace(kind, std::move(d)).first->second;
}

// One pool per thread count, started once and kept for the whole run (as an application would).
tessera::executor executor_get(int threads) {
  static tessera::thread_pool pools[kMaxThreads + 1];
  tessera::thread_pool& p = pools[threads];
  if (tessera::thread_pool_workers(p) == 0 && !tessera::thread_pool_init(p, static_cast<uint32_t>(threads)).ok()) {
    std::fprintf(stderr, "thread_pool_init(%d) failed\n", threads);
    std::abort();
  }
  return tessera::thread_pool_executor(p);
}

struct chunk_case {
  const data_set* data;
  tessera::codec compressor;
  int clevel;
  tessera::filter_id filter;
  int threads;
  size_t size;
};

tessera::chunk_encode_params params_of(const chunk_case& c) {
  tessera::chunk_encode_params p;
  p.typesize = c.data->typesize;
  p.clevel = c.clevel;
  p.compressor = c.compressor;
  p.filters[5] = static_cast<uint8_t>(c.filter);
  return p;
}

void bench_encode(benchmark::State& state, chunk_case c) {
  const std::vector<uint8_t>& src = data_get(c.data->kind);
  std::vector<uint8_t> out(tessera::chunk_encode_bound(c.size));
  tessera::chunk_encoder_options o;
  o.exec = executor_get(c.threads);
  o.max_blocksize = 512 * 1024;
  tessera::chunk_encoder e;
  if (!tessera::chunk_encoder_init(e, tessera::posix_allocator(), o).ok()) return state.SkipWithError("encoder init");
  const tessera::chunk_encode_params p = params_of(c);
  size_t cbytes = 0;
  for (auto _ : state) {
    auto r = tessera::chunk_encode(e, p, tessera::bytes_view(src.data(), c.size), tessera::bytes_mut(out.data(), out.size()));
    if (!r.ok()) return state.SkipWithError(r.err().message);
    cbytes = *r;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(c.size));
  state.counters["ratio"] = static_cast<double>(c.size) / static_cast<double>(cbytes);
}

void bench_decode(benchmark::State& state, chunk_case c) {
  const std::vector<uint8_t>& src = data_get(c.data->kind);
  std::vector<uint8_t> chunk(tessera::chunk_encode_bound(c.size));
  std::vector<uint8_t> out(c.size);
  size_t cbytes = 0;
  {
    tessera::chunk_encoder e;
    if (!tessera::chunk_encoder_init(e, tessera::posix_allocator()).ok()) return state.SkipWithError("encoder init");
    auto r = tessera::chunk_encode(e, params_of(c), tessera::bytes_view(src.data(), c.size),
                                   tessera::bytes_mut(chunk.data(), chunk.size()));
    if (!r.ok()) return state.SkipWithError(r.err().message);
    cbytes = *r;
  }
  tessera::chunk_decoder_options o;
  o.exec = executor_get(c.threads);
  o.max_blocksize = 512 * 1024;
  tessera::chunk_decoder d;
  if (!tessera::chunk_decoder_init(d, tessera::posix_allocator(), o).ok()) return state.SkipWithError("decoder init");
  const tessera::bytes_view in(chunk.data(), cbytes);
  {
    auto r = tessera::chunk_decode(d, in, tessera::bytes_mut(out.data(), out.size()));
    if (!r.ok()) return state.SkipWithError(r.err().message);
    if (*r != c.size || std::memcmp(out.data(), src.data(), c.size) != 0) return state.SkipWithError("round trip differs");
  }
  for (auto _ : state) {
    auto r = tessera::chunk_decode(d, in, tessera::bytes_mut(out.data(), out.size()));
    if (!r.ok()) return state.SkipWithError(r.err().message);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(c.size));
  state.counters["ratio"] = static_cast<double>(c.size) / static_cast<double>(cbytes);
}

void bench_memcpy(benchmark::State& state, size_t size) {
  std::vector<uint8_t> src(size, 1), dst(size);
  for (size_t i = 0; i < size; ++i) src[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), size);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
}

std::string size_name(size_t size) {
  return size % (1024 * 1024) == 0 ? std::to_string(size / (1024 * 1024)) + "MiB" : std::to_string(size / 1024) + "KiB";
}

const char* filter_name(tessera::filter_id f) {
  switch (f) {
    case tessera::filter_id::shuffle: return "shuffle";
    case tessera::filter_id::bitshuffle: return "bitshuffle";
    default: return "none";
  }
}

void chunk_register(const chunk_case& c) {
  const std::string tail = std::string("/") + c.data->name + "/" + tessera::codec_name(c.compressor) + "/c" +
                           std::to_string(c.clevel) + "/" + filter_name(c.filter) + "/t" + std::to_string(c.threads) +
                           "/" + size_name(c.size);
  benchmark::RegisterBenchmark(("encode" + tail).c_str(), bench_encode, c)->UseRealTime();
  benchmark::RegisterBenchmark(("decode" + tail).c_str(), bench_decode, c)->UseRealTime();
}

// The console output, then a summary: each benchmark's best repetition (the least disturbed by other work on the
// machine), in decimal GB/s and as a ratio to the best memcpy of 4 MiB and of 256 KiB in the same run.
class summary_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      auto it = r.counters.find("bytes_per_second");
      if (it == r.counters.end()) continue;
      std::string name = r.run_name.str();
      const std::string suffix = "/real_time";
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        name.resize(name.size() - suffix.size());
      auto& e = best_[name];
      if (e.rate == 0) order_.push_back(name);
      if (it->second.value > e.rate) e.rate = it->second.value;
      auto rt = r.counters.find("ratio");
      if (rt != r.counters.end()) e.ratio = rt->second.value;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    const double m4 = rate_of("memcpy/4MiB"), m256 = rate_of("memcpy/256KiB");
    std::printf("\nBest of the repetitions; decimal GB/s of uncompressed data; ratio to memcpy of the same run:\n");
    std::printf("  %-52s %8s %10s %11s %7s\n", "benchmark", "GB/s", "x memcpy4M", "x memcpy256K", "ratio");
    for (const std::string& n : order_) {
      const entry& e = best_[n];
      std::printf("  %-52s %8.3f %10.4f %11.4f", n.c_str(), e.rate / 1e9, m4 > 0 ? e.rate / m4 : 0.0,
                  m256 > 0 ? e.rate / m256 : 0.0);
      if (e.ratio > 0) std::printf(" %7.3f", e.ratio);
      std::printf("\n");
    }
  }

 private:
  struct entry {
    double rate = 0;
    double ratio = 0;
  };
  double rate_of(const std::string& name) {
    auto it = best_.find(name);
    return it == best_.end() ? 0.0 : it->second.rate;
  }
  std::map<std::string, entry> best_;
  std::vector<std::string> order_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("memcpy/256KiB", bench_memcpy, size_t{256 * 1024})->UseRealTime();
  benchmark::RegisterBenchmark("memcpy/4MiB", bench_memcpy, kChunk)->UseRealTime();

  const tessera::codec codecs[] = {tessera::codec::blosclz, tessera::codec::lz4, tessera::codec::lz4hc,
                                   tessera::codec::zlib, tessera::codec::zstd};
  const tessera::filter_id filters[] = {tessera::filter_id::none, tessera::filter_id::shuffle,
                                        tessera::filter_id::bitshuffle};
  // The headline cases first (also on chunks of 2 and 4 blocks), then the whole matrix at 4 MiB.
  for (tessera::codec cc : {tessera::codec::lz4, tessera::codec::blosclz})
    for (size_t size : {kChunk, size_t{512 * 1024}, size_t{1024 * 1024}})
      for (int t = 1; t <= kMaxThreads; ++t)
        chunk_register({&kDataSets[0], cc, 5, tessera::filter_id::shuffle, t, size});
  for (const data_set& ds : kDataSets)
    for (tessera::codec cc : codecs) {
      if (!tessera::codec_available(cc)) continue;
      for (tessera::filter_id f : filters)
        for (int t = 1; t <= kMaxThreads; ++t) {
          const bool headline = &ds == &kDataSets[0] && f == tessera::filter_id::shuffle &&
                                (cc == tessera::codec::lz4 || cc == tessera::codec::blosclz);
          if (!headline) chunk_register({&ds, cc, 5, f, t, kChunk});
        }
    }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  summary_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
