// SPDX-License-Identifier: BSD-3-Clause
// The encoder against chunks the reference wrote (Linux targets: reads tests/data): every chunk of the golden
// B2ND frames, decoded and encoded again with the parameters it records, comes out byte for byte; and the
// chunk sizes the reference reaches on 4 MiB of float32 data.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/chunk.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

bool read_file(const std::string& path, std::vector<uint8_t>& data) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  data.clear();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + n);
  std::fclose(f);
  return true;
}

std::string golden(const std::string& name) { return std::string(TESSERA_TEST_DATA_DIR) + "/golden/" + name; }

// The value of `key=` in a manifest field ("" when absent).
std::string param(const std::string& text, const std::string& key) {
  const std::string k = key + "=";
  size_t p = 0;
  while ((p = text.find(k, p)) != std::string::npos) {
    if (p == 0 || text[p - 1] == ' ' || text[p - 1] == '\t') {
      const size_t e = text.find_first_of(" \t", p);
      return text.substr(p + k.size(), e == std::string::npos ? std::string::npos : e - p - k.size());
    }
    p += k.size();
  }
  return "";
}

// The chunks of a contiguous frame: they follow the header one after the other (each says its cbytes).
void frame_chunks(const std::vector<uint8_t>& frame, size_t count, std::vector<bytes_view>& chunks) {
  if (frame.size() < 16) return;
  const size_t header_len = (size_t{frame[11]} << 24) | (size_t{frame[12]} << 16) | (size_t{frame[13]} << 8) | frame[14];
  size_t pos = header_len;
  for (size_t i = 0; i < count && pos + 16 <= frame.size(); ++i) {
    auto h = chunk_header_read(bytes_view(frame.data() + pos, frame.size() - pos));
    if (!h.ok()) break;
    chunks.push_back(bytes_view(frame.data() + pos, static_cast<size_t>(h->cbytes)));
    pos += static_cast<size_t>(h->cbytes);
  }
}

int32_t load_i32(const uint8_t* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                              static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
}

// Encodes `data` with the parameters chunk `ref` records and clevel; true when the result is `ref` exactly.
bool reencode_matches(chunk_encoder& e, bytes_view ref, const std::vector<uint8_t>& data, int clevel,
                      std::vector<uint8_t>& out, bool use_dict = false) {
  auto h = chunk_header_read(ref);
  if (!h.ok()) return false;
  chunk_encode_params p;
  p.typesize = h->typesize;
  p.clevel = clevel;
  p.compressor = static_cast<codec>(ref[22]);
  p.compcode_meta = ref[23];
  std::memcpy(p.filters, ref.data() + 16, 6);
  std::memcpy(p.filters_meta, ref.data() + 24, 6);
  p.split = (ref[2] & kChunkFlagNoSplit) ? split_mode::never : split_mode::always;
  p.blocksize = load_i32(ref.data() + 8);
  p.use_dict = use_dict;
  out.assign(data.size() + kChunkMaxOverhead, 0);
  auto c = chunk_encode(e, p, bytes_view(data.data(), data.size()), bytes_mut(out.data(), out.size()));
  if (c.ok()) out.resize(*c);
  return c.ok() && *c == ref.size() && std::memcmp(out.data(), ref.data(), ref.size()) == 0;
}

}  // namespace

