// SPDX-License-Identifier: BSD-3-Clause
// The test data's digests and rebuilds (test_data.hpp). Linux targets only: it reads files.
#include "test_data.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tessera/array.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "sha256.hpp"
#include "test_allocators.hpp"

namespace tessera::test {

namespace {

bool read_all(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool digest_of_is(const std::vector<uint8_t>& bytes, const uint8_t digest[32]) {
  uint8_t got[32];
  sha256_digest(bytes.data(), bytes.size(), got);
  return std::memcmp(got, digest, 32) == 0;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// compat/frame_simple.raw (tests/data/README.md): 10 chunks of 50,000 little-endian int32, item j of chunk c
// being c * j.
void frame_simple(std::vector<uint8_t>& out) {
  out.resize(size_t{10} * 50000 * 4);
  size_t at = 0;
  for (uint32_t c = 0; c < 10; ++c)
    for (uint32_t j = 0; j < 50000; ++j)
      for (unsigned b = 0; b < 4; ++b) out[at++] = static_cast<uint8_t>((c * j) >> (8 * b));
}

// The array in `frame_bytes` read whole, in C order.
bool array_c_order(const std::vector<uint8_t>& frame_bytes, std::vector<uint8_t>& out) {
  const_buffer cb{frame_bytes.data(), frame_bytes.size()};
  array a;
  if (!array_open(a, const_buffer_storage(cb), system_allocator()).ok()) return false;
  out.assign(static_cast<size_t>(array_nbytes(a)), 0);
  const bool ok = array_read(a, bytes_mut(out.data(), out.size())).ok();
  (void)array_close(a);
  return ok;
}

// The chunks of the frame in `frame_bytes` decoded one after the other.
bool frame_chunks_in_order(const std::vector<uint8_t>& frame_bytes, std::vector<uint8_t>& out) {
  const_buffer cb{frame_bytes.data(), frame_bytes.size()};
  frame f;
  if (!frame_open(f, const_buffer_storage(cb), system_allocator()).ok()) return false;
  chunk_decoder d;
  bool ok = chunk_decoder_init(d, system_allocator()).ok();
  out.clear();
  const int64_t nchunks = ok ? frame_info_get(f)->nchunks : 0;
  for (int64_t i = 0; ok && i < nchunks; ++i) {
    auto ref = frame_chunk_locate(f, i);
    if (!ref.ok()) {
      ok = false;
      break;
    }
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(ref->nbytes));
    auto n = frame_chunk_decode(f, d, i, bytes_mut(out.data() + at, static_cast<size_t>(ref->nbytes)));
    ok = n.ok() && *n == static_cast<size_t>(ref->nbytes);
  }
  (void)frame_close(f);
  return ok;
}

}  // namespace

std::string data_path(const std::string& rel) { return std::string(TESSERA_TEST_DATA_DIR) + "/" + rel; }

bool digest_read(const std::string& path, uint8_t digest[32]) {
  std::vector<uint8_t> text;
  if (!read_all(path, text) || text.size() < 64) return false;
  for (size_t i = 0; i < 32; ++i) {
    const int hi = hex_value(static_cast<char>(text[2 * i]));
    const int lo = hex_value(static_cast<char>(text[2 * i + 1]));
    if (hi < 0 || lo < 0) return false;
    digest[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return text.size() == 64 || text[64] == ' ' || text[64] == '\n';
}

bool reference_load(const std::string& path, reference_output& out) {
  out.bytes.clear();
  out.have_bytes = read_all(path, out.bytes);
  if (out.have_bytes) {
    sha256_digest(out.bytes.data(), out.bytes.size(), out.digest);
    return true;
  }
  if (digest_read(path + ".sha256", out.digest)) return true;
  std::fprintf(stderr, "test data: neither %s nor %s.sha256 can be read\n", path.c_str(), path.c_str());
  return false;
}

bool reference_matches(const reference_output& r, const uint8_t* data, size_t size) {
  if (r.have_bytes) return size == r.bytes.size() && (size == 0 || std::memcmp(data, r.bytes.data(), size) == 0);
  uint8_t got[32];
  sha256_digest(data, size, got);
  return std::memcmp(got, r.digest, 32) == 0;
}

bool reference_rebuild(const std::string& path, std::vector<uint8_t>& out) {
  uint8_t digest[32];
  if (!digest_read(path + ".sha256", digest)) return false;  // not a file kept as a digest
  const std::string name = base_name(path);
  if (name == "frame_simple.raw") {
    frame_simple(out);
    if (digest_of_is(out, digest)) return true;
  }
  if (ends_with(path, ".raw")) {
    std::vector<uint8_t> frame_bytes;
    if (read_all(path.substr(0, path.size() - 4) + ".b2nd", frame_bytes)) {
      if (array_c_order(frame_bytes, out) && digest_of_is(out, digest)) return true;
      if (frame_chunks_in_order(frame_bytes, out) && digest_of_is(out, digest)) return true;
    }
  }
  std::fprintf(stderr,
               "test data: %s is kept as its SHA-256 only, and no rebuild of it (recipe, C-order array read, chunks "
               "in order) has that digest\n",
               path.c_str());
  out.clear();
  return false;
}

}  // namespace tessera::test
