// SPDX-License-Identifier: BSD-3-Clause
// The "b2nd" metalayer of every golden array the reference wrote: found in the frame header with the msgpack
// reader, decoded, compared with MANIFEST.tsv, and re-encoded to the very same bytes. Linux only (reads files).
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/b2nd_meta.hpp"
#include "tessera/dtype.hpp"
#include "tessera/msgpack.hpp"

#include "../support/check.hpp"

using namespace tessera;

namespace {

const std::string kShared = TESSERA_TEST_DATA_DIR;  // tests/data

// A failure that names the golden file.
#define GOLDEN_CHECK(cond, name)                                                             \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      char text_[512];                                                                       \
      std::snprintf(text_, sizeof text_, "%s: CHECK(%s)", (name).c_str(), #cond);            \
      ::tessera::test::report_failure(t, __FILE__, __LINE__, text_);                         \
    }                                                                                        \
  } while (0)

bool read_file(const std::string& path, std::vector<uint8_t>& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  out.clear();
  uint8_t chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) out.insert(out.end(), chunk, chunk + n);
  const bool ok = std::ferror(f) == 0;
  std::fclose(f);
  return ok;
}

struct expected_meta {
  std::string name;
  std::string path;
  int ndim = -1;
  std::vector<int64_t> shape, chunks, blocks;
  std::string dtype;
  int typesize = -1;  // -1: the dtype and the frame's typesize are known to disagree (compat examples)
};

std::vector<int64_t> parse_list(const std::string& text) {
  std::vector<int64_t> v;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    v.push_back(std::stoll(text.substr(i, j - i)));
    i = j + 1;
  }
  return v;
}

// MANIFEST.tsv: NAME<TAB>what the reference reports (key=value ...)<TAB>the parameters it was written with.
std::vector<expected_meta> parse_manifest(const std::string& dir, bool* ok) {
  std::vector<expected_meta> cases;
  std::vector<uint8_t> bytes;
  *ok = read_file(dir + "/MANIFEST.tsv", bytes);
  const std::string text(bytes.begin(), bytes.end());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    const size_t tab1 = line.find('\t');
    const size_t tab2 = line.find('\t', tab1 + 1);
    if (tab1 == std::string::npos || tab2 == std::string::npos) {
      *ok = false;
      continue;
    }
    expected_meta e;
    e.name = line.substr(0, tab1);
    const std::string reported = line.substr(tab1 + 1, tab2 - tab1 - 1) + " ";
    const std::string params = " " + line.substr(tab2 + 1) + " ";
    auto field = [&](const std::string& key) {
      const size_t k = (" " + reported).find(" " + key + "=");
      if (k == std::string::npos) {
        *ok = false;
        return std::string();
      }
      const size_t start = k + key.size() + 1;
      return reported.substr(start, reported.find(' ', start) - start);
    };
    e.ndim = std::stoi(field("ndim"));
    e.shape = parse_list(field("shape"));
    e.chunks = parse_list(field("chunks"));
    e.blocks = parse_list(field("blocks"));
    e.dtype = field("dtype");
    e.typesize = std::stoi(field("typesize"));
    const bool sparse = params.find(" sparse=1 ") != std::string::npos;
    e.path = dir + "/" + e.name + ".b2nd" + (sparse ? "/chunks.b2frame" : "");
    cases.push_back(e);
  }
  return cases;
}

struct frame_metalayer {
  std::string name;
  int32_t offset = 0;
  bytes_view content;
};

struct frame_header_info {
  int32_t header_len = 0;
  int32_t typesize = 0;
  std::vector<frame_metalayer> metalayers;
};

