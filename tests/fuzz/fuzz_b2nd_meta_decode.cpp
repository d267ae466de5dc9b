// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes b2nd_meta_decode: the input is one metalayer's content.
// Invariants: no crash, no out-of-bounds access, no UB; a success reports a structure inside the input, with
// values in the documented ranges and a dtype that views the input; it decodes the same from exactly its own
// bytes, every shorter prefix is truncated; a version-0 meta re-encodes (b2nd_meta_encode, the size
// b2nd_meta_encoded_size announced) into bytes that decode to the same meta and re-encode identically.
// An input that starts with fuzz::kStructuredTag is a recipe of a meta (fuzz_build.hpp): the encoder writes it
// (or, for a meta that breaks a rule: a version other than 0, ndim past kMaxDims, a negative extent, a zero
// block where the chunk is not, a negative dtype_format, a dtype with a size and no data, says which with
// encoded size 0) and the bytes, edited as the recipe says, then go through the decoder's checks above.
#include <cstring>
#include <initializer_list>
#include <vector>

#include "tessera/b2nd_meta.hpp"

#include "fuzz_build.hpp"

using namespace tessera;

namespace {

bool same_meta(const b2nd_meta& a, const b2nd_meta& b) {
  if (a.version != b.version || a.ndim != b.ndim || a.dtype_format != b.dtype_format) return false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.shape[i] != b.shape[i] || a.chunkshape[i] != b.chunkshape[i] || a.blockshape[i] != b.blockshape[i]) {
      return false;
    }
  }
  const span<const char> da = b2nd_meta_dtype_or_default(a);
  const span<const char> db = b2nd_meta_dtype_or_default(b);
  return da.size() == db.size() && (da.empty() || std::memcmp(da.data(), db.data(), da.size()) == 0);
}

}  // namespace

int meta_check(const uint8_t* data, size_t size);

// The recipe's meta, encoded (or refused), then edited and checked as any input.
void recipe_check(const uint8_t* data, size_t size) {
  fuzz::recipe r(data, size);
  b2nd_meta m;
  const uint8_t k = r.u8();
  m.version = static_cast<int8_t>(k % 8 == 0 ? r.u8() : 0);
  m.ndim = static_cast<int8_t>(k % 8 == 1 ? static_cast<int8_t>(r.u8()) : r.u8() % (kMaxDims + 1));
  const int nd = m.ndim >= 0 && m.ndim <= kMaxDims ? m.ndim : 0;
  for (int i = 0; i < nd; ++i) {
    const uint8_t v = r.u8();
    m.shape[i] = v < 250 ? v * (1 + r.u8()) : v == 250 ? INT64_MAX : v == 251 ? -1 : static_cast<int64_t>(r.u32()) << 20;
    m.chunkshape[i] = static_cast<int32_t>(v < 250 ? 1 + r.u8() : v == 252 ? -1 : v == 253 ? 0 : INT32_MAX);
    m.blockshape[i] = static_cast<int32_t>(k % 8 == 2 && i == 0 ? 0 : v == 254 ? -2 : 1 + r.u8() % 64);
  }
  m.dtype_format = static_cast<int8_t>(k % 8 == 3 ? -1 : r.u8() % 2);
  m.has_dtype = k % 8 != 4;
  static const char kDtype[] = "<f8|u1<i4>f4[('a', '<i4'), ('b', '|u1')]";
  const size_t dlen = r.u8() % sizeof kDtype;
  m.dtype = k % 8 == 5 ? span<const char>(nullptr, dlen + 1) : span<const char>(kDtype, dlen);
  const size_t want = b2nd_meta_encoded_size(m);
  std::vector<uint8_t> out(want + 8);
  const auto w = b2nd_meta_encode(m, bytes_mut(out.data(), out.size()));
  FUZZ_CHECK(w.ok() == (want > 0));
  FUZZ_CHECK(!b2nd_meta_encode(m, bytes_mut()).ok());  // no buffer
  if (!w.ok()) return;
  FUZZ_CHECK(*w == want);
  out.resize(want);
  {
    const auto back = b2nd_meta_decode(bytes_view(out.data(), out.size()));
    FUZZ_CHECK(back.ok());
    FUZZ_CHECK(back->ndim == m.ndim && back->version == 0 && back->dtype_format == m.dtype_format);
    for (int i = 0; i < m.ndim; ++i)
      FUZZ_CHECK(back->shape[i] == m.shape[i] && back->chunkshape[i] == m.chunkshape[i] &&
                 back->blockshape[i] == m.blockshape[i]);
  }
  (void)fuzz::chunk_edit(r, out);  // its bytes, int32s (the shapes' big-endian fields too), cuts
  std::vector<uint8_t> copy(out);
  (void)meta_check(copy.data(), copy.size());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0 && data[0] == fuzz::kStructuredTag) {
    recipe_check(data + 1, size - 1);
    return 0;
  }
  return meta_check(data, size);
}

