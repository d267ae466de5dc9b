// SPDX-License-Identifier: BSD-3-Clause
// Space reuse in contiguous frames: which bytes a new chunk version, index or trailer may be written over.
//
// The rule that keeps commits crash-safe: nothing the last committed frame references is written before the next
// commit is durable. A chunk version written since the last commit is free as soon as it is superseded; one the
// committed frame uses is retired, and free once a commit that no longer uses it has been synced; so are the
// committed index and trailer. New bytes go into the smallest free extent that holds them, else past the end; the
// index and trailer go at the lowest free place after the last chunk (the format puts the index right after the
// chunks section). After a commit everything past the new frame is free, and the storage is cut there.
#include <string.h>

#include "frame/frame_internal.hpp"

namespace tessera::detail {
namespace {

uint64_t ext_end(const extent& e) noexcept { return e.pos + e.len; }

void set_release(const allocator& a, extent_set& set) noexcept {
  if (set.v != nullptr) allocator_deallocate(a, set.v, sizeof(extent) * set.cap, alignof(extent));
  set = extent_set{};
}

void set_erase(extent_set& set, uint32_t i) noexcept {
  memmove(set.v + i, set.v + i + 1, sizeof(extent) * (set.n - i - 1));
  --set.n;
}

// Merges set.v[i] with the extents after it that it touches or overlaps.
void set_merge_next(extent_set& set, uint32_t i) noexcept {
  while (i + 1 < set.n && ext_end(set.v[i]) >= set.v[i + 1].pos) {
    const uint64_t e = ext_end(set.v[i + 1]) > ext_end(set.v[i]) ? ext_end(set.v[i + 1]) : ext_end(set.v[i]);
    set.v[i].len = e - set.v[i].pos;
    set_erase(set, i + 1);
  }
}

// Room for one more extent: grown geometrically up to the bound; false when full (or the allocator refuses).
bool set_grow(frame_state& s, extent_set& set) noexcept {
  if (set.n < set.cap) return true;
  if (set.cap >= kSpaceExtentsMax) return false;
  uint32_t want = set.cap == 0 ? 16 : set.cap * 2;
  if (want > kSpaceExtentsMax) want = kSpaceExtentsMax;
  auto* p = static_cast<extent*>(allocator_allocate(s.alloc, sizeof(extent) * want, alignof(extent)));
  if (p == nullptr) return false;
  if (set.v != nullptr) {
    memcpy(p, set.v, sizeof(extent) * set.n);
    allocator_deallocate(s.alloc, set.v, sizeof(extent) * set.cap, alignof(extent));
  }
  set.v = p;
  set.cap = want;
  return true;
}

// Adds [pos, pos + len): merged with its neighbours; past the bound the smallest extent is forgotten. Never fails.
void set_add(frame_state& s, extent_set& set, uint64_t pos, uint64_t len) noexcept {
  if (len == 0) return;
  for (;;) {
    uint32_t lo = 0, hi = set.n;
    while (lo < hi) {  // first extent starting after pos
      const uint32_t mid = lo + (hi - lo) / 2;
      if (set.v[mid].pos <= pos) lo = mid + 1;
      else hi = mid;
    }
    const uint32_t i = lo;
    if (i > 0 && ext_end(set.v[i - 1]) >= pos) {
      if (pos + len > ext_end(set.v[i - 1])) set.v[i - 1].len = pos + len - set.v[i - 1].pos;
      set_merge_next(set, i - 1);
      return;
    }
    if (i < set.n && pos + len >= set.v[i].pos) {
      const uint64_t e = ext_end(set.v[i]) > pos + len ? ext_end(set.v[i]) : pos + len;
      set.v[i].pos = pos;
      set.v[i].len = e - pos;
      set_merge_next(set, i);
      return;
    }
    if (set_grow(s, set)) {
      memmove(set.v + i + 1, set.v + i, sizeof(extent) * (set.n - i));
      set.v[i].pos = pos;
      set.v[i].len = len;
      ++set.n;
      return;
    }
    // Full: the smaller of the new extent and the smallest held one is forgotten.
    uint32_t small = 0;
    for (uint32_t k = 1; k < set.n; ++k)
      if (set.v[k].len < set.v[small].len) small = k;
    if (set.n == 0 || len <= set.v[small].len) {
      s.space.lost += len;
      return;
    }
    s.space.lost += set.v[small].len;
    set_erase(set, small);
  }
}

// Free extents that reach the end join the space past it.
void free_absorb(frame_state& s) noexcept {
  extent_set& f = s.space.free;
  while (f.n > 0 && ext_end(f.v[f.n - 1]) >= s.space.end) {
    if (f.v[f.n - 1].pos < s.space.end) s.space.end = f.v[f.n - 1].pos;
    --f.n;
  }
}

// Takes [p, p + n) out of free extent i (which holds it).
void free_cut(frame_state& s, uint32_t i, uint64_t p, uint64_t n) noexcept {
  extent_set& f = s.space.free;
  const extent e = f.v[i];
  if (p == e.pos) {
    f.v[i].pos += n;
    f.v[i].len -= n;
    if (f.v[i].len == 0) set_erase(f, i);
    return;
  }
  f.v[i].len = p - e.pos;
  if (ext_end(e) > p + n) set_add(s, f, p + n, ext_end(e) - (p + n));
}

// Heap sort of extents by position (no recursion, no memory).
void extents_sort(extent* a, size_t n) noexcept {
  auto sift = [a](size_t i, size_t size) noexcept {
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= size) return;
      if (c + 1 < size && a[c + 1].pos > a[c].pos) ++c;
      if (a[c].pos <= a[i].pos) return;
      const extent t = a[i];
      a[i] = a[c];
      a[c] = t;
      i = c;
    }
  };
  for (size_t i = n / 2; i-- > 0;) sift(i, n);
  for (size_t k = n; k-- > 1;) {
    const extent t = a[0];
    a[0] = a[k];
    a[k] = t;
    sift(0, k);
  }
}

}  // namespace

