// SPDX-License-Identifier: BSD-3-Clause
// Tessera against c-blosc2 in one process, on the 400^3 float32 array of docs/performance.md (256 MB, chunks 100^3,
// blocks 25^3, LZ4 level 5 + shuffle, smooth data): create from a C-order buffer into memory (array_create against
// b2nd_from_cbuffer), the whole read and a plane through index 200 of each axis (array_slice_read against
// b2nd_get_slice_cbuffer), at 1 and 2 threads (Tessera's POSIX pool, c-blosc2's nthreads). Built only with
// TESSERA_BENCH_BLOSC2_DIR (a c-blosc2 build the user made; docs/build.md). Each round runs every operation once
// on both sides, back to back, the side going first alternating by round; per operation it prints both medians
// (wall clock and process CPU time), ratio = reference / Tessera of the medians (above 1: Tessera is faster), and
// each side's slowest run against its median (wall): a run that stalls shows there.
//   tessera_bench_reference [--runs N (20)] [--threads-max N (2)] [--only create|read|planes]
// Both sides' frames are checked to decode to the input; their sizes are printed (equal when the bytes match).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "array400.hpp"
#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/thread_pool.hpp"

extern "C" {
#include <b2nd.h>
#include <blosc2.h>
}

namespace {

using namespace tessera;

using array400::kBlock;
using array400::kBytes;
using array400::kChunk;
using array400::kItems;
using array400::kN;

void die(const char* what, const char* why) {
  std::fprintf(stderr, "tessera_bench_reference: %s: %s\n", what, why);
  std::exit(1);
}
void check(const char* what, const status& s) {
  if (!s.ok()) die(what, s.message);
}
void check_ref(const char* what, int rc) {
  if (rc < 0) die(what, print_error(rc));
}

double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}
double max_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

struct side_times {
  std::vector<double> wall, cpu;
  void time(const std::function<void()>& f) {
    const double c0 = cpu_ms();
    const double t0 = wall_ms();
    f();
    wall.push_back(wall_ms() - t0);
    cpu.push_back(cpu_ms() - c0);
  }
};

struct operation {
  std::string name;
  std::function<void()> tessera, reference;
  side_times t, r;
};

