// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes msgpack_reader: skip() over every top-level object, against a walk with the typed reads (peek_type,
// read_int/uint, read_str/bin/ext, read_array/map, floats...), then a canonical re-encoding with msgpack_writer.
// Invariants: no crash, no out-of-bounds access, no UB; skip() and the typed walk agree on success, error code and
// position (their nesting limits are the same: kMsgpackMaxDepth open non-empty containers); every view returned
// lies inside the input; after an error the reader is inert (sticky error, position frozen, neutral values);
// the canonical re-encoding of what was read reads back to the same values and re-encodes to the same bytes;
// the writer never writes past its buffer and a buffer one byte short is refused. Then the exact forms a frame
// pins: the same values written in forms the input's hash picks among those that hold them (int8..uint64,
// fixint, array16/32, map16/32, str8/16/32, bin8/16/32, fixext16, write_raw) read back to the same values; a
// form too small for its value is refused (invalid_argument); and a script of typed and exact reads the hash
// picks walks the input: each read moves forward or fails for good, an exact read that succeeds agrees with the
// general one at the same position, every view lies inside the input.
#include <cstring>
#include <vector>

#include "tessera/msgpack.hpp"

#include "fuzz_common.hpp"

using namespace tessera;

namespace {

struct event {
  msgpack_type type = msgpack_type::none;
  bool negative = false;  // integers: the value is bits as int64 (negative) or as uint64
  uint64_t bits = 0;      // integers, float bits, container counts, ext type
  bytes_view bytes;       // str, bin, ext payloads
};

struct walk_result {
  bool ok = true;
  errc code = errc::ok;
  size_t position = 0;
  std::vector<event> events;
};

bool inside(bytes_view in, const void* p, size_t n) {
  if (n == 0) return true;
  const auto* b = static_cast<const uint8_t*>(p);
  return b >= in.data() && n <= in.size() && b <= in.data() + (in.size() - n);
}

// Reads every top-level object with the typed reads, depth limited as skip() is.
walk_result walk(bytes_view in) {
  walk_result w;
  msgpack_reader r(in);
  std::vector<uint64_t> pending;  // elements left in each open non-empty container
  while (r.ok() && r.remaining() > 0) {
    do {
      event e;
      e.type = r.peek_type();
      uint64_t children = 0;
      switch (e.type) {
        case msgpack_type::none:
          // The input ends inside a container (the reader holds no error: it is ok until a read fails).
          FUZZ_CHECK(r.remaining() == 0 && !pending.empty());
          r.fail(errc::truncated, "walk: the input ends before an object");
          break;
        case msgpack_type::invalid:
          // No typed read accepts 0xc1; state the error as skip() does.
          FUZZ_CHECK(r.peek_marker() == 0xc1);
          r.fail(errc::malformed, "walk: reserved marker");
          break;
        case msgpack_type::nil: r.read_nil(); break;
        case msgpack_type::boolean: e.bits = r.read_bool() ? 1 : 0; break;
        case msgpack_type::integer: {
          const int m = r.peek_marker();
          if (m <= 0x7f || (m >= 0xcc && m <= 0xcf)) {
            e.bits = r.read_uint();
          } else {
            const int64_t v = r.read_int();
            e.negative = v < 0;
            e.bits = static_cast<uint64_t>(v);
          }
          break;
        }
        case msgpack_type::float32: {
          const float f = r.read_float32();
          uint32_t b;
          std::memcpy(&b, &f, sizeof b);
          e.bits = b;
          break;
        }
        case msgpack_type::float64: {
          const double f = r.read_float64();
          std::memcpy(&e.bits, &f, sizeof f);
          break;
        }
        case msgpack_type::str: {
          const span<const char> s = r.read_str();
          e.bytes = bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
          break;
        }
        case msgpack_type::bin: e.bytes = r.read_bin(); break;
        case msgpack_type::ext: {
          const msgpack_ext x = r.read_ext();
          e.bits = static_cast<uint8_t>(x.type);
          e.bytes = x.data;
          break;
        }
        case msgpack_type::array: children = e.bits = r.read_array(); break;
        case msgpack_type::map: {
          e.bits = r.read_map();
          children = e.bits * 2;
          break;
        }
      }
      if (!r.ok()) break;
      FUZZ_CHECK(inside(in, e.bytes.data(), e.bytes.size()));
      w.events.push_back(e);
      if (children > 0) {
        if (pending.size() >= static_cast<size_t>(kMsgpackMaxDepth)) {
          r.fail(errc::unsupported, "walk: too deep");
          break;
        }
        pending.push_back(children);
        continue;
      }
      while (!pending.empty() && --pending.back() == 0) pending.pop_back();
    } while (!pending.empty());
  }
  w.ok = r.ok();
  w.code = r.err().code;
  w.position = r.position();
  FUZZ_CHECK(w.position <= in.size());
  if (!w.ok) {
    // Sticky: nothing moves and everything is neutral after an error.
    const size_t at = r.position();
    FUZZ_CHECK(r.peek_type() == msgpack_type::none);
    FUZZ_CHECK(r.peek_marker() == -1);
    FUZZ_CHECK(r.read_int() == 0);
    FUZZ_CHECK(r.read_array() == 0);
    FUZZ_CHECK(r.read_str().empty());
    FUZZ_CHECK(r.read_raw(0).empty());
    r.skip();
    r.fail(errc::io, "later");
    FUZZ_CHECK(r.position() == at);
    FUZZ_CHECK(r.err().code == w.code);
  }
  return w;
}

// Writes the events back in the smallest encodings.
void write_events(msgpack_writer& out, const std::vector<event>& events) {
  for (const event& e : events) {
    switch (e.type) {
      case msgpack_type::nil: out.write_nil(); break;
      case msgpack_type::boolean: out.write_bool(e.bits != 0); break;
      case msgpack_type::integer:
        if (e.negative) out.write_int(static_cast<int64_t>(e.bits));
        else out.write_uint(e.bits);
        break;
      case msgpack_type::float32: {
        const uint32_t b = static_cast<uint32_t>(e.bits);
        float f;
        std::memcpy(&f, &b, sizeof f);
        out.write_float32(f);
        break;
      }
      case msgpack_type::float64: {
        double f;
        std::memcpy(&f, &e.bits, sizeof f);
        out.write_float64(f);
        break;
      }
      case msgpack_type::str:
        out.write_str(span<const char>(reinterpret_cast<const char*>(e.bytes.data()), e.bytes.size()));
        break;
      case msgpack_type::bin: out.write_bin(e.bytes); break;
      case msgpack_type::ext: out.write_ext(static_cast<int8_t>(static_cast<uint8_t>(e.bits)), e.bytes); break;
      case msgpack_type::array: out.write_array(static_cast<uint32_t>(e.bits)); break;
      case msgpack_type::map: out.write_map(static_cast<uint32_t>(e.bits)); break;
      default: FUZZ_CHECK(false);
    }
  }
}

bool same_events(const std::vector<event>& a, const std::vector<event>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type != b[i].type || a[i].negative != b[i].negative || a[i].bits != b[i].bits) return false;
    if (a[i].bytes.size() != b[i].bytes.size()) return false;
    if (!a[i].bytes.empty() && std::memcmp(a[i].bytes.data(), b[i].bytes.data(), a[i].bytes.size()) != 0) {
      return false;
    }
  }
  return true;
}

