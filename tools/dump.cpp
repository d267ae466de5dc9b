// SPDX-License-Identifier: BSD-3-Clause
// tessera dump FILE [--slice A:B,C:D,...] [--format raw|text|npy] [-o OUT|-]: the items of the array or of a
// slice, C order, as raw bytes, text values by dtype, or a NumPy .npy file (by default text to a terminal, raw
// bytes to a file or a pipe). Streamed: one slab (about 16 MiB,
// whole blocks' rows) is decoded at a time, its blocks on the thread pool, and written before the next.
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include <unistd.h>

#include "cli.hpp"
#include "npy.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "tessera/dtype.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kCmd = "dump";

// Parses "start:stop" per dimension ("" bounds: the whole extent; a single "i": i:i+1). Fewer parts than
// dimensions leave the rest whole. Reports failures itself.
int slice_parse(const char* text, const array_layout& l, int64_t* start, int64_t* stop) {
  for (int d = 0; d < l.ndim; ++d) {
    start[d] = 0;
    stop[d] = l.shape[d];
  }
  if (text[0] == '\0') return 0;
  if (l.ndim == 0) return fail(kExitUsage, kCmd, "--slice: the array is a scalar (0 dimensions): no slice applies");
  const char* p = text;
  for (int d = 0;; ++d) {
    const char* comma = std::strchr(p, ',');
    const size_t len = comma ? static_cast<size_t>(comma - p) : std::strlen(p);
    if (d == l.ndim)
      return fail(kExitUsage, kCmd, "--slice: %d or more dimensions given, the array has %d", d + 1, l.ndim);
    char part[64];
    if (len >= sizeof part) return fail(kExitUsage, kCmd, "--slice: dimension %d: '%.*s...' is too long", d, 20, p);
    std::memcpy(part, p, len);
    part[len] = '\0';
    char* colon = std::strchr(part, ':');
    int64_t a = 0;
    int64_t b = l.shape[d];
    const int64_t big = std::numeric_limits<int64_t>::max();
    if (colon == nullptr) {  // a single index
      if (!parse_int(part, 0, big - 1, a))
        return fail(kExitUsage, kCmd, "--slice: dimension %d: '%s' is not start:stop nor an index", d, part);
      b = a + 1;
      if (a >= l.shape[d])
        return fail(kExitUsage, kCmd, "--slice: dimension %d: index %" PRId64 " past the shape %" PRId64, d, a,
                    l.shape[d]);
    } else {
      *colon = '\0';
      const char* sa = part;
      const char* sb = colon + 1;
      if (std::strchr(sb, ':') != nullptr)
        return fail(kExitUsage, kCmd, "--slice: dimension %d: '%.*s' has more than one ':' (steps are not supported)",
                    d, static_cast<int>(len), p);
      if (sa[0] != '\0' && !parse_int(sa, 0, big, a))
        return fail(kExitUsage, kCmd, "--slice: dimension %d: start '%s' is not a non-negative number", d, sa);
      if (sb[0] != '\0' && !parse_int(sb, 0, big, b))
        return fail(kExitUsage, kCmd, "--slice: dimension %d: stop '%s' is not a non-negative number", d, sb);
      if (a > l.shape[d])
        return fail(kExitUsage, kCmd, "--slice: dimension %d: start %" PRId64 " past the shape %" PRId64, d, a,
                    l.shape[d]);
      if (b > l.shape[d])
        return fail(kExitUsage, kCmd, "--slice: dimension %d: stop %" PRId64 " past the shape %" PRId64, d, b,
                    l.shape[d]);
      if (a > b)
        return fail(kExitUsage, kCmd, "--slice: dimension %d: start %" PRId64 " after stop %" PRId64, d, a, b);
    }
    start[d] = a;
    stop[d] = b;
    if (!comma) return 0;
    p = comma + 1;
  }
}

