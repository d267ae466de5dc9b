// SPDX-License-Identifier: BSD-3-Clause
// Where the time of a whole-array write and read goes: a 400^3 float32 array (256 MB; chunks 100^3, blocks 25^3,
// LZ4 level 5 + shuffle, smooth data), created from a C-order buffer into memory and read back, each timed
// against the limits measured in the same run:
//   memcpy        the same bytes copied once (the memory system's limit);
//   codec only    the array's chunks (already gathered) encoded or decoded whole with chunk_encode/chunk_decode on
//                 the same executor: filters and LZ4 with nothing around them (the pipeline's limit).
// Each figure is the best of --rounds runs (default 3), in milliseconds, with its ratio to both limits, for 1 and
// 2 threads of the POSIX pool. No c-blosc2 here: compare with it on your own machine if you wish. The last lines
// give create's spread over the rounds (the slowest round against the median, wall and process CPU time): a round
// that waits shows a high wall ratio with its CPU time as usual.
// The same reads are then made from a file, through posix_file (pread, as c-blosc2's default backend reads) and
// through posix_mapping (in place under a read lease: what a read-only open from C gives), against the same
// codec-only time: the file is --file PATH (an array of this
// data and geometry, e.g. written by c-blosc2), else the array above written to $TMPDIR (default /tmp) as
// tessera_bench_write.b2nd. Before the reads, the file is synced, dropped from the page cache
// (posix_fadvise(POSIX_FADV_DONTNEED)) and read once: its pages are then cached as a file read from disk, as a
// user opening an existing file finds them (a file just written is cached as written, which the kernel may copy out
// markedly slower or faster: see docs/performance.md). `--clock cpu` times the process's CPU time (user and system,
// the kernel's copies out of the page cache included) instead of the wall clock: on a shared machine, at 1 thread,
// it is steadier. The whole read of the read-only open and through pread against the codec alone at 1 thread are
// printed on lines of their own, as the median of each round's ratio (the codec and the read back to back).
//   tessera_bench_write [--rounds N] [--threads-max N] [--file PATH] [--clock wall|cpu]
// With TESSERA_BENCH_PROFILE_CREATE set, create runs 10 times (for `perf record`).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "array400.hpp"
#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/posix_mapping.hpp"
#include "tessera/port/thread_pool.hpp"

namespace {

using namespace tessera;
using clock_type = std::chrono::steady_clock;

using array400::kBlock;
using array400::kBytes;
using array400::kChunk;
using array400::kItems;
using array400::kN;

void die(const char* what, const status& s) {
  std::fprintf(stderr, "tessera_bench_write: %s: %s\n", what, s.ok() ? "failed" : s.message);
  std::exit(1);
}

bool g_cpu_clock = false;  // --clock cpu

// Milliseconds on the chosen clock: the wall clock, or the process's CPU time (every thread, user and system).
double now_ms() {
  if (g_cpu_clock) {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  }
  return std::chrono::duration<double, std::milli>(clock_type::now().time_since_epoch()).count();
}

// Each round's milliseconds on the chosen clock and the process's CPU time (user and system) of each round.
struct round_times {
  std::vector<double> ms, cpu_ms;
};

double cpu_ms_now() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

template <class F>
double best_ms(int rounds, F&& f, round_times* times = nullptr) {
  double best = 1e300;
  for (int r = 0; r < rounds; ++r) {
    const double c0 = cpu_ms_now();
    const double t0 = now_ms();
    f();
    const double ms = now_ms() - t0;
    if (times != nullptr) {
      times->ms.push_back(ms);
      times->cpu_ms.push_back(cpu_ms_now() - c0);
    }
    if (ms < best) best = ms;
  }
  return best;
}

// The file's pages cached as read from disk: synced (a file this program wrote: its pages must be clean to be
// dropped), dropped from the page cache, then read once in 1 MiB reads.
void file_cache_as_read(const char* path, bool written) {
  auto f = posix_file_open(path, posix_open::read);
  if (!f.ok()) die("open the file to drop its pages", f.err());
  if (written && ::fsync(f->fd) != 0) die("fsync the file", make_error(errc::io, "fsync failed"));
  if (::posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED) != 0) die("drop the file's pages", make_error(errc::io, "posix_fadvise failed"));
  std::vector<uint8_t> buffer(size_t{1} << 20);
  const storage st = posix_file_storage(*f);
  auto size = storage_size(st);
  if (!size.ok()) die("the file's size", size.err());
  for (uint64_t at = 0; at < *size; at += buffer.size()) {
    const uint64_t n = *size - at < buffer.size() ? *size - at : buffer.size();
    if (auto s = storage_read(st, at, bytes_mut(buffer.data(), static_cast<size_t>(n))); !s.ok()) die("read the file", s);
  }
  if (auto s = posix_file_close(*f); !s.ok()) die("close the file", s);
}