// The events again, each in a form p picks among those that hold its value (or, now and then, one too small:
// refused). Returns false when a form refused its value (the writer then holds invalid_argument).
bool write_exact(msgpack_writer& out, const std::vector<event>& events, fuzz::params& p) {
  bool fits = true;
  for (const event& e : events) {
    const uint64_t pick = p.next();
    switch (e.type) {
      case msgpack_type::integer: {
        const int64_t v = static_cast<int64_t>(e.bits);
        if (e.negative) {
          if (pick % 5 == 0 && v >= -32) out.write_fixint(static_cast<int8_t>(v));
          else if (pick % 5 == 1 && v >= INT8_MIN) out.write_int8(static_cast<int8_t>(v));
          else if (pick % 5 == 2 && v >= INT16_MIN) out.write_int16(static_cast<int16_t>(v));
          else if (pick % 5 == 3 && v >= INT32_MIN) out.write_int32(static_cast<int32_t>(v));
          else out.write_int64(v);
        } else {
          const uint64_t u = e.bits;
          switch (pick % 9) {
            case 0: if (u <= 127) { out.write_fixint(static_cast<int8_t>(u)); break; } out.write_uint64(u); break;
            case 1: if (u <= UINT8_MAX) { out.write_uint8(static_cast<uint8_t>(u)); break; } out.write_uint64(u); break;
            case 2: if (u <= UINT16_MAX) { out.write_uint16(static_cast<uint16_t>(u)); break; } out.write_uint64(u); break;
            case 3: if (u <= UINT32_MAX) { out.write_uint32(static_cast<uint32_t>(u)); break; } out.write_uint64(u); break;
            case 4: if (u <= 127) { out.write_int8(static_cast<int8_t>(u)); break; } out.write_uint64(u); break;
            case 5: if (u <= INT16_MAX) { out.write_int16(static_cast<int16_t>(u)); break; } out.write_uint64(u); break;
            case 6: if (u <= INT32_MAX) { out.write_int32(static_cast<int32_t>(u)); break; } out.write_uint64(u); break;
            case 7: if (u <= INT64_MAX) { out.write_int64(static_cast<int64_t>(u)); break; } out.write_uint64(u); break;
            default: out.write_uint64(u); break;
          }
        }
        break;
      }
      case msgpack_type::array: {
        const uint32_t n = static_cast<uint32_t>(e.bits);
        if (pick % 4 == 0) fits = fits && n <= 15, out.write_fixarray(n);
        else if (pick % 4 == 1 && n <= UINT16_MAX) out.write_array16(static_cast<uint16_t>(n));
        else out.write_array32(n);
        break;
      }
      case msgpack_type::map: {
        const uint32_t n = static_cast<uint32_t>(e.bits);
        if (pick % 4 == 0) fits = fits && n <= 15, out.write_fixmap(n);
        else if (pick % 4 == 1 && n <= UINT16_MAX) out.write_map16(static_cast<uint16_t>(n));
        else out.write_map32(n);
        break;
      }
      case msgpack_type::str: {
        const span<const char> t(reinterpret_cast<const char*>(e.bytes.data()), e.bytes.size());
        const size_t n = t.size();
        if (pick % 4 == 0) fits = fits && n <= 31, out.write_fixstr(t);
        else if (pick % 4 == 1) fits = fits && n <= UINT8_MAX, out.write_str8(t);
        else if (pick % 4 == 2) fits = fits && n <= UINT16_MAX, out.write_str16(t);
        else out.write_str32(t);
        break;
      }
      case msgpack_type::bin: {
        const size_t n = e.bytes.size();
        if (pick % 3 == 0) fits = fits && n <= UINT8_MAX, out.write_bin8(e.bytes);
        else if (pick % 3 == 1) fits = fits && n <= UINT16_MAX, out.write_bin16(e.bytes);
        else out.write_bin32(e.bytes);
        break;
      }
      case msgpack_type::ext:
        if (pick % 2 == 0) {
          fits = fits && e.bytes.size() == 16;
          out.write_fixext16(static_cast<int8_t>(static_cast<uint8_t>(e.bits)), e.bytes);
        } else {
          out.write_ext(static_cast<int8_t>(static_cast<uint8_t>(e.bits)), e.bytes);
        }
        break;
      default: {
        // The others' canonical bytes, through write_raw.
        uint8_t tmp[16];
        msgpack_writer one(bytes_mut(tmp, sizeof tmp));
        write_events(one, std::vector<event>{e});
        FUZZ_CHECK(one.ok());
        out.write_raw(bytes_view(tmp, one.position()));
        break;
      }
    }
  }
  return fits;
}

