// SPDX-License-Identifier: BSD-3-Clause
// Runs the harness's cases under GoogleTest: one gtest test per TESSERA_TEST, so ctest and filters see each.
#include <gtest/gtest.h>

#include "check.hpp"

namespace {

class harness_test : public testing::Test {
 public:
  explicit harness_test(tessera::test::test_case* c) : case_(c) {}
  void TestBody() override {
    tessera::test::context t;
    t.sink = [](void*, const char* file, int line, const char* text) { ADD_FAILURE_AT(file, line) << text; };
    case_->fn(t);
  }

 private:
  tessera::test::test_case* case_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  for (auto* c = tessera::test::registry_first(); c != nullptr; c = c->next) {
    testing::RegisterTest(c->suite, c->name, nullptr, nullptr, c->file, c->line,
                          [c]() -> testing::Test* { return new harness_test(c); });
  }
  return RUN_ALL_TESTS();
}
