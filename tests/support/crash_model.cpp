// SPDX-License-Identifier: BSD-3-Clause
// The page-cache crash model (crash_model.hpp).
#include "crash_model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tessera/frame.hpp"

#include "test_allocators.hpp"

namespace crash_model {

using tessera::bytes_mut;
using tessera::bytes_view;
using tessera::errc;
using tessera::make_error;
using tessera::ok_status;
using tessera::status;

namespace {

constexpr size_t kMaxViolations = 256;
constexpr uint64_t kMaxSize = uint64_t{1} << 30;  // a model of small frames: past 1 GiB a write is refused
constexpr size_t kNone = static_cast<size_t>(-1);

std::string range_text(uint64_t a, uint64_t b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

// Removes [a, b) from every range of v.
void ranges_subtract(std::vector<extent>& v, uint64_t a, uint64_t b) {
  std::vector<extent> out;
  out.reserve(v.size() + 1);
  for (const extent& e : v) {
    if (e.end <= a || e.begin >= b) {
      out.push_back(e);
      continue;
    }
    if (e.begin < a) out.push_back(extent{e.begin, a, e.what});
    if (e.end > b) out.push_back(extent{b, e.end, e.what});
  }
  v.swap(out);
}

status image_read(void* c, uint64_t offset, bytes_mut dst) noexcept {
  const bytes& b = *static_cast<const bytes*>(c);
  if (offset > b.size() || dst.size() > b.size() - offset)
    return make_error(errc::truncated, "crash model: read past the image's end");
  if (dst.size() > 0) std::memcpy(dst.data(), b.data() + offset, dst.size());
  return ok_status();
}
status image_size(void* c, uint64_t* out) noexcept {
  *out = static_cast<const bytes*>(c)->size();
  return ok_status();
}
bytes_view image_view(void* c) noexcept {
  const bytes& b = *static_cast<const bytes*>(c);
  return bytes_view(b.data(), b.size());
}

}  // namespace

const char* call_kind_name(call_kind k) noexcept {
  switch (k) {
    case call_kind::read: return "read";
    case call_kind::write: return "write";
    case call_kind::size: return "size";
    case call_kind::truncate: return "truncate";
    case call_kind::sync: return "sync";
  }
  return "?";
}

uint64_t bytes_hash(const uint8_t* p, size_t n, uint64_t seed) noexcept {
  uint64_t h = 0xcbf29ce484222325ull ^ (static_cast<uint64_t>(n) * 0x9E3779B97F4A7C15ull) ^ (seed * 0xD6E8FEB86659FD93ull);
  if (seed != 0) h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
  // Eight bytes a step (the images are tens of KiB and hashed often, at -O0).
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h ^= w;
    h *= 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

tessera::storage image_storage(const bytes* b) noexcept {
  tessera::storage st;
  st.read = image_read;
  st.size = image_size;
  st.view = image_view;
  st.context = const_cast<bytes*>(b);
  return st;
}

// Where a header's content (fixed fields and metalayers) ends, parsed from its bytes (the layout every writer
// uses: fixarray 3, idx size, map16 of name -> offset, array16 of bin32 contents): a padded header's bytes
// between that end and header_len are no part of the frame (a writer may reuse them). header_len when the
// section does not parse.
uint64_t header_content_end(const bytes& image, uint64_t base, uint64_t header_len) {
  auto at = [&](uint64_t i) -> int { return base + i < image.size() && i < header_len ? image[base + i] : -1; };
  auto be = [&](uint64_t i, int n) -> int64_t {
    int64_t v = 0;
    for (int k = 0; k < n; ++k) {
      const int b = at(i + k);
      if (b < 0) return -1;
      v = v << 8 | b;
    }
    return v;
  };
  uint64_t p = 87;
  if (at(p) != 0x93 || at(p + 1) != 0xcd || at(p + 4) != 0xde) return header_len;
  const int64_t n = be(p + 5, 2);
  if (n < 0) return header_len;
  p += 7;
  uint64_t end = 0;
  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < n; ++i) {
    const int name = at(p);
    if (name < 0xa0 || name > 0xbf) return header_len;
    p += 1 + (name & 0x1f);
    if (at(p) != 0xd2) return header_len;
    offsets.push_back(be(p + 1, 4));
    p += 5;
  }
  if (at(p) != 0xdc) return header_len;
  end = p + 3;
  for (int64_t off : offsets) {
    if (off < 0 || at(off) != 0xc6) return header_len;
    const int64_t len = be(off + 1, 4);
    if (len < 0) return header_len;
    end = std::max(end, static_cast<uint64_t>(off) + 5 + static_cast<uint64_t>(len));
  }
  return std::min(end, header_len);
}

frame_extents frame_extents_of(const bytes& image, uint64_t base) {
  frame_extents fe;
  fe.base = base;
  const tessera::storage st = image_storage(&image);
  tessera::frame f;
  tessera::frame_open_options o;
  o.base_offset = base;
  const status s = tessera::frame_open(f, st, tessera::test::system_allocator(), o);
  if (!s.ok()) {
    fe.error = s.message;
    return fe;
  }
  const tessera::frame_info* info = tessera::frame_info_get(f);
  if (info == nullptr || info->kind != tessera::frame_kind::contiguous) {
    fe.error = "not a contiguous frame";
    return fe;
  }
  fe.header_len = header_content_end(image, base, info->header_len);  // a padded header's pad is free
  fe.frame_len = info->frame_len;
  fe.nchunks = info->nchunks;
  fe.extents.push_back(extent{base, base + fe.header_len, "header"});
  for (int64_t i = 0; i < info->nchunks; ++i) {
    auto r = tessera::frame_chunk_locate(f, i);
    if (!r.ok()) {
      fe.error = "chunk " + std::to_string(i) + ": " + r.err().message;
      fe.extents.clear();
      return fe;
    }
    if (r->special != tessera::chunk_special::none) continue;
    const uint64_t at = base + info->header_len + static_cast<uint64_t>(r->offset);
    fe.extents.push_back(extent{at, at + static_cast<uint64_t>(r->cbytes), "chunk " + std::to_string(i)});
  }
  // Index and trailer: after the chunks section; a frame without chunks has its trailer right after the header
  // (the reader takes its cbytes as 0 then).
  const uint64_t tail = base + info->header_len + static_cast<uint64_t>(info->cbytes);
  fe.extents.push_back(extent{tail, base + info->frame_len, info->nchunks > 0 ? "index and trailer" : "trailer"});
  fe.valid = true;
  return fe;
}

// ---- The storage ------------------------------------------------------------------------------------------

page_cache::page_cache(bytes durable) : durable_(std::move(durable)) { visible_ = durable_; }

tessera::storage page_cache::storage() noexcept {
  tessera::storage st;
  st.read = cb_read;
  st.write = cb_write;
  st.size = cb_size;
  st.truncate = cb_truncate;
  st.sync = cb_sync;
  st.context = this;
  return st;
}

bool page_cache::tick(call_kind kind, uint64_t a, uint64_t b) {
  if (paused) return true;
  const uint64_t n = ++calls_;
  current_call_ = n;
  if (on_call) on_call(n, kind);
  bool fail = false;
  if (faults.fail_from != 0 && n >= faults.fail_from) {
    fail = true;
    crashed_ = true;
  }
  for (uint64_t c : faults.fail_calls) fail = fail || c == n;
  if (kind == call_kind::sync) {
    ++syncs_;
    for (uint64_t c : faults.fail_syncs) fail = fail || c == syncs_;
  }
  if (fail) ++failed_;
  if (trace)
    std::fprintf(stderr, "crash model: call %llu %s [%llu, %llu)%s%s\n", static_cast<unsigned long long>(n),
                 call_kind_name(kind), static_cast<unsigned long long>(a), static_cast<unsigned long long>(b),
                 kind == call_kind::sync ? (" sync " + std::to_string(syncs_)).c_str() : "", fail ? " FAILS" : "");
  return !fail;
}

status page_cache::cb_read(void* c, uint64_t offset, bytes_mut dst) noexcept {
  auto* m = static_cast<page_cache*>(c);
  if (!m->tick(call_kind::read, offset, offset + dst.size())) return make_error(errc::io, "crash model: injected read failure");
  if (offset > m->visible_.size() || dst.size() > m->visible_.size() - offset)
    return make_error(errc::truncated, "crash model: read past the end");
  if (dst.size() > 0) std::memcpy(dst.data(), m->visible_.data() + offset, dst.size());
  return ok_status();
}

status page_cache::cb_write(void* c, uint64_t offset, bytes_view src) noexcept {
  auto* m = static_cast<page_cache*>(c);
  const bool ok = m->tick(call_kind::write, offset, offset + src.size());
  if (offset > kMaxSize || src.size() > kMaxSize - offset) return make_error(errc::no_space, "crash model: write past 1 GiB");
  // Checked even when it fails: the writer issued it (and a real write may fail half done).
  if (!m->paused && m->checks_) m->check_write(offset, src);
  if (!ok) return make_error(errc::io, "crash model: injected write failure");
  if (offset + src.size() > m->capacity) return make_error(errc::no_space, "crash model: the storage is full");
  pending_op op;
  op.offset = offset;
  op.data.assign(src.data(), src.data() + src.size());
  op.size_before = m->visible_.size();
  op.call = m->current_call_;
  const uint64_t end = offset + src.size();
  if (end > m->visible_.size()) m->visible_.resize(static_cast<size_t>(end), 0);
  if (!src.empty()) std::memcpy(m->visible_.data() + offset, src.data(), src.size());
  op.size_after = m->visible_.size();
  m->pending_.push_back(std::move(op));
  ++m->version_;
  return ok_status();
}

status page_cache::cb_size(void* c, uint64_t* out) noexcept {
  auto* m = static_cast<page_cache*>(c);
  if (!m->tick(call_kind::size)) return make_error(errc::io, "crash model: injected size failure");
  *out = m->visible_.size();
  return ok_status();
}

status page_cache::cb_truncate(void* c, uint64_t size) noexcept {
  auto* m = static_cast<page_cache*>(c);
  const bool ok = m->tick(call_kind::truncate, size, size);
  if (size > kMaxSize) return make_error(errc::no_space, "crash model: truncate past 1 GiB");
  if (!m->paused && m->checks_) m->check_truncate(size);
  if (!ok) return make_error(errc::io, "crash model: injected truncate failure");
  pending_op op;
  op.is_truncate = true;
  op.size = size;
  op.size_before = m->visible_.size();
  op.call = m->current_call_;
  m->visible_.resize(static_cast<size_t>(size), 0);
  op.size_after = m->visible_.size();
  m->pending_.push_back(std::move(op));
  ++m->version_;
  return ok_status();
}

status page_cache::cb_sync(void* c) noexcept {
  auto* m = static_cast<page_cache*>(c);
  if (!m->tick(call_kind::sync)) {
    m->sync_failed();
    return make_error(errc::io, "crash model: injected sync failure");
  }
  m->sync_ok();
  return ok_status();
}

void page_cache::sync_ok() {
  if (pending_.empty() && durable_.size() == visible_.size()) return;
  for (const pending_op& op : pending_) {
    if (op.is_truncate) {
      durable_.resize(static_cast<size_t>(op.size), 0);
      continue;
    }
    const uint64_t end = op.offset + op.data.size();
    if (end > durable_.size()) durable_.resize(static_cast<size_t>(end), 0);
    if (!op.data.empty()) std::memcpy(durable_.data() + op.offset, op.data.data(), op.data.size());
    ranges_subtract(dropped_, op.offset, end);
  }
  // The file's size is the inode's: a successful sync makes the visible one durable (bytes a failed sync
  // dropped read as zeros there).
  durable_.resize(visible_.size(), 0);
  pending_.clear();
  durable_changed();
  if (trace && checks_) {
    const frame_extents& d = durable_frame();
    std::string text = d.valid ? "" : " not a frame: " + d.error;
    for (const extent& e : d.extents) text += " " + e.what + " " + range_text(e.begin, e.end) + ";";
    std::fprintf(stderr, "crash model: durable now (%zu bytes):%s\n", durable_.size(), text.c_str());
  }
}

void page_cache::sync_failed() {
  // Linux after a failed fsync: the dirty pages are marked clean. Reads still see them; the disk never will.
  for (const pending_op& op : pending_)
    if (!op.is_truncate && !op.data.empty())
      dropped_.push_back(extent{op.offset, op.offset + op.data.size(),
                                "written at call " + std::to_string(op.call) + ", dropped by a failed sync"});
  pending_.clear();
  ++failed_syncs_;
  ++version_;
}

void page_cache::durable_changed() noexcept {
  durable_parsed_ = false;
  ++version_;
}

void page_cache::restart() {
  visible_ = durable_;
  pending_.clear();
  dropped_.clear();
  ++version_;
}

void page_cache::restart_with(bytes image) {
  durable_ = std::move(image);
  visible_ = durable_;
  pending_.clear();
  dropped_.clear();
  durable_changed();
}

// ---- Crash images ------------------------------------------------------------------------------------------

template <class Fn>
void page_cache::for_each_unit(uint32_t sector, Fn&& fn) const {
  for (size_t i = 0; i < pending_.size(); ++i) {
    const pending_op& op = pending_[i];
    if (op.is_truncate) continue;
    const uint64_t end = op.offset + op.data.size();
    for (uint64_t a = op.offset; a < end;) {
      const uint64_t b = std::min<uint64_t>(end, (a / sector + 1) * sector);
      fn(i, a, b);
      a = b;
    }
  }
}

size_t page_cache::crash_units(uint32_t sector) const noexcept {
  size_t n = 0;
  for_each_unit(sector, [&n](size_t, uint64_t, uint64_t) { ++n; });
  return n;
}

size_t page_cache::crash_size_changes() const noexcept {
  size_t n = 0;
  for (const pending_op& op : pending_) n += op.size_after != op.size_before ? 1 : 0;
  return n;
}

bytes page_cache::crash_image_of(uint32_t sector, const std::vector<uint8_t>& applied, size_t prefix) const {
  // The last operation whose size change the image keeps (kNone: the durable size).
  size_t last = kNone;
  if (prefix > 0) {
    size_t c = 0;
    for (size_t i = 0; i < pending_.size() && last == kNone; ++i)
      if (pending_[i].size_after != pending_[i].size_before && ++c == prefix) last = i;
  }
  bytes content = durable_;
  uint64_t size = durable_.size();
  // Units in order: the pieces of each write. Operations up to `last` change the size (all of them, since
  // size changes are kept by prefix); later ones only write pieces, cut at the end when past the size.
  size_t u = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const pending_op& op = pending_[i];
    const bool sized = last != kNone && i <= last;
    if (op.is_truncate) {
      if (sized) {
        content.resize(static_cast<size_t>(op.size), 0);  // cut, or grown with zeros
        size = op.size;
      }
      continue;
    }
    const uint64_t end = op.offset + op.data.size();
    if (sized && end > size) {
      content.resize(static_cast<size_t>(end), 0);  // growth: zeros where no applied piece lands
      size = end;
    }
    for (uint64_t a = op.offset; a < end;) {
      const uint64_t b = std::min<uint64_t>(end, (a / sector + 1) * sector);
      if (u < applied.size() && applied[u] != 0) {
        if (content.size() < b) content.resize(static_cast<size_t>(b), 0);
        std::memcpy(content.data() + a, op.data.data() + (a - op.offset), static_cast<size_t>(b - a));
      }
      ++u;
      a = b;
    }
  }
  content.resize(static_cast<size_t>(size), 0);
  return content;
}

bytes page_cache::crash_image(tessera::test::rng& r, uint32_t sector) const {
  const size_t units = crash_units(sector);
  std::vector<uint8_t> applied(units);
  for (size_t u = 0; u < units; ++u) applied[u] = static_cast<uint8_t>(r.next() & 1);
  const size_t prefix = static_cast<size_t>(r.range(0, static_cast<int64_t>(crash_size_changes())));
  return crash_image_of(sector, applied, prefix);
}

uint64_t page_cache::for_each_crash_image(uint32_t sector, const std::function<bool(const bytes&)>& fn,
                                          uint64_t samples, uint64_t seed, size_t exhaustive_units) const {
  const size_t units = crash_units(sector);
  const size_t changes = crash_size_changes();
  uint64_t visited = 0;
  if (units <= exhaustive_units && units <= 20) {
    std::vector<uint8_t> applied(units);
    for (uint64_t mask = 0; mask < (uint64_t{1} << units); ++mask) {
      for (size_t u = 0; u < units; ++u) applied[u] = static_cast<uint8_t>((mask >> u) & 1);
      for (size_t p = 0; p <= changes; ++p) {
        ++visited;
        if (!fn(crash_image_of(sector, applied, p))) return visited;
      }
    }
    return visited;
  }
  // The extremes, then random ones.
  ++visited;
  if (!fn(crash_image_of(sector, std::vector<uint8_t>(units, 0), 0))) return visited;
  ++visited;
  if (!fn(crash_image_of(sector, std::vector<uint8_t>(units, 1), changes))) return visited;
  tessera::test::rng r(seed);
  for (uint64_t i = 0; i < samples; ++i) {
    ++visited;
    if (!fn(crash_image(r, sector))) return visited;
  }
  return visited;
}

// ---- Write checks ------------------------------------------------------------------------------------------

void page_cache::checks_on(uint64_t base) {
  if (!checks_ || base != base_) durable_parsed_ = false;
  checks_ = true;
  base_ = base;
}

const frame_extents& page_cache::durable_frame() {
  if (!durable_parsed_) {
    durable_frame_ = frame_extents_of(durable_, base_);
    durable_parsed_ = true;
  }
  return durable_frame_;
}

void page_cache::violation(const std::string& text) {
  if (violations_.size() == kMaxViolations) {
    violations_.push_back("(further violations not recorded)");
    return;
  }
  if (violations_.size() > kMaxViolations) return;
  violations_.push_back("call " + std::to_string(current_call_) + ": " + text);
}

void page_cache::check_write(uint64_t offset, bytes_view src) {
  if (src.empty()) return;
  const uint64_t a = offset, b = offset + src.size();
  const std::string w = "write " + range_text(a, b);
  if (a < base_) violation(w + " before the frame's base offset " + std::to_string(base_));
  const frame_extents& d = durable_frame();
  if (!d.valid) return;
  const uint64_t header_end = base_ + d.header_len;
  if (a >= base_ && a < header_end) {
    // The commit point: one write from within the durable header (a header that grows reaches past it, into
    // bytes the durable frame must not reference).
    if (a / 512 != (b - 1) / 512)
      violation("header " + w + " spans the 512-byte sector boundary at " + std::to_string((a / 512 + 1) * 512) +
                " (it may tear)");
    bytes after = visible_;
    if (after.size() < b) after.resize(static_cast<size_t>(b), 0);
    std::memcpy(after.data() + a, src.data(), src.size());
    const frame_extents n = frame_extents_of(after, base_);
    if (!n.valid) {
      violation("header " + w + " commits a frame that does not open: " + n.error);
      return;
    }
    // What may not survive a crash: pending writes, bytes a failed sync dropped, bytes past the durable size
    // or past a pending truncate's.
    std::vector<extent> weak;
    uint64_t durable_end = durable_.size();
    for (const pending_op& op : pending_) {
      if (op.is_truncate) {
        durable_end = std::min(durable_end, op.size);
        continue;
      }
      weak.push_back(extent{op.offset, op.offset + op.data.size(),
                            "pending write of call " + std::to_string(op.call) + ", not synced"});
    }
    for (const extent& e : dropped_) weak.push_back(e);
    weak.push_back(extent{durable_end, UINT64_MAX, "past the durable size " + std::to_string(durable_end)});
    std::string problems;
    size_t count = 0;
    for (const extent& e : n.extents) {
      std::vector<extent> parts{e};
      ranges_subtract(parts, a, b);
      for (const extent& p : parts)
        for (const extent& x : weak) {
          const uint64_t lo = std::max(p.begin, x.begin), hi = std::min(p.end, x.end);
          if (lo >= hi) continue;
          if (++count <= 4) problems += "; its " + e.what + " " + range_text(e.begin, e.end) + " holds " + range_text(lo, hi) + ", " + x.what;
        }
    }
    if (count > 0)
      violation("header " + w + " commits a frame that references bytes not durable (" + std::to_string(count) +
                " ranges)" + problems);
    if (b > header_end) {
      std::string past;
      for (const extent& e : d.extents)
        if (e.begin >= header_end && header_end < e.end && e.begin < b)
          past += (past.empty() ? "" : ", ") + e.what + " " + range_text(e.begin, e.end);
      if (!past.empty()) violation("header " + w + " reaches past the durable header over what it references: " + past);
    }
    return;
  }
  std::string hit;
  for (const extent& e : d.extents)
    if (a < e.end && e.begin < b) hit += (hit.empty() ? "" : ", ") + e.what + " " + range_text(e.begin, e.end);
  if (!hit.empty()) violation(w + " overwrites what the durable frame references: " + hit);
}

void page_cache::check_truncate(uint64_t size) {
  const frame_extents& d = durable_frame();
  if (!d.valid) return;
  if (size < base_ + d.frame_len)
    violation("truncate to " + std::to_string(size) + " cuts the durable frame " +
              range_text(base_, base_ + d.frame_len));
}

}  // namespace crash_model