// c-blosc2's context for the same array in memory (contiguous frame, no file), `threads` for both directions.
// The context copies the compression parameters but keeps a pointer to the decompression ones: they live on.
b2nd_context_t* reference_context(int threads) {
  static blosc2_dparams dp;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = BLOSC_LZ4;
  cp.clevel = 5;
  cp.typesize = 4;
  cp.nthreads = static_cast<int16_t>(threads);
  dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = static_cast<int16_t>(threads);
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.contiguous = true;
  st.cparams = &cp;
  st.dparams = &dp;
  const int64_t shape[3] = {kN, kN, kN};
  const int32_t chunk[3] = {kChunk, kChunk, kChunk};
  const int32_t block[3] = {kBlock, kBlock, kBlock};
  b2nd_context_t* ctx = b2nd_create_ctx(&st, 3, shape, chunk, block, "<f4", DTYPE_NUMPY_FORMAT, nullptr, 0);
  if (ctx == nullptr) die("b2nd_create_ctx", "failed");
  return ctx;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 20;
  int threads_max = 2;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--threads-max") == 0) threads_max = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--only") == 0) only = argv[i + 1];
  }
  blosc2_init();
  const std::vector<float> items = array400::items();
  const bytes_view src(reinterpret_cast<const uint8_t*>(items.data()), kBytes);
  const allocator alloc = posix_allocator();
  std::vector<uint8_t> whole(kBytes), plane(static_cast<size_t>(kN * kN * 4));

  std::printf("c-blosc2 %s; %d runs per operation, interleaved; ratio = reference / Tessera of the medians\n",
              BLOSC2_VERSION_STRING, runs);
  std::printf("%-22s %7s | %9s %9s %6s | %9s %9s %6s | %9s %9s\n", "operation", "threads", "T wall", "R wall",
              "ratio", "T cpu", "R cpu", "ratio", "T max/med", "R max/med");
  for (int threads = 1; threads <= threads_max; ++threads) {
    thread_pool pool;
    check("thread_pool_init", thread_pool_init(pool, static_cast<uint32_t>(threads)));
    const executor ex = thread_pool_executor(pool);
    b2nd_context_t* ctx = reference_context(threads);

    // Each side's array once, kept for the reads; checked to decode to the input.
    growable_buffer kept;
    growable_buffer_init(kept, alloc);
    {
      array a;
      check("array_create", array_create(a, array_target_contiguous(growable_buffer_storage(kept), false), alloc,
                                         array400::params(ex), array_fill_buffer(src)));
      check("array_close", array_close(a));
    }
    const_buffer in{kept.bytes().data(), kept.bytes().size()};
    array t_array;
    array_open_options ro;
    ro.exec = ex;
    check("array_open", array_open(t_array, const_buffer_storage(in), alloc, ro));
    b2nd_array_t* r_array = nullptr;
    check_ref("b2nd_from_cbuffer", b2nd_from_cbuffer(ctx, &r_array, items.data(), static_cast<int64_t>(kBytes)));
    const int64_t starts0[3] = {0, 0, 0}, shape3[3] = {kN, kN, kN};
    check("array_read", array_read(t_array, bytes_mut(whole.data(), whole.size())));
    if (std::memcmp(whole.data(), items.data(), kBytes) != 0) die("Tessera's array", "does not decode to the input");
    std::memset(whole.data(), 0, kBytes);
    check_ref("b2nd_get_slice_cbuffer",
              b2nd_get_slice_cbuffer(r_array, starts0, shape3, whole.data(), shape3, static_cast<int64_t>(kBytes)));
    if (std::memcmp(whole.data(), items.data(), kBytes) != 0) die("c-blosc2's array", "does not decode to the input");
    if (threads == 1) {
      std::printf("frame bytes: Tessera %zu, c-blosc2 %lld\n", kept.bytes().size(),
                  static_cast<long long>(r_array->sc->frame != nullptr ? blosc2_schunk_frame_len(r_array->sc) : -1));
    }

    std::vector<operation> ops;
    if (only.empty() || only == "create") {
      ops.push_back({"create", [&] {
                       growable_buffer out;
                       growable_buffer_init(out, alloc);
                       array a;
                       check("array_create", array_create(a, array_target_contiguous(growable_buffer_storage(out), false),
                                                          alloc, array400::params(ex), array_fill_buffer(src)));
                       check("array_close", array_close(a));
                     },
                     [&] {
                       b2nd_array_t* a = nullptr;
                       check_ref("b2nd_from_cbuffer",
                                 b2nd_from_cbuffer(ctx, &a, items.data(), static_cast<int64_t>(kBytes)));
                       b2nd_free(a);
                     }, {}, {}});
    }
    if (only.empty() || only == "read") {
      ops.push_back({"whole read", [&] { check("array_read", array_read(t_array, bytes_mut(whole.data(), whole.size()))); },
                     [&] {
                       check_ref("b2nd_get_slice_cbuffer", b2nd_get_slice_cbuffer(r_array, starts0, shape3, whole.data(),
                                                                                  shape3, static_cast<int64_t>(kBytes)));
                     }, {}, {}});
    }
    if (only.empty() || only == "planes") {
      static const char* const kPlaneNames[3] = {"plane x (index 200)", "plane y (index 200)", "plane z (index 200)"};
      for (int axis = 0; axis < 3; ++axis) {
        ops.push_back({kPlaneNames[axis], [&, axis] {
                         int64_t start[3] = {0, 0, 0}, stop[3] = {kN, kN, kN};
                         start[axis] = 200;
                         stop[axis] = 201;
                         check("array_slice_read", array_slice_read(t_array, start, stop,
                                                                    bytes_mut(plane.data(), plane.size())));
                       },
                       [&, axis] {
                         int64_t start[3] = {0, 0, 0}, stop[3] = {kN, kN, kN}, bshape[3] = {kN, kN, kN};
                         start[axis] = 200;
                         stop[axis] = 201;
                         bshape[axis] = 1;
                         check_ref("b2nd_get_slice_cbuffer",
                                   b2nd_get_slice_cbuffer(r_array, start, stop, plane.data(), bshape,
                                                          static_cast<int64_t>(plane.size())));
                       }, {}, {}});
      }
    }
    for (int run = 0; run < runs; ++run) {
      for (operation& op : ops) {
        if (run % 2 == 0) {
          op.t.time(op.tessera);
          op.r.time(op.reference);
        } else {
          op.r.time(op.reference);
          op.t.time(op.tessera);
        }
      }
    }
    for (const operation& op : ops) {
      const double tw = median_of(op.t.wall), rw = median_of(op.r.wall);
      const double tc = median_of(op.t.cpu), rc = median_of(op.r.cpu);
      std::printf("%-22s %7d | %9.2f %9.2f %6.2f | %9.2f %9.2f %6.2f | %9.2f %9.2f\n", op.name.c_str(), threads, tw,
                  rw, rw / tw, tc, rc, rc / tc, max_of(op.t.wall) / tw, max_of(op.r.wall) / rw);
    }
    b2nd_free(r_array);
    b2nd_free_ctx(ctx);
    check("array_close", array_close(t_array));
    thread_pool_release(pool);
  }
  blosc2_destroy();
  return 0;
}
