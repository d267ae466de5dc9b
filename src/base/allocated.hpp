// SPDX-License-Identifier: BSD-3-Clause
// One object in memory from an allocator: the large state of a one-off path (a create's frame setup, a round of
// chunks) that a firmware task's stack has no room for. Destroyed and freed with its holder.
#pragma once

#include "tessera/cxx.hpp"

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

template <class T>
class allocated {
 public:
  allocated() noexcept = default;
  allocated(const allocated&) = delete;
  allocated& operator=(const allocated&) = delete;
  ~allocated() { reset(); }

  // A value-initialized T from a (out_of_memory when refused).
  [[nodiscard]] status make(const allocator& a) noexcept {
    reset();
    void* p = allocator_allocate(a, sizeof(T), alignof(T));
    if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("allocator refused a temporary state"));
    alloc_ = a;
    object_ = new (tessera::cxx::place, p) T();
    return ok_status();
  }
  T& operator*() const noexcept { return *object_; }
  T* operator->() const noexcept { return object_; }
  void reset() noexcept {
    if (object_ == nullptr) return;
    object_->~T();
    allocator_deallocate(alloc_, object_, sizeof(T), alignof(T));
    object_ = nullptr;
  }

 private:
  allocator alloc_{};
  T* object_ = nullptr;
};

}  // namespace tessera::detail