void space_release(frame_state& s) noexcept {
  set_release(s.alloc, s.space.free);
  set_release(s.alloc, s.space.retired);
}

void space_start_empty(frame_state& s) noexcept {
  space_map& m = s.space;
  if (s.options.keep_old_frames) return;  // never active (frame_compact activates it for its own time)
  m.active = true;
  m.end = s.info.header_len;
  m.meta = extent{s.info.header_len, 0};
  m.live = 0;
}

void space_disable(frame_state& s) noexcept {
  // space.end stays: new bytes go past it (place_at).
  s.space.active = false;
  s.space.disabled = true;
  space_release(s);
}

status space_activate_table(frame_state& s) noexcept {
  space_map& m = s.space;
  if (m.active || m.disabled || s.sparse || s.options.keep_old_frames) return ok_status();
  const uint64_t hl = s.info.header_len;
  // Every stored chunk's size (read from its header when the index did not say).
  uint64_t nstored = 0, live = 0;
  for (int64_t i = 0; i < s.nchunks; ++i) {
    if (s.chunks[i].offset < 0) continue;
    if (s.chunks[i].cbytes < 0) {
      int32_t nb = 0;
      TESSERA_TRY(frame_table_entry_nbytes(s, i, &nb));
    }
    if (s.chunks[i].cbytes < 0) return make_error(errc::corrupt, TESSERA_MSG("frame: a chunk's size is unknown"));
    ++nstored;
    live += static_cast<uint64_t>(s.chunks[i].cbytes);
  }
  const uint64_t count = nstored + 1;
  TESSERA_TRY(state_budget_check(s, count * sizeof(extent), TESSERA_MSG("frame: the space map's sort exceeds max_alloc")));
  auto* items = static_cast<extent*>(allocator_allocate(s.alloc, sizeof(extent) * static_cast<size_t>(count), alignof(extent)));
  if (items == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the space map's sort"));
  size_t k = 0;
  for (int64_t i = 0; i < s.nchunks; ++i) {
    const frame_chunk_entry& e = s.chunks[i];
    if (e.offset < 0) continue;
    items[k++] = extent{hl + static_cast<uint64_t>(e.offset), static_cast<uint64_t>(e.cbytes)};
  }
  // Durable: the committed index and trailer stay until the next commit (without an index, the trailer follows
  // the header, possibly after a stale chunks section: all of it).
  extent meta{};
  if (s.options.durable) {
    const uint64_t from = s.committed_has_index ? hl + static_cast<uint64_t>(s.committed_cbytes) : hl;
    meta = extent{from, s.committed_len > from ? s.committed_len - from : 0};
    if (meta.len > 0) items[k++] = meta;
  }
  extents_sort(items, k);
  uint64_t cursor = hl;
  bool overlap = false;
  for (size_t i = 0; i < k; ++i) {
    if (items[i].pos < cursor) {
      overlap = true;
      break;
    }
    if (items[i].pos > cursor) set_add(s, m.free, cursor, items[i].pos - cursor);
    cursor = ext_end(items[i]);
  }
  allocator_deallocate(s.alloc, items, sizeof(extent) * static_cast<size_t>(count), alignof(extent));
  if (overlap) {
    // Chunks that share or overlap bytes (not written by a reference writer): never reuse anything.
    space_disable(s);
    return ok_status();
  }
  m.end = cursor;
  m.meta = meta;
  m.live = live;
  m.active = true;
  free_absorb(s);
  return ok_status();
}

uint64_t space_take(frame_state& s, uint64_t n) noexcept {
  extent_set& f = s.space.free;
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; i < f.n; ++i)
    if (f.v[i].len >= n && (best == UINT32_MAX || f.v[i].len < f.v[best].len)) best = i;
  if (best == UINT32_MAX) {
    const uint64_t p = s.space.end;
    s.space.end += n;
    return p;
  }
  const uint64_t p = f.v[best].pos;
  free_cut(s, best, p, n);
  return p;
}

