// SPDX-License-Identifier: BSD-3-Clause
// A B2ND-style array logged to raw NOR flash, safe against power loss: chunks are appended (programmed
// append-only, each synced), the frame is finalized when logging ends, and the flash region then holds a plain
// Blosc2 cframe that c-blosc2 and python-blosc2 open. The device here is the simulated NOR of the tests; on a
// board, fill a flash_device with the driver's read/prog/erase/sync callbacks instead.
#include <cstdint>
#include <cstdio>

#include "tessera/chunk.hpp"
#include "tessera/codecs.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/flash_frame.hpp"
#include "tessera/port/flash_sim.hpp"

using namespace tessera;

namespace {

constexpr int kChunks = 6;
constexpr int kItems = 1024;  // int16 samples per chunk
alignas(64) uint8_t g_arena[1536 * 1024];
int16_t g_samples[kItems];
uint8_t g_chunk[chunk_encode_bound(sizeof g_samples)];

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

  flash_sim_config sc;  // 16 sectors of 4 KiB, byte-programmable NOR, erased to 0xFF
  sc.sector_count = 16;
  flash_sim sim;
  if (auto e = flash_sim_init(sim, sc, alloc); !e.ok()) return fail("flash", e);
  flash_sim_fill_random(sim, 1);  // a used part: every sector must be erased before the array is written
  flash_log_config lc;
  lc.device = flash_sim_device(sim);

  frame_create_params fp;
  fp.typesize = 2;
  fp.chunksize = sizeof g_samples;
  flash_frame ff;
  if (auto e = flash_frame_create(ff, lc, alloc, fp); !e.ok()) return fail("create", e);

  // Scratch sized for these small chunks (the defaults suit 256 KiB blocks).
  chunk_encoder_options eo;
  eo.max_blocksize = sizeof g_samples;
  chunk_encoder enc;
  if (auto e = chunk_encoder_init(enc, alloc, eo); !e.ok()) return fail("encoder", e);
  chunk_encode_params cp;  // BloscLZ + shuffle: always built, also on the Cortex-M4
  cp.typesize = 2;
  for (int c = 0; c < kChunks; ++c) {
    for (int i = 0; i < kItems; ++i) g_samples[i] = static_cast<int16_t>((c * kItems + i) % 2000 - 1000);
    auto n = chunk_encode(enc, cp, bytes_view(reinterpret_cast<const uint8_t*>(g_samples), sizeof g_samples),
                          bytes_mut(g_chunk, sizeof g_chunk));
    if (!n.ok()) return fail("encode", n.err());
    // Once this returns, a power cut does not lose the chunk (flash_frame_mount finds it).
    if (auto e = flash_frame_append(ff, bytes_view(g_chunk, *n)); !e.ok()) return fail("append", e);
  }
  if (auto e = flash_frame_finalize(ff); !e.ok()) return fail("finalize", e);
  std::printf("logged %d chunks; frame of %llu bytes at flash offset %u; most erases of one sector: %u\n", kChunks,
              static_cast<unsigned long long>(ff.frame_len), static_cast<unsigned>(ff.frame_start),
              static_cast<unsigned>(flash_sim_max_erase_count(sim, 0, sc.sector_count)));

  // The finalized region is an ordinary cframe: open it with the frame reader and decode the last chunk.
  frame f;
  if (auto e = frame_open(f, flash_frame_storage(ff), alloc); !e.ok()) return fail("open", e);
  chunk_decoder_options dopt;
  dopt.max_blocksize = sizeof g_samples;
  chunk_decoder dec;
  if (auto e = chunk_decoder_init(dec, alloc, dopt); !e.ok()) return fail("decoder", e);
  auto n = frame_chunk_decode(f, dec, kChunks - 1, bytes_mut(reinterpret_cast<uint8_t*>(g_samples), sizeof g_samples));
  if (!n.ok()) return fail("decode", n.err());
  std::printf("chunk %d: first samples %d %d\n", kChunks - 1, static_cast<int>(g_samples[0]),
              static_cast<int>(g_samples[1]));
  return g_samples[0] == static_cast<int16_t>(((kChunks - 1) * kItems) % 2000 - 1000) ? 0 : 1;
}
