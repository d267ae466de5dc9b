// SPDX-License-Identifier: BSD-3-Clause
// Throughput of every shuffle kernel level available here, next to memcpy of the same buffer in the same run:
// GB/s and the ratio to memcpy (the number that compares across machines). 256 KiB buffers, the reference
// implementation's usual block size; typesizes 4 and 8.
//   tessera_bench_shuffle [--benchmark_filter=...] [--benchmark_min_time=...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tessera/shuffle.hpp"

namespace {

constexpr size_t kSize = 256 * 1024;

enum class op { memcpy_, shuffle, unshuffle, bitshuffle, bitunshuffle };

struct buffers {
  std::vector<uint8_t> src, dst, scratch;
  buffers() : src(kSize), dst(kSize), scratch(kSize) {
    // Slowly varying int32 values, like the typed data the filters are for (the kernels do not care).
    for (size_t i = 0; i < kSize; ++i) src[i] = static_cast<uint8_t>((i / 4) * 2654435761u >> (8 * (i % 4)));
  }
};

void run(benchmark::State& state, const tessera::shuffle_kernels* k, op what, size_t ts) {
  static buffers b;
  uint8_t* src = b.src.data();
  uint8_t* dst = b.dst.data();
  uint8_t* scratch = b.scratch.data();
  for (auto _ : state) {
    switch (what) {
      case op::memcpy_: std::memcpy(dst, src, kSize); break;
      case op::shuffle: k->shuffle(ts, kSize, src, dst); break;
      case op::unshuffle: k->unshuffle(ts, kSize, src, dst); break;
      case op::bitshuffle: k->bitshuffle(ts, kSize, src, dst, scratch); break;
      case op::bitunshuffle: k->bitunshuffle(ts, kSize, src, dst, scratch); break;
    }
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kSize));
}

// The console output plus, per benchmark, its best repetition's throughput and its ratio to memcpy's best
// (aggregates such as _mean or _stddev are not runs and are skipped).
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      auto it = r.counters.find("bytes_per_second");
      if (it == r.counters.end()) continue;
      const std::string name = r.run_name.str();
      auto found = best_.find(name);
      if (found == best_.end()) {
        order_.push_back(name);
        best_[name] = it->second.value;
      } else if (it->second.value > found->second) {
        found->second = it->second.value;
      }
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto m = best_.find("memcpy/256KiB");
    const double memcpy_rate = m == best_.end() ? 0.0 : m->second;
    std::printf("\nThroughput (decimal GB/s, best repetition) and ratio to memcpy of the same run:\n");
    for (const std::string& n : order_) {
      std::printf("  %-36s %8.3f GB/s", n.c_str(), best_[n] / 1e9);
      if (memcpy_rate > 0) std::printf("  %6.3f x memcpy", best_[n] / memcpy_rate);
      std::printf("\n");
    }
  }

 private:
  std::map<std::string, double> best_;
  std::vector<std::string> order_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("memcpy/256KiB", run, nullptr, op::memcpy_, size_t{1});
  const tessera::simd_level levels[] = {tessera::simd_level::scalar, tessera::simd_level::sse2,
                                        tessera::simd_level::avx2, tessera::simd_level::neon,
                                        tessera::simd_level::altivec};
  const struct {
    op what;
    const char* name;
  } ops[] = {{op::shuffle, "shuffle"},
             {op::unshuffle, "unshuffle"},
             {op::bitshuffle, "bitshuffle"},
             {op::bitunshuffle, "bitunshuffle"}};
  for (size_t ts : {size_t{4}, size_t{8}}) {
    for (const auto& o : ops) {
      for (tessera::simd_level level : levels) {
        const tessera::shuffle_kernels* k = tessera::shuffle_kernels_for(level);
        if (k == nullptr) continue;
        const std::string name =
            std::string(o.name) + "/" + tessera::simd_level_name(level) + "/ts" + std::to_string(ts) + "/256KiB";
        benchmark::RegisterBenchmark(name.c_str(), run, k, o.what, ts);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
