// SPDX-License-Identifier: BSD-3-Clause
// A test storage over another (`inner`) that forwards every call it does not watch: a test's storage derives
// from forwarding_storage<itself>, takes forwarded() (each call inner has, passed on unchanged) and replaces
// or removes the calls it watches, fails or hides. Its own callbacks reach it through self(context).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/storage.hpp"

namespace tessera::test {

template <class Self>
struct forwarding_storage {
  storage inner{};

  static Self& self(void* context) noexcept { return *static_cast<Self*>(context); }

  static status read_forward(void* c, uint64_t offset, bytes_mut dst) noexcept {
    const storage& i = self(c).inner;
    return i.read(i.context, offset, dst);
  }
  static status write_forward(void* c, uint64_t offset, bytes_view src) noexcept {
    const storage& i = self(c).inner;
    return i.write(i.context, offset, src);
  }
  static status size_forward(void* c, uint64_t* out) noexcept {
    const storage& i = self(c).inner;
    return i.size(i.context, out);
  }
  static status truncate_forward(void* c, uint64_t size) noexcept {
    const storage& i = self(c).inner;
    return i.truncate(i.context, size);
  }
  static status sync_forward(void* c) noexcept {
    const storage& i = self(c).inner;
    return i.sync(i.context);
  }
  static bytes_view view_forward(void* c) noexcept {
    const storage& i = self(c).inner;
    return i.view(i.context);
  }
  static bytes_mut lend_forward(void* c, uint64_t offset, size_t size) noexcept {
    const storage& i = self(c).inner;
    return i.lend(i.context, offset, size);
  }

  // Every call inner has, forwarded; the ones it lacks stay null. Read brackets are not forwarded and
  // concurrent reads not claimed: a watching storage counts with plain fields.
  storage forwarded() noexcept {
    storage s;
    s.read = inner.read != nullptr ? read_forward : nullptr;
    s.write = inner.write != nullptr ? write_forward : nullptr;
    s.size = inner.size != nullptr ? size_forward : nullptr;
    s.truncate = inner.truncate != nullptr ? truncate_forward : nullptr;
    s.sync = inner.sync != nullptr ? sync_forward : nullptr;
    s.view = inner.view != nullptr ? view_forward : nullptr;
    s.lend = inner.lend != nullptr ? lend_forward : nullptr;
    s.context = static_cast<Self*>(this);
    return s;
  }
};

}  // namespace tessera::test
