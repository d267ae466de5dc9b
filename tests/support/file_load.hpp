// SPDX-License-Identifier: BSD-3-Clause
// Reading a whole file in the tests that compare with golden files (Linux targets only: it uses <fstream>).
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "test_data.hpp"

namespace tessera::test {

// The bytes of the file at path into out; false when it cannot be opened. A reference output the repository
// keeps only as its digest (path + ".sha256", tests/data/README.md) is rebuilt and checked against the digest
// (reference_rebuild): the bytes are the reference's or the load fails.
inline bool file_load(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return reference_rebuild(path, out);
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace tessera::test
