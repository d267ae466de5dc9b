// SPDX-License-Identifier: BSD-3-Clause
#include "check.hpp"

namespace tessera::test {

namespace {
test_case* g_first = nullptr;
test_case* g_last = nullptr;
}  // namespace

registrar::registrar(test_case* c) noexcept {
  c->next = nullptr;
  if (g_last == nullptr) g_first = c;
  else g_last->next = c;
  g_last = c;
}

test_case* registry_first() noexcept { return g_first; }

void report_failure(context& t, const char* file, int line, const char* text) noexcept {
  ++t.failures;
  if (t.sink != nullptr) t.sink(t.sink_context, file, line, text);
}

}  // namespace tessera::test
