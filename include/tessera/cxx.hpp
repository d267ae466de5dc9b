// SPDX-License-Identifier: BSD-3-Clause
/// @file
/// The few C++ library facilities the core uses, from the compiler alone: the core (include/, src/) includes no
/// C++ standard library header, so that it builds with a toolchain that ships only a C library (a bare-metal
/// RISC-V GCC with picolibc). Placement new, move and exchange, the type traits the headers need, and atomics
/// over the compiler's __atomic builtins (GCC and Clang).
#pragma once

#include <stddef.h>

namespace tessera::cxx {

/// The tag of Tessera's placement new: `new (tessera::cxx::place, p) T(...)` constructs a T at p (the standard
/// placement new lives in the C++ library's \c new header).
struct place_t {};
/// The placement tag's value.
inline constexpr place_t place{};

/// The type T without a reference.
template <class T>
struct remove_reference {
  using type = T;  ///< T
};
/// The type T without a reference.
template <class T>
struct remove_reference<T&> {
  using type = T;  ///< T
};
/// The type T without a reference.
template <class T>
struct remove_reference<T&&> {
  using type = T;  ///< T
};

/// std::move: v as an rvalue.
template <class T>
constexpr typename remove_reference<T>::type&& move(T&& v) noexcept {
  return static_cast<typename remove_reference<T>::type&&>(v);
}

/// std::exchange: stores `value` into `obj` and returns the old value.
template <class T, class U = T>
constexpr T exchange(T& obj, U&& value) noexcept {
  T old = static_cast<T&&>(obj);
  obj = static_cast<U&&>(value);
  return old;
}

/// std::is_same_v.
template <class A, class B>
inline constexpr bool is_same_v = false;
/// std::is_same_v.
template <class A>
inline constexpr bool is_same_v<A, A> = true;

/// std::remove_cv_t.
template <class T>
struct remove_cv {
  using type = T;  ///< T
};
/// std::remove_cv_t.
template <class T>
struct remove_cv<const T> {
  using type = T;  ///< T
};
/// std::remove_cv_t.
template <class T>
struct remove_cv<volatile T> {
  using type = T;  ///< T
};
/// std::remove_cv_t.
template <class T>
struct remove_cv<const volatile T> {
  using type = T;  ///< T
};
/// std::remove_cv_t.
template <class T>
using remove_cv_t = typename remove_cv<T>::type;

/// std::enable_if_t.
template <bool B, class T = void>
struct enable_if {};
/// std::enable_if_t.
template <class T>
struct enable_if<true, T> {
  using type = T;  ///< T
};
/// std::enable_if_t.
template <bool B, class T = void>
using enable_if_t = typename enable_if<B, T>::type;

/// std::is_nothrow_copy_constructible_v (a compiler builtin).
template <class T>
inline constexpr bool is_nothrow_copy_constructible_v = __is_nothrow_constructible(T, const T&);
/// std::is_nothrow_move_constructible_v (a compiler builtin).
template <class T>
inline constexpr bool is_nothrow_move_constructible_v = __is_nothrow_constructible(T, T&&);

/// The memory orders the core's atomics use (the compiler's __ATOMIC_* values).
enum memory_order : int {
  memory_order_relaxed = __ATOMIC_RELAXED,  ///< no ordering
  memory_order_acquire = __ATOMIC_ACQUIRE,  ///< later reads stay after
  memory_order_release = __ATOMIC_RELEASE,  ///< earlier writes stay before
  memory_order_acq_rel = __ATOMIC_ACQ_REL,  ///< both
  memory_order_seq_cst = __ATOMIC_SEQ_CST,  ///< one total order
};

/// A value of a scalar or pointer type read and written atomically (std::atomic's load, store and exchange).
/// A bool is kept in a word: some CPUs (RV32IMAC) have atomic instructions for words only, and GCC would call
/// libatomic for a byte.
template <class T>
class atomic {
 public:
  constexpr atomic() noexcept = default;
  /// Starts at v.
  constexpr atomic(T v) noexcept : v_(v) {}  // NOLINT(google-explicit-constructor): as std::atomic
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;
  /// The value.
  T load(memory_order o = memory_order_seq_cst) const noexcept { return __atomic_load_n(&v_, o); }
  /// Sets the value.
  void store(T v, memory_order o = memory_order_seq_cst) noexcept { __atomic_store_n(&v_, v, o); }
  /// Sets the value, returning the old one.
  T exchange(T v, memory_order o = memory_order_seq_cst) noexcept { return __atomic_exchange_n(&v_, v, o); }

 private:
  T v_{};
};

/// atomic<bool>, kept in a word.
template <>
class atomic<bool> {
 public:
  constexpr atomic() noexcept = default;
  /// Starts at v.
  constexpr atomic(bool v) noexcept : v_(v ? 1u : 0u) {}  // NOLINT(google-explicit-constructor): as std::atomic
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;
  /// The value.
  bool load(memory_order o = memory_order_seq_cst) const noexcept { return __atomic_load_n(&v_, o) != 0; }
  /// Sets the value.
  void store(bool v, memory_order o = memory_order_seq_cst) noexcept { __atomic_store_n(&v_, v ? 1u : 0u, o); }
  /// Sets the value, returning the old one.
  bool exchange(bool v, memory_order o = memory_order_seq_cst) noexcept {
#if defined(__ARM_ARCH_6M__)
    // ARMv6-M (Cortex-M0/M0+) has no exclusive loads and stores: GCC would call libatomic's __atomic_exchange_4,
    // which bare metal lacks. One core: the swap with interrupts masked (PRIMASK, restored after) is atomic.
    (void)o;
    unsigned primask;
    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
    const unsigned old = v_;
    v_ = v ? 1u : 0u;
    __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory");
    return old != 0;
#else
    return __atomic_exchange_n(&v_, v ? 1u : 0u, o) != 0;
#endif
  }

 private:
  unsigned v_ = 0;
};

}  // namespace tessera::cxx

/// Tessera's placement new (see tessera::cxx::place). Not noexcept on purpose: a non-throwing allocation
/// function may return null, so every new-expression would test p before constructing (a branch no caller can
/// take: p is storage the caller holds); a potentially-throwing one never returns null (the core is built
/// without exceptions, and this one cannot throw).
inline void* operator new(size_t, tessera::cxx::place_t, void* p) { return p; }
/// Its matching delete (called only if a constructor could throw, which none in the core does).
inline void operator delete(void*, tessera::cxx::place_t, void*) noexcept {}
