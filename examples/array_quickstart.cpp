// SPDX-License-Identifier: BSD-3-Clause
// Quickstart: a 3-D float32 B2ND array created from data, written to a file, reopened, and a slice read back.
// The file opens in python-blosc2 (blosc2.open(PATH)[...]) and c-blosc2 (b2nd_open).
// Usage: array_quickstart PATH
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "tessera/array.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"

using namespace tessera;

namespace {

int fail(const char* what, const error& e) {
  std::fprintf(stderr, "%s: %s (%s)\n", what, e.message, errc_name(e.code));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PATH\n", argv[0]);
    return 2;
  }
  const allocator alloc = posix_allocator();
  constexpr int64_t nx = 50, ny = 60, nz = 70;
  owned_array<float> data;
  if (auto e = data.allocate(alloc, nx * ny * nz); !e.ok()) return fail("alloc", e);
  for (int64_t i = 0; i < nx * ny * nz; ++i)
    data[static_cast<size_t>(i)] = static_cast<float>(std::sin(static_cast<double>(i) / 97) * 1000);

  {  // Create: shape 50x60x70, chunks 25x30x35, blocks 10x10x35, LZ4 + shuffle.
    auto file = posix_file_open(argv[1], posix_open::replace);
    if (!file.ok()) return fail("open", file.err());
    const storage st = posix_file_storage(*file);
    array_params p;
    p.ndim = 3;
    const int64_t shape[3] = {nx, ny, nz};
    const int32_t chunks[3] = {25, 30, 35}, blocks[3] = {10, 10, 35};
    for (int d = 0; d < 3; ++d) {
      p.shape[d] = shape[d];
      p.chunkshape[d] = chunks[d];
      p.blockshape[d] = blocks[d];
    }
    p.dtype = span<const char>("<f4", 3);
    p.compressor = codec_available(codec::lz4) ? codec::lz4 : codec::blosclz;
    array a;
    const bytes_view items(reinterpret_cast<const uint8_t*>(data.data()), data.size() * sizeof(float));
    if (auto e = array_create(a, array_target_contiguous(st), alloc, p, array_fill_buffer(items)); !e.ok())
      return fail("create", e);
    (void)array_close(a);
    (void)posix_file_close(*file);
  }

  // Reopen and read the slice [10:12, 20:22, 30:34]: only the blocks it touches are decoded.
  auto file = posix_file_open(argv[1], posix_open::read);
  if (!file.ok()) return fail("reopen", file.err());
  const storage st = posix_file_storage(*file);
  array a;
  if (auto e = array_open(a, st, alloc); !e.ok()) return fail("array_open", e);
  const int64_t start[3] = {10, 20, 30}, stop[3] = {12, 22, 34};
  float slice[2 * 2 * 4];
  if (auto e = array_slice_read(a, start, stop, bytes_mut(reinterpret_cast<uint8_t*>(slice), sizeof slice)); !e.ok())
    return fail("slice", e);
  int wrong = 0;
  for (int64_t x = 0; x < 2; ++x) {
    for (int64_t y = 0; y < 2; ++y) {
      std::printf("[%lld, %lld, 30:34]:", static_cast<long long>(start[0] + x), static_cast<long long>(start[1] + y));
      for (int64_t z = 0; z < 4; ++z) {
        const float v = slice[(x * 2 + y) * 4 + z];
        std::printf(" %9.3f", static_cast<double>(v));
        wrong += v != data[static_cast<size_t>(((start[0] + x) * ny + start[1] + y) * nz + start[2] + z)];
      }
      std::printf("\n");
    }
  }
  (void)array_close(a);
  (void)posix_file_close(*file);
  return wrong == 0 ? 0 : 1;
}
