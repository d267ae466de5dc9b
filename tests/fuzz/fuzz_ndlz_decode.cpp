// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes NDLZ's stream decoder (ndlz_decompress, codec 32 of the n-d plugins). The input is a stream, decoded
// into an output of the size its header claims (or a byte off), with meta 4 or 8 (sometimes another); or (first
// byte fuzz::kStructuredTag) a recipe: a 2-D block of the recipe's bytes, shape and cell edge compressed by the
// project's NDLZ encoder, then edited (a token, an offset, a literal, the header, a cut).
// Invariants: no crash, no out-of-bounds access (ASan) and no write outside the output (guards), no UB; an
// intact stream decodes to the block it was made from; a stream decodes only into an output of exactly the
// block's size.
#include <cstring>
#include <vector>

#include "../../src/codecs/ndlz.hpp"
#include "fuzz_build.hpp"

using namespace tessera;

namespace {

int32_t load_i32(const uint8_t* p) noexcept {
  const uint32_t u = p[0] | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  return static_cast<int32_t>(u);
}

// Decodes `in` into outputs of `size` and size +- 1 bytes; returns whether the exact one decoded (into *out).
bool decode_check(bytes_view in, size_t size, uint8_t meta, std::vector<uint8_t>* out) {
  fuzz::guarded_buffer exact(size);
  const status s = detail::ndlz_decompress(in, bytes_mut(exact.data(), exact.size()), meta);
  FUZZ_CHECK(exact.guards_intact());
  if (s.ok() && out != nullptr) out->assign(exact.data(), exact.data() + size);
  for (size_t other : {size + 1, size - 1}) {
    if (size == 0 && other == size - 1) continue;
    fuzz::guarded_buffer wrong(other);
    const status w = detail::ndlz_decompress(in, bytes_mut(wrong.data(), wrong.size()), meta);
    FUZZ_CHECK(wrong.guards_intact());
    if (s.ok()) FUZZ_CHECK(!w.ok());
  }
  return s.ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::params p(data, size);
  if (size == 0 || data[0] != fuzz::kStructuredTag) {
    // The size the stream's header claims (ndim, then two int32 dimensions), when it is small enough.
    size_t claimed = p.range(0, 256);
    if (size >= 9) {
      const int64_t a = load_i32(data + 1), b = load_i32(data + 5);
      if (a > 0 && b > 0 && a * b <= static_cast<int64_t>(fuzz::kMaxOutput)) claimed = static_cast<size_t>(a * b);
    }
    const uint8_t metas[] = {4, 8, 4, 8, 0, 16};
    (void)decode_check(bytes_view(data, size), claimed, metas[p.range(0, 5)], nullptr);
    return 0;
  }
  fuzz::recipe r(data + 1, size - 1);
  chunk_nd_geometry g;
  g.ndim = 2;
  g.blockshape[0] = 1 + r.u8() % 48;
  g.blockshape[1] = 1 + r.u8() % 48;
  if (r.u8() % 16 == 0) g.ndim = static_cast<int8_t>(1 + r.u8() % 3);  // NDLZ is 2-D: refused
  const uint8_t meta = r.flag() ? 4 : 8;
  const size_t n = static_cast<size_t>(g.blockshape[0]) * static_cast<size_t>(g.blockshape[1]);
  std::vector<uint8_t> block(n);
  fuzz::detail_build::data_fill(r, block, static_cast<uint8_t>(1 + r.u8() % 4));
  std::vector<uint8_t> stream(n + r.u8() % 32), workspace(detail::kNdlzWorkspace);
  const auto c = detail::ndlz_compress(bytes_view(block.data(), n), bytes_mut(stream.data(), stream.size()), meta, g,
                                       bytes_mut(workspace.data(), workspace.size()));
  if (!c.ok() || *c == 0) return 0;  // refused, or does not shrink (the chunk stores the block raw)
  FUZZ_CHECK(*c <= stream.size());
  stream.resize(*c);
  const bool edited = fuzz::chunk_edit(r, stream);  // the same edits as a chunk's: bytes, int32s, cuts, runs
  std::vector<uint8_t> copy(stream);  // exactly the stream's size: ASan sees reads past it
  std::vector<uint8_t> out;
  const bool ok = decode_check(bytes_view(copy.data(), copy.size()), n, meta, &out);
  if (!edited) {
    FUZZ_CHECK(ok);
    FUZZ_CHECK(std::memcmp(out.data(), block.data(), n) == 0);
  }
  // The other cell edge reads the same stream otherwise: never a crash, whatever it decodes to.
  (void)decode_check(bytes_view(copy.data(), copy.size()), n, meta == 4 ? 8 : 4, nullptr);
  return 0;
}
