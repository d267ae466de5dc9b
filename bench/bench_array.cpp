// SPDX-License-Identifier: BSD-3-Clause
// Reading a B2ND array stored in a file (POSIX port): the figures. A 400x400x400 float32 array, chunks
// 100^3, blocks 25^3 (and a second file with blocks equal to chunks, to show what the block level buys), LZ4
// level 5 with shuffle, smooth data (sin(i/97)*1000 + i*0.01 over the flat index). Times: a plane through the
// middle along each axis, a 10^3 cube inside one block and one straddling 8 chunks, one element, the whole
// array; with 1 and 2 threads. First, the memory an open plus one element read takes (allocator high water),
// serial and with a 2-worker executor (the decoder keeps scratch per worker).
//   tessera_bench_array [--benchmark_filter=...] [--benchmark_min_time=...] [--benchmark_repetitions=...]
// The files are created once in $TMPDIR (default /tmp) as tessera_bench_array_b25.b2nd and ..._b100.b2nd and
// reused while their size matches; delete them to recreate.
#include <benchmark/benchmark.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/posix_mapping.hpp"
#include "tessera/port/thread_pool.hpp"

namespace {

using namespace tessera;

constexpr int64_t kN = 400;
constexpr int32_t kChunk = 100;
constexpr int64_t kItems = kN * kN * kN;
constexpr int64_t kBytes = kItems * 4;

void die(const char* what, const status& s) {
  std::fprintf(stderr, "tessera_bench_array: %s: %s\n", what, s.ok() ? "failed" : s.message);
  std::exit(1);
}

std::string file_path(int32_t block) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/tessera_bench_array_b" +
         std::to_string(block) + ".b2nd";
}

// Creates the array file unless a file of the expected size is already there (a re-run reuses it).
void file_ensure(int32_t block, const executor& exec) {
  const std::string path = file_path(block);
  const std::string size_path = path + ".size";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (FILE* f = std::fopen(size_path.c_str(), "r")) {
      long long expected = -1;
      const int n = std::fscanf(f, "%lld", &expected);
      std::fclose(f);
      if (n == 1 && expected == static_cast<long long>(st.st_size)) return;
    }
  }
  std::vector<float> data(static_cast<size_t>(kItems));
  for (int64_t i = 0; i < kItems; ++i)
    data[static_cast<size_t>(i)] = static_cast<float>(std::sin(static_cast<double>(i) / 97.0) * 1000.0 + i * 0.01);
  auto file = posix_file_open(path.c_str(), posix_open::replace);
  if (!file.ok()) die("open for writing", file.err());
  const storage stg = posix_file_storage(*file);
  array_params p;
  p.ndim = 3;
  for (int i = 0; i < 3; ++i) {
    p.shape[i] = kN;
    p.chunkshape[i] = kChunk;
    p.blockshape[i] = block;
  }
  static const char kDtype[] = "<f4";
  p.dtype = span<const char>(kDtype, 3);
  p.compressor = codec::lz4;
  p.clevel = 5;
  p.exec = exec;
  array a;
  const status s = array_create(a, array_target_contiguous(stg, false), posix_allocator(), p,
                                array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(data.data()),
                                                             static_cast<size_t>(kBytes))));
  if (!s.ok()) die("array_create", s);
  (void)array_close(a);
  (void)posix_file_close(*file);
  if (::stat(path.c_str(), &st) != 0) die("stat", make_error(errc::io, "stat after create"));
  if (FILE* f = std::fopen(size_path.c_str(), "w")) {
    std::fprintf(f, "%lld\n", static_cast<long long>(st.st_size));
    std::fclose(f);
  }
}

// How the file is read: pread into buffers (posix_file, as the reference's default backend does) or in place
// from a read-only memory map (posix_mapping).
enum io : int { io_pread = 0, io_mmap = 1 };

