// SPDX-License-Identifier: BSD-3-Clause
// Bare metal links the filters other than shuffle only when the program calls their filter_link_* function
// (tessera/codecs.hpp). This program calls none: writing with bitshuffle, delta or bytedelta is refused as
// unsupported, and so is reading a chunk that needs bitshuffle; shuffle works. Nor does it call
// partition_link_auto: the automatic block size of chunk_encode and the automatic shapes of
// array_frame_setup_make are unsupported, and given ones work; nor encoder_link_parallel (a parallel executor
// is refused) nor any dictionary encoder (use_dict is refused) nor encoder_link_plugins (user codecs and
// filters are refused). Exit status 0 when all holds. (ctest's
// image-symbol check, filters_on_demand_links_only_what_it_asks, sees that none of their code is in it.)
#include <cstdio>
#include <cstring>

#include "tessera/allocator.hpp"
#include "tessera/array.hpp"
#include "tessera/chunk.hpp"

using namespace tessera;

namespace {

alignas(16) uint8_t g_heap[96 * 1024];
uint8_t g_items[4096];
uint8_t g_chunk[4096 + kChunkMaxOverhead];
uint8_t g_out[4096];

int g_failures = 0;
void expect(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  g_failures += ok ? 0 : 1;
}

}  // namespace

int main() {
  arena heap;
  arena_init(heap, g_heap, sizeof g_heap);
  const allocator alloc = arena_allocator(heap);
  for (size_t i = 0; i < sizeof g_items; ++i) g_items[i] = static_cast<uint8_t>((i / 64) & 3);  // compressible: not stored verbatim
  chunk_encoder e;
  chunk_encoder_options eo;
  eo.max_blocksize = 4096;
  if (!chunk_encoder_init(e, alloc, eo).ok()) return 1;
  chunk_decoder d;
  if (!chunk_decoder_init(d, alloc).ok()) return 1;

  chunk_encode_params p;
  p.typesize = 4;
  p.filters[kChunkMaxFilters - 1] = static_cast<uint8_t>(filter_id::shuffle);
  const auto auto_bs = chunk_encode(e, p, bytes_view(g_items, sizeof g_items), bytes_mut(g_chunk, sizeof g_chunk));
  expect(!auto_bs.ok() && auto_bs.err().code == errc::unsupported, "the automatic block size, not linked");
  p.blocksize = 1024;
  const filter_id unlinked[] = {filter_id::bitshuffle, filter_id::delta, filter_id::bytedelta};
  for (filter_id f : unlinked) {
    p.filters[kChunkMaxFilters - 1] = static_cast<uint8_t>(f);
    const auto r = chunk_encode(e, p, bytes_view(g_items, sizeof g_items), bytes_mut(g_chunk, sizeof g_chunk));
    expect(!r.ok() && r.err().code == errc::unsupported, "writing with a filter the program did not link");
  }
  p.filters[kChunkMaxFilters - 1] = static_cast<uint8_t>(filter_id::shuffle);
  const auto n = chunk_encode(e, p, bytes_view(g_items, sizeof g_items), bytes_mut(g_chunk, sizeof g_chunk));
  expect(n.ok(), "writing with shuffle");
  if (!n.ok()) return 1;
  const auto back = chunk_decode(d, bytes_view(g_chunk, *n), bytes_mut(g_out, sizeof g_out));
  expect(back.ok() && *back == sizeof g_items && std::memcmp(g_out, g_items, sizeof g_items) == 0, "reading it back");
  // The same chunk saying bitshuffle instead (the extended header's last filter slot, byte 16 + 5).
  g_chunk[kChunkHeaderMinSize + kChunkMaxFilters - 1] = static_cast<uint8_t>(filter_id::bitshuffle);
  const auto h = chunk_header_read(bytes_view(g_chunk, *n));
  expect(h.ok() && !h->memcpyed && h->special == chunk_special::none, "the chunk is compressed (its filters run on read)");
  const auto bits = chunk_decode(d, bytes_view(g_chunk, *n), bytes_mut(g_out, sizeof g_out));
  expect(!bits.ok() && bits.err().code == errc::unsupported, "reading a chunk that needs bitshuffle");
  // Nor a dictionary encoder: use_dict is refused before any codec runs.
  p.compressor = codec::lz4;
  p.use_dict = true;
  const auto dict = chunk_encode(e, p, bytes_view(g_items, sizeof g_items), bytes_mut(g_chunk, sizeof g_chunk));
  expect(!dict.ok() && dict.err().code == errc::codec_unavailable, "dictionaries, not linked");
  // Nor encoder_link_plugins: a user codec or a user filter is refused before anything runs.
  chunk_user_codec uc;
  uc.id = kChunkUserIdFirst;
  uc.encode = [](void*, bytes_view, bytes_mut, uint8_t, size_t* written) noexcept {
    *written = 0;
    return ok_status();
  };
  chunk_plugins plugins;
  plugins.codecs = &uc;
  plugins.ncodecs = 1;
  p.use_dict = false;
  p.plugins = &plugins;
  p.compressor = static_cast<codec>(kChunkUserIdFirst);
  const auto user = chunk_encode(e, p, bytes_view(g_items, sizeof g_items), bytes_mut(g_chunk, sizeof g_chunk));
  expect(!user.ok() && user.err().code == errc::unsupported, "a user codec, not linked");
  p.compressor = codec::blosclz;
  p.filters[0] = kChunkUserIdFirst;
  const auto userf = chunk_encode(e, p, bytes_view(g_items, sizeof g_items), bytes_mut(g_chunk, sizeof g_chunk));
  expect(!userf.ok() && userf.err().code == errc::unsupported, "a user filter, not linked");
  p.filters[0] = 0;
  p.plugins = nullptr;
  chunk_decoder_release(d);
  chunk_encoder_release(e);

  // Nor encoder_link_parallel: an encoder with a parallel executor is refused (a serial one works, above).
  chunk_encoder_options po = eo;
  po.exec.run = [](void*, size_t ntasks, executor_task task, void* context) noexcept {
    for (size_t i = 0; i < ntasks; ++i) task(context, i, static_cast<uint32_t>(i % 2));
  };
  po.exec.workers = 2;
  chunk_encoder pe;
  const status parallel = chunk_encoder_init(pe, alloc, po);
  expect(!parallel.ok() && parallel.code == errc::unsupported, "parallel blocks, not linked");
  chunk_encoder_release(pe);

  static array_frame_setup setup;  // large: not on the stack
  array_params ap;
  ap.ndim = 1;
  ap.shape[0] = 1000;
  ap.itemsize = 4;
  const status auto_shapes = array_frame_setup_make(setup, ap);
  expect(!auto_shapes.ok() && auto_shapes.code == errc::unsupported, "the automatic chunk and block shapes, not linked");
  ap.chunkshape[0] = 100;
  const status half_given = array_frame_setup_make(setup, ap);
  expect(!half_given.ok() && half_given.code == errc::unsupported, "the automatic block shape, not linked");
  ap.blockshape[0] = 50;
  expect(array_frame_setup_make(setup, ap).ok() && setup.frame.blocksize == 200, "shapes given");
  ap.blockshape[0] = 101;
  const status too_large = array_frame_setup_make(setup, ap);
  expect(!too_large.ok() && too_large.code == errc::invalid_argument, "a block larger than its chunk");
  std::printf("filters_on_demand: %d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
