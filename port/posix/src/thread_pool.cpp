// SPDX-License-Identifier: BSD-3-Clause
// The thread pool behind the parallel executor.
//
// The hot path takes no lock. One atomic word holds the run's generation, whether the run is open, and how many
// pool threads take part in it. A run writes (task, context, ntasks), resets the task counter and publishes a
// new generation, open; then the caller claims tasks itself from the counter, as worker 0. A pool thread joins
// a run by a compare-and-swap that counts it in, which succeeds only while that run is open, claims tasks the
// same way, and counts itself out. When the counter is exhausted the caller closes the run, so a thread that
// arrives late finds it closed and never delays the caller; the caller waits only for the threads still
// finishing a task (a short spin, then a condition variable).
//
// Between runs a thread watches the word for about a hundred microseconds (back-to-back runs, chunk after
// chunk, start without a wake-up), then sleeps on a condition variable; the caller signals it only when some
// thread sleeps. A run beside the caller's own work (executor::run_beside) publishes the job and wakes a thread
// for every task, then the caller does its work (say, appending the previous round's chunks) and claims tasks
// after it: the threads do not idle through it, and their wake-up latency is spent beside it rather than ahead
// of the tasks. Nothing is allocated per run. Pthread primitives (not std::thread/std::mutex) because their
// failures are return codes, not exceptions.
#include "tessera/port/thread_pool.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

namespace tessera {

namespace detail {

struct thread_pool_thread {
  thread_pool_state* pool = nullptr;
  pthread_t handle{};
  uint32_t worker = 0;
};

// The run word: participants in bits 0..31, open in bit 32, the generation above.
inline constexpr uint64_t kRunParticipants = 0xffffffffu;
inline constexpr uint64_t kRunOpen = uint64_t{1} << 32;
inline constexpr uint64_t kRunGeneration = uint64_t{1} << 33;

struct thread_pool_state {
  pthread_mutex_t mutex;     // only for sleeping and waking
  pthread_cond_t wake;       // sleeping threads wait here for a new generation or stop
  pthread_cond_t finished;   // a sleeping caller waits here for the last participant
  bool mutex_ready = false, wake_ready = false, finished_ready = false;

  uint32_t nthreads = 0;  // started and not yet joined
  thread_pool_thread* threads = nullptr;

  // The current run's job: written by the caller only while no thread takes part (see the run word).
  executor_task task = nullptr;
  void* task_context = nullptr;
  size_t ntasks = 0;

  alignas(64) std::atomic<uint64_t> run{0};
  std::atomic<uint32_t> sleepers{0};        // threads in (or about to enter) the wake wait
  std::atomic<bool> caller_sleeping{false};
  std::atomic<bool> stop{false};
  std::atomic<bool> busy{false};            // a run is in progress
  alignas(64) std::atomic<size_t> next{0};  // the next task to claim
  // thread_pool_counts: the caller's line for runs, the threads' for sleeps (apart from the hot words).
  alignas(64) std::atomic<uint64_t> runs{0};
  std::atomic<uint64_t> runs_beside{0};
  alignas(64) std::atomic<uint64_t> sleeps{0};
};

}  // namespace detail

struct thread_pool_access {
  static detail::thread_pool_state*& state(thread_pool& p) noexcept { return p.state_; }
  static detail::thread_pool_state* state(const thread_pool& p) noexcept { return p.state_; }
};

namespace {

using detail::kRunGeneration;
using detail::kRunOpen;
using detail::kRunParticipants;
using detail::thread_pool_state;
using detail::thread_pool_thread;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// How long a thread watches for the next run before sleeping: long enough to bridge the gap between the runs
// of consecutive chunks, short enough to leave an idle pool idle.
constexpr uint64_t kThreadSpinNs = 100000;
// How long the caller waits for the last participants (finishing one task each) before it sleeps.
constexpr uint64_t kCallerSpinNs = 50000;
// The caller's wait yields the processor every few rounds: on a loaded machine the thread it waits for may be
// queued on the caller's own processor. (A pool thread waiting for a run does not yield: on a loaded machine
// that would hand its processor to another process for a whole time slice and miss the run.)
constexpr int kPausesPerYield = 32;

inline uint64_t generation_of(uint64_t run) noexcept { return run / kRunGeneration; }

void claim_loop(thread_pool_state& s, executor_task task, void* context, size_t ntasks, uint32_t worker) noexcept {
  for (;;) {
    const size_t i = s.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= ntasks) return;
    task(context, i, worker);
  }
}

// Returns the run word once its generation differs from `seen` (or the pool stops): spins, then sleeps.
uint64_t run_wait(thread_pool_state& s, uint64_t seen) noexcept {
  uint64_t run = s.run.load(std::memory_order_acquire);
  if (generation_of(run) != seen) return run;
  const uint64_t start = now_ns();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      cpu_relax();
      run = s.run.load(std::memory_order_acquire);
      if (generation_of(run) != seen || s.stop.load(std::memory_order_relaxed)) return run;
    }
    if (now_ns() - start > kThreadSpinNs) break;
  }
  pthread_mutex_lock(&s.mutex);
  // seq_cst pairs with the caller's publish-then-check-sleepers: one of the two sees the other.
  s.sleepers.fetch_add(1, std::memory_order_seq_cst);
  s.sleeps.fetch_add(1, std::memory_order_relaxed);
  for (;;) {
    run = s.run.load(std::memory_order_seq_cst);
    if (generation_of(run) != seen || s.stop.load(std::memory_order_seq_cst)) break;
    pthread_cond_wait(&s.wake, &s.mutex);
  }
  s.sleepers.fetch_sub(1, std::memory_order_relaxed);
  pthread_mutex_unlock(&s.mutex);
  return run;
}

