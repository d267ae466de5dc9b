// SPDX-License-Identifier: BSD-3-Clause
// LZ4 block decoding: liblz4 (LZ4_decompress_safe, what c-blosc2 calls) against the in-house decoder
// (src/codecs/lz4_block.hpp) on the same streams, in one run, with memcpy of the same bytes alongside. The streams are
// what Blosc hands LZ4 for 256 blocks of 25^3 float32 (sin(i/97)*1000 + i*0.01, the array benchmarks' data): byte
// planes (split streams), whole shuffled blocks, bit-shuffled blocks, at Blosc's clevel 5 (acceleration 5) and with
// LZ4HC; and for contrast, machine code and raw floats, which the chunk decoder leaves to liblz4 (it is the faster one
// on code and text). Each figure is the best of --rounds passes over the streams (default 20), interleaved.
//   tessera_bench_lz4 [--rounds N]
#include <lz4.h>
#include <lz4hc.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../src/codecs/lz4_block.hpp"  // internal header: the core keeps src/ private

namespace {

using clock_type = std::chrono::steady_clock;
constexpr int kB = 25, kN = 400, kItems = kB * kB * kB;

struct stream {
  std::vector<uint8_t> bytes;
  size_t size;
};

void add(std::vector<stream>& to, const uint8_t* src, size_t n, bool hc) {
  std::vector<uint8_t> out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(n))));
  const int c = hc ? LZ4_compress_HC(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out.data()),
                                     static_cast<int>(n), static_cast<int>(out.size()), 9)
                   : LZ4_compress_fast(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out.data()),
                                       static_cast<int>(n), static_cast<int>(out.size()), 5);
  if (c <= 0 || static_cast<size_t>(c) >= n) return;  // Blosc stores such a stream as it is
  out.resize(static_cast<size_t>(c));
  to.push_back({out, n});
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 20;
  for (int a = 1; a + 1 < argc; a += 2)
    if (std::strcmp(argv[a], "--rounds") == 0) rounds = std::atoi(argv[a + 1]);
  if (!tessera::detail::lz4_block_decode_available()) {
    std::printf(
        "tessera_bench_lz4: the in-house decoder does not run here "
        "(x86-64 with AVX2 only)\n");
    return 0;
  }
  // 256 blocks spread over the array, as a plane read touches them.
  std::vector<float> block(kItems);
  std::vector<uint8_t> planes(kItems * 4), bits(kItems * 4);
  enum { kSplit, kWhole, kBits, kSplitHc, kCode, kRaw, kCases };
  const char* names[kCases] = {"byte planes (split streams)",
                               "shuffled blocks (one stream)",
                               "bit-shuffled blocks",
                               "byte planes, LZ4HC 9",
                               "machine code (contrast)",
                               "raw floats (contrast)"};
  std::vector<stream> cases[kCases];
  for (int bx = 0; bx < 16; ++bx)
    for (int by = 0; by < 16; ++by) {
      const int bz = (bx * 7 + by * 3) % 16;
      for (int x = 0; x < kB; ++x)
        for (int y = 0; y < kB; ++y)
          for (int z = 0; z < kB; ++z) {
            const double i = (static_cast<double>(bx * kB + x) * kN + (by * kB + y)) * kN + (bz * kB + z);
            block[(x * kB + y) * kB + z] = static_cast<float>(std::sin(i / 97.0) * 1000.0 + i * 0.01);
          }
      const auto* b = reinterpret_cast<const uint8_t*>(block.data());
      for (int i = 0; i < kItems; ++i)
        for (int k = 0; k < 4; ++k) planes[static_cast<size_t>(k) * kItems + i] = b[i * 4 + k];
      std::memset(bits.data(), 0, bits.size());
      for (size_t i = 0; i < static_cast<size_t>(kItems); ++i)
        for (size_t bit = 0; bit < 32; ++bit)
          if (b[i * 4 + bit / 8] >> (bit % 8) & 1) {
            const size_t at = bit * kItems + i;
            bits[at / 8] |= static_cast<uint8_t>(1u << (at % 8));
          }
      for (int k = 0; k < 4; ++k) add(cases[kSplit], planes.data() + k * kItems, kItems, false);
      for (int k = 0; k < 4; ++k) add(cases[kSplitHc], planes.data() + k * kItems, kItems, true);
      add(cases[kWhole], planes.data(), planes.size(), false);
      add(cases[kBits], bits.data(), bits.size(), false);
      add(cases[kRaw], b, planes.size(), true);
    }
  {  // machine code: the files this process maps (itself, libc, libstdc++, liblz4...), in 64 KiB blocks
    std::vector<uint8_t> code;
    std::vector<std::string> seen;
    if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
      char line[1024];
      while (std::fgets(line, sizeof line, maps) != nullptr && code.size() < (size_t{16} << 20)) {
        const char* path = std::strchr(line, '/');
        if (path == nullptr) continue;
        std::string name(path, std::strcspn(path, "\n"));
        bool again = false;
        for (const std::string& n : seen) again = again || n == name;
        if (again) continue;
        seen.push_back(name);
        if (FILE* f = std::fopen(name.c_str(), "rb")) {
          uint8_t buf[65536];
          size_t got;
          while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) code.insert(code.end(), buf, buf + got);
          std::fclose(f);
        }
      }
      std::fclose(maps);
    }
    for (size_t o = 0; o + 65536 <= code.size(); o += 65536) add(cases[kCode], code.data() + o, 65536, false);
  }
  std::vector<uint8_t> out(65536 + 64), copy_src(65536, 7);
  std::printf("%-30s %7s %9s %13s %13s %8s\n", "streams", "count", "MB out", "liblz4 GB/s", "in-house GB/s", "ratio");
  for (int c = 0; c < kCases; ++c) {
    const std::vector<stream>& v = cases[c];
    if (v.empty()) {
      std::printf("%-30s (incompressible at this level: stored as they are)\n", names[c]);
      continue;
    }
    size_t total = 0;
    for (const stream& s : v) total += s.size;
    double best[3] = {1e30, 1e30, 1e30};
    for (int r = 0; r < rounds; ++r)
      for (int which = 0; which < 3; ++which) {
        const auto t0 = clock_type::now();
        for (const stream& s : v) {
          if (which == 0) {
            if (LZ4_decompress_safe(reinterpret_cast<const char*>(s.bytes.data()), reinterpret_cast<char*>(out.data()),
                                    static_cast<int>(s.bytes.size()),
                                    static_cast<int>(s.size)) != static_cast<int>(s.size))
              return std::printf("liblz4 failed\n"), 1;
          } else if (which == 1) {
            if (!tessera::detail::lz4_block_decode(tessera::bytes_view(s.bytes.data(), s.bytes.size()),
                                                   tessera::bytes_mut(out.data(), s.size), s.size)
                     .ok())
              return std::printf("in-house decoder failed\n"), 1;
          } else {
            std::memcpy(out.data(), copy_src.data(), s.size);
          }
        }
        const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
        if (s < best[which]) best[which] = s;
      }
    std::printf("%-30s %7zu %9.1f %13.2f %13.2f %7.2fx   (memcpy %.1f GB/s)\n", names[c], v.size(), total / 1e6,
                total / best[0] / 1e9, total / best[1] / 1e9, best[0] / best[1], total / best[2] / 1e9);
  }
  return 0;
}