// The unsigned integer of `size` bytes at p, stored little-endian or (big_endian) big-endian.
uint64_t load_uint(const uint8_t* p, int size, bool big_endian) {
  uint64_t v = 0;
  for (int i = 0; i < size; ++i) {
    const int src = big_endian ? size - 1 - i : i;  // the byte of significance i
    v |= static_cast<uint64_t>(p[src]) << (8 * i);
  }
  return v;
}

double half_to_double(uint16_t h) {
  const int sign = (h >> 15) & 1;
  const int exp = (h >> 10) & 0x1f;
  const int man = h & 0x3ff;
  double v;
  if (exp == 0) v = static_cast<double>(man) / 1024.0 / 16384.0;  // subnormal: man * 2^-24
  else if (exp == 31) v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else {
    v = 1.0 + static_cast<double>(man) / 1024.0;
    int e = exp - 15;
    for (; e > 0; --e) v *= 2;
    for (; e < 0; ++e) v /= 2;
  }
  return sign ? -v : v;
}

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
double bits_to_double(uint64_t b) {
  double f;
  std::memcpy(&f, &b, 8);
  return f;
}

// How a dtype prints.
enum class value_kind { hex, boolean, sint, uint, f2, f4, f8, c8, c16, bytes, unicode, record };

value_kind value_kind_of(const dtype_info& di, int32_t itemsize) {
  if (!di.known || static_cast<int32_t>(di.itemsize) != itemsize) return value_kind::hex;
  switch (di.kind) {
    case 'S': return value_kind::bytes;
    case 'U': return value_kind::unicode;
    case 'b': return itemsize == 1 ? value_kind::boolean : value_kind::hex;
    case 'i': return itemsize <= 8 ? value_kind::sint : value_kind::hex;
    case 'u': return itemsize <= 8 ? value_kind::uint : value_kind::hex;
    case 'f': return itemsize == 2 ? value_kind::f2 : itemsize == 4 ? value_kind::f4 : itemsize == 8 ? value_kind::f8
                                                                                                   : value_kind::hex;
    case 'c': return itemsize == 8 ? value_kind::c8 : itemsize == 16 ? value_kind::c16 : value_kind::hex;
    default: return value_kind::hex;
  }
}

// A string as NumPy shows it: trailing NULs dropped, quotes and backslashes escaped, other bytes that are not
// printable ASCII as \xNN. S items are bytes (b'...'); U items are UCS-4 code points, written as UTF-8.
void print_bytes(FILE* out, const uint8_t* p, int32_t itemsize) {
  int32_t n = itemsize;
  while (n > 0 && p[n - 1] == 0) --n;
  std::fputs("b'", out);
  for (int32_t i = 0; i < n; ++i) {
    const uint8_t c = p[i];
    if (c == '\'' || c == '\\') std::fprintf(out, "\\%c", c);
    else if (c >= 0x20 && c < 0x7f) std::fputc(c, out);
    else std::fprintf(out, "\\x%02x", c);
  }
  std::fputc('\'', out);
}

void print_unicode(FILE* out, const uint8_t* p, int32_t itemsize, bool big_endian) {
  int32_t n = itemsize / 4;
  while (n > 0 && load_uint(p + 4 * (n - 1), 4, big_endian) == 0) --n;
  std::fputc('\'', out);
  for (int32_t i = 0; i < n; ++i) {
    const uint32_t c = static_cast<uint32_t>(load_uint(p + 4 * i, 4, big_endian));
    if (c == '\'' || c == '\\') std::fprintf(out, "\\%c", static_cast<int>(c));
    else if (c >= 0x20 && c < 0x7f) std::fputc(static_cast<int>(c), out);
    else if (c < 0x20 || c == 0x7f || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff) std::fprintf(out, "\\u%04x", c);
    else if (c < 0x800) std::fprintf(out, "%c%c", 0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) std::fprintf(out, "%c%c%c", 0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else
      std::fprintf(out, "%c%c%c%c", 0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f),
                   0x80 | (c & 0x3f));
  }
  std::fputc('\'', out);
}