void* thread_main(void* arg) noexcept {
  auto& self = *static_cast<thread_pool_thread*>(arg);
  thread_pool_state& s = *self.pool;
  uint64_t seen = 0;  // threads start before the first run (generation 0)
  for (;;) {
    uint64_t run = run_wait(s, seen);
    if (s.stop.load(std::memory_order_acquire)) break;
    seen = generation_of(run);
    // Join while this generation is open; a failed exchange reloads `run` and looks again.
    bool joined = false;
    while ((run & kRunOpen) != 0 && generation_of(run) == seen) {
      if (s.run.compare_exchange_weak(run, run + 1, std::memory_order_seq_cst, std::memory_order_acquire)) {
        joined = true;
        break;
      }
    }
    if (!joined) continue;  // arrived after the caller closed the run
    claim_loop(s, s.task, s.task_context, s.ntasks, self.worker);
    // Counting out releases the tasks' writes to the caller, who waits for zero participants.
    const uint64_t before = s.run.fetch_sub(1, std::memory_order_seq_cst);
    if ((before & kRunParticipants) == 1 && s.caller_sleeping.load(std::memory_order_seq_cst)) {
      pthread_mutex_lock(&s.mutex);
      pthread_mutex_unlock(&s.mutex);
      pthread_cond_signal(&s.finished);
    }
  }
  return nullptr;
}

void run_serial(size_t ntasks, executor_task task, void* task_context) noexcept {
  for (size_t i = 0; i < ntasks; ++i) task(task_context, i, 0);
}