uint64_t space_take_from(frame_state& s, uint64_t lo, uint64_t n) noexcept {
  extent_set& f = s.space.free;
  for (uint32_t i = 0; i < f.n; ++i) {
    if (ext_end(f.v[i]) <= lo) continue;
    const uint64_t st = f.v[i].pos > lo ? f.v[i].pos : lo;
    if (ext_end(f.v[i]) - st >= n) {
      free_cut(s, i, st, n);
      return st;
    }
  }
  if (lo > s.space.end) {
    set_add(s, f, s.space.end, lo - s.space.end);
    s.space.end = lo;
  }
  const uint64_t p = s.space.end;
  s.space.end += n;
  return p;
}

uint64_t space_take_below(frame_state& s, uint64_t n, uint64_t limit) noexcept {
  extent_set& f = s.space.free;
  for (uint32_t i = 0; i < f.n; ++i) {
    if (f.v[i].pos + n > limit) break;
    if (f.v[i].len >= n) {
      const uint64_t p = f.v[i].pos;
      free_cut(s, i, p, n);
      return p;
    }
  }
  return UINT64_MAX;
}

void space_free(frame_state& s, uint64_t pos, uint64_t len) noexcept {
  if (len == 0) return;
  if (pos + len >= s.space.end && pos <= s.space.end) {
    if (pos < s.space.end) s.space.end = pos;
    free_absorb(s);
    return;
  }
  set_add(s, s.space.free, pos, len);
  free_absorb(s);
}

void space_reserve(frame_state& s, uint64_t from, uint64_t to) noexcept {
  extent_set& f = s.space.free;
  for (uint32_t i = 0; i < f.n;) {
    const extent e = f.v[i];
    if (ext_end(e) <= from || e.pos >= to) {
      ++i;
      continue;
    }
    set_erase(f, i);
    if (e.pos < from) set_add(s, f, e.pos, from - e.pos);
    if (ext_end(e) > to) set_add(s, f, to, ext_end(e) - to);
    i = 0;  // the pieces lie outside [from, to): each pass removes one overlap
  }
  if (s.space.end < to) {
    if (s.space.end < from) set_add(s, f, s.space.end, from - s.space.end);
    s.space.end = to;
  }
}

void space_drop_chunk(frame_state& s, const frame_chunk_entry& e) noexcept {
  if (e.offset < 0 || e.cbytes <= 0) return;
  const uint64_t pos = s.info.header_len + static_cast<uint64_t>(e.offset);
  const uint64_t len = static_cast<uint64_t>(e.cbytes);
  s.space.live -= len <= s.space.live ? len : s.space.live;
  if (e.fresh != 0 || !s.options.durable) space_free(s, pos, len);
  else set_add(s, s.space.retired, pos, len);
}

