// SPDX-License-Identifier: BSD-3-Clause
// The bare-metal runner: runs every registered case, prints through semihosting, and exits with the number of
// failed cases (0 = pass), which qemu-system-arm returns as its own exit status.
#include <cstdio>
#include <cstdlib>

#include "check.hpp"
#include "tessera/codecs.hpp"

namespace {

void print_failure(void*, const char* file, int line, const char* text) {
  std::printf("%s:%d: Failure\n  %s\n", file, line, text);
}

}  // namespace

int main() {
  tessera::codec_link_all();  // the tests use every codec and filter of the build
  tessera::filter_link_all();
  tessera::partition_link_auto();
  tessera::encoder_link_parallel();
  tessera::encoder_link_plugins();
  int passed = 0;
  int failed = 0;
  for (auto* c = tessera::test::registry_first(); c != nullptr; c = c->next) {
    std::printf("[ RUN      ] %s.%s\n", c->suite, c->name);
    tessera::test::context t;
    t.sink = print_failure;
    c->fn(t);
    if (t.failures == 0) {
      ++passed;
      std::printf("[       OK ] %s.%s\n", c->suite, c->name);
    } else {
      ++failed;
      std::printf("[  FAILED  ] %s.%s\n", c->suite, c->name);
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  std::fflush(stdout);
  return failed == 0 ? 0 : 1;
}
