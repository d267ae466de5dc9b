// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes detail::blosclz_decompress. Input: 3 bytes, little-endian, the output capacity (below 1 MiB), then
// one BloscLZ stream.
// Invariants: no crash, no out-of-bounds access, no UB; a success returns at most the capacity and never writes
// outside the output (guards); the same stream decodes to the same bytes into a larger output, and fails into an
// output one byte shorter than what it produced; what it produced, compressed again (blosclz_compress at a
// level the input picks), decompresses back to the same bytes.
#include <cstring>

#include "../../src/codecs/blosclz.hpp"  // internal header: the core keeps src/ private

#include "fuzz_common.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  fuzz::params p(data, size);
  const size_t capacity = (size_t{data[0]} | size_t{data[1]} << 8 | size_t{data[2]} << 16) & 0xfffff;
  const bytes_view stream(data + 3, size - 3);

  fuzz::guarded_buffer out(capacity);
  const auto r = detail::blosclz_decompress(stream, bytes_mut(out.data(), out.size()));
  FUZZ_CHECK(out.guards_intact());
  if (!r.ok()) {
    FUZZ_CHECK(r.err().code == errc::truncated || r.err().code == errc::corrupt);
    return 0;
  }
  const size_t n = *r;
  FUZZ_CHECK(n <= capacity);
  FUZZ_CHECK(!stream.empty());

  // More room changes nothing.
  {
    fuzz::guarded_buffer big(n + p.range(1, 300));
    const auto r2 = detail::blosclz_decompress(stream, bytes_mut(big.data(), big.size()));
    FUZZ_CHECK(big.guards_intact());
    FUZZ_CHECK(r2.ok() && *r2 == n);
    FUZZ_CHECK(n == 0 || std::memcmp(big.data(), out.data(), n) == 0);
  }
  // One byte less is refused.
  if (n > 0) {
    fuzz::guarded_buffer small(n - 1);
    const auto r3 = detail::blosclz_decompress(stream, bytes_mut(small.data(), small.size()));
    FUZZ_CHECK(small.guards_intact());
    FUZZ_CHECK(!r3.ok());
    FUZZ_CHECK(r3.err().code == errc::corrupt);
  }

  // Round trip through the compressor.
  const int clevel = static_cast<int>(p.range(detail::kBlosclzMinLevel, detail::kBlosclzMaxLevel));
  const size_t ws_size = detail::blosclz_workspace_size(clevel);
  FUZZ_CHECK(ws_size > 0 && ws_size <= detail::kBlosclzWorkspaceMax);
  fuzz::guarded_buffer ws(ws_size);
  fuzz::guarded_buffer comp(n + n / 8 + 80);
  const auto c = detail::blosclz_compress(clevel, bytes_view(out.data(), n), bytes_mut(comp.data(), comp.size()),
                                          bytes_mut(ws.data(), ws.size()));
  FUZZ_CHECK(c.ok());
  FUZZ_CHECK(comp.guards_intact());
  FUZZ_CHECK(ws.guards_intact());
  FUZZ_CHECK(*c <= comp.size());
  if (*c > 0) {
    fuzz::guarded_buffer back(n);
    const auto d = detail::blosclz_decompress(bytes_view(comp.data(), *c), bytes_mut(back.data(), back.size()));
    FUZZ_CHECK(back.guards_intact());
    FUZZ_CHECK(d.ok());
    FUZZ_CHECK(*d == n);
    FUZZ_CHECK(std::memcmp(back.data(), out.data(), n) == 0);
  }
  return 0;
}