// Whether this target's codec libraries compress to the reference's bytes. BloscLZ is ours: everywhere. The
// libraries' output is only stable where the reference itself runs them: LZ4 hashes differently on big-endian
// hosts (and on 32-bit ones for large blocks), libzstd picks other match finders without SSE2/NEON and on
// 32-bit ARM. Elsewhere their chunks must still decode to the same data.
static bool bytes_match_reference_here(codec c) {
  if (c == codec::blosclz) return true;
#if defined(__x86_64__) || defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

TESSERA_TEST(chunk_encode_golden, reference_chunks_are_reproduced_byte_for_byte) {
  std::vector<uint8_t> manifest;
  REQUIRE(read_file(golden("b2nd/MANIFEST.tsv"), manifest));
  std::string text(manifest.begin(), manifest.end());
  chunk_encoder e;
  chunk_decoder d;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  size_t pos = 0, compared = 0, arrays = 0;
  std::vector<uint8_t> frame, data, out;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.empty()) continue;
    const std::string name = line.substr(0, line.find('\t'));
    // Out of scope: sparse frames (chunks in files), dictionaries, arrays made of special chunks, and chunks
    // written by several threads (the reference then lays blocks out in completion order).
    if (param(line, "sparse") == "1" || param(line, "dict") == "1" || !param(line, "kind").empty() ||
        !param(line, "nthreads").empty())
      continue;
    const std::string nchunks_s = param(line, "nchunks");
    const size_t nchunks = nchunks_s.empty() ? 0 : static_cast<size_t>(std::strtoul(nchunks_s.c_str(), nullptr, 10));
    REQUIRE(read_file(golden("b2nd/" + name + ".b2nd"), frame));
    std::vector<bytes_view> chunks;
    frame_chunks(frame, nchunks, chunks);
    CHECK_EQ(chunks.size(), nchunks);
    const std::string clevel_s = param(line, "clevel");
    int clevel = clevel_s.empty() ? -1 : std::atoi(clevel_s.c_str());
    ++arrays;
    for (size_t i = 0; i < chunks.size(); ++i) {
      auto h = chunk_header_read(chunks[i]);
      REQUIRE_OK(h);
      const codec c = static_cast<codec>(chunks[i][22]);
      if (!codec_available(c)) continue;
      data.assign(static_cast<size_t>(h->nbytes), 0);
      REQUIRE_OK(chunk_decode(d, chunks[i], bytes_mut(data.data(), data.size())));
      if (!bytes_match_reference_here(c)) {
        // Our chunk with this library: it must decode to the reference's data.
        (void)reencode_matches(e, chunks[i], data, clevel < 0 ? 5 : clevel, out);
        std::vector<uint8_t> back(data.size());
        auto n = chunk_decode(d, bytes_view(out.data(), out.size()), bytes_mut(back.data(), back.size()));
        CHECK_OK(n);
        CHECK(back == data);
        ++compared;
        continue;
      }
      if (clevel < 0) {
        // The manifest does not say: the level is the one that reproduces the first chunk.
        for (int l = 1; l <= 9 && clevel < 0; ++l)
          if (reencode_matches(e, chunks[i], data, l, out)) clevel = l;
        CHECK(clevel >= 0);
        if (clevel < 0) break;
      }
      const bool same = reencode_matches(e, chunks[i], data, clevel, out);
      if (!same) std::fprintf(stderr, "golden %s: chunk %zu differs\n", name.c_str(), i);
      CHECK(same);
      ++compared;
    }
  }
  std::fprintf(stderr, "golden: %zu chunks of %zu arrays re-encoded\n", compared, arrays);
  CHECK_LE(size_t{20}, arrays);
  CHECK_LE(size_t{60}, compared);
}

// The chunk sizes the reference (c-blosc2 3.3.2 blosc2_compress_ctx, one thread, destsize nbytes + 32, the
// default split mode) wrote for 4 MiB of float32 sin(i / 97.0) * 1000 + i * 0.01 (computed in double, stored
// as float) with shuffle and typesize 4, measured once on x86-64 Linux. BloscLZ is ours (its bytes do not
// depend on a library), so it must match exactly; LZ4 when the host's liblz4 is the reference's.
TESSERA_TEST(chunk_encode_golden, float32_4mib_sizes_match_the_reference) {
  const size_t n = size_t{4} << 20;
  std::vector<uint8_t> src(n), out(n + 32);
  for (size_t i = 0; i < n / 4; ++i) {
    const float f = static_cast<float>(std::sin(static_cast<double>(i) / 97.0) * 1000 + static_cast<double>(i) * 0.01);
    uint32_t u;  // stored little-endian, as the reference's data was
    std::memcpy(&u, &f, 4);
    for (int b = 0; b < 4; ++b) src[4 * i + static_cast<size_t>(b)] = static_cast<uint8_t>(u >> (8 * b));
  }
  std::vector<uint8_t> ramp(n);
  for (size_t i = 0; i < n / 4; ++i) {
    const uint32_t v = static_cast<uint32_t>(i) * 3u;
    for (int b = 0; b < 4; ++b) ramp[4 * i + static_cast<size_t>(b)] = static_cast<uint8_t>(v >> (8 * b));
  }
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  struct {
    codec c;
    int clevel;
    bool ramp;
    size_t reference;
  } const cases[] = {
      {codec::blosclz, 1, false, 2549934}, {codec::blosclz, 5, false, 2425664}, {codec::blosclz, 9, false, 2421740},
      {codec::blosclz, 1, true, 83968},    {codec::blosclz, 5, true, 70688},    {codec::blosclz, 9, true, 19896},
      {codec::lz4, 1, false, 2506790},     {codec::lz4, 5, false, 2461259},     {codec::lz4, 9, false, 2408013},
      {codec::lz4, 5, true, 52800},        {codec::lz4hc, 5, false, 2227761},   {codec::zlib, 5, false, 2186779},
      {codec::zstd, 1, false, 2309706},    {codec::zstd, 5, false, 2151623},
  };
  for (const auto& k : cases) {
    if (!codec_available(k.c)) continue;
    chunk_encode_params p;
    p.typesize = 4;
    p.clevel = k.clevel;
    p.compressor = k.c;
    const auto& in = k.ramp ? ramp : src;
    auto r = chunk_encode(e, p, bytes_view(in.data(), n), bytes_mut(out.data(), out.size()));
    REQUIRE_OK(r);
    // Within 5% of the reference's ratio everywhere (other library versions), and exactly for BloscLZ.
    CHECK_LE(*r, k.reference + k.reference / 20);
    if (k.c == codec::blosclz) CHECK_EQ(*r, k.reference);
    if (*r != k.reference)
      std::fprintf(stderr, "float32 4 MiB: %s clevel %d: %zu bytes, the reference %zu\n", codec_name(k.c), k.clevel,
                   *r, k.reference);
  }
}