// Typed and exact reads over the input as p picks them; each exact read that succeeds is checked against the
// general read at the same position.
void script_read(bytes_view in, fuzz::params& p) {
  msgpack_reader r(in);
  for (int step = 0; step < 48 && r.ok() && r.remaining() > 0; ++step) {
    const size_t at = r.position();
    msgpack_reader general(in.subspan(at));
    bool agree = true;
    switch (p.next() % 24) {
      case 0: { const int16_t v = r.read_int16_fixed(); if (r.ok()) agree = general.read_int() == v; break; }
      case 1: { const int32_t v = r.read_int32_fixed(); if (r.ok()) agree = general.read_int() == v; break; }
      case 2: { const int64_t v = r.read_int64_fixed(); if (r.ok()) agree = general.read_int() == v; break; }
      case 3: { const uint16_t v = r.read_uint16_fixed(); if (r.ok()) agree = general.read_uint() == v; break; }
      case 4: { const uint32_t v = r.read_uint32_fixed(); if (r.ok()) agree = general.read_uint() == v; break; }
      case 5: { const uint64_t v = r.read_uint64_fixed(); if (r.ok()) agree = general.read_uint() == v; break; }
      case 6: { const uint32_t v = r.read_fixarray(); if (r.ok()) agree = general.read_array() == v; break; }
      case 7: {  // read_map16 returns the count as written; read_map refuses one the bytes cannot hold
        const uint16_t v = r.read_map16();
        if (r.ok()) {
          const uint32_t g = general.read_map();
          agree = general.ok() ? g == v : general.err().code == errc::truncated && uint64_t{v} * 2 > in.size() - at - 3;
        }
        break;
      }
      case 8: {
        const span<const char> v = r.read_fixstr();
        FUZZ_CHECK(inside(in, v.data(), v.size()));
        if (r.ok()) agree = general.read_str().data() == v.data();
        break;
      }
      case 9: {
        const bytes_view v = r.read_bin32();
        FUZZ_CHECK(inside(in, v.data(), v.size()));
        if (r.ok()) agree = general.read_bin().data() == v.data();
        break;
      }
      case 10: {
        const msgpack_ext v = r.read_fixext16();
        FUZZ_CHECK(inside(in, v.data.data(), v.data.size()));
        if (r.ok()) agree = general.read_ext().data.data() == v.data.data();
        break;
      }
      case 11: { const int32_t v = r.read_int32(); if (r.ok()) agree = general.read_int() == v; break; }
      case 12: { const uint32_t v = r.read_uint32(); if (r.ok()) agree = general.read_uint() == v; break; }
      case 13: r.read_nil(); break;
      case 14: (void)r.read_bool(); break;
      case 15: (void)r.read_float32(); break;
      case 16: (void)r.read_float64(); break;
      case 17: (void)r.read_int(); break;
      case 18: (void)r.read_uint(); break;
      case 19: (void)r.read_array(); break;
      case 20: (void)r.read_map(); break;
      case 21: { const bytes_view v = r.read_raw(p.range(0, 9)); FUZZ_CHECK(inside(in, v.data(), v.size())); break; }
      case 22: { const bytes_view v = r.read_bin(); FUZZ_CHECK(inside(in, v.data(), v.size())); break; }
      default: r.skip(static_cast<int>(p.range(0, 4))); break;
    }
    FUZZ_CHECK(agree);
    FUZZ_CHECK(r.position() >= at && r.position() <= in.size());
    if (!r.ok()) {  // frozen from the failure on
      const size_t stop = r.position();
      (void)r.read_fixext16();
      (void)r.read_uint64_fixed();
      FUZZ_CHECK(r.position() == stop);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bytes_view in(data, size);

  // skip() over every top-level object.
  msgpack_reader s(in);
  size_t objects = 0;
  while (s.ok() && s.remaining() > 0) {
    const size_t before = s.position();
    s.skip();
    FUZZ_CHECK(s.position() <= size);
    if (s.ok()) FUZZ_CHECK(s.position() > before);
    ++objects;
  }
  // A limit below the default refuses no less.
  msgpack_reader shallow(in);
  shallow.skip(1);
  if (shallow.ok()) {
    msgpack_reader deep(in);
    deep.skip();
    FUZZ_CHECK(deep.ok() && deep.position() == shallow.position());
  }

  const walk_result w = walk(in);
  FUZZ_CHECK(w.ok == s.ok());
  FUZZ_CHECK(w.code == s.err().code);
  FUZZ_CHECK(w.position == s.position());
  (void)objects;
  fuzz::params p(data, size);
  script_read(in, p);
  if (!w.ok) return 0;

  // The exact forms: the same values, or a refusal when a form cannot hold its value.
  {
    fuzz::params again = p;  // the writing pass below makes the counting pass's picks
    msgpack_writer counter;
    const bool fits = write_exact(counter, w.events, p);
    if (!fits) {
      FUZZ_CHECK(!counter.ok() && counter.err().code == errc::invalid_argument);
    } else {
      FUZZ_CHECK(counter.ok());
      std::vector<uint8_t> exact(counter.position());
      msgpack_writer writer(bytes_mut(exact.data(), exact.size()));
      FUZZ_CHECK(write_exact(writer, w.events, again));
      FUZZ_CHECK(writer.ok() && writer.position() == exact.size());
      const walk_result we = walk(bytes_view(exact.data(), exact.size()));
      FUZZ_CHECK(we.ok && we.position == exact.size());
      FUZZ_CHECK(same_events(w.events, we.events));
    }
  }

  // Canonical re-encoding: count, write, and write into one byte less.
  msgpack_writer counter;
  write_events(counter, w.events);
  FUZZ_CHECK(counter.ok());
  const size_t n = counter.position();
  FUZZ_CHECK(n <= size);  // canonical forms are never longer (floats keep their width)
  fuzz::guarded_buffer buf(n);
  msgpack_writer writer(bytes_mut(buf.data(), buf.size()));
  write_events(writer, w.events);
  FUZZ_CHECK(writer.ok());
  FUZZ_CHECK(writer.position() == n);
  FUZZ_CHECK(buf.guards_intact());
  if (n > 0) {
    fuzz::guarded_buffer small(n - 1);
    msgpack_writer short_writer(bytes_mut(small.data(), small.size()));
    write_events(short_writer, w.events);
    FUZZ_CHECK(!short_writer.ok());
    FUZZ_CHECK(short_writer.err().code == errc::buffer_too_small);
    FUZZ_CHECK(short_writer.position() <= n - 1);
    FUZZ_CHECK(small.guards_intact());
  }

  // It reads back to the same values, and re-encodes to the same bytes.
  const walk_result w2 = walk(bytes_view(buf.data(), n));
  FUZZ_CHECK(w2.ok);
  FUZZ_CHECK(w2.position == n);
  FUZZ_CHECK(same_events(w.events, w2.events));
  fuzz::guarded_buffer buf2(n);
  msgpack_writer writer2(bytes_mut(buf2.data(), buf2.size()));
  write_events(writer2, w2.events);
  FUZZ_CHECK(writer2.ok() && writer2.position() == n);
  FUZZ_CHECK(std::memcmp(buf.data(), buf2.data(), n) == 0);
  return 0;
}
