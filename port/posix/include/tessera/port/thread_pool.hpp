// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A fixed pool of threads behind a tessera::executor. The caller of run() works too (as worker 0), the pool's
/// threads as workers 1..workers-1; tasks are claimed one at a time from an atomic counter, so a run of a few
/// tasks costs one wake-up and no allocation, and a late-waking thread never delays the caller. The executor has
/// run_beside: the caller does its own work on its thread while the pool's threads start on the tasks.
#pragma once

#include <cstdint>

#include "tessera/error.hpp"
#include "tessera/executor.hpp"

namespace tessera {

namespace detail {
struct thread_pool_state;
}

/// The most workers a pool may have (thread_pool_init).
inline constexpr uint32_t kThreadPoolMaxWorkers = 1024;

/// Owns the threads; releases them on destruction. Movable, not copyable. Executors obtained from a pool stay
/// valid until the pool is released (moving the pool keeps them valid).
class thread_pool {
 public:
  thread_pool() noexcept = default;  ///< not initialized (no threads): call thread_pool_init
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  thread_pool(thread_pool&& o) noexcept : state_(o.state_) { o.state_ = nullptr; }  ///< takes o's threads
  thread_pool& operator=(thread_pool&& o) noexcept;  ///< releases this pool, then takes o's threads
  ~thread_pool();  ///< thread_pool_release

 private:
  friend struct thread_pool_access;
  detail::thread_pool_state* state_ = nullptr;
};

/// Starts workers - 1 threads (workers in [1, kThreadPoolMaxWorkers]; 1 starts none and runs serially).
/// Errors: invalid_argument, out_of_memory (no memory or no resources for a thread), io (another pthread failure).
/// A pool already initialized is released first.
[[nodiscard]] status thread_pool_init(thread_pool& p, uint32_t workers) noexcept;

/// Stops and joins the threads. Must not be called while a run is in progress. A no-op on an empty pool.
void thread_pool_release(thread_pool& p) noexcept;

/// The pool as an executor (workers = the pool's workers). Serial when the pool is not initialized.
/// run() may be called from any thread; while one run is in progress, a concurrent or nested run (a task running
/// another job on the same pool) executes its tasks serially in its own thread as worker 0, so it never waits.
[[nodiscard]] executor thread_pool_executor(const thread_pool& p) noexcept;

/// The pool's worker count (threads + the caller); 0 when not initialized.
[[nodiscard]] uint32_t thread_pool_workers(const thread_pool& p) noexcept;

/// What a pool has done since thread_pool_init (for tests and benchmarks: how a caller's runs met the pool).
struct thread_pool_counts {
  uint64_t runs = 0;         ///< runs handed to the pool's threads (not those a caller did alone, serially)
  uint64_t runs_beside = 0;  ///< of those, runs beside the caller's own work (executor::run_beside)
  uint64_t sleeps = 0;       ///< times a pool thread, finding no run for a while, went to sleep
};

/// The pool's counts (zeros when it is not initialized). Safe while runs are in progress.
[[nodiscard]] thread_pool_counts thread_pool_counts_get(const thread_pool& p) noexcept;

/// The number of online processors (at least 1): a sensible default for `workers`.
[[nodiscard]] uint32_t cpu_count() noexcept;

}  // namespace tessera
