// SPDX-License-Identifier: BSD-3-Clause
// Shared pieces of the `tessera` command-line tool: error reporting (one line on stderr, "tessera: CMD: what"),
// strict number and list parsing, and opening an array from a path (a cframe file or an sframe directory).
// Hosted code on the POSIX port, but in the port's style: no exceptions, every failure is a message and an exit
// status, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/array.hpp"
#include "tessera/port/posix_directory.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/thread_pool.hpp"

namespace tessera::cli {

struct flash_image;

inline constexpr int kExitFailure = 1;  // bad data, damage, I/O
inline constexpr int kExitUsage = 2;    // bad command line

// Prints "tessera: CMD: <formatted>" and a newline on stderr; returns `code`.
int fail(int code, const char* cmd, const char* fmt, ...) noexcept __attribute__((format(printf, 3, 4)));
// The same with a library error appended: "...: <message> (<errc name>)".
int fail_error(const char* cmd, const char* what, const error& e) noexcept;

// A whole decimal integer in [lo, hi] (no sign for lo >= 0, no spaces, nothing after it).
[[nodiscard]] bool parse_int(const char* text, int64_t lo, int64_t hi, int64_t& out) noexcept;
// A comma-separated list of at most `max` integers in [lo, hi]; "" is the empty list. On failure, `what`
// (at least 160 bytes) holds why.
[[nodiscard]] bool parse_int_list(const char* text, int64_t lo, int64_t hi, int max, int64_t* out, int& n,
                                  char* what, size_t what_size) noexcept;

// Command-line walking: argv[i] is "--name VALUE" or "--name=VALUE". Returns true when argv[i] is the option
// `name`; value points at its value (nullptr when missing: the caller reports it) and i moves past it.
[[nodiscard]] bool option_take(int argc, char** argv, int& i, const char* name, const char*& value) noexcept;

// An array opened read-only from a path. Not movable (the array points at the storage inside).
struct opened_array {
  opened_array() noexcept = default;
  opened_array(const opened_array&) = delete;
  opened_array& operator=(const opened_array&) = delete;
  ~opened_array();

  bool sparse = false;
  posix_file file{};
  posix_directory dir{};
  storage st{};
  storage_directory sd{};
  flash_image* flash = nullptr;  // --flash-log: the image's mapping and log (freed after the array)
  array a;
};
// Opens `path` (a directory: a sparse frame; else a contiguous frame file). Reports failures itself (returns
// the exit status, 0 on success).
// Where the frame starts in a file that `--offset N` names (info, dump, verify and convert: a frame inside a
// larger image, as c-blosc2's b2nd_open_offset reads it); 0 by default.
extern uint64_t g_read_offset;
[[nodiscard]] int array_open_path(const char* cmd, const char* path, opened_array& o, const executor& exec) noexcept;

// Whether the host stores integers little-endian.
[[nodiscard]] bool host_little_endian() noexcept;

// Allocations of the tool: the POSIX allocator, counted.
[[nodiscard]] const allocator& tool_allocator() noexcept;
// The most bytes the tool's allocator held at once so far: the tool's own memory figure.
[[nodiscard]] size_t tool_peak_allocated() noexcept;
// With TESSERA_MEMORY_REPORT=PATH in the environment, writes "peak_allocated_bytes N" to PATH (tests read it).
void tool_memory_report() noexcept;

int cmd_info(int argc, char** argv) noexcept;
int cmd_dump(int argc, char** argv) noexcept;
int cmd_create(int argc, char** argv) noexcept;
int cmd_verify(int argc, char** argv) noexcept;
int cmd_convert(int argc, char** argv) noexcept;
int cmd_compact(int argc, char** argv) noexcept;

}  // namespace tessera::cli
