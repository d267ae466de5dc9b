// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes the decode-only reader (tessera/array_view.hpp) over untrusted bytes in memory: array_view_open, then
// the whole array (when small), a few random slices and elements, each into a guarded buffer. The same bytes
// through array_open (a const_buffer) are the oracle: when both read a slice, they agree byte for byte. They
// are also read as a file is (array_open over storage without a view that claims concurrent reads, on a
// 3-worker executor: its tasks read their blocks' streams themselves), into guarded buffers: no crash, nothing
// written past the output. Not compared: a damaged block whose streams run past its extent (into the next
// block's bytes, still within cbytes, which is all the decoder bounds them by, as c-blosc2 does) reads other
// bytes from a copy of its streams than in place, so both may succeed with different garbage.
// Invariants: no crash, no out-of-bounds access, no UB, no allocation past max_alloc's claims, nothing leaks;
// an element reads as the one-element slice does; an output one item short is refused; a view opened over an
// arena of array_view_estimate bytes reads what the view on the heap reads (the estimate bounds open and every
// read: it never runs out of memory).
#include <cstring>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/array_view.hpp"
#include "tessera/port/memory_storage.hpp"

#include "fuzz_common.hpp"

using namespace tessera;

namespace {

// As the frame fuzzer: a size the input claims above this is resource_limit, refused before any allocation.
constexpr uint64_t kMaxAlloc = uint64_t{16} << 20;

// Tasks in reverse order over 3 worker indices, in this thread.
void reverse_run(void*, size_t ntasks, executor_task task, void* task_context) noexcept {
  for (size_t i = ntasks; i-- > 0;) task(task_context, i, static_cast<uint32_t>(i % 3));
}

// Reads [start, stop) through each and compares when both succeed.
void slice_check(array_view& v, array* a, array* file, const int64_t* start, const int64_t* stop) {
  const array_layout& l = v.layout;
  uint64_t n = static_cast<uint64_t>(v.itemsize);
  for (int d = 0; d < l.ndim; ++d) n *= static_cast<uint64_t>(stop[d] - start[d]);
  if (n > fuzz::kMaxOutput) return;
  fuzz::guarded_buffer got(static_cast<size_t>(n));
  const status s = array_view_slice_read(v, start, stop, bytes_mut(got.data(), got.size()));
  FUZZ_CHECK(got.guards_intact());
  if (file != nullptr) {
    fuzz::guarded_buffer as_file(static_cast<size_t>(n));
    (void)array_slice_read(*file, start, stop, bytes_mut(as_file.data(), as_file.size()));
    FUZZ_CHECK(as_file.guards_intact());
  }
  if (!s.ok() || a == nullptr) return;
  fuzz::guarded_buffer want(static_cast<size_t>(n));
  if (array_slice_read(*a, start, stop, bytes_mut(want.data(), want.size())).ok())
    FUZZ_CHECK(std::memcmp(got.data(), want.data(), got.size()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::params p(data, size);
  fuzz::checked_allocator mem;
  {
    array_view v;
    array_view_options vo;
    vo.max_alloc = kMaxAlloc;
    if (array_view_open(v, bytes_view(data, size), mem.get(), vo).ok()) {
      const_buffer input{data, size};
      array a;
      array_open_options ao;
      ao.frame.max_alloc = kMaxAlloc;
      const bool oracle = array_open(a, const_buffer_storage(input), mem.get(), ao).ok();
      storage no_view = const_buffer_storage(input);
      no_view.view = nullptr;
      no_view.concurrent_reads = true;
      array file;
      array_open_options fo;
      fo.frame.max_alloc = kMaxAlloc;
      fo.exec.run = reverse_run;
      fo.exec.workers = 3;
      const bool as_file = array_open(file, no_view, mem.get(), fo).ok();
      array* const f = as_file ? &file : nullptr;
      const array_layout& l = v.layout;
      int64_t start[kMaxDims] = {}, stop[kMaxDims] = {};
      for (int d = 0; d < l.ndim; ++d) stop[d] = l.shape[d];
      slice_check(v, oracle ? &a : nullptr, f, start, stop);
      for (int round = 0; round < 4 && l.nitems > 0; ++round) {
        for (int d = 0; d < l.ndim; ++d) {
          start[d] = static_cast<int64_t>(p.next() % static_cast<uint64_t>(l.shape[d]));
          stop[d] = start[d] + 1 + static_cast<int64_t>(p.next() % static_cast<uint64_t>(l.shape[d] - start[d]));
          if (round % 2 == 1) stop[d] = start[d] + 1;  // an element
        }
        slice_check(v, oracle ? &a : nullptr, f, start, stop);
      }
      // An element: the one-element slice. A slice into an output one item short: refused.
      if (l.nitems > 0) {
        int64_t coords[kMaxDims] = {}, one_stop[kMaxDims] = {};
        for (int d = 0; d < l.ndim; ++d) {
          coords[d] = static_cast<int64_t>(p.next() % static_cast<uint64_t>(l.shape[d]));
          one_stop[d] = coords[d] + 1;
        }
        fuzz::guarded_buffer e1(v.itemsize), e2(v.itemsize);
        const status se = array_view_element_read(v, coords, bytes_mut(e1.data(), e1.size()));
        const status ss = array_view_slice_read(v, coords, one_stop, bytes_mut(e2.data(), e2.size()));
        FUZZ_CHECK(e1.guards_intact() && e2.guards_intact());
        FUZZ_CHECK(se.ok() == ss.ok());
        if (se.ok()) FUZZ_CHECK(std::memcmp(e1.data(), e2.data(), v.itemsize) == 0);
        if (v.itemsize > 0) {
          fuzz::guarded_buffer shorter(v.itemsize - 1);
          FUZZ_CHECK(!array_view_element_read(v, coords, bytes_mut(shorter.data(), shorter.size())).ok());
          FUZZ_CHECK(shorter.guards_intact());
        }
      }
      // The whole array through a view on an arena of the estimate's size: never out of memory.
      {
        const size_t bytes = array_view_estimate(v);
        const uint64_t whole = static_cast<uint64_t>(l.nitems) * static_cast<uint64_t>(v.itemsize);
        if (bytes <= kMaxAlloc && whole <= fuzz::kMaxOutput) {
          std::vector<uint8_t> space(bytes);
          arena ar;
          arena_init(ar, space.data(), space.size());
          array_view va;
          const status so = array_view_open(va, bytes_view(data, size), arena_allocator(ar), vo);
          FUZZ_CHECK(so.ok());
          for (int d = 0; d < l.ndim; ++d) {
            start[d] = 0;
            stop[d] = l.shape[d];
          }
          fuzz::guarded_buffer all(static_cast<size_t>(whole));
          const status sr = array_view_slice_read(va, start, stop, bytes_mut(all.data(), all.size()));
          FUZZ_CHECK(sr.ok() || sr.code != errc::out_of_memory);
          array_view_close(va);
        }
      }
      // Out of range and short outputs are refused, never read or written past.
      for (int d = 0; d < l.ndim; ++d) {
        start[d] = 0;
        stop[d] = l.shape[d];
      }
      if (l.ndim > 0) {
        stop[0] = l.shape[0] + 1;
        uint8_t one[8];
        FUZZ_CHECK(!array_view_slice_read(v, start, stop, bytes_mut(one, sizeof one)).ok());
      }
      if (oracle) (void)array_close(a);
      if (as_file) (void)array_close(file);
      array_view_close(v);
    }
  }
  FUZZ_CHECK(mem.clean());
  return 0;
}
