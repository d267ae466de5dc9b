// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Errors are values: a stable numeric code and a static message. Nothing in the core aborts on bad input.
#pragma once

#include <stdint.h>
#include "tessera/cxx.hpp"

#include "tessera/config.hpp"

/// Wraps every error message literal of the library: with TESSERA_ERROR_MESSAGES 0 the literal never reaches the
/// object file (firmware saves its ~15 KiB of text) and the error's message becomes errc_name(code).
#if TESSERA_ERROR_MESSAGES
#define TESSERA_MSG(text) (text)
#else
#define TESSERA_MSG(text) (static_cast<const char*>(nullptr))
#endif

namespace tessera {

/// An error's code.
/// Numeric values are part of the API (they cross the C API and appear in tools' output): never renumber.
enum class errc : int32_t {
  ok = 0,                 ///< success: not an error
  invalid_argument = 1,   ///< the caller passed something the API does not accept
  out_of_memory = 2,      ///< the allocator refused a request
  buffer_too_small = 3,   ///< a caller buffer cannot hold the output
  truncated = 4,          ///< the input ends before the structure it announces
  malformed = 5,          ///< the input is not the structure it claims to be
  unsupported = 6,        ///< valid input that this build or version does not handle
  out_of_range = 7,       ///< an index, slice or coordinate outside the array
  overflow = 8,           ///< a size or product does not fit the integer type that holds it
  io = 9,                 ///< a storage callback failed
  no_space = 10,          ///< the storage is full
  codec_unavailable = 11, ///< the data needs a codec this build does not include
  corrupt = 12,           ///< a checksum, offset or size inside stored data is inconsistent
  resource_limit = 13,    ///< the input asks for more memory than the call's budget (max_alloc) allows
  uncommitted = 14,       ///< a close dropped changes that were never committed
  read_only = 15,         ///< a write on an array, frame or storage opened (or made) read-only
};

/// Every code's name, each ended by its NUL, in one string.
#define TESSERA_ERRC_NAMES                                                                                        \
  "ok\0invalid_argument\0out_of_memory\0buffer_too_small\0truncated\0malformed\0unsupported\0out_of_range\0"     \
  "overflow\0io\0no_space\0codec_unavailable\0corrupt\0resource_limit\0uncommitted\0read_only\0"        \
  "unknown"

namespace detail {
// The names in one array, defined once in the core (src/base/errc_names.cpp): an error whose message is compiled
// out points into it, so an image holds each name once (literals would be copied into every object file that
// makes one such error).
extern const char kErrcNames[sizeof TESSERA_ERRC_NAMES];
inline constexpr uint32_t kErrcCount = 16;  // the codes 0..15; the last name is "unknown"
struct errc_name_offsets {
  uint8_t at[kErrcCount + 1];
};
constexpr errc_name_offsets errc_name_offsets_make() noexcept {
  constexpr char text[] = TESSERA_ERRC_NAMES;
  errc_name_offsets o{};
  uint32_t k = 0;
  for (uint32_t i = 0; k < kErrcCount; ++i)
    if (text[i] == '\0') o.at[++k] = static_cast<uint8_t>(i + 1);
  return o;
}
inline constexpr errc_name_offsets kErrcNameOffsets = errc_name_offsets_make();
}  // namespace detail

/// The short name of a code, e.g. "truncated"; "unknown" for values outside the enum.
[[nodiscard]] constexpr const char* errc_name(errc code) noexcept {
  const auto i = static_cast<uint32_t>(code);
  return detail::kErrcNames + detail::kErrcNameOffsets.at[i < detail::kErrcCount ? i : detail::kErrcCount];
}

/// An error: a code and a message. `if (e)` is true when it is one.
struct [[nodiscard]] error {
  errc code = errc::ok;      ///< ok when there is no error
  /// Never null; says what and, where it can, where. Static storage, except the argument errors of array calls
  /// that name values (which dimension, what was needed, what was given): those point into the array's message
  /// buffer and stay valid until the next call on that array (or its move or close).
  const char* message = "";

