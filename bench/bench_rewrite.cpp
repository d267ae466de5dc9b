// SPDX-License-Identifier: BSD-3-Clause
// Rewrites of a file-backed array, the loops users write, against the same array written once ("tight"):
//   planes   `for z: a[z] = plane` over a zeros array, 200^3 float32, chunks 50^3, blocks 10^3, LZ4 5 + shuffle
//   boxes    1,000 random boxes (edges 1-32) of random values into 128^3, chunks 32^3, blocks 8^3
//   items    100 single items into 64^3, chunks 16^3, blocks 4^3
// each with auto-commit (a commit per write) and, for the boxes, one commit at the end. Printed per workload: the
// file's size once the array is closed and its largest size after any commit, as multiples of the tight size,
// the bytes of the file after array_compact, the time of the loop (the close included), and the same loop
// keeping every old frame (keep_old_frames: append-only) as the contrast. Sizes are deterministic; times are this machine's.
//   tessera_bench_rewrite [DIR [WORKLOAD [keep]]]   (files go to DIR, default the current directory; WORKLOAD: only
//   the workloads whose name starts with it, e.g. planes; keep: each workload's closed file, before compaction,
//   stays as DIR/rewritten-N.b2nd for other readers, e.g. c-blosc2, to check)
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"

namespace {

using namespace tessera;
using clock_type = std::chrono::steady_clock;

struct workload {
  const char* name;
  int64_t n;       // the cube's edge
  int32_t chunk;   // chunk edge
  int32_t block;   // block edge
  int kind;        // 0 planes, 1 boxes, 2 items
  bool auto_commit;
};

struct outcome {
  uint64_t final_size = 0;
  uint64_t peak_size = 0;
  uint64_t compacted = 0;
  double seconds = 0;
};

[[noreturn]] void die(const char* what, const status& s) {
  std::fprintf(stderr, "tessera_bench_rewrite: %s: %s\n", what, s.ok() ? "failed" : s.message);
  std::exit(1);
}

uint64_t file_size(const std::string& path) {
  struct stat sb;
  return ::stat(path.c_str(), &sb) == 0 ? static_cast<uint64_t>(sb.st_size) : 0;
}

array_params params_of(const workload& w) {
  array_params p;
  p.ndim = 3;
  for (int d = 0; d < 3; ++d) {
    p.shape[d] = w.n;
    p.chunkshape[d] = w.chunk;
    p.blockshape[d] = w.block;
  }
  p.dtype = span<const char>("<f4", 3);
  p.compressor = codec::lz4;
  p.clevel = 5;
  return p;
}

// A deterministic generator (the same writes in every run and every mode).
struct lcg {
  uint64_t s;
  uint32_t next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  }
};

void copy_file(const std::string& from, const std::string& to) {
  std::FILE* in = std::fopen(from.c_str(), "rb");
  std::FILE* out = std::fopen(to.c_str(), "wb");
  if (in == nullptr || out == nullptr) {
    std::fprintf(stderr, "tessera_bench_rewrite: cannot copy %s to %s\n", from.c_str(), to.c_str());
    std::exit(1);
  }
  char b[65536];
  size_t n;
  while ((n = std::fread(b, 1, sizeof b, in)) > 0) std::fwrite(b, 1, n, out);
  std::fclose(in);
  if (std::fclose(out) != 0) std::exit(1);
}

