// The first error of tasks that run on several workers: kept once (the later ones are dropped), and a flag the
// other tasks check to stop early. The caller reads result() after the executor run has returned.
#pragma once

#include <atomic>

#include "tessera/error.hpp"

namespace tessera::detail {

class first_error {
 public:
  void set(const status& e) noexcept {
    if (!claimed_.exchange(true, std::memory_order_acq_rel)) error_ = e;
    failed_.store(true, std::memory_order_release);
  }
  [[nodiscard]] bool any() const noexcept { return failed_.load(std::memory_order_acquire); }
  [[nodiscard]] status result() const noexcept { return any() ? error_ : ok_status(); }

 private:
  std::atomic<bool> failed_{false};
  std::atomic<bool> claimed_{false};
  status error_;
};

}  // namespace tessera::detail
