// SPDX-License-Identifier: BSD-3-Clause
// A tiny test harness whose tests run everywhere: under GoogleTest on Linux targets (gtest_main.cpp registers
// every case with testing::RegisterTest) and on the bare-metal Cortex-M4 (baremetal_main.cpp), where GoogleTest
// does not build. One test source serves both, so every target runs the same assertions.
#pragma once

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "tessera/error.hpp"

namespace tessera::test {

struct context;
using test_fn = void (*)(context&);

struct test_case {
  const char* suite;
  const char* name;
  test_fn fn;
  const char* file;
  int line;
  test_case* next;
};

// Called for every failed check; set by the runner (GoogleTest or the bare-metal main).
using failure_sink = void (*)(void* sink_context, const char* file, int line, const char* text);

struct context {
  failure_sink sink = nullptr;
  void* sink_context = nullptr;
  int failures = 0;
};

struct registrar {
  explicit registrar(test_case* c) noexcept;
};

// The registered cases, in registration order.
[[nodiscard]] test_case* registry_first() noexcept;

void report_failure(context& t, const char* file, int line, const char* text) noexcept;

template <class A, class B>
void report_mismatch(context& t, const char* file, int line, const char* expr_a, const char* expr_b, const A& a,
                     const B& b, const char* op) noexcept {
  char text[320];
  auto widen = [](auto v) -> long long {
    if constexpr (std::is_enum_v<decltype(v)>) return static_cast<long long>(v);
    else return static_cast<long long>(v);
  };
  std::snprintf(text, sizeof text, "expected %s %s %s, got %lld vs %lld", expr_a, op, expr_b, widen(a), widen(b));
  report_failure(t, file, line, text);
}

inline void report_error(context& t, const char* file, int line, const char* expr, const error& e) noexcept {
  char text[320];
  // A longer report is cut to the buffer (the return value checked: GCC's truncation warning is for calls that
  // ignore it, and a message pointing into the errc names table looks unbounded to it).
  if (std::snprintf(text, sizeof text, "%s failed: %s (%s)", expr, e.message, errc_name(e.code)) < 0) text[0] = '\0';
  report_failure(t, file, line, text);
}

}  // namespace tessera::test

#define TESSERA_TEST(suite, name)                                                                           \
  static void tessera_test_##suite##_##name(::tessera::test::context& t);                                   \
  static ::tessera::test::test_case tessera_case_##suite##_##name{#suite, #name,                            \
                                                                  &tessera_test_##suite##_##name, __FILE__, \
                                                                  __LINE__, nullptr};                       \
  static const ::tessera::test::registrar tessera_registrar_##suite##_##name(&tessera_case_##suite##_##name); \
  static void tessera_test_##suite##_##name([[maybe_unused]] ::tessera::test::context& t)

// CHECK* record a failure and go on; REQUIRE* record it and leave the test.
#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) ::tessera::test::report_failure(t, __FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)
#define REQUIRE(cond)                                                                         \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      ::tessera::test::report_failure(t, __FILE__, __LINE__, "REQUIRE(" #cond ")");           \
      return;                                                                                 \
    }                                                                                         \
  } while (0)
#define TESSERA_CHECK_OP_(a, b, op, on_fail)                                                          \
  do {                                                                                                \
    const auto& tessera_a_ = (a);                                                                     \
    const auto& tessera_b_ = (b);                                                                     \
    if (!(tessera_a_ op tessera_b_)) {                                                                \
      ::tessera::test::report_mismatch(t, __FILE__, __LINE__, #a, #b, tessera_a_, tessera_b_, #op); \
      on_fail;                                                                                        \
    }                                                                                                 \
  } while (0)
#define CHECK_EQ(a, b) TESSERA_CHECK_OP_(a, b, ==, (void)0)
#define CHECK_NE(a, b) TESSERA_CHECK_OP_(a, b, !=, (void)0)
#define CHECK_LE(a, b) TESSERA_CHECK_OP_(a, b, <=, (void)0)
#define CHECK_LT(a, b) TESSERA_CHECK_OP_(a, b, <, (void)0)
#define REQUIRE_EQ(a, b) TESSERA_CHECK_OP_(a, b, ==, return)
// For a status or a result: passes when it holds no error, else reports the error's message.
#define CHECK_OK(expr)                                                                      \
  do {                                                                                      \
    const ::tessera::error tessera_e_ = ::tessera::test::error_of(expr);                    \
    if (!tessera_e_.ok()) ::tessera::test::report_error(t, __FILE__, __LINE__, #expr, tessera_e_); \
  } while (0)
#define REQUIRE_OK(expr)                                                                    \
  do {                                                                                      \
    const ::tessera::error tessera_e_ = ::tessera::test::error_of(expr);                    \
    if (!tessera_e_.ok()) {                                                                 \
      ::tessera::test::report_error(t, __FILE__, __LINE__, #expr, tessera_e_);              \
      return;                                                                               \
    }                                                                                       \
  } while (0)
// Passes when expr yields an error with the given errc.
#define CHECK_ERR(expr, expected_errc)                                                                  \
  do {                                                                                                  \
    const ::tessera::error tessera_e_ = ::tessera::test::error_of(expr);                                \
    if (tessera_e_.code != (expected_errc))                                                             \
      ::tessera::test::report_mismatch(t, __FILE__, __LINE__, #expr, #expected_errc, tessera_e_.code,   \
                                       (expected_errc), "==");                                          \
  } while (0)

namespace tessera::test {
inline error error_of(const error& e) noexcept { return e; }
template <class T>
inline error error_of(const result<T>& r) noexcept {
  return r.err();
}
}  // namespace tessera::test
