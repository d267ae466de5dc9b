// SPDX-License-Identifier: BSD-3-Clause
// The C face of a C++ executor (executor_to_c, tessera/capi_bridge.hpp), for the ports' C APIs: its own object
// file, so that a program links it only when a port hands out such an executor (executor_over refers to its run
// weakly on bare metal).
#include "capi_internal.hpp"

namespace tessera {
namespace capi {

namespace {

struct c_task {
  tessera_executor_task task;
  void* context;
};

void c_task_trampoline(void* context, size_t index, uint32_t worker) noexcept {
  const c_task& t = *static_cast<const c_task*>(context);
  t.task(t.context, index, worker);
}

}  // namespace

// A C caller that calls the C executor's run itself: its C tasks through the C++ executor.
void executor_to_c_run(void* context, size_t ntasks, tessera_executor_task task, void* task_context) {
  c_task t{task, task_context};
  executor_run(*static_cast<const executor*>(context), ntasks, c_task_trampoline, &t);
}

}  // namespace capi

tessera_executor executor_to_c(const executor* e) noexcept {
  tessera_executor c{};
  c.workers = 1;
  if (e == nullptr || e->run == nullptr) return c;
  c.run = capi::executor_to_c_run;
  c.context = const_cast<executor*>(e);
  c.workers = e->workers;
  return c;
}

}  // namespace tessera