int meta_check(const uint8_t* data, size_t size) {
  fuzz::params p(data, size);
  size_t consumed = SIZE_MAX;
  const auto r = b2nd_meta_decode(bytes_view(data, size), &consumed);
  // Without *consumed the result is the same.
  const auto r_plain = b2nd_meta_decode(bytes_view(data, size));
  FUZZ_CHECK(r_plain.ok() == r.ok());
  if (!r.ok()) {
    FUZZ_CHECK(r.err().code == r_plain.err().code);
    FUZZ_CHECK(r.err().code == errc::truncated || r.err().code == errc::malformed ||
               r.err().code == errc::unsupported);
    FUZZ_CHECK(r.err().message != nullptr);
    return 0;
  }
  const b2nd_meta& m = *r;
  FUZZ_CHECK(same_meta(m, *r_plain));
  FUZZ_CHECK(consumed <= size);
  FUZZ_CHECK(m.ndim >= 0 && m.ndim <= kMaxDims);
  FUZZ_CHECK(m.version >= 0);
  FUZZ_CHECK(m.dtype_format >= 0);
  for (int i = 0; i < m.ndim; ++i) {
    FUZZ_CHECK(m.shape[i] >= 0);
    FUZZ_CHECK(m.chunkshape[i] >= 0);
    FUZZ_CHECK(m.blockshape[i] >= 0);
    FUZZ_CHECK(m.blockshape[i] != 0 || m.chunkshape[i] == 0);
  }
  if (m.has_dtype) {
    FUZZ_CHECK(m.dtype.size() <= consumed);
    if (!m.dtype.empty()) {
      const auto* at = reinterpret_cast<const uint8_t*>(m.dtype.data());
      FUZZ_CHECK(at >= data && at + m.dtype.size() <= data + consumed);
    }
  } else {
    FUZZ_CHECK(m.dtype.empty());
  }

  // Its own bytes decode alike; one byte fewer (or a random shorter prefix) is truncated.
  {
    auto* exact = static_cast<uint8_t*>(std::malloc(consumed == 0 ? 1 : consumed));
    FUZZ_CHECK(exact != nullptr);
    if (consumed > 0) std::memcpy(exact, data, consumed);
    size_t consumed2 = SIZE_MAX;
    const auto r2 = b2nd_meta_decode(bytes_view(exact, consumed), &consumed2);
    FUZZ_CHECK(r2.ok());
    FUZZ_CHECK(consumed2 == consumed);
    FUZZ_CHECK(same_meta(m, *r2));
    for (size_t len : {consumed - 1, p.range(0, consumed - 1)}) {
      const auto r3 = b2nd_meta_decode(bytes_view(exact, len));
      FUZZ_CHECK(!r3.ok());
      FUZZ_CHECK(r3.err().code == errc::truncated);
    }
    std::free(exact);
  }

  // Re-encoding: only version 0 can be written.
  const size_t want = b2nd_meta_encoded_size(m);
  fuzz::guarded_buffer enc(want + 16);
  const auto w = b2nd_meta_encode(m, bytes_mut(enc.data(), enc.size()));
  FUZZ_CHECK(enc.guards_intact());
  if (m.version != kB2ndMetaVersion) {
    FUZZ_CHECK(want == 0);
    FUZZ_CHECK(!w.ok());
    FUZZ_CHECK(w.err().code == errc::unsupported);
    return 0;
  }
  FUZZ_CHECK(w.ok());
  FUZZ_CHECK(*w == want);
  FUZZ_CHECK(enc.untouched_from(want));
  {
    // One byte short: refused, and nothing written past the buffer.
    fuzz::guarded_buffer small(want - 1);
    const auto ws = b2nd_meta_encode(m, bytes_mut(small.data(), small.size()));
    FUZZ_CHECK(!ws.ok());
    FUZZ_CHECK(ws.err().code == errc::buffer_too_small);
    FUZZ_CHECK(small.guards_intact());
  }
  size_t consumed3 = SIZE_MAX;
  const auto back = b2nd_meta_decode(bytes_view(enc.data(), want), &consumed3);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(consumed3 == want);
  FUZZ_CHECK(back->has_dtype);
  FUZZ_CHECK(same_meta(m, *back));
  fuzz::guarded_buffer enc2(want);
  const auto w2 = b2nd_meta_encode(*back, bytes_mut(enc2.data(), enc2.size()));
  FUZZ_CHECK(w2.ok() && *w2 == want);
  FUZZ_CHECK(std::memcmp(enc.data(), enc2.data(), want) == 0);
  FUZZ_CHECK(enc2.guards_intact());
  return 0;
}
