// SPDX-License-Identifier: BSD-3-Clause
#include "npy.hpp"

#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cli.hpp"
#include "tessera/dtype.hpp"

namespace tessera::cli {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;
constexpr uint32_t kMaxHeader = 1u << 20;  // numpy's own limit is 10000 bytes unless told otherwise

// ---- A small parser of Python literals: strings, integers, True/False/None, tuples, lists, dicts ----------

struct pnode {
  char type = 0;  // s i b n t l d
  size_t begin = 0, end = 0;  // s: the contents between the quotes; others: the whole literal
  int64_t ival = 0;
  int first = -1, next = -1, count = 0;
};

struct pparser {
  const char* s = nullptr;
  size_t n = 0;
  size_t pos = 0;
  pnode nodes[2048];
  int nnodes = 0;
  int depth = 0;
};

void skip_space(pparser& p) {
  while (p.pos < p.n && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r')) ++p.pos;
}

int parse_value(pparser& p);

int new_node(pparser& p, char type) {
  if (p.nnodes == static_cast<int>(sizeof p.nodes / sizeof p.nodes[0])) return -1;
  p.nodes[p.nnodes] = pnode{};
  p.nodes[p.nnodes].type = type;
  p.nodes[p.nnodes].begin = p.pos;
  return p.nnodes++;
}

int parse_seq(pparser& p, char type, char close) {
  const int id = new_node(p, type);
  if (id < 0) return -1;
  ++p.pos;
  int last = -1;
  for (;;) {
    skip_space(p);
    if (p.pos < p.n && p.s[p.pos] == close) {
      ++p.pos;
      break;
    }
    const int v = parse_value(p);
    if (v < 0) return -1;
    if (last < 0) p.nodes[id].first = v;
    else p.nodes[last].next = v;
    last = v;
    ++p.nodes[id].count;
    skip_space(p);
    if (type == 'd') {  // key: value
      if (p.pos >= p.n || p.s[p.pos] != ':') return -1;
      ++p.pos;
      skip_space(p);
      const int w = parse_value(p);
      if (w < 0) return -1;
      p.nodes[last].next = w;
      last = w;
      skip_space(p);
    }
    if (p.pos < p.n && p.s[p.pos] == ',') {
      ++p.pos;
      continue;
    }
    if (p.pos < p.n && p.s[p.pos] == close) {
      ++p.pos;
      break;
    }
    return -1;
  }
  p.nodes[id].end = p.pos;
  return id;
}

int parse_value(pparser& p) {
  skip_space(p);
  if (p.pos >= p.n || ++p.depth > 32) return -1;
  const char c = p.s[p.pos];
  int id = -1;
  if (c == '\'' || c == '"') {
    id = new_node(p, 's');
    if (id < 0) return -1;
    size_t i = p.pos + 1;
    while (i < p.n && p.s[i] != c) i += p.s[i] == '\\' ? 2 : 1;
    if (i >= p.n) return -1;
    p.nodes[id].begin = p.pos + 1;
    p.nodes[id].end = i;
    p.pos = i + 1;
  } else if (c == '(' || c == '[' || c == '{') {
    id = parse_seq(p, c == '(' ? 't' : c == '[' ? 'l' : 'd', c == '(' ? ')' : c == '[' ? ']' : '}');
  } else if ((c >= '0' && c <= '9') || c == '-') {
    id = new_node(p, 'i');
    if (id < 0) return -1;
    // Digits read within the header's bounds (it is not NUL-terminated, so no strtoll).
    const bool negative = c == '-';
    size_t i = p.pos + (negative ? 1 : 0);
    const size_t first = i;
    uint64_t mag = 0;
    while (i < p.n && p.s[i] >= '0' && p.s[i] <= '9') {
      if (mag > (static_cast<uint64_t>(INT64_MAX) - 9) / 10) return -1;  // far beyond any shape or offset
      mag = mag * 10 + static_cast<uint64_t>(p.s[i] - '0');
      ++i;
    }
    if (i == first) return -1;
    const long long v = negative ? -static_cast<long long>(mag) : static_cast<long long>(mag);
    p.pos = i;
    if (p.pos < p.n && p.s[p.pos] == 'L') ++p.pos;  // Python 2 longs in old files
    p.nodes[id].ival = v;
    p.nodes[id].end = p.pos;
  } else {
    const char* words[] = {"True", "False", "None"};
    for (int w = 0; w < 3; ++w) {
      const size_t len = std::strlen(words[w]);
      if (p.n - p.pos >= len && std::memcmp(p.s + p.pos, words[w], len) == 0) {
        id = new_node(p, w == 2 ? 'n' : 'b');
        if (id < 0) return -1;
        p.nodes[id].ival = w == 0;
        p.pos += len;
        p.nodes[id].end = p.pos;
        break;
      }
    }
  }
  --p.depth;
  return id;
}

bool node_is_string(const pparser& p, int id, const char* text) {
  const pnode& nd = p.nodes[id];
  return nd.type == 's' && nd.end - nd.begin == std::strlen(text) && std::memcmp(p.s + nd.begin, text, nd.end - nd.begin) == 0;
}

// A string node's contents with the escapes NumPy's repr could produce (\\ \' \") undone.
size_t string_decode(const pparser& p, int id, char* out, size_t cap) {
  const pnode& nd = p.nodes[id];
  size_t n = 0;
  for (size_t i = nd.begin; i < nd.end; ++i) {
    char ch = p.s[i];
    if (ch == '\\' && i + 1 < nd.end) ch = p.s[++i];
    if (n + 1 >= cap) return 0;
    out[n++] = ch;
  }
  out[n] = '\0';
  return n;
}

uint64_t descr_size(const pparser& p, int id);

// (name, descr) or (name, descr, shape); the name may be (title, name).
uint64_t field_size(const pparser& p, int id) {
  const pnode& f = p.nodes[id];
  if (f.type != 't' || f.count < 2 || f.count > 3) return 0;
  const int name = f.first;
  const int d = p.nodes[name].next;
  if (p.nodes[name].type != 's' && p.nodes[name].type != 't') return 0;
  uint64_t size = descr_size(p, d);
  if (size == 0 && !(p.nodes[d].type == 'l' && p.nodes[d].count == 0)) return 0;
  if (f.count == 3) {
    const int sh = p.nodes[d].next;
    if (p.nodes[sh].type == 'i') {
      if (p.nodes[sh].ival < 0) return 0;
      size *= static_cast<uint64_t>(p.nodes[sh].ival);
    } else if (p.nodes[sh].type == 't') {
      for (int e = p.nodes[sh].first; e >= 0; e = p.nodes[e].next) {
        if (p.nodes[e].type != 'i' || p.nodes[e].ival < 0) return 0;
        size *= static_cast<uint64_t>(p.nodes[e].ival);
      }
    } else {
      return 0;
    }
  }
  return size > (uint64_t{1} << 31) ? 0 : size;
}

uint64_t descr_size(const pparser& p, int id) {
  const pnode& nd = p.nodes[id];
  if (nd.type == 's') {
    char text[256];
    const size_t len = string_decode(p, id, text, sizeof text);
    if (len == 0) return 0;
    const dtype_info di = dtype_parse(span<const char>(text, len));
    return di.known ? di.itemsize : 0;
  }
  if (nd.type != 'l') return 0;
  uint64_t total = 0;
  for (int f = nd.first; f >= 0; f = p.nodes[f].next) {
    const uint64_t s = field_size(p, f);
    const pnode& fn = p.nodes[f];
    if (s == 0) {  // a zero-size field is legal (e.g. ('x', '<f4', (0,))) but nothing else may fail
      if (fn.type != 't' || fn.count < 2) return 0;
      const int d = p.nodes[fn.first].next;
      if (descr_size(p, d) == 0) return 0;
    }
    total += s;
  }
  return total;
}

bool read_all(int fd, uint8_t* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

uint32_t npy_descr_itemsize(span<const char> descr) noexcept {
  static thread_local pparser p;
  p = pparser{};
  p.s = descr.data();
  p.n = descr.size();
  const int id = parse_value(p);
  skip_space(p);
  if (id < 0 || p.pos != p.n) return 0;
  return static_cast<uint32_t>(descr_size(p, id));
}

int npy_header_read(const char* cmd, const char* name, int fd, npy_header& h) noexcept {
  uint8_t pre[12];
  if (!read_all(fd, pre, 8)) return fail(kExitFailure, cmd, "%s: not a .npy file (shorter than its magic)", name);
  if (std::memcmp(pre, kMagic, kMagicLen) != 0) return fail(kExitFailure, cmd, "%s: not a .npy file (no \\x93NUMPY magic)", name);
  h.major = pre[6];
  h.minor = pre[7];
  if (!((h.major == 1 || h.major == 2 || h.major == 3) && h.minor == 0))
    return fail(kExitFailure, cmd, "%s: .npy format version %d.%d (1.0, 2.0 and 3.0 are supported)", name, h.major,
                h.minor);
  const size_t lenlen = h.major == 1 ? 2 : 4;
  if (!read_all(fd, pre + 8, lenlen)) return fail(kExitFailure, cmd, "%s: truncated .npy header", name);
  uint32_t hlen = pre[8] | (uint32_t{pre[9]} << 8);
  if (lenlen == 4) hlen |= (uint32_t{pre[10]} << 16) | (uint32_t{pre[11]} << 24);
  if (hlen > kMaxHeader) return fail(kExitFailure, cmd, "%s: .npy header of %u bytes (at most %u)", name, hlen, kMaxHeader);
  h.data_offset = 8 + lenlen + hlen;
  char* raw = static_cast<char*>(std::malloc(hlen + 1));
  char* text = static_cast<char*>(std::malloc(2 * static_cast<size_t>(hlen) + 1));
  if (raw == nullptr || text == nullptr) {
    std::free(raw);
    std::free(text);
    return fail(kExitFailure, cmd, "out of memory");
  }
  struct freer {
    char* a;
    char* b;
    ~freer() {
      std::free(a);
      std::free(b);
    }
  } f{raw, text};
  if (!read_all(fd, reinterpret_cast<uint8_t*>(raw), hlen)) return fail(kExitFailure, cmd, "%s: truncated .npy header", name);
  // latin-1 (1.0, 2.0) to UTF-8; 3.0 is UTF-8 already.
  size_t n = 0;
  for (uint32_t i = 0; i < hlen; ++i) {
    const uint8_t c = static_cast<uint8_t>(raw[i]);
    if (h.major < 3 && c >= 0x80) {
      text[n++] = static_cast<char>(0xC0 | (c >> 6));
      text[n++] = static_cast<char>(0x80 | (c & 0x3F));
    } else {
      text[n++] = static_cast<char>(c);
    }
  }
  static pparser p;  // large: not on the stack
  p = pparser{};
  p.s = text;
  p.n = n;
  const int dict = parse_value(p);
  if (dict < 0 || p.nodes[dict].type != 'd')
    return fail(kExitFailure, cmd, "%s: the .npy header is not a dict literal", name);
  int descr = -1, fortran = -1, shape = -1;
  for (int k = p.nodes[dict].first; k >= 0; k = p.nodes[p.nodes[k].next].next) {
    const int v = p.nodes[k].next;
    if (node_is_string(p, k, "descr")) descr = v;
    else if (node_is_string(p, k, "fortran_order")) fortran = v;
    else if (node_is_string(p, k, "shape")) shape = v;
    else return fail(kExitFailure, cmd, "%s: the .npy header has an unknown key", name);
  }
  if (descr < 0 || fortran < 0 || shape < 0)
    return fail(kExitFailure, cmd, "%s: the .npy header lacks descr, fortran_order or shape", name);
  if (p.nodes[fortran].type != 'b') return fail(kExitFailure, cmd, "%s: .npy fortran_order is not True or False", name);
  h.fortran_order = p.nodes[fortran].ival != 0;
  if (p.nodes[shape].type != 't') return fail(kExitFailure, cmd, "%s: .npy shape is not a tuple", name);
  if (p.nodes[shape].count > kMaxDims)
    return fail(kExitFailure, cmd, "%s: .npy array of %d dimensions (B2ND holds at most %d)", name,
                p.nodes[shape].count, kMaxDims);
  h.ndim = 0;
  for (int e = p.nodes[shape].first; e >= 0; e = p.nodes[e].next) {
    if (p.nodes[e].type != 'i' || p.nodes[e].ival < 0)
      return fail(kExitFailure, cmd, "%s: .npy shape holds a value that is not a size", name);
    h.shape[h.ndim++] = p.nodes[e].ival;
  }
  const pnode& d = p.nodes[descr];
  if (d.type == 's') {
    h.descr_len = string_decode(p, descr, h.descr, sizeof h.descr);
  } else if (d.type == 'l') {
    h.descr_len = d.end - d.begin;
    if (h.descr_len >= sizeof h.descr) h.descr_len = 0;
    else std::memcpy(h.descr, p.s + d.begin, h.descr_len);
  } else {
    return fail(kExitFailure, cmd, "%s: .npy descr is neither a dtype string nor a list", name);
  }
  if (h.descr_len == 0) return fail(kExitFailure, cmd, "%s: .npy descr is empty or too long", name);
  h.descr[h.descr_len] = '\0';
  if (h.fortran_order)
    return fail(kExitFailure, cmd,
                "%s: the .npy array is in Fortran order (fortran_order: True); B2ND is C order: save it with "
                "numpy.ascontiguousarray first",
                name);
  const uint64_t size = descr_size(p, descr);
  if (size == 0 || size > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    return fail(kExitFailure, cmd, "%s: .npy dtype %.200s cannot be stored as plain bytes (objects are not supported)",
                name, h.descr);
  h.itemsize = static_cast<uint32_t>(size);
  return 0;
}

size_t npy_header_format(span<const char> dtype, int32_t itemsize, int ndim, const int64_t* shape, char* out,
                         size_t cap) noexcept {
  // The dict; room for the prefix (12 bytes at most) is left at the front.
  const size_t kPre = 12;
  if (cap < kPre + 128) return 0;
  char* d = out + kPre;
  const size_t dcap = cap - kPre;
  size_t n = 0;
  auto put = [&](const char* s, size_t len) {
    if (n + len < dcap) std::memcpy(d + n, s, len);
    n += len;
  };
  auto puts = [&](const char* s) { put(s, std::strlen(s)); };
  puts("{'descr': ");
  bool ascii = true;
  for (char c : dtype) ascii &= static_cast<uint8_t>(c) < 0x80;
  const bool list = dtype.size() > 0 && dtype[0] == '[';
  const dtype_info di = dtype_parse(dtype);
  if (list && npy_descr_itemsize(dtype) == static_cast<uint32_t>(itemsize)) {
    put(dtype.data(), dtype.size());
  } else if (di.known && static_cast<int32_t>(di.itemsize) == itemsize) {
    puts("'");
    put(dtype.data(), dtype.size());
    puts("'");
  } else {  // not a dtype NumPy reads back with this size: plain bytes
    char v[24];
    std::snprintf(v, sizeof v, "'|V%d'", itemsize);
    puts(v);
    ascii = true;
  }
  puts(", 'fortran_order': False, 'shape': (");
  for (int i = 0; i < ndim; ++i) {
    char v[32];
    std::snprintf(v, sizeof v, "%s%" PRId64, i ? ", " : "", shape[i]);
    puts(v);
  }
  puts(ndim == 1 ? ",), }" : "), }");
  const int major = !ascii ? 3 : (n + 1 + 10 + kAlign > 65535 ? 2 : 1);
  const size_t pre = major == 1 ? 10 : 12;
  const size_t total = (pre + n + 1 + kAlign - 1) / kAlign * kAlign;
  if (total > cap) return 0;
  const size_t hlen = total - pre;
  std::memmove(out + pre, d, n);
  std::memset(out + pre + n, ' ', hlen - n - 1);
  out[total - 1] = '\n';
  std::memcpy(out, kMagic, kMagicLen);
  out[6] = static_cast<char>(major);
  out[7] = 0;
  for (size_t i = 0; i < pre - 8; ++i) out[8 + i] = static_cast<char>((hlen >> (8 * i)) & 0xff);
  return total;
}

}  // namespace tessera::cli
