// SPDX-License-Identifier: BSD-3-Clause
#include "cli.hpp"
#include "flash_image.hpp"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tessera/port/posix_allocator.hpp"

namespace tessera::cli {

// NOLINTNEXTLINE(cert-dcl50-cpp): printf-style, checked by the format attribute of its declaration (cli.hpp)
int fail(int code, const char* cmd, const char* fmt, ...) noexcept {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  // One line: a newline inside (from a file name) would break the promise.
  for (char* p = line; *p; ++p)
    if (*p == '\n' || *p == '\r') *p = ' ';
  if (cmd != nullptr && cmd[0] != '\0') std::fprintf(stderr, "tessera: %s: %s\n", cmd, line);
  else std::fprintf(stderr, "tessera: %s\n", line);
  return code;
}

int fail_error(const char* cmd, const char* what, const error& e) noexcept {
  return fail(kExitFailure, cmd, "%s: %s (%s)", what, e.message, errc_name(e.code));
}

bool parse_int(const char* text, int64_t lo, int64_t hi, int64_t& out) noexcept {
  if (text == nullptr || text[0] == '\0') return false;
  // strtoll accepts leading spaces and a '+': the tool does not.
  if (!(text[0] == '-' || (text[0] >= '0' && text[0] <= '9'))) return false;
  if (text[0] == '-' && !(text[1] >= '0' && text[1] <= '9')) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  if (v < lo || v > hi) return false;
  out = static_cast<int64_t>(v);
  return true;
}

bool parse_int_list(const char* text, int64_t lo, int64_t hi, int max, int64_t* out, int& n, char* what,
                    size_t what_size) noexcept {
  n = 0;
  if (text[0] == '\0') return true;
  const char* p = text;
  for (;;) {
    const char* comma = std::strchr(p, ',');
    const size_t len = comma ? static_cast<size_t>(comma - p) : std::strlen(p);
    if (n == max) {
      std::snprintf(what, what_size, "more than %d values", max);
      return false;
    }
    char item[32];
    int64_t v = 0;
    if (len == 0 || len >= sizeof item) {
      std::snprintf(what, what_size, "value %d: '%.*s' is not a number", n, static_cast<int>(len < 40 ? len : 40), p);
      return false;
    }
    std::memcpy(item, p, len);
    item[len] = '\0';
    if (!parse_int(item, lo, hi, v)) {
      std::snprintf(what, what_size, "value %d: '%s' is not a number in [%lld, %lld]", n, item,
                    static_cast<long long>(lo), static_cast<long long>(hi));
      return false;
    }
    out[n++] = v;
    if (!comma) return true;
    p = comma + 1;
  }
}

bool option_take(int argc, char** argv, int& i, const char* name, const char*& value) noexcept {
  const char* arg = argv[i];
  const size_t len = std::strlen(name);
  if (std::strncmp(arg, name, len) != 0) return false;
  if (arg[len] == '=') {
    value = arg + len + 1;
    return true;
  }
  if (arg[len] != '\0') return false;
  if (i + 1 < argc) {
    value = argv[i + 1];
    ++i;
  } else {
    value = nullptr;
  }
  return true;
}

opened_array::~opened_array() {
  (void)array_close(a);
  flash_image_free(flash);
  if (file.fd >= 0) (void)posix_file_close(file);
  if (dir.fd >= 0) (void)posix_directory_close(dir);
}

uint64_t g_read_offset = 0;

int array_open_path(const char* cmd, const char* path, opened_array& o, const executor& exec) noexcept {
  if (g_flash.set) return flash_array_open(cmd, path, o, exec);
  struct stat sb;
  if (::stat(path, &sb) != 0) return fail(kExitFailure, cmd, "%s: %s", path, std::strerror(errno));
  array_open_options options;
  options.exec = exec;
  options.frame.base_offset = g_read_offset;
  if (S_ISDIR(sb.st_mode)) {
    if (g_read_offset != 0) return fail(kExitUsage, cmd, "%s: --offset applies to a file, not a sparse frame's directory", path);
    o.sparse = true;
    auto d = posix_directory_open(path, false);
    if (!d.ok()) return fail_error(cmd, path, d.err());
    o.dir = *d;
    o.sd = posix_directory_interface(o.dir);
    if (auto e = array_open_sparse(o.a, o.sd, tool_allocator(), options); !e.ok()) return fail_error(cmd, path, e);
    return 0;
  }
  auto f = posix_file_open(path, posix_open::read);
  if (!f.ok()) return fail_error(cmd, path, f.err());
  o.file = *f;
  o.st = posix_file_storage(o.file);
  if (auto e = array_open(o.a, o.st, tool_allocator(), options); !e.ok()) return fail_error(cmd, path, e);
  return 0;
}

bool host_little_endian() noexcept {
  const uint16_t one = 1;
  uint8_t b = 0;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

namespace {

// The tool's allocations counted, so its memory is a figure of its own (not RSS, which sanitizers, the C library
// and the kernel move). Atomic because nothing here needs to trust that only one thread allocates.
struct memory_counter {
  allocator base = posix_allocator();
  std::atomic<size_t> live{0};
  std::atomic<size_t> peak{0};

  void add(size_t n) noexcept {
    const size_t now = live.fetch_add(n, std::memory_order_relaxed) + n;
    size_t seen = peak.load(std::memory_order_relaxed);
    while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
  void sub(size_t n) noexcept { live.fetch_sub(n, std::memory_order_relaxed); }
};

memory_counter& counter() noexcept {
  static memory_counter c;
  return c;
}

void* counted_allocate(void* ctx, size_t size, size_t alignment) {
  auto& c = *static_cast<memory_counter*>(ctx);
  void* p = c.base.allocate(c.base.context, size, alignment);
  if (p != nullptr) c.add(size);
  return p;
}

void counted_deallocate(void* ctx, void* block, size_t size, size_t alignment) {
  auto& c = *static_cast<memory_counter*>(ctx);
  c.base.deallocate(c.base.context, block, size, alignment);
  c.sub(size);
}

void* counted_reallocate(void* ctx, void* block, size_t old_size, size_t new_size, size_t alignment) {
  auto& c = *static_cast<memory_counter*>(ctx);
  // Counted as if both blocks lived at once: an upper bound of what a moving realloc holds.
  c.add(new_size);
  void* p = c.base.reallocate(c.base.context, block, old_size, new_size, alignment);
  c.sub(p != nullptr ? old_size : new_size);
  return p;
}

}  // namespace

const allocator& tool_allocator() noexcept {
  static const allocator a{counted_allocate, counted_deallocate, &counter(), counted_reallocate};
  return a;
}

size_t tool_peak_allocated() noexcept { return counter().peak.load(std::memory_order_relaxed); }

void tool_memory_report() noexcept {
  const char* path = std::getenv("TESSERA_MEMORY_REPORT");
  if (path == nullptr || path[0] == '\0') return;
  if (FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "peak_allocated_bytes %zu\n", tool_peak_allocated());
    std::fclose(f);
  }
}

}  // namespace tessera::cli
