// SPDX-License-Identifier: BSD-3-Clause
// The first error of tasks that run on several workers: kept once (the later ones are dropped), and a flag the
// other tasks check to stop early. The caller reads result() after the executor run has returned.
#pragma once

#include "tessera/cxx.hpp"

#include "tessera/error.hpp"

namespace tessera::detail {

class first_error {
 public:
  void set(const status& e) noexcept {
    if (!claimed_.exchange(true, tessera::cxx::memory_order_acq_rel)) error_ = e;
    failed_.store(true, tessera::cxx::memory_order_release);
  }
  [[nodiscard]] bool any() const noexcept { return failed_.load(tessera::cxx::memory_order_acquire); }
  [[nodiscard]] status result() const noexcept { return any() ? error_ : ok_status(); }

 private:
  tessera::cxx::atomic<bool> failed_{false};
  tessera::cxx::atomic<bool> claimed_{false};
  status error_;
};

}  // namespace tessera::detail
