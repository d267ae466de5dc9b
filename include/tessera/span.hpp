// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A non-owning view of contiguous elements (C++17 has no std::span).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "tessera/cxx.hpp"

namespace tessera {

/// A pointer and a count of T; copies are cheap and never own the elements.
template <class T>
class span {
 public:
  constexpr span() noexcept = default;  ///< empty: null data, size 0
  /// `size` elements at `data` (which must stay valid while the view is used).
  constexpr span(T* data, size_t size) noexcept : data_(data), size_(size) {}
  /// An array converts implicitly. A char array ending in NUL is a string (a literal: `p.dtype = "<f4"`), whose
  /// terminator is not part of the view; any other array is viewed whole.
  template <size_t N>
  constexpr span(T (&array)[N]) noexcept  // NOLINT: arrays convert implicitly
      : data_(array), size_(string_size(array, N)) {}
  /// span<T> converts to span<const T>.
  template <class U, class = tessera::cxx::enable_if_t<tessera::cxx::is_same_v<const U, T> && !tessera::cxx::is_same_v<U, T>>>
  constexpr span(span<U> other) noexcept : data_(other.data()), size_(other.size()) {}  // NOLINT

  [[nodiscard]] constexpr T* data() const noexcept { return data_; }        ///< the first element
  [[nodiscard]] constexpr size_t size() const noexcept { return size_; }    ///< the number of elements
  [[nodiscard]] constexpr bool empty() const noexcept { return size_ == 0; }  ///< true when size() is 0
  constexpr T& operator[](size_t i) const noexcept { return data_[i]; }     ///< element i (unchecked)
  [[nodiscard]] constexpr T* begin() const noexcept { return data_; }        ///< for range-for
  [[nodiscard]] constexpr T* end() const noexcept { return data_ + size_; }  ///< one past the last element

  /// Elements [offset, offset + count), clamped to the view so it never reaches past the end.
  [[nodiscard]] constexpr span subspan(size_t offset, size_t count = SIZE_MAX) const noexcept {
    if (offset > size_) offset = size_;
    size_t rest = size_ - offset;
    return span(data_ + offset, count < rest ? count : rest);
  }

 private:
  static constexpr size_t string_size(T* array, size_t n) noexcept {
    if constexpr (tessera::cxx::is_same_v<tessera::cxx::remove_cv_t<T>, char>) {
      return n > 0 && array[n - 1] == '\0' ? n - 1 : n;
    } else {
      (void)array;
      return n;
    }
  }

  T* data_ = nullptr;
  size_t size_ = 0;
};

using bytes_view = span<const uint8_t>;  ///< bytes to read
using bytes_mut = span<uint8_t>;        ///< bytes to write

}  // namespace tessera