// One open array per (block shape, threads, io), kept for the whole run.
struct opened {
  posix_file file;
  posix_mapping mapping;
  array a;
};
thread_pool g_pool2;
opened g_open[2][2][2];  // [block 25, block 100][1 thread, 2 threads][pread, mmap]

array& array_get(int32_t block, int threads, io how = io_pread) {
  opened& o = g_open[block == kChunk ? 1 : 0][threads - 1][how];
  if (!array_is_open(o.a)) {
    storage st;
    if (how == io_mmap) {
      auto m = posix_mapping_open(file_path(block).c_str());
      if (!m.ok()) die("map", m.err());
      o.mapping = *m;
      st = posix_mapping_storage(o.mapping);
    } else {
      auto file = posix_file_open(file_path(block).c_str(), posix_open::read);
      if (!file.ok()) die("open", file.err());
      o.file = *file;
      st = posix_file_storage(o.file);
    }
    array_open_options opt;
    opt.exec = threads == 2 ? thread_pool_executor(g_pool2) : executor_serial();
    const status s = array_open(o.a, st, posix_allocator(), opt);
    if (!s.ok()) die("array_open", s);
  }
  return o.a;
}

std::vector<uint8_t>& out_buffer() {
  static std::vector<uint8_t> out(static_cast<size_t>(kBytes));
  return out;
}

