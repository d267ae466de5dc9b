// SPDX-License-Identifier: BSD-3-Clause
// The thread pool executor: every task exactly once, worker indices in range and never shared by two running
// tasks, real concurrency, the caller's own work beside a run, reuse over thousands of runs, concurrent and nested
// runs, init/release.
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "tessera/executor.hpp"
#include "tessera/port/thread_pool.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"

using namespace tessera;

namespace {

constexpr uint32_t kMaxTestWorkers = 16;

struct tally {
  std::vector<std::atomic<uint32_t>> runs;
  std::vector<uint64_t> plain;                 // written by tasks without atomics: checks the run's happens-before
  std::atomic<bool> busy[kMaxTestWorkers] = {};  // a worker index currently in use
  std::atomic<uint32_t> collisions{0};
  std::atomic<uint32_t> out_of_range{0};
  std::atomic<uint32_t> worker_seen[kMaxTestWorkers] = {};
  uint32_t workers = 1;
  int spin = 0;  // busy work per task, to let tasks overlap

  explicit tally(size_t n) : runs(n), plain(n, 0) {}
};

void tally_task(void* context, size_t index, uint32_t worker) noexcept {
  auto& t = *static_cast<tally*>(context);
  if (worker >= t.workers || worker >= kMaxTestWorkers) {
    t.out_of_range.fetch_add(1);
    return;
  }
  if (t.busy[worker].exchange(true)) t.collisions.fetch_add(1);
  t.runs[index].fetch_add(1, std::memory_order_relaxed);
  t.worker_seen[worker].fetch_add(1, std::memory_order_relaxed);
  volatile uint64_t x = index;
  for (int i = 0; i < t.spin; ++i) x = x * 6364136223846793005ull + 1;
  t.plain[index] = index * 3 + 1;
  t.busy[worker].store(false);
}

void check_run(test::context& t, const executor& e, size_t ntasks, int spin) {
  tally tl(ntasks);
  tl.workers = e.workers;
  tl.spin = spin;
  executor_run(e, ntasks, tally_task, &tl);
  size_t wrong = 0, wrong_plain = 0;
  for (size_t i = 0; i < ntasks; ++i) {
    wrong += tl.runs[i].load() != 1;
    wrong_plain += tl.plain[i] != i * 3 + 1;
  }
  CHECK_EQ(wrong, 0u);
  CHECK_EQ(wrong_plain, 0u);
  CHECK_EQ(tl.collisions.load(), 0u);
  CHECK_EQ(tl.out_of_range.load(), 0u);
}

}  // namespace

TESSERA_TEST(thread_pool, every_task_exactly_once) {
  for (uint32_t workers : {1u, 2u, 3u, 4u, 8u}) {
    thread_pool pool;
    REQUIRE_OK(thread_pool_init(pool, workers));
    CHECK_EQ(thread_pool_workers(pool), workers);
    const executor e = thread_pool_executor(pool);
    CHECK_EQ(e.workers, workers);
    for (size_t ntasks : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{5}, size_t{7}, size_t{8},
                          size_t{9}, size_t{31}, size_t{64}, size_t{1000}, size_t{20000}}) {
      for (int spin : {0, 200}) check_run(t, e, ntasks, spin);
    }
  }
}

TESSERA_TEST(thread_pool, worker_indices_never_collide) {
  // Long tasks in many runs with many workers: any two tasks sharing a worker index at once would be caught by
  // the busy flags.
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 6));
  const executor e = thread_pool_executor(pool);
  test::rng r(11);
  for (int run = 0; run < 300; ++run) {
    check_run(t, e, static_cast<size_t>(r.range(2, 40)), static_cast<int>(r.range(0, 3000)));
  }
}

TESSERA_TEST(thread_pool, threads_really_run_concurrently) {
  // Each task waits until every task has started: only a pool running `workers` tasks at once finishes.
  for (uint32_t workers : {2u, 3u, 4u}) {
    thread_pool pool;
    REQUIRE_OK(thread_pool_init(pool, workers));
    struct rendezvous {
      std::atomic<uint32_t> started{0};
      std::atomic<uint32_t> timeouts{0};
      uint32_t expected = 0;
    } rv;
    rv.expected = workers;
    executor_run(thread_pool_executor(pool), workers, [](void* c, size_t, uint32_t) noexcept {
      auto& r = *static_cast<rendezvous*>(c);
      r.started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (r.started.load() < r.expected) {
        if (std::chrono::steady_clock::now() > deadline) {
          r.timeouts.fetch_add(1);
          return;
        }
        std::this_thread::yield();
      }
    }, &rv);
    CHECK_EQ(rv.started.load(), workers);
    CHECK_EQ(rv.timeouts.load(), 0u);
  }
}