// A record dtype as NumPy's descr list writes it, "[('a', '<i4'), ('b', '<f8')]": fields of simple dtypes, in
// order, filling the item exactly. Nested records, sub-arrays and titles are not taken (their items print as hex).
constexpr int kMaxFields = 64;
struct record_field {
  value_kind kind = value_kind::hex;
  int32_t offset = 0;
  int32_t size = 0;
  bool big_endian = false;
};
struct record_layout {
  int n = 0;
  record_field f[kMaxFields];
};

// Reads a quoted string at text[i] (either quote); returns the index after it, or -1.
int64_t quoted_skip(span<const char> text, int64_t i, int64_t& begin, int64_t& end) {
  if (i >= static_cast<int64_t>(text.size()) || (text[i] != '\'' && text[i] != '"')) return -1;
  const char q = text[i];
  begin = i + 1;
  for (int64_t j = begin; j < static_cast<int64_t>(text.size()); ++j)
    if (text[j] == q) {
      end = j;
      return j + 1;
    }
  return -1;
}

bool record_layout_parse(span<const char> text, int32_t itemsize, record_layout& r) {
  const int64_t n = static_cast<int64_t>(text.size());
  auto skip_spaces = [&](int64_t i) {
    while (i < n && text[i] == ' ') ++i;
    return i;
  };
  int64_t i = skip_spaces(0);
  if (i >= n || text[i] != '[') return false;
  i = skip_spaces(i + 1);
  int32_t offset = 0;
  r.n = 0;
  while (i < n && text[i] == '(') {
    int64_t b = 0, e = 0;
    i = quoted_skip(text, skip_spaces(i + 1), b, e);  // the name
    if (i < 0) return false;
    i = skip_spaces(i);
    if (i >= n || text[i] != ',') return false;
    i = quoted_skip(text, skip_spaces(i + 1), b, e);  // the field's dtype
    if (i < 0) return false;
    i = skip_spaces(i);
    if (i >= n || text[i] != ')' || r.n == kMaxFields) return false;  // a third element: a sub-array shape
    const dtype_info di = dtype_parse(span<const char>(text.data() + b, static_cast<size_t>(e - b)));
    if (!di.known || di.itemsize > static_cast<uint32_t>(itemsize - offset)) return false;
    record_field& f = r.f[r.n++];
    f.size = static_cast<int32_t>(di.itemsize);
    f.kind = value_kind_of(di, f.size);
    f.offset = offset;
    f.big_endian = di.byte_order == '>' || (di.byte_order != '<' && !host_little_endian());
    offset += f.size;
    i = skip_spaces(i + 1);
    if (i < n && text[i] == ',') i = skip_spaces(i + 1);
  }
  return r.n > 0 && i < n && text[i] == ']' && skip_spaces(i + 1) == n && offset == itemsize;
}

void print_value(FILE* out, value_kind k, const uint8_t* p, int32_t itemsize, bool big_endian,
                 const record_layout* record = nullptr) {
  switch (k) {
    case value_kind::bytes: print_bytes(out, p, itemsize); return;
    case value_kind::unicode: print_unicode(out, p, itemsize, big_endian); return;
    case value_kind::record:
      std::fputc('(', out);
      // Only a record dtype's own values have this kind, and dump passes their layout; a field is never a record
      // (record_layout_parse refuses nested ones).
      for (int i = 0; i < record->n; ++i) {  // NOLINT(clang-analyzer-core.NullDereference)
        const record_field& f = record->f[i];
        if (i > 0) std::fputs(", ", out);
        print_value(out, f.kind, p + f.offset, f.size, f.big_endian);
      }
      std::fputc(')', out);
      return;
    case value_kind::boolean: std::fputs(p[0] ? "true" : "false", out); return;
    case value_kind::sint: {
      uint64_t u = load_uint(p, itemsize, big_endian);
      const int bits = itemsize * 8;
      int64_t v;
      if (bits < 64 && (u >> (bits - 1)) & 1) u |= ~uint64_t{0} << bits;  // sign-extend
      std::memcpy(&v, &u, 8);
      std::fprintf(out, "%" PRId64, v);
      return;
    }
    case value_kind::uint: std::fprintf(out, "%" PRIu64, load_uint(p, itemsize, big_endian)); return;
    case value_kind::f2: std::fprintf(out, "%.5g", half_to_double(static_cast<uint16_t>(load_uint(p, 2, big_endian)))); return;
    case value_kind::f4:
      std::fprintf(out, "%.9g", static_cast<double>(bits_to_float(static_cast<uint32_t>(load_uint(p, 4, big_endian)))));
      return;
    case value_kind::f8: std::fprintf(out, "%.17g", bits_to_double(load_uint(p, 8, big_endian))); return;
    case value_kind::c8: {
      const double re = static_cast<double>(bits_to_float(static_cast<uint32_t>(load_uint(p, 4, big_endian))));
      const double im = static_cast<double>(bits_to_float(static_cast<uint32_t>(load_uint(p + 4, 4, big_endian))));
      std::fprintf(out, "(%.9g%+.9gj)", re, im);
      return;
    }
    case value_kind::c16: {
      const double re = bits_to_double(load_uint(p, 8, big_endian));
      const double im = bits_to_double(load_uint(p + 8, 8, big_endian));
      std::fprintf(out, "(%.17g%+.17gj)", re, im);
      return;
    }
    case value_kind::hex:
      std::fputs("0x", out);
      for (int32_t i = 0; i < itemsize; ++i) std::fprintf(out, "%02x", p[i]);  // the stored bytes, in order
      return;
  }
}