// The cframe header (README_CFRAME_FORMAT.rst), just far enough to reach the metalayers: a fixarray of 14 whose
// last element is [idx, {name: offset, ...}, [bin32 content, ...]], each offset pointing at its content's bin32
// marker. Every step goes through the bounded msgpack reader.
error frame_header_parse(bytes_view file, frame_header_info& info) {
  msgpack_reader r(file);
  if (r.read_array() != 14) return make_error(errc::malformed, "header: not a 14-element array");
  const span<const char> magic = r.read_str();
  if (!r.ok() || magic.size() != 8 || std::memcmp(magic.data(), "b2frame\0", 8) != 0) {
    return make_error(errc::malformed, "header: bad magic");
  }
  if (r.peek_marker() != 0xd2) return make_error(errc::malformed, "header: header_len is not an int32");
  info.header_len = r.read_int32();
  if (r.peek_marker() != 0xcf) return make_error(errc::malformed, "header: frame_len is not a uint64");
  (void)r.read_uint();
  if (r.read_str().size() != 4) return make_error(errc::malformed, "header: flags are not 4 bytes");
  (void)r.read_int();  // uncompressed size
  (void)r.read_int();  // compressed size
  info.typesize = r.read_int32();
  (void)r.read_int32();  // block size
  (void)r.read_int32();  // chunk size
  (void)r.read_int();    // tcomp
  (void)r.read_int();    // tdecomp
  (void)r.read_bool();   // has vlmetalayers
  const msgpack_ext filters = r.read_ext();
  if (!r.ok() || filters.data.size() != 16) {
    return make_error(errc::malformed, "header: the filters are not a fixext 16");
  }
  if (r.read_array() != 3) return make_error(errc::malformed, "header: the metalayers section is not an array of 3");
  (void)r.read_uint();  // idx
  if (r.peek_marker() != 0xde) return make_error(errc::malformed, "header: the metalayer names are not a map16");
  const uint32_t n = r.read_map();
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    frame_metalayer m;
    const span<const char> name = r.read_str();
    m.name.assign(name.data(), name.size());
    if (r.peek_marker() != 0xd2) return make_error(errc::malformed, "header: a metalayer offset is not an int32");
    m.offset = r.read_int32();
    info.metalayers.push_back(m);
  }
  if (r.peek_marker() != 0xdc) return make_error(errc::malformed, "header: the metalayer contents are not an array16");
  if (r.read_array() != n) return make_error(errc::malformed, "header: contents and names differ in number");
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    // The content must sit where its offset says, as a bin32.
    if (static_cast<size_t>(info.metalayers[i].offset) != r.position()) {
      return make_error(errc::malformed, "header: a metalayer offset does not point at its content");
    }
    if (r.peek_marker() != 0xc6) return make_error(errc::malformed, "header: a metalayer content is not a bin32");
    info.metalayers[i].content = r.read_bin();
  }
  if (!r.ok()) return r.err();
  if (info.header_len < 0 || static_cast<size_t>(info.header_len) > file.size() ||
      r.position() > static_cast<size_t>(info.header_len)) {
    return make_error(errc::malformed, "header: the metalayers run past header_len");
  }
  // Reach each content again from its offset alone, within header_len, as a frame reader does.
  const bytes_view header(file.data(), static_cast<size_t>(info.header_len));
  for (frame_metalayer& m : info.metalayers) {
    if (m.offset < 0) return make_error(errc::malformed, "header: negative metalayer offset");
    msgpack_reader at(header.subspan(static_cast<size_t>(m.offset)));
    if (at.peek_marker() != 0xc6) return make_error(errc::malformed, "header: offset misses bin32");
    const bytes_view content = at.read_bin();
    if (!at.ok() || content.data() != m.content.data() || content.size() != m.content.size()) {
      return make_error(errc::malformed, "header: the offset and the array disagree");
    }
  }
  return error{};
}