TESSERA_TEST(thread_pool, caller_work_beside_a_run) {
  // executor_run_beside: the caller's work runs once, on the calling thread, while the pool's threads take the
  // tasks (it waits for a task to start elsewhere: only a run that really goes on beside it gets one); every task
  // runs once. Serial executors and a 1-worker pool do the caller's work, then the tasks.
  struct beside {
    std::thread::id caller;
    std::atomic<uint32_t> work_calls{0}, wrong_thread{0}, saw_task{0};
    std::atomic<uint32_t> started{0};
    bool expect_overlap = false;
  };
  auto work = [](void* c) noexcept {
    auto& b = *static_cast<beside*>(c);
    b.work_calls.fetch_add(1);
    if (std::this_thread::get_id() != b.caller) b.wrong_thread.fetch_add(1);
    if (!b.expect_overlap) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (b.started.load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    if (b.started.load() > 0) b.saw_task.fetch_add(1);
  };
  struct job {
    tally* tl;
    beside* b;
  };
  for (uint32_t workers : {0u, 1u, 2u, 4u}) {  // 0: the serial executor
    thread_pool pool;
    if (workers > 0) REQUIRE_OK(thread_pool_init(pool, workers));
    const executor e = workers > 0 ? thread_pool_executor(pool) : executor_serial();
    for (size_t ntasks : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{64}}) {
      tally tl(ntasks);
      tl.workers = e.workers;
      beside b;
      b.caller = std::this_thread::get_id();
      b.expect_overlap = workers >= 2 && ntasks >= 1;
      job j{&tl, &b};
      executor_run_beside(e, ntasks, [](void* c, size_t i, uint32_t w) noexcept {
        auto& jb = *static_cast<job*>(c);
        jb.b->started.fetch_add(1);
        tally_task(jb.tl, i, w);
      }, &j, work, &b);
      size_t wrong = 0;
      for (size_t i = 0; i < ntasks; ++i) wrong += tl.runs[i].load() != 1 || tl.plain[i] != i * 3 + 1;
      CHECK_EQ(wrong, 0u);
      CHECK_EQ(tl.collisions.load(), 0u);
      CHECK_EQ(tl.out_of_range.load(), 0u);
      CHECK_EQ(b.work_calls.load(), 1u);
      CHECK_EQ(b.wrong_thread.load(), 0u);
      CHECK_EQ(b.saw_task.load(), b.expect_overlap ? 1u : 0u);
    }
  }
}

TESSERA_TEST(thread_pool, counts_runs_beside_and_sleeps) {
  // thread_pool_counts: runs handed to the threads, those beside the caller's work, and the threads' sleeps; a
  // run the caller does alone (no task, or one task and no work of its own) is not counted.
  thread_pool none;
  thread_pool_counts c = thread_pool_counts_get(none);
  CHECK(c.runs == 0 && c.runs_beside == 0 && c.sleeps == 0);
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const executor e = thread_pool_executor(pool);
  // The thread sleeps once it has watched for a run for about 100 us.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (thread_pool_counts_get(pool).sleeps == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  c = thread_pool_counts_get(pool);
  CHECK(c.runs == 0 && c.runs_beside == 0 && c.sleeps >= 1);
  std::atomic<uint32_t> done{0};
  auto task = [](void* ctx, size_t, uint32_t) noexcept { static_cast<std::atomic<uint32_t>*>(ctx)->fetch_add(1); };
  auto work = [](void* ctx) noexcept { static_cast<std::atomic<uint32_t>*>(ctx)->fetch_add(100); };
  executor_run(e, 0, task, &done);
  executor_run(e, 1, task, &done);  // one task: the caller's
  CHECK_EQ(thread_pool_counts_get(pool).runs, 0u);
  executor_run(e, 5, task, &done);
  executor_run_beside(e, 3, task, &done, work, &done);
  executor_run_beside(e, 0, task, &done, work, &done);  // no task: the caller's work only
  CHECK_EQ(done.load(), 1u + 5u + 3u + 200u);
  c = thread_pool_counts_get(pool);
  CHECK_EQ(c.runs, 2u);
  CHECK_EQ(c.runs_beside, 1u);
}

TESSERA_TEST(thread_pool, reuse_over_thousands_of_runs) {
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 3));
  const executor e = thread_pool_executor(pool);
  test::rng r(5);
  std::vector<uint64_t> sums(64);
  uint64_t total_tasks = 0;
  for (int run = 0; run < 5000; ++run) {
    const size_t n = static_cast<size_t>(r.range(0, 64));
    struct job {
      uint64_t* out;
      uint64_t salt;
    } j{sums.data(), static_cast<uint64_t>(run)};
    std::fill(sums.begin(), sums.end(), 0);
    executor_run(e, n, [](void* c, size_t i, uint32_t) noexcept {
      auto& jb = *static_cast<job*>(c);
      jb.out[i] = jb.salt * 1000 + i + 1;
    }, &j);
    size_t bad = 0;
    for (size_t i = 0; i < 64; ++i) bad += sums[i] != (i < n ? static_cast<uint64_t>(run) * 1000 + i + 1 : 0);
    REQUIRE_EQ(bad, 0u);
    total_tasks += n;
  }
  CHECK(total_tasks > 100000);
}