uint64_t space_chunks_end(const frame_state& s) noexcept {
  const uint64_t hl = s.info.header_len;
  uint64_t end = hl;
  for (int64_t i = 0; i < s.nchunks; ++i) {
    const frame_chunk_entry& e = s.chunks[i];
    if (e.offset < 0) continue;
    const uint64_t x = e.cbytes < 0 ? s.data_end : hl + static_cast<uint64_t>(e.offset) + static_cast<uint64_t>(e.cbytes);
    if (x > end) end = x;
  }
  return end;
}

void space_committed(frame_state& s, uint64_t p, uint64_t m) noexcept {
  space_map& sp = s.space;
  extent_set& f = sp.free;
  if (s.options.durable) {
    for (uint32_t i = 0; i < sp.retired.n; ++i) set_add(s, f, sp.retired.v[i].pos, sp.retired.v[i].len);
    sp.retired.n = 0;
    set_add(s, f, sp.meta.pos, sp.meta.len);
    sp.meta = extent{p, m};
    sp.end = p + m;
  } else {
    sp.meta = extent{p, 0};
    sp.end = p;
  }
  // From p on lie the new index and trailer (a commit without chunks rewrites the trailer in place: the old
  // one, just freed, overlaps them), and past them nothing: free extents there go.
  while (f.n > 0 && f.v[f.n - 1].pos >= p) --f.n;
  if (f.n > 0 && ext_end(f.v[f.n - 1]) > p) f.v[f.n - 1].len = p - f.v[f.n - 1].pos;
  free_absorb(s);
  for (int64_t i = 0; i < s.nchunks; ++i) s.chunks[i].fresh = 0;
}

bool space_loose(const frame_state& s, uint32_t share) noexcept {
  const space_map& sp = s.space;
  if (!sp.active) return false;
  uint64_t holes = 0;
  for (uint32_t i = 0; i < sp.free.n; ++i) holes += sp.free.v[i].len;
  return holes > 0 && holes * share > sp.end;
}

result<uint32_t> space_relocate(frame_state& s) noexcept {
  if (!s.space.active) return uint32_t{0};
  constexpr uint32_t kTop = 16;
  int64_t top[kTop];
  uint32_t ntop = 0;
  // The kTop highest stored chunks, highest first.
  for (int64_t i = 0; i < s.nchunks; ++i) {
    const int64_t off = s.chunks[i].offset;
    if (off < 0) continue;
    uint32_t at = ntop;
    while (at > 0 && s.chunks[top[at - 1]].offset < off) --at;
    if (at >= kTop) continue;
    const uint32_t last = ntop < kTop ? ntop : kTop - 1;
    for (uint32_t k = last; k > at; --k) top[k] = top[k - 1];
    top[at] = i;
    if (ntop < kTop) ++ntop;
  }
  const uint64_t hl = s.info.header_len;
  uint32_t moved = 0;
  for (uint32_t k = 0; k < ntop; ++k) {
    frame_chunk_entry& e = s.chunks[top[k]];
    if (e.cbytes <= 0) break;
    const uint64_t pos = hl + static_cast<uint64_t>(e.offset);
    const uint64_t n = static_cast<uint64_t>(e.cbytes);
    const uint64_t q = space_take_below(s, n, pos);
    if (q == UINT64_MAX) break;
    status st = state_buffer_reserve(s, &s.scratch, &s.scratch_cap, static_cast<size_t>(n));
    if (st.ok()) st = frame_read_into(s, pos, bytes_mut(s.scratch, static_cast<size_t>(n)));
    if (st.ok()) st = frame_write(s, q, bytes_view(s.scratch, static_cast<size_t>(n)));
    if (!st.ok()) {
      space_free(s, q, n);
      return st;
    }
    const frame_chunk_entry old = e;
    space_drop_chunk(s, old);
    e.offset = static_cast<int64_t>(q - hl);
    e.fresh = 1;
    s.space.live += n;
    ++moved;
  }
  return moved;
}

}  // namespace tessera::detail