// A run; caller_work (if any) runs on the calling thread after the job is published, before it claims tasks.
void pool_run_with(thread_pool_state* sp, size_t ntasks, executor_task task, void* task_context,
                   void (*caller_work)(void*) noexcept, void* caller_context) noexcept {
  // One run at a time: a concurrent or nested run does its tasks itself rather than wait. A single task is not
  // worth a wake-up, unless the caller has its own work to do beside it.
  if (sp == nullptr || sp->nthreads == 0 || (ntasks == 1 && caller_work == nullptr) ||
      sp->busy.exchange(true, std::memory_order_acquire)) {
    if (caller_work != nullptr) caller_work(caller_context);
    run_serial(ntasks, task, task_context);
    return;
  }
  thread_pool_state& s = *sp;
  s.runs.fetch_add(1, std::memory_order_relaxed);
  if (caller_work != nullptr) s.runs_beside.fetch_add(1, std::memory_order_relaxed);
  // No thread takes part now (the previous run ended with zero participants, closed): the job is ours to write.
  s.task = task;
  s.task_context = task_context;
  s.ntasks = ntasks;
  s.next.store(0, std::memory_order_relaxed);
  const uint64_t generation = generation_of(s.run.load(std::memory_order_relaxed)) + 1;
  s.run.store(generation * kRunGeneration | kRunOpen, std::memory_order_seq_cst);
  if (s.sleepers.load(std::memory_order_seq_cst) != 0) {
    // Taking the mutex orders this wake after any sleeper's last look at the run word.
    pthread_mutex_lock(&s.mutex);
    pthread_mutex_unlock(&s.mutex);
    // Threads for every task but the one the caller takes (every task while the caller does its own work).
    const size_t wanted = caller_work != nullptr ? ntasks : ntasks - 1;
    if (wanted >= s.nthreads) {
      pthread_cond_broadcast(&s.wake);
    } else {
      for (size_t k = 0; k < wanted; ++k) pthread_cond_signal(&s.wake);
    }
  }

  if (caller_work != nullptr) caller_work(caller_context);
  claim_loop(s, task, task_context, ntasks, 0);

  // Close the run, then wait for the participants still finishing their last task.
  uint64_t run = s.run.fetch_and(~kRunOpen, std::memory_order_seq_cst) & ~kRunOpen;
  if ((run & kRunParticipants) != 0) {
    const uint64_t start = now_ns();
    for (int i = 1; (run & kRunParticipants) != 0; ++i) {
      cpu_relax();
      run = s.run.load(std::memory_order_acquire);
      if (i % kPausesPerYield == 0) {
        if (now_ns() - start > kCallerSpinNs) break;
        sched_yield();
      }
    }
    if ((run & kRunParticipants) != 0) {
      s.caller_sleeping.store(true, std::memory_order_seq_cst);
      pthread_mutex_lock(&s.mutex);
      while ((s.run.load(std::memory_order_seq_cst) & kRunParticipants) != 0) pthread_cond_wait(&s.finished, &s.mutex);
      pthread_mutex_unlock(&s.mutex);
      s.caller_sleeping.store(false, std::memory_order_relaxed);
    }
  }
  s.busy.store(false, std::memory_order_release);
}

void pool_run(void* executor_context, size_t ntasks, executor_task task, void* task_context) noexcept {
  if (ntasks == 0) return;
  pool_run_with(static_cast<thread_pool_state*>(executor_context), ntasks, task, task_context, nullptr, nullptr);
}

void pool_run_beside(void* executor_context, size_t ntasks, executor_task task, void* task_context,
                     void (*caller_work)(void*) noexcept, void* caller_context) noexcept {
  if (ntasks == 0) {
    caller_work(caller_context);
    return;
  }
  pool_run_with(static_cast<thread_pool_state*>(executor_context), ntasks, task, task_context, caller_work,
                caller_context);
}

void state_destroy(thread_pool_state* s) noexcept {
  if (s->mutex_ready) pthread_mutex_destroy(&s->mutex);
  if (s->wake_ready) pthread_cond_destroy(&s->wake);
  if (s->finished_ready) pthread_cond_destroy(&s->finished);
  std::free(s->threads);
  s->~thread_pool_state();
  std::free(s);
}

// Stops and joins every started thread, then frees the state.
void state_release(thread_pool_state* s) noexcept {
  if (s->nthreads > 0) {
    s->stop.store(true, std::memory_order_seq_cst);
    pthread_mutex_lock(&s->mutex);
    pthread_mutex_unlock(&s->mutex);
    pthread_cond_broadcast(&s->wake);
    for (uint32_t i = 0; i < s->nthreads; ++i) pthread_join(s->threads[i].handle, nullptr);
    s->nthreads = 0;
  }
  state_destroy(s);
}

status pthread_error(int e, const char* what_io) noexcept {
  if (e == ENOMEM || e == EAGAIN) return make_error(errc::out_of_memory, TESSERA_MSG("thread_pool: no resources for a thread or lock"));
  return make_error(errc::io, what_io);
}

}  // namespace

