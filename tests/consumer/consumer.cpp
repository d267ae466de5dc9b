// SPDX-License-Identifier: BSD-3-Clause
// A tiny user program, built by the consumer tests (tests/consumer/CMakeLists.txt) the ways users take Tessera in:
// find_package from an installed prefix, add_subdirectory / FetchContent of the source tree, pkg-config. It sees
// only the public headers and the exported targets. It encodes a B2ND metalayer and a chunk, decodes both, compares,
// and prints one line the tests check ("tessera consumer: OK ... with <codec>"). Runs on Linux and on bare metal
// (printf reaches the host through semihosting there), with the C library's headers only (a bare-metal toolchain may
// have no C++ library). Optional parts, by compile definition:
//   TESSERA_CONSUMER_MEMORY  the memory port: the chunk is also read back through a const_buffer storage
//   TESSERA_CONSUMER_FLASH   the flash port: a simulated NOR device is created
//   TESSERA_CONSUMER_POSIX   the POSIX port: the coder's scratch comes from posix_allocator() (malloc)
//   TESSERA_CONSUMER_ARENA_BYTES  without the POSIX port: the size of the static arena (default 1 MiB)
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tessera/allocator.hpp"
#include "tessera/b2nd_meta.hpp"
#include "tessera/chunk.hpp"
#include "tessera/codecs.hpp"
#include "tessera/error.hpp"
#include "tessera/span.hpp"
#if defined(TESSERA_CONSUMER_MEMORY)
#include "tessera/port/memory_storage.hpp"
#include "tessera/storage.hpp"
#endif
#if defined(TESSERA_CONSUMER_FLASH)
#include "tessera/port/flash_sim.hpp"
#endif
#if defined(TESSERA_CONSUMER_POSIX)
#include "tessera/port/posix_allocator.hpp"
#endif

using namespace tessera;

namespace {

constexpr size_t kItems = 4096;
#if !defined(TESSERA_CONSUMER_POSIX)
#if !defined(TESSERA_CONSUMER_ARENA_BYTES)
#define TESSERA_CONSUMER_ARENA_BYTES (1024 * 1024)
#endif
alignas(64) uint8_t g_arena[TESSERA_CONSUMER_ARENA_BYTES];  // every byte the library uses comes from here
#endif
int32_t g_data[kItems];
int32_t g_back[kItems];
uint8_t g_chunk[chunk_encode_bound(sizeof g_data)];
uint8_t g_meta[256];

int fail(const char* what, const error& e) {
  printf("tessera consumer: FAILED at %s: %s (%s)\n", what, e.message, errc_name(e.code));
  return 1;
}

int fail(const char* what) {
  printf("tessera consumer: FAILED at %s\n", what);
  return 1;
}

}  // namespace

int main() {
  // The metalayer of a 3-d int32 array, encoded and decoded.
  static const char kDtype[] = "<i4";
  b2nd_meta meta;
  meta.ndim = 3;
  const int64_t shape[3] = {10, 200, 3000};
  const int32_t chunkshape[3] = {5, 100, 1000};
  const int32_t blockshape[3] = {5, 20, 100};
  for (int d = 0; d < 3; ++d) {
    meta.shape[d] = shape[d];
    meta.chunkshape[d] = chunkshape[d];
    meta.blockshape[d] = blockshape[d];
  }
  meta.dtype = span<const char>(kDtype, 3);
  meta.has_dtype = true;
  auto meta_size = b2nd_meta_encode(meta, bytes_mut(g_meta, sizeof g_meta));
  if (!meta_size.ok()) return fail("b2nd_meta_encode", meta_size.err());
  auto decoded = b2nd_meta_decode(bytes_view(g_meta, *meta_size));
  if (!decoded.ok()) return fail("b2nd_meta_decode", decoded.err());
  const b2nd_meta& m = *decoded;
  if (m.ndim != 3 || !m.has_dtype || m.dtype.size() != 3 || memcmp(m.dtype.data(), kDtype, 3) != 0) {
    return fail("metalayer round trip (ndim or dtype)");
  }
  for (int d = 0; d < 3; ++d) {
    if (m.shape[d] != shape[d] || m.chunkshape[d] != chunkshape[d] || m.blockshape[d] != blockshape[d]) {
      return fail("metalayer round trip (shapes)");
    }
  }

  // A chunk of int32 with the best codec this build has, encoded and decoded. On bare metal a program links the
  // codec libraries it asks for (tessera/codecs.hpp): this one asks for all.
  codec_link_all();
  filter_link_all();
  partition_link_auto();
  encoder_link_parallel();
#if defined(TESSERA_CONSUMER_POSIX)
  const allocator alloc = posix_allocator();
#else
  arena heap;
  arena_init(heap, g_arena, sizeof g_arena);
  const allocator alloc = arena_allocator(heap);
#endif
  chunk_encode_params params;
  params.typesize = 4;
  params.compressor = codec_available(codec::zstd)  ? codec::zstd
                      : codec_available(codec::lz4) ? codec::lz4
                                                    : codec::blosclz;
  for (size_t i = 0; i < kItems; ++i) g_data[i] = static_cast<int32_t>(i * 3 - 1000);

  chunk_encoder_options eo;
  eo.max_blocksize = sizeof g_data;
  chunk_encoder enc;
  if (auto e = chunk_encoder_init(enc, alloc, eo); !e.ok()) return fail("chunk_encoder_init", e);
  auto cbytes = chunk_encode(enc, params, bytes_view(reinterpret_cast<const uint8_t*>(g_data), sizeof g_data),
                             bytes_mut(g_chunk, sizeof g_chunk));
  if (!cbytes.ok()) return fail("chunk_encode", cbytes.err());
  if (*cbytes >= sizeof g_data) return fail("chunk_encode (the data did not compress)");

  bytes_view chunk(g_chunk, *cbytes);
#if defined(TESSERA_CONSUMER_MEMORY)
  // Read the chunk back through a storage of the memory port.
  static uint8_t copy[sizeof g_chunk];
  const_buffer stored{g_chunk, *cbytes};
  const storage st = const_buffer_storage(stored);
  if (auto e = storage_read(st, 0, bytes_mut(copy, *cbytes)); !e.ok()) return fail("storage_read", e);
  chunk = bytes_view(copy, *cbytes);
#endif
#if defined(TESSERA_CONSUMER_FLASH)
  flash_sim_config fc;
  flash_sim sim;
  if (auto e = flash_sim_init(sim, fc, alloc); !e.ok()) return fail("flash_sim_init", e);
  flash_sim_release(sim);
#endif

  chunk_decoder_options dopt;
  dopt.max_blocksize = sizeof g_data;
  chunk_decoder dec;
  if (auto e = chunk_decoder_init(dec, alloc, dopt); !e.ok()) return fail("chunk_decoder_init", e);
  auto nbytes = chunk_decode(dec, chunk, bytes_mut(reinterpret_cast<uint8_t*>(g_back), sizeof g_back));
  if (!nbytes.ok()) return fail("chunk_decode", nbytes.err());
  if (*nbytes != sizeof g_data || memcmp(g_back, g_data, sizeof g_data) != 0) {
    return fail("chunk round trip (the decoded data differ)");
  }

  printf("tessera consumer: OK: metalayer %zu bytes, chunk %zu -> %zu bytes with %s\n", *meta_size,
              sizeof g_data, *cbytes, codec_name(params.compressor));
  return 0;
}