// A slice [start, start + extent).
void bench_slice(benchmark::State& state, int32_t block, int threads, io how, std::vector<int64_t> start,
                 std::vector<int64_t> extent) {
  array& a = array_get(block, threads, how);
  int64_t stop[3];
  int64_t n = 4;
  for (int i = 0; i < 3; ++i) {
    stop[i] = start[static_cast<size_t>(i)] + extent[static_cast<size_t>(i)];
    n *= extent[static_cast<size_t>(i)];
  }
  std::vector<uint8_t>& out = out_buffer();
  for (auto _ : state) {
    const status s = array_slice_read(a, start.data(), stop, bytes_mut(out.data(), static_cast<size_t>(n)));
    if (!s.ok()) {
      state.SkipWithError(s.message);
      break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * n);
}

// One element: the middle one (200, 200, 200), which starts a 25^3 block, or (212, 212, 212) in a block's middle
// (a block is decoded only as far as the element).
void bench_element(benchmark::State& state, int threads, io how, int64_t at) {
  array& a = array_get(25, threads, how);
  const int64_t coords[3] = {at, at, at};
  float v = 0;
  for (auto _ : state) {
    const status s = array_element_read(a, coords, bytes_mut(reinterpret_cast<uint8_t*>(&v), 4));
    if (!s.ok()) {
      state.SkipWithError(s.message);
      break;
    }
    benchmark::DoNotOptimize(v);
  }
}

void bench_whole(benchmark::State& state, int32_t block, int threads, io how) {
  array& a = array_get(block, threads, how);
  std::vector<uint8_t>& out = out_buffer();
  for (auto _ : state) {
    const status s = array_read(a, bytes_mut(out.data(), out.size()));
    if (!s.ok()) {
      state.SkipWithError(s.message);
      break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kBytes);
}

// ---- Memory of an open plus one element read: a malloc wrapper that tracks live bytes and their high water.
struct tracking {
  size_t live = 0;
  size_t high = 0;
};
void* tracking_allocate(void* ctx, size_t size, size_t align) noexcept {
  auto* t = static_cast<tracking*>(ctx);
  const allocator up = posix_allocator();
  void* p = up.allocate(up.context, size, align);
  if (p != nullptr) {
    t->live += size;
    if (t->live > t->high) t->high = t->live;
  }
  return p;
}
void tracking_deallocate(void* ctx, void* p, size_t size, size_t align) noexcept {
  auto* t = static_cast<tracking*>(ctx);
  const allocator up = posix_allocator();
  up.deallocate(up.context, p, size, align);
  t->live -= size;
}

void memory_report() {
  for (int threads : {1, 2}) {
    for (int32_t block : {25, kChunk}) {
      const std::string path = file_path(block);
      struct stat st {};
      (void)::stat(path.c_str(), &st);
      tracking t;
      const allocator alloc{tracking_allocate, tracking_deallocate, &t};
      auto file = posix_file_open(path.c_str(), posix_open::read);
      if (!file.ok()) die("open", file.err());
      array a;
      array_open_options opt;
      opt.exec = threads == 2 ? thread_pool_executor(g_pool2) : executor_serial();
      status s = array_open(a, posix_file_storage(*file), alloc, opt);
      if (!s.ok()) die("array_open", s);
      const size_t after_open = t.high;
      const int64_t coords[3] = {kN / 2, kN / 2, kN / 2};
      float v = 0;
      s = array_element_read(a, coords, bytes_mut(reinterpret_cast<uint8_t*>(&v), 4));
      if (!s.ok()) die("array_element_read", s);
      std::printf("memory, %d thread(s): file %s (%.1f MB): open high water %zu bytes, open + one element read "
                  "%zu bytes (%.3f MiB)\n",
                  threads, path.c_str(), static_cast<double>(st.st_size) / 1e6, after_open, t.high,
                  static_cast<double>(t.high) / (1024.0 * 1024.0));
      (void)array_close(a);
      (void)posix_file_close(*file);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  {
    const status s = thread_pool_init(g_pool2, 2);
    if (!s.ok()) die("thread_pool_init", s);
  }
  file_ensure(25, thread_pool_executor(g_pool2));
  file_ensure(kChunk, thread_pool_executor(g_pool2));
  memory_report();

  const int64_t m = kN / 2;
  for (io how : {io_pread, io_mmap}) {
    const std::string via = how == io_mmap ? "/mmap" : "";
    for (int threads : {1, 2}) {
      const std::string th = via + "/threads:" + std::to_string(threads);
      for (int32_t block : {25, kChunk}) {
        if (how == io_mmap && block == kChunk) continue;  // the block level's gain is shown with pread
        const std::string b = "/b" + std::to_string(block);
        benchmark::RegisterBenchmark(("plane_x" + b + th).c_str(), bench_slice, block, threads, how,
                                     std::vector<int64_t>{m, 0, 0}, std::vector<int64_t>{1, kN, kN})
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("plane_y" + b + th).c_str(), bench_slice, block, threads, how,
                                     std::vector<int64_t>{0, m, 0}, std::vector<int64_t>{kN, 1, kN})
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("plane_z" + b + th).c_str(), bench_slice, block, threads, how,
                                     std::vector<int64_t>{0, 0, m}, std::vector<int64_t>{kN, kN, 1})
            ->Unit(benchmark::kMillisecond);
      }
      benchmark::RegisterBenchmark(("cube10_in_block/b25" + th).c_str(), bench_slice, 25, threads, how,
                                   std::vector<int64_t>{105, 105, 105}, std::vector<int64_t>{10, 10, 10})
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("cube10_8chunks/b25" + th).c_str(), bench_slice, 25, threads, how,
                                   std::vector<int64_t>{m - 5, m - 5, m - 5}, std::vector<int64_t>{10, 10, 10})
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("element/b25" + th).c_str(), bench_element, threads, how, m)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("element_mid_block/b25" + th).c_str(), bench_element, threads, how, m + 12)
          ->Unit(benchmark::kMillisecond);
      for (int32_t block : {25, kChunk}) {
        if (how == io_mmap && block == kChunk) continue;
        benchmark::RegisterBenchmark(("whole/b" + std::to_string(block) + th).c_str(), bench_whole, block, threads,
                                     how)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (auto& by_block : g_open)
    for (auto& by_threads : by_block)
      for (opened& o : by_threads) {
        (void)array_close(o.a);
        (void)posix_file_close(o.file);
        (void)posix_mapping_close(o.mapping);
      }
  thread_pool_release(g_pool2);
  return 0;
}