thread_pool& thread_pool::operator=(thread_pool&& o) noexcept {
  if (this != &o) {
    thread_pool_release(*this);
    state_ = o.state_;
    o.state_ = nullptr;
  }
  return *this;
}

thread_pool::~thread_pool() { thread_pool_release(*this); }

status thread_pool_init(thread_pool& p, uint32_t workers) noexcept {
  thread_pool_release(p);
  if (workers == 0 || workers > kThreadPoolMaxWorkers)
    return make_error(errc::invalid_argument, TESSERA_MSG("thread_pool: workers must be in [1, kThreadPoolMaxWorkers]"));
  void* mem = nullptr;
  if (::posix_memalign(&mem, alignof(thread_pool_state), sizeof(thread_pool_state)) != 0)
    return make_error(errc::out_of_memory, TESSERA_MSG("thread_pool: no memory for the pool"));
  auto* s = new (mem) thread_pool_state;
  int e = pthread_mutex_init(&s->mutex, nullptr);
  if (e != 0) return state_destroy(s), pthread_error(e, TESSERA_MSG("thread_pool: pthread_mutex_init failed"));
  s->mutex_ready = true;
  e = pthread_cond_init(&s->wake, nullptr);
  if (e != 0) return state_destroy(s), pthread_error(e, TESSERA_MSG("thread_pool: pthread_cond_init failed"));
  s->wake_ready = true;
  e = pthread_cond_init(&s->finished, nullptr);
  if (e != 0) return state_destroy(s), pthread_error(e, TESSERA_MSG("thread_pool: pthread_cond_init failed"));
  s->finished_ready = true;

  const uint32_t nthreads = workers - 1;
  if (nthreads > 0) {
    s->threads = static_cast<thread_pool_thread*>(std::calloc(nthreads, sizeof(thread_pool_thread)));
    if (s->threads == nullptr) return state_destroy(s), make_error(errc::out_of_memory, TESSERA_MSG("thread_pool: no memory for the threads"));
    // The pool's threads never handle asynchronous signals: they inherit a fully blocked mask.
    sigset_t all, old;
    sigfillset(&all);
    const bool masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
    status st = ok_status();
    for (uint32_t i = 0; i < nthreads; ++i) {
      thread_pool_thread& t = s->threads[i];
      t.pool = s;
      t.worker = i + 1;
      e = pthread_create(&t.handle, nullptr, thread_main, &t);
      if (e != 0) {
        st = pthread_error(e, TESSERA_MSG("thread_pool: pthread_create failed"));
        break;
      }
      s->nthreads = i + 1;
    }
    if (masked) pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (!st.ok()) {
      state_release(s);
      return st;
    }
  }
  thread_pool_access::state(p) = s;
  return ok_status();
}

void thread_pool_release(thread_pool& p) noexcept {
  thread_pool_state*& s = thread_pool_access::state(p);
  if (s == nullptr) return;
  state_release(s);
  s = nullptr;
}

executor thread_pool_executor(const thread_pool& p) noexcept {
  thread_pool_state* s = thread_pool_access::state(p);
  if (s == nullptr) return executor_serial();
  executor e;
  e.run = pool_run;
  e.run_beside = pool_run_beside;
  e.context = s;
  e.workers = s->nthreads + 1;
  return e;
}

uint32_t thread_pool_workers(const thread_pool& p) noexcept {
  thread_pool_state* s = thread_pool_access::state(p);
  return s == nullptr ? 0 : s->nthreads + 1;
}

thread_pool_counts thread_pool_counts_get(const thread_pool& p) noexcept {
  thread_pool_counts c;
  const thread_pool_state* s = thread_pool_access::state(p);
  if (s == nullptr) return c;
  c.runs = s->runs.load(std::memory_order_relaxed);
  c.runs_beside = s->runs_beside.load(std::memory_order_relaxed);
  c.sleeps = s->sleeps.load(std::memory_order_relaxed);
  return c;
}

uint32_t cpu_count() noexcept {
#if defined(__linux__) && defined(CPU_COUNT)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<uint32_t>(n);
  }
#endif
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<uint32_t>(n) : 1u;
}

}  // namespace tessera