// Dictionary chunks (use_dict): the reference's LZ4 and LZ4HC ones (b2nd-more) come out byte for byte where its
// liblz4 output is ours; its Zstd ones (b2nd zstd-dict, a ZDICT-trained dictionary) cannot, since Tessera gives
// Zstd the same sampled bytes as a raw-content dictionary: those must carry a dictionary and decode exactly.
TESSERA_TEST(chunk_encode_golden, dictionary_chunks) {
  struct golden_dict {
    const char* file;
    const char* manifest;
    const char* name;
    bool byte_exact;
  };
  const golden_dict cases[] = {{"b2nd-more/lz4-dict.b2nd", "b2nd-more/MANIFEST.tsv", "lz4-dict", true},
                               {"b2nd-more/lz4hc-dict.b2nd", "b2nd-more/MANIFEST.tsv", "lz4hc-dict", true},
                               {"b2nd/zstd-dict.b2nd", "b2nd/MANIFEST.tsv", "zstd-dict", false}};
  chunk_encoder e;
  chunk_decoder d;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  size_t exact = 0, decoded = 0;
  for (const golden_dict& g : cases) {
    std::vector<uint8_t> manifest, frame, data, out, back;
    REQUIRE(read_file(golden(g.manifest), manifest));
    const std::string text(manifest.begin(), manifest.end());
    const size_t at = text.find(std::string(g.name) + "\t");
    REQUIRE(at != std::string::npos);
    const std::string line = text.substr(at, text.find('\n', at) - at);
    CHECK(param(line, "dict") == "1");
    const size_t nchunks = static_cast<size_t>(std::strtoul(param(line, "nchunks").c_str(), nullptr, 10));
    const int clevel = std::atoi(param(line, "clevel").c_str());
    REQUIRE(read_file(golden(g.file), frame));
    std::vector<bytes_view> chunks;
    frame_chunks(frame, nchunks, chunks);
    CHECK_EQ(chunks.size(), nchunks);
    for (size_t i = 0; i < chunks.size(); ++i) {
      auto h = chunk_header_read(chunks[i]);
      REQUIRE_OK(h);
      CHECK(h->dict);
      const codec c = static_cast<codec>(chunks[i][22]);
      if (!codec_available(c)) continue;
      data.assign(static_cast<size_t>(h->nbytes), 0);
      REQUIRE_OK(chunk_decode(d, chunks[i], bytes_mut(data.data(), data.size())));
      const bool same = reencode_matches(e, chunks[i], data, clevel, out, true);
      if (g.byte_exact && bytes_match_reference_here(c)) {
        if (!same) std::fprintf(stderr, "golden %s: chunk %zu differs\n", g.name, i);
        CHECK(same);
        exact += same ? 1 : 0;
      }
      // Ours carries a dictionary of the reference's size for LZ4 (Zstd's trained one may be smaller) and reads
      // back exactly.
      auto oh = chunk_header_read(bytes_view(out.data(), out.size()));
      REQUIRE_OK(oh);
      CHECK(oh->dict);
      const size_t nblocks = static_cast<size_t>((oh->nbytes + oh->blocksize - 1) / oh->blocksize);
      const size_t ref_nblocks = static_cast<size_t>((h->nbytes + h->blocksize - 1) / h->blocksize);
      if (g.byte_exact)
        CHECK_EQ(load_i32(out.data() + 32 + 4 * nblocks), load_i32(chunks[i].data() + 32 + 4 * ref_nblocks));
      back.assign(data.size(), 0xee);
      auto n = chunk_decode(d, bytes_view(out.data(), out.size()), bytes_mut(back.data(), back.size()));
      CHECK_OK(n);
      CHECK(back == data);
      ++decoded;
    }
  }
  std::fprintf(stderr, "golden dictionaries: %zu chunks re-encoded, %zu byte for byte\n", decoded, exact);
  CHECK_LE(size_t{13}, decoded);
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK_EQ(exact, size_t{9});  // lz4-dict's 5 chunks and lz4hc-dict's 4
#endif
}
