// SPDX-License-Identifier: BSD-3-Clause
// The tests' SHA-256 (tests/support/sha256.hpp), which compares decodes with the digests tests/data keeps:
// the FIPS 180-4 examples, a million 'a' fed in uneven pieces, and every length around the padding's
// boundaries fed whole and byte by byte.
#include <cstring>

#include "../support/check.hpp"
#include "../support/sha256.hpp"

using namespace tessera;

namespace {

bool digest_is(const uint8_t digest[32], const char* hex) {
  char got[65];
  test::sha256_hex(digest, got);
  return std::strcmp(got, hex) == 0;
}

}  // namespace

TESSERA_TEST(sha256, standard_examples) {
  uint8_t d[32];
  test::sha256_digest("", 0, d);
  CHECK(digest_is(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  test::sha256_digest("abc", 3, d);
  CHECK(digest_is(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  const char* two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  test::sha256_digest(two_blocks, std::strlen(two_blocks), d);
  CHECK(digest_is(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
  const char* long_one =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
  test::sha256_digest(long_one, std::strlen(long_one), d);
  CHECK(digest_is(d, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"));
}

TESSERA_TEST(sha256, a_million_a_in_uneven_pieces) {
  static uint8_t a[1000];
  std::memset(a, 'a', sizeof a);
  test::sha256 s;
  test::sha256_init(s);
  size_t fed = 0;
  for (size_t piece = 1; fed < 1000000; piece = piece % 991 + 7) {
    const size_t n = piece < 1000000 - fed ? piece : 1000000 - fed;
    test::sha256_update(s, a, n);
    fed += n;
  }
  uint8_t d[32];
  test::sha256_final(s, d);
  CHECK(digest_is(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

TESSERA_TEST(sha256, byte_by_byte_equals_whole_around_the_padding) {
  uint8_t msg[200];
  for (size_t i = 0; i < sizeof msg; ++i) msg[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t n = 0; n <= sizeof msg; ++n) {
    uint8_t whole[32], bytes[32];
    test::sha256_digest(msg, n, whole);
    test::sha256 s;
    test::sha256_init(s);
    for (size_t i = 0; i < n; ++i) test::sha256_update(s, msg + i, 1);
    test::sha256_final(s, bytes);
    CHECK(std::memcmp(whole, bytes, 32) == 0);
  }
  // 55, 56 and 64 bytes: the length fits the last block, just does not, and a block exactly.
  uint8_t d[32];
  uint8_t a[64];
  std::memset(a, 'a', sizeof a);
  test::sha256_digest(a, 55, d);
  CHECK(digest_is(d, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"));
  test::sha256_digest(a, 56, d);
  CHECK(digest_is(d, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"));
  test::sha256_digest(a, 64, d);
  CHECK(digest_is(d, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"));
}
