// SPDX-License-Identifier: BSD-3-Clause
// Long sweeps (a walk of every chunk of a huge index, a file of over 100 MB, randomized scenarios of many
// operations) test logic that does not depend on the platform. They run in full where CI runs the host (ASan)
// and ppc64 (big-endian); the other emulated Linux targets run a reduced variant that asserts the same
// properties over fewer iterations or smaller data. ctest sets TESSERA_LONG_TESTS=reduced on the tests labelled
// `long` of a build configured with -DTESSERA_LONG_TESTS=reduced (tests/CMakeLists.txt, ci/test.sh).
#pragma once

#include <cstdlib>
#include <cstring>

namespace tessera::test {

// True when this run asks for the reduced variant of the long sweeps. Bare metal has no environment: full.
inline bool long_tests_reduced() noexcept {
#if defined(__linux__)
  const char* v = std::getenv("TESSERA_LONG_TESTS");
  return v != nullptr && std::strcmp(v, "reduced") == 0;
#else
  return false;
#endif
}

}  // namespace tessera::test
