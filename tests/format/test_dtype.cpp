// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/dtype.hpp"

#include <cstring>

#include "tessera/b2nd_meta.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"

using namespace tessera;

namespace {

span<const char> str(const char* s) { return span<const char>(s, std::strlen(s)); }

struct known_case {
  const char* text;
  char byte_order;
  char kind;
  uint32_t itemsize;
  const char* unit;
};

// What NumPy reports for these strings (dtype.byteorder, dtype.kind, dtype.itemsize).
const known_case kKnown[] = {
    {"<f8", '<', 'f', 8, ""},         {"|u1", '|', 'u', 1, ""},          {"|b1", '|', 'b', 1, ""},
    {">i2", '>', 'i', 2, ""},         {"=c16", '=', 'c', 16, ""},        {"<c8", '<', 'c', 8, ""},
    {"<c32", '<', 'c', 32, ""},       {"<f16", '<', 'f', 16, ""},        {"<f2", '<', 'f', 2, ""},
    {"<f12", '<', 'f', 12, ""},       {"<i8", '<', 'i', 8, ""},          {"<u4", '<', 'u', 4, ""},
    {"<U10", '<', 'U', 40, ""},       {">U1", '>', 'U', 4, ""},          {"<U0", '<', 'U', 0, ""},
    {"|S100", '|', 'S', 100, ""},     {"|S0", '|', 'S', 0, ""},          {"|V12", '|', 'V', 12, ""},
    {"|S1234567", '|', 'S', 1234567, ""}, {"<M8[ns]", '<', 'M', 8, "ns"}, {"<m8[25s]", '<', 'm', 8, "25s"},
    {"<M8", '<', 'M', 8, ""},         {">m8[D]", '>', 'm', 8, "D"},      {"i4", '=', 'i', 4, ""},
    {"|S4294967295", '|', 'S', 4294967295u, ""}, {"<U1073741823", '<', 'U', 4294967292u, ""},
};

// Kept verbatim, reported as not understood: never rejected.
const char* const kUnknown[] = {
    "",         "<",          "<i",          "<i3",         "|b2",          "<x4",
    "<f8 ",     " <f8",       "<M8[",        "<M8[]",       "<M8[n-s]",     "<i4[ns]",
    "<M8[ns]x", "O",          "|O",          "<U4294967296", "<U1073741824", "<i99999999999999999999",
    "<f",       "<c4",        "<i16",        "<u3",         "<m4",          "<f8,<i4",
    "[('a', '<i4'), ('b', '<f8')]", "{'names': ['a'], 'formats': ['<i4']}", "(2,3)<f8", "<<f8", "||u1",
    "<S-1",     "<M8[ns",     "<V",          "<M8[_s]",     "<M8[{]",       "<M8x",
};

}  // namespace

TESSERA_TEST(dtype, parses_simple_strings) {
  for (const known_case& c : kKnown) {
    const dtype_info d = dtype_parse(str(c.text));
    CHECK(d.known);
    CHECK_EQ(d.byte_order, c.byte_order);
    CHECK_EQ(d.kind, c.kind);
    CHECK_EQ(d.itemsize, c.itemsize);
    CHECK_EQ(d.unit.size(), std::strlen(c.unit));
    CHECK(d.unit.empty() || std::memcmp(d.unit.data(), c.unit, d.unit.size()) == 0);
  }
}

TESSERA_TEST(dtype, unknown_strings_are_reported_not_rejected) {
  for (const char* text : kUnknown) {
    const dtype_info d = dtype_parse(str(text));
    CHECK(!d.known);
    CHECK_EQ(d.kind, 0);
    CHECK_EQ(d.itemsize, 0u);
  }
  // A not-understood dtype goes through the metalayer unchanged.
  for (const char* text : kUnknown) {
    b2nd_meta m;
    m.ndim = 1;
    m.shape[0] = 3;
    m.chunkshape[0] = 2;
    m.blockshape[0] = 1;
    m.dtype = str(text);
    m.has_dtype = true;
    uint8_t buf[256];
    const result<size_t> n = b2nd_meta_encode(m, bytes_mut(buf, sizeof buf));
    REQUIRE_OK(n);
    const result<b2nd_meta> back = b2nd_meta_decode(bytes_view(buf, *n));
    REQUIRE_OK(back);
    CHECK_EQ(back->dtype.size(), std::strlen(text));
    CHECK(back->dtype.empty() || std::memcmp(back->dtype.data(), text, back->dtype.size()) == 0);
  }
}

