// SPDX-License-Identifier: BSD-3-Clause
// The sweep of a sparse frame's directory: chunk entries no committed index references (written by a
// transaction a crash interrupted, or replaced by a commit a crash cut short before it removed them) and a
// stale `chunks.b2frame.tmp` are removed. Memory is the committed index's stored chunk numbers (4 bytes each,
// bounded by the frame's validated geometry and max_alloc), never anything per directory entry: the directory
// is walked through its list callback and each name is looked up in the sorted numbers.
#include "frame/frame_internal.hpp"

namespace tessera::detail {
namespace {

// Whether NUL-terminated `name` is `want` (no strcmp: the core calls only the four mem* functions).
bool name_is(const char* name, const char* want) noexcept {
  size_t i = 0;
  for (; want[i] != '\0'; ++i)
    if (name[i] != want[i]) return false;
  return name[i] == '\0';
}

// The chunk number of a name of frame_sparse_chunk_name's scheme ("%08X.chunk", upper-case hex); -1 for any
// other name.
int64_t chunk_name_id(const char* name) noexcept {
  uint32_t v = 0;
  for (int i = 0; i < 8; ++i) {
    const char c = name[i];
    uint32_t d = 0;
    if (c >= '0' && c <= '9') d = static_cast<uint32_t>(c - '0');
    else if (c >= 'A' && c <= 'F') d = static_cast<uint32_t>(c - 'A' + 10);
    else return -1;
    v = v << 4 | d;
  }
  return name_is(name + 8, ".chunk") ? int64_t{v} : -1;
}

// The stored chunk numbers of the committed index, sorted, from the frame's allocator.
struct referenced_ids {
  frame_state* s = nullptr;
  uint32_t* v = nullptr;
  size_t n = 0;
  size_t cap = 0;
  referenced_ids() noexcept = default;
  referenced_ids(const referenced_ids&) = delete;
  referenced_ids& operator=(const referenced_ids&) = delete;
  ~referenced_ids() {
    if (v != nullptr) allocator_deallocate(s->alloc, v, sizeof(uint32_t) * cap, alignof(uint32_t));
  }

  // Calls take(id) for every stored entry of the index; runs of special values are skipped whole.
  template <class F>
  static status each_stored(frame_state& state, F take) noexcept {
    for (int64_t i = 0; i < state.nchunks;) {
      frame_chunk_entry e;
      TESSERA_TRY(index_entry_get(state, i, &e));
      if (e.offset >= 0) {
        take(e.offset);
        ++i;
        continue;
      }
      auto run = index_special_run(state, i, state.nchunks);
      if (!run.ok()) return run.err();
      i += *run > 1 ? *run : 1;
    }
    return ok_status();
  }

  status build(frame_state& state) noexcept {
    s = &state;
    size_t count = 0;
    TESSERA_TRY(each_stored(state, [&count](int64_t) noexcept { ++count; }));
    cap = count == 0 ? 1 : count;
    TESSERA_TRY(state_budget_check(state, sizeof(uint32_t) * static_cast<uint64_t>(cap),
                                   TESSERA_MSG("sframe: the sweep's chunk numbers exceed max_alloc")));
    v = static_cast<uint32_t*>(allocator_allocate(state.alloc, sizeof(uint32_t) * cap, alignof(uint32_t)));
    if (v == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("sframe: allocator refused the sweep's chunk numbers"));
    // Numbers past the 8 hex digits have no entry name: nothing to keep for them.
    TESSERA_TRY(each_stored(state, [this](int64_t id) noexcept {
      if (id <= static_cast<int64_t>(UINT32_MAX) && n < cap) v[n++] = static_cast<uint32_t>(id);
    }));
    // A heap sort: no recursion, no quadratic case.
    auto sift = [this](size_t i, size_t size) noexcept {
      for (;;) {
        size_t c = 2 * i + 1;
        if (c >= size) return;
        if (c + 1 < size && v[c + 1] > v[c]) ++c;
        if (v[c] <= v[i]) return;
        const uint32_t t = v[i];
        v[i] = v[c];
        v[c] = t;
        i = c;
      }
    };
    for (size_t i = n / 2; i-- > 0;) sift(i, n);
    for (size_t k = n; k-- > 1;) {
      const uint32_t t = v[0];
      v[0] = v[k];
      v[k] = t;
      sift(0, k);
    }
    return ok_status();
  }

  [[nodiscard]] bool has(uint32_t id) const noexcept {
    size_t lo = 0, hi = n;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (v[mid] < id) lo = mid + 1;
      else hi = mid;
    }
    return lo < n && v[lo] == id;
  }
};

struct sweep_visit {
  frame_state* s;
  const referenced_ids* ids;
};

// Removes the visited entry when it is ours and unreferenced. A removal that fails is left for the next sweep.
status sweep_entry(void* arg, const char* name) noexcept {
  const sweep_visit& w = *static_cast<const sweep_visit*>(arg);
  const int64_t id = chunk_name_id(name);
  const bool stray = id >= 0 ? !w.ids->has(static_cast<uint32_t>(id)) : name_is(name, kSparseIndexTempName);
  if (stray) (void)storage_directory_remove(w.s->dir, name);
  return ok_status();
}

}  // namespace

status sframe_sweep(frame_state& s) noexcept {
  if (!s.sparse || !s.options.writable || s.dirty || s.dir.list == nullptr) return ok_status();
  referenced_ids ids;
  TESSERA_TRY(ids.build(s));
  sweep_visit w{&s, &ids};
  return storage_directory_list(s.dir, sweep_entry, &w);
}

}  // namespace tessera::detail
