// SPDX-License-Identifier: BSD-3-Clause
// The test data: the repository's tests/data (TESSERA_TEST_DATA_DIR), read in place by the Linux targets' tests.
// It keeps the files the reference wrote as they are, and of its large outputs (decodes, reference vectors) only
// the SHA-256, in NAME.sha256 beside where NAME would be (sha256sum's line: tests/data/README.md). A test that
// compared bytes with such a file compares the same bytes with its digest instead (reference_load and
// reference_matches); where a test needs the bytes themselves, reference_rebuild makes them from a recipe or
// from the reference's own array and accepts them only when their SHA-256 is the digest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::test {

// TESSERA_TEST_DATA_DIR + "/" + rel, e.g. data_path("golden/b2nd/MANIFEST.tsv").
std::string data_path(const std::string& rel);

// The 32 bytes of the digest in the sha256sum line at path; false when the file is missing or malformed.
bool digest_read(const std::string& path, uint8_t digest[32]);

// A reference output: its bytes when the repository keeps them, else its SHA-256 (have_bytes false).
struct reference_output {
  bool have_bytes = false;
  std::vector<uint8_t> bytes;
  uint8_t digest[32] = {};
};

// Loads path (e.g. .../NAME.raw), or the digest in path + ".sha256" when only that is kept. false when neither
// is there: a missing file fails the test.
bool reference_load(const std::string& path, reference_output& out);

// Whether size bytes at data are the reference output: the same bytes, or the same SHA-256.
bool reference_matches(const reference_output& r, const uint8_t* data, size_t size);

// The bytes of a reference output the repository keeps only as path + ".sha256", rebuilt and accepted only when
// their SHA-256 is that digest (tests/support/file_load.hpp falls back on it). The candidates, in turn: a recipe
// for the file's name (compat/frame_simple.raw: chunk c of 10, item j of 50,000, is the int32 c * j); for
// NAME.raw, the array NAME.b2nd beside it read whole in C order, then its chunks decoded one after the other
// (compat's example_*.raw hold those, padding included). false, with a line on stderr, when none matches.
bool reference_rebuild(const std::string& path, std::vector<uint8_t>& out);

}  // namespace tessera::test