// The selection's slabs for output: boxes contiguous in the output's C order (an index for dimensions
// 0..level-1, a run along `level`, the selection's whole extent after it) whose runs end on block boundaries, so
// each block is decoded once when level is 0 (the usual case: a run of blocks' rows of the array).
struct dump_plan {
  int ndim = 0;
  int level = 0;
  int64_t start[kMaxDims] = {};
  int64_t stop[kMaxDims] = {};
  int64_t chunk = 1;  // chunk and block extents along `level`
  int64_t block = 1;
  int64_t inner = 0;  // bytes per step along `level`
  size_t budget = 0;
  size_t max_bytes = 0;
  // Iteration.
  int64_t idx[kMaxDims] = {};
  int64_t pos = 0;
  bool done = false;
};

constexpr size_t kSlabBudget = size_t{16} << 20;  // bytes a slab aims at
constexpr size_t kUnitLimit = size_t{32} << 20;   // a run of one block's rows larger than this goes a level down

int64_t next_boundary(const dump_plan& p, int64_t x) {
  const int64_t c0 = x / p.chunk * p.chunk;
  int64_t b = c0 + ((x - c0) / p.block + 1) * p.block;
  if (b > c0 + p.chunk) b = c0 + p.chunk;
  return b < p.stop[p.level] ? b : p.stop[p.level];
}

void dump_plan_make(dump_plan& p, const array_layout& l, int64_t itemsize, const int64_t* start, const int64_t* stop) {
  p.ndim = l.ndim;
  for (int d = 0; d < l.ndim; ++d) {
    p.start[d] = start[d];
    p.stop[d] = stop[d];
  }
  p.budget = kSlabBudget;
  if (l.ndim == 0) {
    p.level = -1;
    p.max_bytes = static_cast<size_t>(itemsize);
    return;
  }
  p.level = l.ndim - 1;
  for (int k = 0; k < l.ndim; ++k) {
    double unit = static_cast<double>(itemsize) * static_cast<double>(l.blockshape[k]);
    for (int d = k + 1; d < l.ndim; ++d) unit *= static_cast<double>(stop[d] - start[d]);
    if (unit <= static_cast<double>(kUnitLimit)) {
      p.level = k;
      break;
    }
  }
  p.chunk = l.chunkshape[p.level];
  p.block = l.blockshape[p.level];
  p.inner = itemsize;
  for (int d = p.level + 1; d < l.ndim; ++d) p.inner *= stop[d] - start[d];
  const int64_t unit = p.inner * p.block;
  p.max_bytes = static_cast<size_t>(unit) > p.budget ? static_cast<size_t>(unit) : p.budget;
  const int64_t whole = p.inner * (stop[p.level] - start[p.level]);
  if (static_cast<int64_t>(p.max_bytes) > whole) p.max_bytes = static_cast<size_t>(whole);
  for (int d = 0; d < p.level; ++d) p.idx[d] = start[d];
  p.pos = start[p.level];
  for (int d = 0; d < l.ndim; ++d) p.done |= start[d] == stop[d];
}