// Runs the workload on a new file; `model` receives the array's final items.
outcome run(const workload& w, const std::string& path, bool keep_old, std::vector<float>& model,
            const std::string& keep_as) {
  outcome o;
  auto file = posix_file_open(path.c_str(), posix_open::replace);
  if (!file.ok()) die("open", file.err());
  posix_file pf = *file;
  const storage st = posix_file_storage(pf);
  array a;
  array_target target = array_target_contiguous(st);
  if (auto e = array_create(a, target, posix_allocator(), params_of(w), array_fill_zeros()); !e.ok()) die("create", e);
  (void)array_close(a);
  array_open_options oo;
  oo.frame.writable = true;
  oo.frame.keep_old_frames = keep_old;
  if (auto e = array_open(a, st, posix_allocator(), oo); !e.ok()) die("reopen", e);
  a.auto_commit = w.auto_commit;
  const int64_t n = w.n;
  model.assign(static_cast<size_t>(n * n * n), 0.f);
  std::vector<float> buf;
  lcg r{42};
  const auto t0 = clock_type::now();
  auto write = [&](const int64_t* s0, const int64_t* s1) {
    if (auto e = array_slice_write(a, s0, s1, bytes_view(reinterpret_cast<const uint8_t*>(buf.data()), buf.size() * 4));
        !e.ok())
      die("slice write", e);
    size_t i = 0;
    for (int64_t x = s0[0]; x < s1[0]; ++x)
      for (int64_t y = s0[1]; y < s1[1]; ++y)
        for (int64_t z = s0[2]; z < s1[2]; ++z) model[static_cast<size_t>((x * n + y) * n + z)] = buf[i++];
    if (w.auto_commit) {
      const uint64_t sz = file_size(path);
      if (sz > o.peak_size) o.peak_size = sz;
    }
  };
  if (w.kind == 0) {
    buf.resize(static_cast<size_t>(n * n));
    for (int64_t z = 0; z < n; ++z) {
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(z) + static_cast<float>(i % 997) * 0.001f;
      const int64_t s0[3] = {z, 0, 0}, s1[3] = {z + 1, n, n};
      write(s0, s1);
    }
  } else {
    const int count = w.kind == 1 ? 1000 : 100;
    for (int k = 0; k < count; ++k) {
      int64_t s0[3], s1[3];
      size_t items = 1;
      for (int d = 0; d < 3; ++d) {
        const int64_t edge = w.kind == 1 ? 1 + r.next() % 32 : 1;
        s0[d] = r.next() % static_cast<uint32_t>(n - edge + 1);
        s1[d] = s0[d] + edge;
        items *= static_cast<size_t>(edge);
      }
      buf.resize(items);
      for (float& v : buf) v = static_cast<float>(r.next() % 100000) * 0.01f;
      write(s0, s1);
    }
  }
  if (!w.auto_commit)
    if (auto e = array_commit(a); !e.ok()) die("commit", e);
  const uint64_t committed = file_size(path);
  if (committed > o.peak_size) o.peak_size = committed;
  if (auto e = array_close(a); !e.ok()) die("close", e);
  o.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  o.final_size = file_size(path);
  if (!keep_as.empty()) copy_file(path, keep_as);
  if (auto e = array_open(a, st, posix_allocator(), oo); !e.ok()) die("reopen", e);
  if (auto e = array_compact(a); !e.ok()) die("compact", e);
  if (auto e = array_close(a); !e.ok()) die("close", e);
  o.compacted = file_size(path);
  (void)posix_file_close(pf);
  return o;
}

// The same items written once: the tight size.
uint64_t tight_size(const workload& w, const std::string& path, const std::vector<float>& model) {
  auto file = posix_file_open(path.c_str(), posix_open::replace);
  if (!file.ok()) die("open", file.err());
  posix_file pf = *file;
  array a;
  const bytes_view items(reinterpret_cast<const uint8_t*>(model.data()), model.size() * 4);
  if (auto e = array_create(a, array_target_contiguous(posix_file_storage(pf)), posix_allocator(), params_of(w),
                            array_fill_buffer(items));
      !e.ok())
    die("create tight", e);
  (void)array_close(a);
  (void)posix_file_close(pf);
  return file_size(path);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  const workload loads[] = {
      {"planes, auto-commit", 200, 50, 10, 0, true},
      {"boxes, auto-commit", 128, 32, 8, 1, true},
      {"boxes, one commit", 128, 32, 8, 1, false},
      {"items, auto-commit", 64, 16, 4, 2, true},
  };
  std::printf("%-22s %10s %8s %8s %9s %9s %10s %12s\n", "workload", "tight B", "final x", "peak x",
              "compact x", "time s", "append x", "append time s");
  const char* only = argc > 2 ? argv[2] : "";
  const bool keep = argc > 3 && std::strcmp(argv[3], "keep") == 0;
  int index = 0;
  for (const workload& w : loads) {
    ++index;
    if (std::strncmp(w.name, only, std::strlen(only)) != 0) continue;
    std::vector<float> model, model_append;
    const std::string path = dir + "/tessera_bench_rewrite.b2nd";
    const std::string kept = keep ? dir + "/rewritten-" + std::to_string(index) + ".b2nd" : std::string();
    const outcome reuse = run(w, path, false, model, kept);
    const outcome append = run(w, path, true, model_append, std::string());
    const uint64_t tight = tight_size(w, path, model);
    std::remove(path.c_str());
    const double t = static_cast<double>(tight);
    std::printf("%-22s %10llu %8.3f %8.3f %9.3f %9.3f %10.3f %12.3f\n", w.name, static_cast<unsigned long long>(tight),
                static_cast<double>(reuse.final_size) / t, static_cast<double>(reuse.peak_size) / t,
                static_cast<double>(reuse.compacted) / t, reuse.seconds, static_cast<double>(append.final_size) / t,
                append.seconds);
  }
  return 0;
}
