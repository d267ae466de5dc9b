// Bare metal links the filters other than shuffle only when the program calls their filter_link_* function
// (tessera/codecs.hpp). This program calls none: writing with bitshuffle, delta or bytedelta is refused as
// unsupported, and so is reading a chunk that needs bitshuffle; shuffle works. Exit status 0 when all holds.
// (ctest's image-symbol check, filters_on_demand_links_only_what_it_asks, sees that none of their code is in it.)
#include <cstdio>
#include <cstring>

#include "tessera/allocator.hpp"
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
  chunk_decoder_release(d);
  chunk_encoder_release(e);
  std::printf("filters_on_demand: %d failure(s)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