void check_golden(test::context& t, const expected_meta& e) {
  std::vector<uint8_t> file;
  const bool found = read_file(e.path, file);
  GOLDEN_CHECK(found, e.path);  // a missing golden file fails
  if (!found) return;
  frame_header_info info;
  const error parsed = frame_header_parse(bytes_view(file.data(), file.size()), info);
  if (!parsed.ok()) {
    GOLDEN_CHECK(parsed.ok(), e.path + std::string(" ") + parsed.message);
    return;
  }
  const frame_metalayer* b2nd = nullptr;
  for (const frame_metalayer& m : info.metalayers) {
    if (m.name == "b2nd") b2nd = &m;
  }
  GOLDEN_CHECK(b2nd != nullptr, e.path);
  if (b2nd == nullptr) return;

  size_t consumed = 0;
  const result<b2nd_meta> meta = b2nd_meta_decode(b2nd->content, &consumed);
  if (!meta.ok()) {
    GOLDEN_CHECK(meta.ok(), e.path + std::string(" ") + meta.err().message);
    return;
  }
  GOLDEN_CHECK(consumed == b2nd->content.size(), e.path);
  GOLDEN_CHECK(meta->version == 0, e.path);
  GOLDEN_CHECK(meta->has_dtype, e.path);
  GOLDEN_CHECK(meta->dtype_format == 0, e.path);
  GOLDEN_CHECK(meta->ndim == e.ndim, e.path);
  GOLDEN_CHECK(e.shape.size() == static_cast<size_t>(e.ndim), e.path);
  GOLDEN_CHECK(e.chunks.size() == static_cast<size_t>(e.ndim), e.path);
  GOLDEN_CHECK(e.blocks.size() == static_cast<size_t>(e.ndim), e.path);
  const size_t listed = std::min(e.shape.size(), std::min(e.chunks.size(), e.blocks.size()));
  for (size_t i = 0; i < static_cast<size_t>(meta->ndim) && i < listed; ++i) {
    GOLDEN_CHECK(meta->shape[i] == e.shape[i], e.path);
    GOLDEN_CHECK(meta->chunkshape[i] == e.chunks[i], e.path);
    GOLDEN_CHECK(meta->blockshape[i] == e.blocks[i], e.path);
  }
  const std::string dtype(meta->dtype.data(), meta->dtype.size());
  GOLDEN_CHECK(dtype == e.dtype, e.path);
  const dtype_info d = dtype_parse(meta->dtype);
  GOLDEN_CHECK(d.known, e.path);
  if (e.typesize >= 0) {
    GOLDEN_CHECK(d.itemsize == static_cast<uint32_t>(e.typesize), e.path);
    GOLDEN_CHECK(info.typesize == e.typesize, e.path);
  }

  // Re-encoding gives the stored bytes exactly.
  std::vector<uint8_t> again(b2nd_meta_encoded_size(*meta));
  GOLDEN_CHECK(again.size() == b2nd->content.size(), e.path);
  const result<size_t> n = b2nd_meta_encode(*meta, bytes_mut(again.data(), again.size()));
  GOLDEN_CHECK(n.ok(), e.path);
  GOLDEN_CHECK(n.ok() && *n == b2nd->content.size() &&
                   std::memcmp(again.data(), b2nd->content.data(), b2nd->content.size()) == 0,
               e.path);
}

}  // namespace

TESSERA_TEST(b2nd_meta_golden, manifest_arrays) {
  const std::string dir = kShared + "/golden/b2nd";
  bool manifest_ok = false;
  const std::vector<expected_meta> cases = parse_manifest(dir, &manifest_ok);
  REQUIRE(manifest_ok);
  CHECK_LE(30u, cases.size());
  for (const expected_meta& e : cases) check_golden(t, e);

  // Every .b2nd in the folder has a line in the manifest (none is left untested).
  DIR* d = opendir(dir.c_str());
  REQUIRE(d != nullptr);
  int listed = 0;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() < 5 || name.compare(name.size() - 5, 5, ".b2nd") != 0) continue;
    ++listed;
    bool in_manifest = false;
    for (const expected_meta& e : cases) in_manifest = in_manifest || e.name + ".b2nd" == name;
    GOLDEN_CHECK(in_manifest, name);
  }
  closedir(d);
  CHECK_EQ(static_cast<size_t>(listed), cases.size());
}

TESSERA_TEST(b2nd_meta_golden, compat_examples) {
  // Facts from the reference: README_CFRAME_FORMAT.rst dumps example_day_month_temp's metalayer as
  // [0, 2, [400, 3], [110, 3], [57, 3], 0, "|u1"]; examples/b2nd/example_frame_generator.c writes
  // example_item_prices with shape {12, 25, 250}, chunks {8, 10, 50}, blocks {4, 5, 10} and no dtype ("|u1").
  // Both frames have typesize 4 (float data): the dtype disagrees, as shared/README.md warns.
  const std::string dir = kShared + "/golden/compat";
  expected_meta day;
  day.name = "example_day_month_temp";
  day.path = dir + "/example_day_month_temp.b2nd";
  day.ndim = 2;
  day.shape = {400, 3};
  day.chunks = {110, 3};
  day.blocks = {57, 3};
  day.dtype = "|u1";
  check_golden(t, day);
  expected_meta prices;
  prices.name = "example_item_prices";
  prices.path = dir + "/example_item_prices.b2nd";
  prices.ndim = 3;
  prices.shape = {12, 25, 250};
  prices.chunks = {8, 10, 50};
  prices.blocks = {4, 5, 10};
  prices.dtype = "|u1";
  check_golden(t, prices);
  for (const expected_meta* e : {&day, &prices}) {
    std::vector<uint8_t> file;
    REQUIRE(read_file(e->path, file));
    frame_header_info info;
    REQUIRE_OK(frame_header_parse(bytes_view(file.data(), file.size()), info));
    CHECK_EQ(info.typesize, 4);
  }
}