  constexpr error() noexcept = default;  ///< no error (ok)
  /// A null message (TESSERA_MSG with messages compiled out) becomes the code's name.
  constexpr error(errc c, const char* m) noexcept : code(c), message(m != nullptr ? m : errc_name(c)) {}
  /// True when there is no error.
  [[nodiscard]] constexpr bool ok() const noexcept { return code == errc::ok; }
  constexpr explicit operator bool() const noexcept { return code != errc::ok; }  ///< true when it is an error
};

/// A status is an error that is usually ok: `if (auto e = f(); e) return e;`
using status = error;

/// The status of success.
inline constexpr status ok_status() noexcept { return status{}; }
/// An error of `code`; `message` is a static string (wrap literals in TESSERA_MSG), null for the code's name.
inline constexpr error make_error(errc code, const char* message) noexcept { return error{code, message}; }

namespace detail {
/// The status of the library's internal calls. With the messages compiled out an error is its code alone (its
/// message is the code's name), four bytes that a 32-bit target returns in a register rather than through
/// memory, and making one stores no message pointer (as an error, its message is the code's name: "ok" for a
/// success); with the messages it is the status itself.
#if TESSERA_ERROR_MESSAGES
using code_status = status;
#else
/// The message of a code known only at run time (its name), out of line: one copy for them all. Pure, and the
/// code is set by the caller: a conversion whose message nobody reads (an error passed on as its code) drops
/// the call.
[[gnu::pure, gnu::returns_nonnull]] const char* errc_message(errc code) noexcept;
class [[nodiscard]] code_status {
 public:
  constexpr code_status() noexcept = default;
  constexpr code_status(const error& e) noexcept : code(e.code) {}  // NOLINT
  [[gnu::always_inline]] operator error() const noexcept {  // NOLINT
    if (__builtin_constant_p(code)) return error{code, nullptr};
    return error{code, errc_message(code)};
  }
  [[nodiscard]] constexpr bool ok() const noexcept { return code == errc::ok; }
  errc code = errc::ok;  ///< ok when there is no error
};
#endif
}  // namespace detail

#if TESSERA_ERROR_MESSAGES
/// How result<T>::err() is inlined: as the compiler chooses with the messages, always without them.
#define TESSERA_RESULT_ERR_INLINE
#else
// Inlined: an internal caller keeps only the code (no message made), the others call errc_message.
#define TESSERA_RESULT_ERR_INLINE [[gnu::always_inline]]
#endif

/// A value or an error. No exceptions: check ok() before value().
template <class T>
class [[nodiscard]] result {
 public:
  /// A value converts implicitly, like a return value.
  result(const T& v) noexcept(tessera::cxx::is_nothrow_copy_constructible_v<T>) : has_value_(true) {  // NOLINT
    new (tessera::cxx::place, &storage_.value) T(v);
  }
  /// A value converts implicitly (moved).
  result(T&& v) noexcept(tessera::cxx::is_nothrow_move_constructible_v<T>) : has_value_(true) {  // NOLINT
    new (tessera::cxx::place, &storage_.value) T(tessera::cxx::move(v));
  }
  /// An error converts implicitly, like a return value. An error whose code is ok is a bug of the code that made
  /// it: it becomes invalid_argument, so a failed result never reports success.
  result(error e) noexcept : has_value_(false) {  // NOLINT
    storage_.err = e.ok() ? error{errc::invalid_argument, TESSERA_MSG("internal: a result was made from an error whose code is ok")} : e;
  }
#if !TESSERA_ERROR_MESSAGES
  /// An internal call's error (detail::code_status) converts as an error does.
  result(detail::code_status s) noexcept : has_value_(false) {  // NOLINT
    storage_.err.code = s.ok() ? errc::invalid_argument : s.code;
  }
#endif
  /// Copies the value or the error.
  result(const result& o) : has_value_(o.has_value_) {
    if (has_value_) new (tessera::cxx::place, &storage_.value) T(o.storage_.value);
    else storage_.err = o.storage_.err;
  }
  /// Moves the value, or copies the error.
  result(result&& o) noexcept(tessera::cxx::is_nothrow_move_constructible_v<T>) : has_value_(o.has_value_) {
    if (has_value_) new (tessera::cxx::place, &storage_.value) T(tessera::cxx::move(o.storage_.value));
    else storage_.err = o.storage_.err;
  }
  result& operator=(const result&) = delete;
  result& operator=(result&&) = delete;
  ~result() {
    if (has_value_) storage_.value.~T();
  }

  /// True when it holds a value.
  [[nodiscard]] bool ok() const noexcept { return has_value_; }
  /// The error; an ok error when it holds a value.
  [[nodiscard]] TESSERA_RESULT_ERR_INLINE error err() const noexcept { return has_value_ ? error{} : error(storage_.err); }
  /// The value; only when ok().
  [[nodiscard]] T& value() & noexcept { return storage_.value; }
  /// The value; only when ok().
  [[nodiscard]] const T& value() const& noexcept { return storage_.value; }
  /// The value, moved out; only when ok().
  [[nodiscard]] T&& value() && noexcept { return tessera::cxx::move(storage_.value); }
  T* operator->() noexcept { return &storage_.value; }              ///< the value's members; only when ok()
  const T* operator->() const noexcept { return &storage_.value; }  ///< the value's members; only when ok()
  T& operator*() & noexcept { return storage_.value; }              ///< the value; only when ok()
  const T& operator*() const& noexcept { return storage_.value; }   ///< the value; only when ok()

 private:
  union storage {
    storage() noexcept : err() {}
    ~storage() {}
    detail::code_status err;  // without the messages its code alone: the message is the code's name
    T value;
  } storage_;
  bool has_value_;
};

}  // namespace tessera

/// Propagate an error from an expression that yields a status (or, inside the library, a detail::code_status).
/// The expression's own type is kept: without the messages a code_status stays its code, converted only where
/// the function returns an error (a status held here would call error_of_code after every internal call and
/// keep its eight bytes on the caller's stack).
#define TESSERA_TRY(expr)                               \
  do {                                                  \
    auto tessera_try_s_ = (expr);                       \
    if (!tessera_try_s_.ok()) return tessera_try_s_;    \
  } while (0)
