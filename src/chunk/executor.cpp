// SPDX-License-Identifier: BSD-3-Clause
// The serial executor and the dispatch every parallel loop of the core goes through.
#include "tessera/executor.hpp"

namespace tessera {

executor executor_serial() noexcept { return executor{}; }

void executor_run(const executor& e, size_t ntasks, executor_task task, void* task_context) noexcept {
  if (ntasks == 0) return;
  if (e.run == nullptr) {
    for (size_t i = 0; i < ntasks; ++i) task(task_context, i, 0);
    return;
  }
  e.run(e.context, ntasks, task, task_context);
}

void executor_run_beside(const executor& e, size_t ntasks, executor_task task, void* task_context,
                         void (*caller_work)(void*) noexcept, void* caller_context) noexcept {
  if (e.run != nullptr && e.run_beside != nullptr && ntasks > 0) {
    e.run_beside(e.context, ntasks, task, task_context, caller_work, caller_context);
    return;
  }
  caller_work(caller_context);
  executor_run(e, ntasks, task, task_context);
}

}  // namespace tessera