TESSERA_TEST(thread_pool, pool_threads_take_part) {
  // Over many runs of long tasks, worker indices other than the caller's (0) appear: the pool is used.
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  const executor e = thread_pool_executor(pool);
  tally tl(64);
  tl.workers = 2;
  tl.spin = 20000;
  for (int run = 0; run < 20; ++run) {
    for (auto& c : tl.runs) c.store(0);
    executor_run(e, 64, tally_task, &tl);
  }
  CHECK(tl.worker_seen[0].load() > 0);
  CHECK(tl.worker_seen[1].load() > 0);
  CHECK_EQ(tl.worker_seen[0].load() + tl.worker_seen[1].load(), 64u * 20u);
  CHECK_EQ(tl.collisions.load(), 0u);
}

TESSERA_TEST(thread_pool, concurrent_runs_from_two_threads) {
  // Two callers share one pool: one gets the pool, the other runs serially; both complete every task.
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 3));
  const executor e = thread_pool_executor(pool);
  std::atomic<uint32_t> failures{0};
  auto caller = [&](uint64_t seed) {
    test::rng r(seed);
    for (int run = 0; run < 400; ++run) {
      const size_t n = static_cast<size_t>(r.range(1, 50));
      tally tl(n);
      tl.workers = e.workers;
      tl.spin = static_cast<int>(r.range(0, 500));
      executor_run(e, n, tally_task, &tl);
      for (size_t i = 0; i < n; ++i)
        if (tl.runs[i].load() != 1 || tl.plain[i] != i * 3 + 1) failures.fetch_add(1);
      if (tl.collisions.load() != 0 || tl.out_of_range.load() != 0) failures.fetch_add(1);
    }
  };
  std::thread a(caller, 1), b(caller, 2);
  a.join();
  b.join();
  CHECK_EQ(failures.load(), 0u);
}

TESSERA_TEST(thread_pool, nested_runs_complete) {
  // A task that runs a job on the same pool: the inner run goes serial instead of waiting for itself.
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 3));
  struct outer {
    executor e;
    std::atomic<uint32_t> inner_done{0};
    std::atomic<uint32_t> bad{0};
  } o;
  o.e = thread_pool_executor(pool);
  executor_run(o.e, 8, [](void* c, size_t, uint32_t) noexcept {
    auto& oc = *static_cast<outer*>(c);
    std::atomic<uint32_t> hits[5] = {};
    executor_run(oc.e, 5, [](void* hc, size_t i, uint32_t) noexcept {
      static_cast<std::atomic<uint32_t>*>(hc)[i].fetch_add(1);
    }, hits);
    for (auto& h : hits)
      if (h.load() != 1) oc.bad.fetch_add(1);
    oc.inner_done.fetch_add(1);
  }, &o);
  CHECK_EQ(o.inner_done.load(), 8u);
  CHECK_EQ(o.bad.load(), 0u);
}

TESSERA_TEST(thread_pool, init_release_and_bad_arguments) {
  thread_pool pool;
  CHECK_EQ(thread_pool_workers(pool), 0u);
  executor serial = thread_pool_executor(pool);
  CHECK(serial.run == nullptr);
  CHECK_EQ(serial.workers, 1u);
  CHECK_ERR(thread_pool_init(pool, 0), errc::invalid_argument);
  CHECK_ERR(thread_pool_init(pool, kThreadPoolMaxWorkers + 1), errc::invalid_argument);
  CHECK_EQ(thread_pool_workers(pool), 0u);
  thread_pool_release(pool);  // releasing an empty pool is a no-op
  // Init and release many times, sometimes right away (threads may not have parked yet), sometimes after runs.
  for (int i = 0; i < 200; ++i) {
    REQUIRE_OK(thread_pool_init(pool, static_cast<uint32_t>(1 + i % 5)));
    if (i % 3 == 0) check_run(t, thread_pool_executor(pool), 10, 0);
    if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // release while idle
    thread_pool_release(pool);
    CHECK_EQ(thread_pool_workers(pool), 0u);
  }
  // Re-initializing an initialized pool releases the old threads first.
  REQUIRE_OK(thread_pool_init(pool, 2));
  REQUIRE_OK(thread_pool_init(pool, 4));
  CHECK_EQ(thread_pool_workers(pool), 4u);
  check_run(t, thread_pool_executor(pool), 100, 10);
  // Moving keeps the executor valid.
  const executor e = thread_pool_executor(pool);
  thread_pool moved(std::move(pool));
  CHECK_EQ(thread_pool_workers(pool), 0u);
  CHECK_EQ(thread_pool_workers(moved), 4u);
  check_run(t, e, 100, 10);
  thread_pool other;
  REQUIRE_OK(thread_pool_init(other, 2));
  other = std::move(moved);
  CHECK_EQ(thread_pool_workers(other), 4u);
  check_run(t, e, 50, 10);
}

TESSERA_TEST(thread_pool, cpu_count_is_positive) {
  const uint32_t n = cpu_count();
  CHECK(n >= 1);
  CHECK(n <= 1u << 16);
}
