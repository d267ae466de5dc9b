// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Runs independent tasks, possibly in parallel. The core has no threads: a caller (or port/) supplies a
/// parallel executor; the default runs every task in the calling thread.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace tessera {

/// A task: `index` is the task number in [0, ntasks); `worker` in [0, executor.workers) names the worker running
/// it, so the task can use that worker's scratch without locks. Tasks must not throw (nothing in the core does)
/// and report failures through their context. The core's tasks never call the caller's allocator: everything
/// they use is made on the calling thread before run().
using executor_task = void (*)(void* task_context, size_t index, uint32_t worker) noexcept;

/// Runs a batch of tasks: a callback with a context, and how many workers it has.
struct executor {
  /// Runs task(task_context, i, w) once for every i in [0, ntasks) and returns when all have finished. No two
  /// tasks run at the same time with the same worker index; w < workers. nullptr means serial.
  void (*run)(void* executor_context, size_t ntasks, executor_task task, void* task_context) noexcept = nullptr;
  void* context = nullptr;  ///< passed to run as executor_context
  uint32_t workers = 1;  ///< the number of distinct worker indices run may use (>= 1)
  /// Optional: as run, but the calling thread first calls caller_work(caller_context) while the other workers
  /// start on the tasks, then joins them; returns when both are done. It lets serial work of the caller (which may
  /// call the caller's allocator: it runs on the calling thread) overlap a run instead of leaving the workers idle
  /// between runs. nullptr: executor_run_beside calls caller_work, then run.
  void (*run_beside)(void* executor_context, size_t ntasks, executor_task task, void* task_context,
                     void (*caller_work)(void* caller_context) noexcept, void* caller_context) noexcept = nullptr;
};

/// The serial executor: every task in the calling thread, in index order, as worker 0.
[[nodiscard]] executor executor_serial() noexcept;

/// Runs `ntasks` tasks with `e` (serially when e.run is nullptr).
void executor_run(const executor& e, size_t ntasks, executor_task task, void* task_context) noexcept;

/// Runs `ntasks` tasks with `e` while the calling thread does caller_work(caller_context) beside them (see
/// executor::run_beside): caller_work always runs on the calling thread, once, whatever ntasks is.
void executor_run_beside(const executor& e, size_t ntasks, executor_task task, void* task_context,
                         void (*caller_work)(void* caller_context) noexcept, void* caller_context) noexcept;

}  // namespace tessera
