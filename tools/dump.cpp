// tessera dump FILE [--slice A:B,C:D,...] [--format raw|text] [-o OUT]: the items of the array or of a slice,
// C order, as raw bytes or as text values by dtype.
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "cli.hpp"
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
enum class value_kind { hex, boolean, sint, uint, f2, f4, f8, c8, c16 };

value_kind value_kind_of(const dtype_info& di, int32_t itemsize) {
  if (!di.known || static_cast<int32_t>(di.itemsize) != itemsize) return value_kind::hex;
  switch (di.kind) {
    case 'b': return itemsize == 1 ? value_kind::boolean : value_kind::hex;
    case 'i': return itemsize <= 8 ? value_kind::sint : value_kind::hex;
    case 'u': return itemsize <= 8 ? value_kind::uint : value_kind::hex;
    case 'f': return itemsize == 2 ? value_kind::f2 : itemsize == 4 ? value_kind::f4 : itemsize == 8 ? value_kind::f8
                                                                                                   : value_kind::hex;
    case 'c': return itemsize == 8 ? value_kind::c8 : itemsize == 16 ? value_kind::c16 : value_kind::hex;
    default: return value_kind::hex;
  }
}

void print_value(FILE* out, value_kind k, const uint8_t* p, int32_t itemsize, bool big_endian) {
  switch (k) {
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

}  // namespace

int cmd_dump(int argc, char** argv) noexcept {
  const char* path = nullptr;
  const char* slice = "";
  const char* format = "raw";
  const char* out_path = nullptr;
  for (int i = 0; i < argc; ++i) {
    const char* v = nullptr;
    if (option_take(argc, argv, i, "--slice", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--slice needs a value (start:stop per dimension)");
      slice = v;
    } else if (option_take(argc, argv, i, "--format", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--format needs a value (raw or text)");
      if (std::strcmp(v, "raw") != 0 && std::strcmp(v, "text") != 0)
        return fail(kExitUsage, kCmd, "--format: '%s' is neither raw nor text", v);
      format = v;
    } else if (option_take(argc, argv, i, "-o", v) || option_take(argc, argv, i, "--output", v)) {
      if (!v || v[0] == '\0') return fail(kExitUsage, kCmd, "-o needs a file name");
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

  opened_array o;
  if (int rc = array_open_path(kCmd, path, o, executor_serial()); rc != 0) return rc;
  const array_layout& l = array_layout_get(o.a);
  int64_t start[kMaxDims] = {};
  int64_t stop[kMaxDims] = {};
  if (int rc = slice_parse(slice, l, start, stop); rc != 0) return rc;

  const int32_t itemsize = array_itemsize(o.a);
  uint64_t nitems = 1;
  for (int d = 0; d < l.ndim; ++d) {
    const uint64_t ext = static_cast<uint64_t>(stop[d] - start[d]);
    if (ext != 0 && nitems > SIZE_MAX / ext) return fail(kExitFailure, kCmd, "%s: the selection is too large", path);
    nitems *= ext;
  }
  if (nitems > SIZE_MAX / static_cast<uint64_t>(itemsize))
    return fail(kExitFailure, kCmd, "%s: the selection is too large", path);
  const size_t nbytes = static_cast<size_t>(nitems) * static_cast<size_t>(itemsize);
  owned_array<uint8_t> buf;
  if (nbytes > 0) {
    if (auto e = buf.allocate(tool_allocator(), nbytes); !e.ok()) return fail_error(kCmd, "the selection's buffer", e);
    if (auto e = array_slice_read(o.a, start, stop, bytes_mut(buf.data(), nbytes)); !e.ok())
      return fail_error(kCmd, path, e);
  }

  FILE* out = stdout;
  if (out_path != nullptr && std::strcmp(out_path, "-") != 0) {
    out = std::fopen(out_path, std::strcmp(format, "raw") == 0 ? "wb" : "w");
    if (out == nullptr) return fail(kExitFailure, kCmd, "-o: %s: %s", out_path, std::strerror(errno));
  }
  if (std::strcmp(format, "raw") == 0) {
    if (nbytes > 0) (void)std::fwrite(buf.data(), 1, nbytes, out);
  } else {
    const span<const char> dt = array_dtype(o.a);
    const dtype_info di = dtype_parse(dt);
    const value_kind k = value_kind_of(di, itemsize);
    // '<' and '>' say the order; '=' (and '|', where it matters at all) mean the host's.
    const bool big_endian = di.byte_order == '>' || (di.byte_order != '<' && !host_little_endian());
    // One line per row of the last dimension.
    const int64_t row = l.ndim == 0 ? 1 : stop[l.ndim - 1] - start[l.ndim - 1];
    for (uint64_t i = 0; i < nitems; ++i) {
      print_value(out, k, buf.data() + i * static_cast<uint64_t>(itemsize), itemsize, big_endian);
      std::fputc((static_cast<int64_t>(i % static_cast<uint64_t>(row)) == row - 1) ? '\n' : ' ', out);
    }
  }
  const bool bad = std::fflush(out) != 0 || std::ferror(out);
  if (out != stdout && std::fclose(out) != 0 && !bad)
    return fail(kExitFailure, kCmd, "-o: %s: closing failed: %s", out_path, std::strerror(errno));
  if (bad) return fail(kExitFailure, kCmd, "writing the output failed: %s", std::strerror(errno));
  return 0;
}

}  // namespace tessera::cli