TESSERA_TEST(dtype, format_builds_the_strings) {
  char out[32];
  struct format_case {
    char byte_order;
    char kind;
    uint32_t itemsize;
    const char* unit;
    const char* expect;
  };
  const format_case cases[] = {
      {'<', 'f', 8, "", "<f8"},          {'|', 'u', 1, "", "|u1"},         {'<', 'U', 40, "", "<U10"},
      {'|', 'S', 100, "", "|S100"},      {'<', 'M', 8, "ns", "<M8[ns]"},  {'>', 'm', 8, "", ">m8"},
      {'=', 'c', 16, "", "=c16"},        {'|', 'V', 0, "", "|V0"},          {'|', 'S', 4294967295u, "", "|S4294967295"},
      {'<', 'U', 4294967292u, "", "<U1073741823"},
  };
  for (const format_case& c : cases) {
    const result<size_t> n = dtype_format(c.byte_order, c.kind, c.itemsize, span<char>(out, sizeof out), str(c.unit));
    REQUIRE_OK(n);
    CHECK_EQ(*n, std::strlen(c.expect));
    CHECK(std::memcmp(out, c.expect, *n) == 0);
    // Every smaller buffer is refused.
    for (size_t size = 0; size < *n; ++size) {
      CHECK_ERR(dtype_format(c.byte_order, c.kind, c.itemsize, span<char>(out, size), str(c.unit)),
                errc::buffer_too_small);
    }
  }
  const span<char> buf(out, sizeof out);
  CHECK_ERR(dtype_format('<', 'U', 41, buf), errc::invalid_argument);
  CHECK_ERR(dtype_format('<', 'i', 3, buf), errc::invalid_argument);
  CHECK_ERR(dtype_format('!', 'i', 4, buf), errc::invalid_argument);
  CHECK_ERR(dtype_format('<', 'x', 4, buf), errc::invalid_argument);
  CHECK_ERR(dtype_format('<', 'b', 2, buf), errc::invalid_argument);
  CHECK_ERR(dtype_format('<', 'i', 4, buf, str("ns")), errc::invalid_argument);
  CHECK_ERR(dtype_format('<', 'M', 8, buf, str("n s")), errc::invalid_argument);
  // A size without memory is no buffer.
  CHECK_ERR(dtype_format('<', 'f', 8, span<char>(nullptr, 32)), errc::buffer_too_small);
}

TESSERA_TEST(dtype, numpy_sizes_per_kind) {
  // NumPy's sizes, listed: every other size of 0..40 is refused by both dtype_format and dtype_parse.
  struct kind_sizes {
    char kind;
    uint32_t sizes[5];
  };
  const kind_sizes table[] = {{'b', {1}},          {'i', {1, 2, 4, 8}}, {'u', {1, 2, 4, 8}}, {'f', {2, 4, 8, 12, 16}},
                              {'c', {8, 16, 24, 32}}, {'m', {8}},         {'M', {8}}};
  for (const kind_sizes& k : table) {
    for (uint32_t size = 0; size <= 40; ++size) {
      bool listed = false;
      for (uint32_t s : k.sizes) listed = listed || (s != 0 && s == size);
      char out[16];
      const result<size_t> n = dtype_format('<', k.kind, size, span<char>(out, sizeof out));
      CHECK_EQ(n.ok(), listed);
      char text[8] = {'<', k.kind, static_cast<char>('0' + size / 10), static_cast<char>('0' + size % 10)};
      CHECK_EQ(dtype_parse(span<const char>(text, 4)).known, listed);
    }
  }
  // S and V: any size up to 2^32-1; U: whole 4-byte characters.
  char out[16];
  CHECK(dtype_format('|', 'S', 0, span<char>(out, sizeof out)).ok());
  CHECK(dtype_format('|', 'V', 4294967295u, span<char>(out, sizeof out)).ok());
  CHECK(dtype_format('<', 'U', 12, span<char>(out, sizeof out)).ok());
  CHECK_ERR(dtype_format('<', 'U', 6, span<char>(out, sizeof out)), errc::invalid_argument);
  CHECK(!dtype_parse(str("<U1073741824")).known);  // 2^32 bytes
  CHECK(dtype_parse(str("<U1073741823")).known);
  CHECK(!dtype_parse(str("<x4")).known);
}

TESSERA_TEST(dtype, format_then_parse_round_trips) {
  const char orders[] = {'<', '>', '|', '='};
  const char kinds[] = {'b', 'i', 'u', 'f', 'c', 'm', 'M', 'S', 'U', 'V'};
  test::rng rng(8);
  int valid = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    const char order = orders[rng.range(0, 3)];
    const char kind = kinds[rng.range(0, 9)];
    const uint32_t itemsize =
        static_cast<uint32_t>(rng.chance(70) ? rng.range(0, 40) : static_cast<int64_t>(rng.next() >> 32));
    const char* unit = (kind == 'm' || kind == 'M') && rng.chance(50) ? "us" : "";
    char out[32];
    const result<size_t> n = dtype_format(order, kind, itemsize, span<char>(out, sizeof out), str(unit));
    const dtype_info expect_valid = [&] {
      // Independently of the parser: what the formatted string must say back.
      dtype_info d;
      d.byte_order = order;
      d.kind = kind;
      d.itemsize = itemsize;
      return d;
    }();
    if (!n.ok()) {
      CHECK_ERR(n, errc::invalid_argument);
      continue;
    }
    ++valid;
    const dtype_info d = dtype_parse(span<const char>(out, *n));
    CHECK(d.known);
    CHECK_EQ(d.byte_order, expect_valid.byte_order);
    CHECK_EQ(d.kind, expect_valid.kind);
    CHECK_EQ(d.itemsize, expect_valid.itemsize);
    CHECK_EQ(d.unit.size(), std::strlen(unit));
  }
  CHECK_LT(1000, valid);
}
