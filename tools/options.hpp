// SPDX-License-Identifier: BSD-3-Clause
// Options shared by the commands that write arrays (create, convert): compression and partition
// (--codec --codec-meta --clevel --filters --split --chunks --blocks), and by every command that decodes or encodes
// (--threads, default the online CPUs; --quiet, no progress line).
#pragma once

#include <cstdint>

#include "tessera/array.hpp"
#include "tessera/port/thread_pool.hpp"

namespace tessera::cli {

struct write_options {
  const char* chunks = nullptr;  // as given; applied by shapes_apply once ndim is known
  const char* blocks = nullptr;
  const char* codec_meta = nullptr;  // --codec-meta as given; applied by codec_finish once the codec is known
  bool codec_set = false, clevel_set = false, filters_set = false, split_set = false, dict_set = false;
};

struct run_options {
  int64_t threads = 0;  // 0: the online CPUs
  bool quiet = false;
};

/// When argv[i] is one of the write options, applies it to p / o and returns 0 (or the exit status of a bad
/// value); -1 when it is not one of them.
[[nodiscard]] int write_option_take(const char* cmd, int argc, char** argv, int& i, array_params& p,
                                    write_options& o) noexcept;
/// Applies --codec-meta to p.compcode_meta and checks what the codec of --codec needs (its meta's range; ZFP:
/// float32 or float64 items, 1 to 4 dimensions, block edges of at least 4, no shuffle, and no filters unless
/// --filters gives some), once p has its dtype, shape and partition. Returns 0 or the exit status of a refusal.
[[nodiscard]] int codec_finish(const char* cmd, const write_options& o, array_params& p) noexcept;
/// The same for --threads and --quiet.
[[nodiscard]] int run_option_take(const char* cmd, int argc, char** argv, int& i, run_options& o) noexcept;
/// The worker count: --threads, or the online CPUs.
[[nodiscard]] uint32_t run_threads(const run_options& o) noexcept;
/// The executor for `threads` workers: serial for one, else `pool` started with that many. Reports a failure
/// itself (returns the exit status, 0 on success).
[[nodiscard]] int run_executor(const char* cmd, uint32_t threads, thread_pool& pool, executor& exec) noexcept;
/// The two above in one: the workers of a command that runs as many as --threads asks (create, convert, dump).
struct run_workers {
  uint32_t threads = 1;
  thread_pool pool;
  executor exec{};
};
[[nodiscard]] int run_workers_start(const char* cmd, const run_options& o, run_workers& w) noexcept;
/// Parses --chunks and --blocks (those given) for p.ndim dimensions into p.
[[nodiscard]] int shapes_apply(const char* cmd, const write_options& o, array_params& p) noexcept;
/// Sets bytedelta's meta (the itemsize) once p.itemsize is known.
void filters_finish(array_params& p) noexcept;

}  // namespace tessera::cli
