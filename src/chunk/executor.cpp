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

}  // namespace tessera