void print_row(const char* what, uint32_t threads, double ms, double memcpy_ms, double codec_ms) {
  std::printf("%-34s %u thread%s %9.1f ms   %6.2f x memcpy   %5.2f x codec only\n", what, threads,
              threads == 1 ? " " : "s", ms, ms / memcpy_ms, ms / codec_ms);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 3;
  uint32_t threads_max = 2;
  const char* file_arg = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--threads-max") == 0) threads_max = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--file") == 0) file_arg = argv[i + 1];
    if (std::strcmp(argv[i], "--clock") == 0) g_cpu_clock = std::strcmp(argv[i + 1], "cpu") == 0;
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string file_path = file_arg != nullptr ? std::string(file_arg)
                                                    : std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                                                          "/tessera_bench_write.b2nd";
  const size_t slash = file_path.rfind('/');
  std::printf("clock: %s; file: %s (%s)\n", g_cpu_clock ? "process CPU time" : "wall",
              file_path.c_str() + (slash == std::string::npos ? 0 : slash + 1),
              file_arg != nullptr ? "given" : "written by this program");
  if (rounds < 1) rounds = 1;
  const std::vector<float> items = array400::items();
  std::vector<uint8_t> copy(kBytes);
  const double memcpy_ms = best_ms(rounds, [&] { std::memcpy(copy.data(), items.data(), kBytes); });
  std::printf("memcpy of %zu MB: %.1f ms\n", kBytes >> 20, memcpy_ms);
  const allocator alloc = posix_allocator();
  const bytes_view src(reinterpret_cast<const uint8_t*>(items.data()), kBytes);

  double pread_ratio[2] = {0, 0};   // the whole read through pread against the codec alone, at 1 and 2 threads
  double mapped_ratio[2] = {0, 0};  // the same through posix_mapping (under its lease)
  bool leased = false;              // whether the mapping's reads held their lease (else they went through pread)
  round_times create_spread[2];     // create's rounds at 1 and 2 threads
  for (uint32_t threads = 1; threads <= threads_max; ++threads) {
    thread_pool pool;
    if (!thread_pool_init(pool, threads).ok()) die("thread_pool_init", make_error(errc::io, "pool"));
    const executor ex = thread_pool_executor(pool);

    // The array once, kept for the codec-only figures and the reads.
    growable_buffer kept;
    growable_buffer_init(kept, alloc);
    {
      array a;
      if (auto s = array_create(a, array_target_contiguous(growable_buffer_storage(kept), false), alloc, array400::params(ex),
                                array_fill_buffer(src));
          !s.ok())
        die("array_create", s);
      if (auto s = array_close(a); !s.ok()) die("array_close", s);
    }
    const_buffer in{kept.bytes().data(), kept.bytes().size()};
    array r;
    array_open_options ro;
    ro.exec = ex;
    if (auto s = array_open(r, const_buffer_storage(in), alloc, ro); !s.ok()) die("array_open", s);
    frame& f = array_frame(r);
    const int64_t nchunks = frame_info_get(f)->nchunks;
    const size_t chunk_bytes = static_cast<size_t>(kChunk) * kChunk * kChunk * 4;

    // Codec only: decode every chunk whole, then encode the decoded chunks again.
    std::vector<uint8_t> gathered(chunk_bytes * static_cast<size_t>(nchunks));
    chunk_decoder dec;
    chunk_decoder_options dopt;
    dopt.max_blocksize = static_cast<size_t>(kBlock) * kBlock * kBlock * 4;
    dopt.exec = ex;
    if (auto s = chunk_decoder_init(dec, alloc, dopt); !s.ok()) die("chunk_decoder_init", s);
    const auto decode_all = [&] {
      for (int64_t c = 0; c < nchunks; ++c) {
        auto n = frame_chunk_decode(f, dec, c, bytes_mut(gathered.data() + chunk_bytes * static_cast<size_t>(c), chunk_bytes));
        if (!n.ok()) die("frame_chunk_decode", n.err());
      }
    };
    const double decode_ms = best_ms(rounds, decode_all);
    chunk_encoder enc;
    chunk_encoder_options eopt;
    eopt.max_blocksize = dopt.max_blocksize;
    eopt.exec = ex;
    if (auto s = chunk_encoder_init(enc, alloc, eopt); !s.ok()) die("chunk_encoder_init", s);
    std::vector<uint8_t> encoded(chunk_encode_bound(chunk_bytes));
    const chunk_encode_params ep = [] {
      chunk_encode_params p;
      p.typesize = 4;
      p.compressor = codec::lz4;
      p.clevel = 5;
      p.blocksize = kBlock * kBlock * kBlock * 4;
      return p;
    }();
    const double encode_ms = best_ms(rounds, [&] {
      for (int64_t c = 0; c < nchunks; ++c) {
        auto n = chunk_encode(enc, ep, bytes_view(gathered.data() + chunk_bytes * static_cast<size_t>(c), chunk_bytes),
                              bytes_mut(encoded.data(), encoded.size()));
        if (!n.ok()) die("chunk_encode", n.err());
      }
    });
    print_row("codec only: encode the chunks", threads, encode_ms, memcpy_ms, encode_ms);
    print_row("codec only: decode the chunks", threads, decode_ms, memcpy_ms, decode_ms);

    if (std::getenv("TESSERA_BENCH_PROFILE_CREATE") != nullptr) rounds = 10;  // for perf record: mostly create
    round_times create_times;
    const double create_ms = best_ms(rounds, [&] {
      growable_buffer out;
      growable_buffer_init(out, alloc);
      array a;
      if (auto s = array_create(a, array_target_contiguous(growable_buffer_storage(out), false), alloc, array400::params(ex),
                                array_fill_buffer(src));
          !s.ok())
        die("array_create", s);
      (void)array_close(a);
    }, &create_times);
    print_row("create from a C-order buffer", threads, create_ms, memcpy_ms, encode_ms);
    create_spread[threads - 1 < 2 ? threads - 1 : 1] = create_times;

    std::vector<uint8_t> whole(kBytes);
    const double read_ms = best_ms(rounds, [&] {
      if (auto s = array_read(r, bytes_mut(whole.data(), whole.size())); !s.ok()) die("array_read", s);
    });
    if (std::memcmp(whole.data(), src.data(), kBytes) != 0) die("array_read", make_error(errc::corrupt, "data differ"));
    print_row("read the whole array", threads, read_ms, memcpy_ms, decode_ms);

    std::vector<uint8_t> plane(static_cast<size_t>(kN * kN * 4));
    const char* names[3] = {"read a plane along x (index 200)", "read a plane along y (index 200)",
                            "read a plane along z (index 200)"};
    for (int axis = 0; axis < 3; ++axis) {
      int64_t start[3] = {0, 0, 0}, stop[3] = {kN, kN, kN};
      start[axis] = 200;
      stop[axis] = 201;
      const double ms = best_ms(rounds, [&] {
        if (auto s = array_slice_read(r, start, stop, bytes_mut(plane.data(), plane.size())); !s.ok()) die("plane", s);
      });
      // A plane touches one layer of blocks (25 of 400 items along its axis): its codec limit is 1/16 of a whole
      // decode, its memcpy limit the plane's bytes.
      print_row(names[axis], threads, ms, memcpy_ms * static_cast<double>(kN * kN) / static_cast<double>(kItems),
                decode_ms / 16.0);
    }

    // The same array from a file: written once (unless --file names one), then read through pread and in place.
    if (file_arg == nullptr && threads == 1) {
      auto out = posix_file_open(file_path.c_str(), posix_open::replace);
      if (!out.ok()) die("open the file for writing", out.err());
      if (auto s = storage_write(posix_file_storage(*out), 0, kept.bytes()); !s.ok()) die("write the file", s);
      if (auto s = posix_file_close(*out); !s.ok()) die("close the file", s);
    }
    if (threads == 1) file_cache_as_read(file_path.c_str(), file_arg == nullptr);
    auto file = posix_file_open(file_path.c_str(), posix_open::read);
    if (!file.ok()) die("open the file", file.err());
    auto mapping = posix_mapping_open(file_path.c_str());
    if (!mapping.ok()) die("map the file", mapping.err());
    const storage sources[2] = {posix_file_storage(*file), posix_mapping_storage(*mapping)};
    const char* whole_names[2] = {"file (pread): the whole array", "file (mapped, leased): whole"};
    const char* plane_names[2][2] = {{"file (pread): plane along y", "file (pread): plane along z"},
                                     {"file (mapped, leased): plane y", "file (mapped, leased): plane z"}};
    sources[1].reads_begin(sources[1].context);  // a bracket with no read: does this system grant the lease?
    leased = mapping->leased;
    sources[1].reads_end(sources[1].context);
    for (int how = 0; how < 2; ++how) {
      array fa;
      if (auto s = array_open(fa, sources[how], alloc, ro); !s.ok()) die("array_open (file)", s);
      std::memset(whole.data(), 0, whole.size());
      // The whole read and the codec alone in turns, round by round: both meet the same load on a shared machine.
      // The row shows their best rounds; the ratio on the summary line is the median of the rounds' own ratios,
      // which a neighbour's burst in one round moves least.
      double file_ms = 1e300, codec_ms = 1e300;
      std::vector<double> round_ratios;
      for (int round = 0; round < rounds; ++round) {
        const double codec_round = best_ms(1, decode_all);
        const double file_round = best_ms(1, [&] {
          if (auto s = array_read(fa, bytes_mut(whole.data(), whole.size())); !s.ok()) die("array_read (file)", s);
        });
        codec_ms = codec_round < codec_ms ? codec_round : codec_ms;
        file_ms = file_round < file_ms ? file_round : file_ms;
        round_ratios.push_back(file_round / codec_round);
      }
      if (std::memcmp(whole.data(), src.data(), kBytes) != 0) die("array_read (file)", make_error(errc::corrupt, "data differ"));
      print_row(whole_names[how], threads, file_ms, memcpy_ms, codec_ms);
      std::sort(round_ratios.begin(), round_ratios.end());
      (how == 0 ? pread_ratio : mapped_ratio)[threads - 1 < 2 ? threads - 1 : 1] = round_ratios[round_ratios.size() / 2];
      for (int axis = 1; axis < 3; ++axis) {
        int64_t start[3] = {0, 0, 0}, stop[3] = {kN, kN, kN};
        start[axis] = 200;
        stop[axis] = 201;
        const double ms = best_ms(rounds, [&] {
          if (auto s = array_slice_read(fa, start, stop, bytes_mut(plane.data(), plane.size())); !s.ok()) die("plane (file)", s);
        });
        print_row(plane_names[how][axis - 1], threads, ms,
                  memcpy_ms * static_cast<double>(kN * kN) / static_cast<double>(kItems), decode_ms / 16.0);
      }
      (void)array_close(fa);
    }
    (void)posix_mapping_close(*mapping);
    (void)posix_file_close(*file);
    (void)array_close(r);
  }
  // The goal: a whole read of an existing file, opened read-only, within 1.15 x the codec alone at 1 thread.
  std::printf("file whole read, read-only open (posix_mapping, %s), 1 thread: %.2f x codec only, the median of the "
              "rounds' ratios (goal: at most 1.15)\n",
              leased ? "lease held" : "no lease here: pread", mapped_ratio[0]);
  std::printf("file whole read through pread, 1 thread: %.2f x codec only\n", pread_ratio[0]);
  if (threads_max >= 2) {
    std::printf("file whole read, read-only open, 2 threads: %.2f x codec only\n", mapped_ratio[1]);
    std::printf("file whole read through pread, 2 threads: %.2f x codec only\n", pread_ratio[1]);
  }
  // A create's spread: a stalled round (a worker waiting, a wake-up missed) shows as a slowest round far from the
  // median; its CPU time tells waiting (CPU as usual) from extra work (faults, copies: CPU up too).
  for (uint32_t t = 0; t < (threads_max < 2 ? threads_max : 2); ++t) {
    const round_times& c = create_spread[t];
    const double med = median_of(c.ms), slowest = *std::max_element(c.ms.begin(), c.ms.end());
    const double cpu_med = median_of(c.cpu_ms), cpu_max = *std::max_element(c.cpu_ms.begin(), c.cpu_ms.end());
    std::printf("create, %u thread%s, %zu rounds: median %.1f ms, slowest %.2f x the median; process CPU median "
                "%.1f ms, most %.2f x\n",
                t + 1, t == 0 ? "" : "s", c.ms.size(), med, slowest / med, cpu_med, cpu_max / cpu_med);
  }
  return 0;
}
