// SPDX-License-Identifier: BSD-3-Clause
// A Blosc2 frame in a fixed memory buffer with no heap at all: an arena over a static buffer serves every
// allocation, the frame is written into another static buffer, then read back in place (no copies).
#include <cstdint>
#include <cstdio>

#include "tessera/allocator.hpp"
#include "tessera/chunk.hpp"
#include "tessera/codecs.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

using namespace tessera;

namespace {

constexpr int kChunks = 4;
constexpr int kItems = 4096;  // int32 items per chunk
alignas(64) uint8_t g_arena[768 * 1024];
uint8_t g_frame[64 * 1024];
int32_t g_data[kItems];
uint8_t g_chunk[chunk_encode_bound(sizeof g_data)];

int fail(const char* what, const error& e) {
  std::printf("%s: %s (%s)\n", what, e.message, errc_name(e.code));
  return 1;
}

}  // namespace

int main() {
  partition_link_auto();  // chunk_encode chooses the block size (cp.blocksize 0): linked by this call on bare metal
  arena heap;
  arena_init(heap, g_arena, sizeof g_arena);
  const allocator alloc = arena_allocator(heap);

  // Write: encode each chunk with LZ4 (or BloscLZ where the build lacks LZ4) and append it to the frame.
  // Scratch sized for these small chunks (the defaults suit 256 KiB blocks).
  chunk_encoder_options eo;
  eo.max_blocksize = sizeof g_data;
  chunk_encoder enc;
  if (auto e = chunk_encoder_init(enc, alloc, eo); !e.ok()) return fail("encoder", e);
  chunk_encode_params cp;
  cp.typesize = 4;
  cp.compressor = codec_available(codec::lz4) ? codec::lz4 : codec::blosclz;
  fixed_buffer buffer;
  fixed_buffer_init(buffer, g_frame, sizeof g_frame);
  frame_create_params fp;
  fp.typesize = 4;
  fp.compcode = static_cast<uint8_t>(cp.compressor);
  fp.chunksize = sizeof g_data;
  frame f;
  if (auto e = frame_create(f, fixed_buffer_storage(buffer), alloc, fp); !e.ok()) return fail("create", e);
  for (int c = 0; c < kChunks; ++c) {
    for (int i = 0; i < kItems; ++i) g_data[i] = c * kItems + i;
    auto n = chunk_encode(enc, cp, bytes_view(reinterpret_cast<const uint8_t*>(g_data), sizeof g_data),
                          bytes_mut(g_chunk, sizeof g_chunk));
    if (!n.ok()) return fail("encode", n.err());
    if (auto e = frame_chunk_append(f, bytes_view(g_chunk, *n)); !e.ok()) return fail("append", e);
  }
  if (auto e = frame_commit(f); !e.ok()) return fail("commit", e);
  const uint64_t frame_len = frame_info_get(f)->frame_len;
  (void)frame_close(f);
  std::printf("wrote %d chunks of %zu bytes into a %llu-byte frame, arena high water %zu bytes\n", kChunks,
              sizeof g_data, static_cast<unsigned long long>(frame_len), heap.high_water);

  // Read: open the buffer in place and decode one block of chunk 2.
  const_buffer in{g_frame, static_cast<size_t>(frame_len)};
  frame r;
  if (auto e = frame_open(r, const_buffer_storage(in), alloc); !e.ok()) return fail("open", e);
  chunk_decoder_options dopt;
  dopt.max_blocksize = sizeof g_data;
  chunk_decoder dec;
  if (auto e = chunk_decoder_init(dec, alloc, dopt); !e.ok()) return fail("decoder", e);
  auto got = frame_block_decode(r, dec, 2, 0, bytes_mut(reinterpret_cast<uint8_t*>(g_data), sizeof g_data));
  if (!got.ok()) return fail("decode", got.err());
  std::printf("chunk 2, block 0: %zu bytes, first items %d %d %d\n", *got, static_cast<int>(g_data[0]),
              static_cast<int>(g_data[1]), static_cast<int>(g_data[2]));
  return g_data[0] == 2 * kItems && g_data[2] == 2 * kItems + 2 ? 0 : 1;
}
