// SPDX-License-Identifier: BSD-3-Clause
// detail::first_error, the first failure of tasks on several workers: the first set is kept and the later ones
// dropped. Set here from one thread in turn, so the "already claimed" path runs in every run, not only when two
// workers happen to fail together.
#include <cstring>

#include "base/first_error.hpp"

#include "../support/check.hpp"

using namespace tessera;

TESSERA_TEST(first_error, keeps_the_first_error_and_drops_the_later_ones) {
  detail::first_error e;
  CHECK(!e.any());
  CHECK(e.result().ok());
  e.set(make_error(errc::io, "first"));
  CHECK(e.any());
  e.set(make_error(errc::corrupt, "second"));
  CHECK(e.any());
  CHECK_EQ(e.result().code, errc::io);
  CHECK(std::strcmp(e.result().message, "first") == 0);
}
