// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes b2nd_meta_decode: the input is one metalayer's content.
// Invariants: no crash, no out-of-bounds access, no UB; a success reports a structure inside the input, with
// values in the documented ranges and a dtype that views the input; it decodes the same from exactly its own
// bytes, every shorter prefix is truncated; a version-0 meta re-encodes (b2nd_meta_encode, the size
// b2nd_meta_encoded_size announced) into bytes that decode to the same meta and re-encode identically.
#include <cstring>
#include <initializer_list>

#include "tessera/b2nd_meta.hpp"

#include "fuzz_common.hpp"

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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
