// SPDX-License-Identifier: BSD-3-Clause
// A Blosc2 frame in a file through the POSIX port: write float32 chunks with Zstd (or BloscLZ) and two worker
// threads, commit, then reopen the file read-only and decode one chunk.
// Usage: frame_file PATH
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/thread_pool.hpp"

using namespace tessera;

namespace {

constexpr int kChunks = 8;
constexpr int kItems = 256 * 1024;  // float32 items per chunk (1 MiB)

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
  thread_pool pool;
  if (auto e = thread_pool_init(pool, 2); !e.ok()) return fail("thread pool", e);

  owned_array<float> data;
  owned_array<uint8_t> chunk;
  if (auto e = data.allocate(alloc, kItems); !e.ok()) return fail("alloc", e);
  if (auto e = chunk.allocate(alloc, chunk_encode_bound(kItems * sizeof(float))); !e.ok()) return fail("alloc", e);

  {  // Write.
    auto file = posix_file_open(argv[1], posix_open::replace);
    if (!file.ok()) return fail("open for writing", file.err());
    chunk_encoder_options eo;
    eo.exec = thread_pool_executor(pool);
    chunk_encoder enc;
    if (auto e = chunk_encoder_init(enc, alloc, eo); !e.ok()) return fail("encoder", e);
    chunk_encode_params cp;
    cp.typesize = 4;
    cp.compressor = codec_available(codec::zstd) ? codec::zstd : codec::blosclz;
    frame_create_params fp;
    fp.typesize = 4;
    fp.compcode = static_cast<uint8_t>(cp.compressor);
    fp.chunksize = kItems * sizeof(float);
    frame f;
    frame_open_options fo;
    fo.writable = true;
    if (auto e = frame_create(f, posix_file_storage(*file), alloc, fp, fo); !e.ok()) return fail("create", e);
    for (int c = 0; c < kChunks; ++c) {
      for (int i = 0; i < kItems; ++i) {
        const double x = static_cast<double>(c) * kItems + i;
        data[static_cast<size_t>(i)] = static_cast<float>(std::sin(x / 97) * 1000 + x * 0.01);
      }
      auto n = chunk_encode(enc, cp, bytes_view(reinterpret_cast<const uint8_t*>(data.data()), kItems * 4),
                            bytes_mut(chunk.data(), chunk.size()));
      if (!n.ok()) return fail("encode", n.err());
      if (auto e = frame_chunk_append(f, bytes_view(chunk.data(), *n)); !e.ok()) return fail("append", e);
    }
    if (auto e = frame_commit(f); !e.ok()) return fail("commit", e);  // durable: synced, then the header
    const frame_info& info = *frame_info_get(f);
    std::printf("%s: %lld chunks, %lld bytes -> %lld (ratio %.2f)\n", argv[1], static_cast<long long>(info.nchunks),
                static_cast<long long>(info.nbytes), static_cast<long long>(info.cbytes),
                static_cast<double>(info.nbytes) / static_cast<double>(info.cbytes));
    (void)frame_close(f);
    if (auto e = posix_file_close(*file); !e.ok()) return fail("close", e);
  }

  // Read back chunk 5.
  auto file = posix_file_open(argv[1], posix_open::read);
  if (!file.ok()) return fail("open for reading", file.err());
  frame f;
  if (auto e = frame_open(f, posix_file_storage(*file), alloc); !e.ok()) return fail("open frame", e);
  chunk_decoder_options dopt;
  dopt.exec = thread_pool_executor(pool);
  chunk_decoder dec;
  if (auto e = chunk_decoder_init(dec, alloc, dopt); !e.ok()) return fail("decoder", e);
  auto n = frame_chunk_decode(f, dec, 5, bytes_mut(reinterpret_cast<uint8_t*>(data.data()), kItems * 4));
  if (!n.ok()) return fail("decode", n.err());
  const double x0 = 5.0 * kItems;
  const float expect = static_cast<float>(std::sin(x0 / 97) * 1000 + x0 * 0.01);
  std::printf("chunk 5: %zu bytes, item 0 = %.3f\n", *n, static_cast<double>(data[0]));
  (void)frame_close(f);
  (void)posix_file_close(*file);
  return data[0] == expect ? 0 : 1;
}