// The next slab's box; false when there is none.
bool dump_plan_next(dump_plan& p, int64_t* start, int64_t* stop) {
  if (p.done) return false;
  if (p.level < 0) {
    p.done = true;
    return true;
  }
  for (int d = 0; d < p.level; ++d) {
    start[d] = p.idx[d];
    stop[d] = p.idx[d] + 1;
  }
  int64_t q = next_boundary(p, p.pos);
  while (q < p.stop[p.level] && (next_boundary(p, q) - p.pos) * p.inner <= static_cast<int64_t>(p.budget))
    q = next_boundary(p, q);
  start[p.level] = p.pos;
  stop[p.level] = q;
  for (int d = p.level + 1; d < p.ndim; ++d) {
    start[d] = p.start[d];
    stop[d] = p.stop[d];
  }
  p.pos = q;
  if (p.pos == p.stop[p.level]) {
    p.pos = p.start[p.level];
    int d = p.level - 1;
    for (; d >= 0; --d) {
      if (++p.idx[d] < p.stop[d]) break;
      p.idx[d] = p.start[d];
    }
    if (d < 0) p.done = true;
  }
  return true;
}

}  // namespace

int cmd_dump(int argc, char** argv) noexcept {
  const char* path = nullptr;
  const char* slice = "";
  const char* format = nullptr;  // unset: text to a terminal, raw bytes elsewhere
  const char* out_path = nullptr;
  run_options ro;
  for (int i = 0; i < argc; ++i) {
    const char* v = nullptr;
    if (int rc = run_option_take(kCmd, argc, argv, i, ro); rc >= 0) {
      if (rc != 0) return rc;
    } else if (option_take(argc, argv, i, "--slice", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--slice needs a value (start:stop per dimension)");
      slice = v;
    } else if (option_take(argc, argv, i, "--format", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--format needs a value (raw, text or npy)");
      if (std::strcmp(v, "raw") != 0 && std::strcmp(v, "text") != 0 && std::strcmp(v, "npy") != 0)
        return fail(kExitUsage, kCmd, "--format: '%s' is neither raw nor text nor npy", v);
      format = v;
    } else if (option_take(argc, argv, i, "-o", v) || option_take(argc, argv, i, "--output", v)) {
      if (!v || v[0] == '\0') return fail(kExitUsage, kCmd, "-o needs a file name (or - for stdout)");
      out_path = v;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return fail(kExitUsage, kCmd, "unknown option '%s'", argv[i]);
    } else if (path == nullptr) {
      path = argv[i];
    } else {
      return fail(kExitUsage, kCmd, "unexpected argument '%s' (one FILE only)", argv[i]);
    }
  }
  if (path == nullptr) return fail(kExitUsage, kCmd, "no FILE given");
  const bool to_stdout = out_path == nullptr || std::strcmp(out_path, "-") == 0;
  if (format == nullptr) format = to_stdout && ::isatty(STDOUT_FILENO) ? "text" : "raw";

  run_workers rw;
  if (int rc = run_workers_start(kCmd, ro, rw); rc != 0) return rc;
  opened_array o;
  if (int rc = array_open_path(kCmd, path, o, rw.exec); rc != 0) return rc;
  const array_layout& l = array_layout_get(o.a);
  int64_t start[kMaxDims] = {};
  int64_t stop[kMaxDims] = {};
  if (int rc = slice_parse(slice, l, start, stop); rc != 0) return rc;

  const int32_t itemsize = array_itemsize(o.a);
  uint64_t nitems = 1;
  int64_t ext[kMaxDims] = {};
  for (int d = 0; d < l.ndim; ++d) {
    ext[d] = stop[d] - start[d];
    const uint64_t e = static_cast<uint64_t>(ext[d]);
    if (e != 0 && nitems > (uint64_t{1} << 62) / e) return fail(kExitFailure, kCmd, "%s: the selection is too large", path);
    nitems *= e;
  }
  if (nitems > (uint64_t{1} << 62) / static_cast<uint64_t>(itemsize))
    return fail(kExitFailure, kCmd, "%s: the selection is too large", path);
  const uint64_t nbytes = nitems * static_cast<uint64_t>(itemsize);

  dump_plan plan;
  dump_plan_make(plan, l, itemsize, start, stop);
  owned_array<uint8_t> buf;
  if (nbytes > 0)
    if (auto e = buf.allocate(tool_allocator(), plan.max_bytes); !e.ok()) return fail_error(kCmd, "the slab buffer", e);

  const bool raw = std::strcmp(format, "text") != 0;
  FILE* out = stdout;
  if (!to_stdout) {
    out = std::fopen(out_path, raw ? "wb" : "w");
    if (out == nullptr) return fail(kExitFailure, kCmd, "-o: %s: %s", out_path, std::strerror(errno));
  }
  struct closer {
    FILE* f;
    ~closer() {
      if (f != nullptr && f != stdout) std::fclose(f);
    }
  } close_out{out};
  if (std::strcmp(format, "npy") == 0) {
    char header[8192];
    const size_t n = npy_header_format(array_dtype(o.a), itemsize, l.ndim, ext, header, sizeof header);
    if (n == 0) return fail(kExitFailure, kCmd, "%s: the dtype is too long for a .npy header", path);
    (void)std::fwrite(header, 1, n, out);
  }
  const span<const char> dt = array_dtype(o.a);
  const dtype_info di = dtype_parse(dt);
  value_kind k = value_kind_of(di, itemsize);
  record_layout record;
  if (!di.known && record_layout_parse(dt, itemsize, record)) k = value_kind::record;
  // '<' and '>' say the order; '=' (and '|', where it matters at all) mean the host's.
  const bool big_endian = di.byte_order == '>' || (di.byte_order != '<' && !host_little_endian());
  const int64_t row = l.ndim == 0 ? 1 : ext[l.ndim - 1];  // text: one line per row of the last dimension
  uint64_t item = 0;

  progress pr;
  progress_start(pr, kCmd, nbytes, ro.quiet);
  uint64_t done = 0;
  int64_t s0[kMaxDims] = {};
  int64_t s1[kMaxDims] = {};
  while (nbytes > 0 && dump_plan_next(plan, s0, s1)) {
    size_t bytes = static_cast<size_t>(itemsize);
    for (int d = 0; d < l.ndim; ++d) bytes *= static_cast<size_t>(s1[d] - s0[d]);
    if (auto e = array_slice_read(o.a, s0, s1, bytes_mut(buf.data(), bytes)); !e.ok()) {
      progress_end(pr);
      return fail_error(kCmd, path, e);
    }
    if (raw) {
      (void)std::fwrite(buf.data(), 1, bytes, out);
    } else {
      const size_t n = bytes / static_cast<size_t>(itemsize);
      for (size_t i = 0; i < n; ++i, ++item) {
        print_value(out, k, buf.data() + i * static_cast<size_t>(itemsize), itemsize, big_endian, &record);
        std::fputc((static_cast<int64_t>(item % static_cast<uint64_t>(row)) == row - 1) ? '\n' : ' ', out);
      }
    }
    if (std::ferror(out)) break;
    done += bytes;
    progress_update(pr, done);
  }
  progress_end(pr);
  const bool bad = std::fflush(out) != 0 || std::ferror(out);
  if (out != stdout) {
    close_out.f = nullptr;
    if (std::fclose(out) != 0 && !bad)
      return fail(kExitFailure, kCmd, "-o: %s: closing failed: %s", out_path, std::strerror(errno));
  }
  if (bad) return fail(kExitFailure, kCmd, "writing the output failed: %s", std::strerror(errno));
  return 0;
}

}  // namespace tessera::cli
