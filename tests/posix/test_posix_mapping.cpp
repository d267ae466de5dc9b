// SPDX-License-Identifier: BSD-3-Clause
// posix_mapping as a read-only storage: open errors (missing, directory, non-regular files), the empty file,
// reads and the view against the file's known bytes, the mapping surviving unlink, a file larger than 4 GiB
// (refused on 32-bit targets), and an array written with posix_file that reads the same through the mapping, in
// place (no chunk bytes copied through the read callback) and on a thread pool. The map is touched only under a
// read lease: the view is empty outside a read bracket, with a writer open, or once the file is cut below the
// map; a truncate waits for the bracket to end. Where this system grants no lease (leases_granted), the same
// tests assert the pread path instead.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/posix_mapping.hpp"
#include "tessera/port/thread_pool.hpp"
#include "tessera/storage.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "posix_test_util.hpp"

using namespace tessera;
using posix_test::temp_dir;

namespace {

std::vector<uint8_t> random_bytes(test::rng& r, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(r.next());
  return v;
}

bool write_os_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

// The lowest free descriptor number (what the next open gets): unchanged when a call closed what it opened.
int lowest_free_fd() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  return fd;
}

// Whether this system grants a read lease on `path` (Linux, local file system, our own file or CAP_LEASE, nobody
// has it open for writing): what decides whether posix_mapping's view may be used.
bool leases_granted(const std::string& path) {
#if defined(F_SETLEASE)
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fcntl(fd, F_SETLEASE, F_RDLCK) == 0;
  if (ok) (void)::fcntl(fd, F_SETLEASE, F_UNLCK);
  ::close(fd);
  return ok;
#else
  (void)path;
  return false;
#endif
}

// One read bracket on a storage (its reads_begin and reads_end), as an array read opens one around itself.
class reads_scope {
 public:
  explicit reads_scope(const storage& s) noexcept : s_(s) { s_.reads_begin(s_.context); }
  ~reads_scope() { s_.reads_end(s_.context); }
  reads_scope(const reads_scope&) = delete;
  reads_scope& operator=(const reads_scope&) = delete;

 private:
  const storage& s_;
};

// A storage that forwards to another and counts the bytes that went through its read callback.
struct counting_storage {
  storage inner;
  uint64_t read_bytes = 0;
  uint64_t read_calls = 0;

  static status read(void* c, uint64_t offset, bytes_mut dst) noexcept {
    auto* self = static_cast<counting_storage*>(c);
    self->read_bytes += dst.size();
    ++self->read_calls;
    return storage_read(self->inner, offset, dst);
  }
  static status size(void* c, uint64_t* out) noexcept {
    auto r = storage_size(static_cast<counting_storage*>(c)->inner);
    if (!r.ok()) return r.err();
    *out = *r;
    return ok_status();
  }
  static bytes_view view(void* c) noexcept { return storage_view(static_cast<counting_storage*>(c)->inner); }
  static void begin(void* c) noexcept {
    const storage& in = static_cast<counting_storage*>(c)->inner;
    in.reads_begin(in.context);
  }
  static void end(void* c) noexcept {
    const storage& in = static_cast<counting_storage*>(c)->inner;
    in.reads_end(in.context);
  }

  storage get() {
    storage s;
    s.context = this;
    s.read = read;
    s.size = size;
    s.concurrent_reads = inner.concurrent_reads;
    if (inner.view != nullptr) s.view = view;
    if (inner.reads_begin != nullptr) {
      s.reads_begin = begin;
      s.reads_end = end;
    }
    return s;
  }
};

}  // namespace

TESSERA_TEST(posix_mapping, open_errors) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const int fd_before = lowest_free_fd();
  const std::string missing = dir.file("missing.bin");
  auto r = posix_mapping_open(missing.c_str());
  CHECK_ERR(r, errc::io);
  if (!r.ok()) CHECK(std::strstr(r.err().message, "open") != nullptr);  // names the failed call
  CHECK(access(missing.c_str(), F_OK) != 0);                            // not created

  auto d = posix_mapping_open(dir.path().c_str());
  CHECK_ERR(d, errc::io);
  if (!d.ok()) CHECK(std::strstr(d.err().message, "directory") != nullptr);

  CHECK_ERR(posix_mapping_open(""), errc::invalid_argument);
  CHECK_ERR(posix_mapping_open(nullptr), errc::invalid_argument);
  CHECK_ERR(posix_mapping_open(dir.file("no/such/dir.bin").c_str()), errc::io);

  // Not regular files: a character device, and a FIFO without a writer (must not block the open).
  auto dev = posix_mapping_open("/dev/null");
  CHECK_ERR(dev, errc::io);
  if (!dev.ok()) CHECK(std::strstr(dev.err().message, "regular") != nullptr);
  const std::string fifo = dir.file("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_ERR(posix_mapping_open(fifo.c_str()), errc::io);

  CHECK_EQ(lowest_free_fd(), fd_before);  // every failure closed its descriptor
}

TESSERA_TEST(posix_mapping, empty_file) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("empty.bin");
  REQUIRE(write_os_file(path, {}));
  auto r = posix_mapping_open(path.c_str());
  REQUIRE_OK(r);
  posix_mapping m = *r;
  CHECK(m.data == nullptr);
  CHECK_EQ(m.size, 0u);
  const storage s = posix_mapping_storage(m);
  auto n = storage_size(s);
  REQUIRE_OK(n);
  CHECK_EQ(*n, 0u);
  uint8_t b[1] = {0};
  CHECK_ERR(storage_read(s, 0, bytes_mut(b, 1)), errc::truncated);
  CHECK_ERR(storage_read(s, 7, bytes_mut(b, 1)), errc::truncated);
  CHECK_OK(storage_read(s, 0, bytes_mut(b, 0)));  // an empty read succeeds, as on every storage
  CHECK(storage_view(s).empty());
  CHECK_OK(posix_mapping_close(m));
  CHECK_OK(posix_mapping_close(m));
}

TESSERA_TEST(posix_mapping, reads_and_view_match_the_file) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("known.bin");
  test::rng r(7);
  const std::vector<uint8_t> bytes = random_bytes(r, 100003);  // not a multiple of the page size
  REQUIRE(write_os_file(path, bytes));
  const bool leases = leases_granted(path);
  const int fd_before = lowest_free_fd();
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  CHECK_EQ(m.fd, fd_before);  // kept open: the lease and the reads outside it
  REQUIRE(m.data != nullptr);
  REQUIRE_EQ(m.size, bytes.size());
  CHECK(std::memcmp(m.data, bytes.data(), bytes.size()) == 0);

  const storage s = posix_mapping_storage(m);
  // Read-only: no write, truncate or sync, and the checked calls say so.
  CHECK(s.write == nullptr);
  CHECK(s.truncate == nullptr);
  CHECK(s.sync == nullptr);
  const uint8_t x = 1;
  CHECK_ERR(storage_write(s, 0, bytes_view(&x, 1)), errc::unsupported);
  CHECK_ERR(storage_truncate(s, 0), errc::unsupported);
  CHECK_OK(storage_sync(s));

  auto n = storage_size(s);
  REQUIRE_OK(n);
  CHECK_EQ(*n, bytes.size());
  CHECK(storage_view(s).empty());  // outside a read bracket: no lease, no view
  CHECK(!m.leased);
  {
    const reads_scope outer(s);
    const bytes_view v = storage_view(s);
    CHECK_EQ(m.leased, leases);
    if (leases) {
      CHECK(v.data() == m.data);  // the mapping itself, not a copy
      REQUIRE_EQ(v.size(), bytes.size());
      CHECK(std::memcmp(v.data(), bytes.data(), bytes.size()) == 0);
    } else {
      CHECK(v.empty());
    }
    {
      const reads_scope inner(s);  // nested: the same lease
      CHECK(storage_view(s).data() == v.data());
    }
    CHECK(storage_view(s).data() == v.data());  // still inside the outer bracket
  }
  CHECK(storage_view(s).empty());
  CHECK(!m.leased);
  CHECK_EQ(m.reads, 0u);

  // Random ranges, inside or reaching past the end: half of them inside a bracket, half outside (pread either way:
  // the map is read through the view only).
  std::vector<uint8_t> buf;
  size_t bad = 0, truncated_ok = 0, inside = 0;
  for (int i = 0; i < 3000; ++i) {
    if (i == 1500) s.reads_begin(s.context);
    const uint64_t off = static_cast<uint64_t>(r.range(0, static_cast<int64_t>(bytes.size()) + 16));
    const size_t len = static_cast<size_t>(r.range(1, r.chance(10) ? 40000 : 300));
    buf.assign(len, 0xee);
    const status st = storage_read(s, off, bytes_mut(buf.data(), len));
    if (off + len <= bytes.size()) {
      ++inside;
      bad += !st.ok() || std::memcmp(buf.data(), bytes.data() + off, len) != 0;
    } else {
      truncated_ok += !st.ok() && st.code == errc::truncated;
      bad += st.ok() || st.code != errc::truncated;
    }
  }
  s.reads_end(s.context);
  CHECK_EQ(bad, 0u);
  CHECK_LT(0u, inside);
  CHECK_LT(0u, truncated_ok);

  uint8_t b[16];
  CHECK_OK(storage_read(s, bytes.size() - 1, bytes_mut(b, 1)));
  CHECK_EQ(b[0], bytes.back());
  CHECK_ERR(storage_read(s, bytes.size() - 1, bytes_mut(b, 2)), errc::truncated);  // straddles the end
  CHECK_ERR(storage_read(s, bytes.size(), bytes_mut(b, 1)), errc::truncated);      // starts at the end
  CHECK_ERR(storage_read(s, uint64_t{1} << 40, bytes_mut(b, 1)), errc::truncated);
  CHECK(!storage_read(s, UINT64_MAX - 10, bytes_mut(b, 5)).ok());  // no wrapped offset

  CHECK_OK(posix_mapping_close(m));
  CHECK(m.data == nullptr);
  CHECK_EQ(m.size, 0u);
  CHECK_EQ(m.fd, -1);
  CHECK_EQ(lowest_free_fd(), fd_before);  // the descriptor is closed
  CHECK_OK(posix_mapping_close(m));  // closing twice is a no-op
}

TESSERA_TEST(posix_mapping, survives_removal_of_the_file) {
  // The mapping references the file itself: removing its name (or any descriptor) does not affect it.
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("gone.bin");
  test::rng r(11);
  const std::vector<uint8_t> bytes = random_bytes(r, 9000);
  REQUIRE(write_os_file(path, bytes));
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  REQUIRE(::unlink(path.c_str()) == 0);
  const storage s = posix_mapping_storage(m);
  std::vector<uint8_t> back(bytes.size());
  REQUIRE_OK(storage_read(s, 0, bytes_mut(back.data(), back.size())));
  CHECK(back == bytes);
  CHECK_OK(posix_mapping_close(m));
}

TESSERA_TEST(posix_mapping, file_larger_than_4_gib) {
  // A sparse file past 4 GiB (made through posix_file: 64-bit offsets on every target). 32-bit targets cannot
  // map it: errc::overflow, never a wrapped length. 64-bit targets map it and read at its far end.
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("big.bin");
  const uint64_t size = (uint64_t{1} << 32) + 4096 + 5;
  const uint8_t tail[5] = {0xde, 0xad, 0xbe, 0xef, 0x42};
  {
    auto fr = posix_file_open(path.c_str(), posix_open::replace);
    REQUIRE_OK(fr);
    posix_file f = *fr;
    const storage fs = posix_file_storage(f);
    REQUIRE_OK(storage_write(fs, size - 5, bytes_view(tail, 5)));
    CHECK_OK(posix_file_close(f));
  }
  auto mr = posix_mapping_open(path.c_str());
  if (sizeof(size_t) < 8) {
    CHECK_ERR(mr, errc::overflow);
    if (!mr.ok()) CHECK(std::strstr(mr.err().message, "address space") != nullptr);
    return;
  }
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  CHECK_EQ(m.size, size);
  const storage s = posix_mapping_storage(m);
  if (leases_granted(path)) {
    const reads_scope reads(s);
    CHECK_EQ(static_cast<uint64_t>(storage_view(s).size()), size);
  }
  uint8_t b[6] = {};
  REQUIRE_OK(storage_read(s, size - 6, bytes_mut(b, 6)));
  CHECK_EQ(b[0], 0);  // the hole reads as zeros
  CHECK(std::memcmp(b + 1, tail, 5) == 0);
  CHECK_OK(storage_read(s, uint64_t{1} << 32, bytes_mut(b, 1)));  // just past 4 GiB: no 32-bit wrap
  CHECK_EQ(b[0], 0);
  CHECK_ERR(storage_read(s, size - 4, bytes_mut(b, 5)), errc::truncated);
  CHECK_OK(posix_mapping_close(m));
}

TESSERA_TEST(posix_mapping, array_reads_in_place_like_posix_file) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("array.b2nd");
  const allocator alloc = posix_allocator();

  // A 3-D float32 array with edge chunks and padded blocks (BloscLZ + shuffle, the defaults).
  constexpr int64_t kShape[3] = {37, 41, 23};
  const size_t items = static_cast<size_t>(kShape[0] * kShape[1] * kShape[2]);
  std::vector<uint8_t> data(items * 4);
  test::rng r(2025);
  for (size_t i = 0; i < items; ++i) {
    const uint32_t v = static_cast<uint32_t>(i * 2654435761u) >> (r.chance(50) ? 20 : 4);  // some redundancy
    std::memcpy(data.data() + i * 4, &v, 4);
  }
  array_params p;
  p.ndim = 3;
  for (int d = 0; d < 3; ++d) p.shape[d] = kShape[d];
  p.chunkshape[0] = 16;
  p.chunkshape[1] = 16;
  p.chunkshape[2] = 8;
  p.blockshape[0] = 8;
  p.blockshape[1] = 5;
  p.blockshape[2] = 4;
  static const char kDtype[] = "<f4";
  p.dtype = span<const char>(kDtype, 3);
  {
    auto fr = posix_file_open(path.c_str(), posix_open::replace);
    REQUIRE_OK(fr);
    posix_file f = *fr;
    const storage fs = posix_file_storage(f);
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(fs), alloc, p,
                            array_fill_buffer(bytes_view(data.data(), data.size()))));
    CHECK_OK(array_close(a));
    CHECK_OK(posix_file_close(f));
  }

  // Through posix_file (reads copy), counted.
  auto fr = posix_file_open(path.c_str(), posix_open::read);
  REQUIRE_OK(fr);
  posix_file f = *fr;
  counting_storage file_count;
  file_count.inner = posix_file_storage(f);
  const storage fs = file_count.get();
  array af;
  REQUIRE_OK(array_open(af, fs, alloc));

  // Through the mapping, decoding on a thread pool, counted.
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  counting_storage map_count;
  map_count.inner = posix_mapping_storage(m);
  const storage ms = map_count.get();
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  array_open_options oo;
  oo.exec = thread_pool_executor(pool);
  array am;
  REQUIRE_OK(array_open(am, ms, alloc, oo));
  // Through posix_file on the pool too: pread allows concurrent reads, so each worker reads its own blocks.
  array ap;
  REQUIRE_OK(array_open(ap, posix_file_storage(f), alloc, oo));
  file_count.read_bytes = 0;
  map_count.read_bytes = 0;
  map_count.read_calls = 0;

  std::vector<uint8_t> via_file(data.size(), 0x11), via_map(data.size(), 0x22);
  REQUIRE_OK(array_read(af, bytes_mut(via_file.data(), via_file.size())));
  REQUIRE_OK(array_read(am, bytes_mut(via_map.data(), via_map.size())));
  CHECK(via_file == data);
  CHECK(via_map == data);

  // Slices: against each other and against the items picked out of `data` by plain loops.
  size_t mismatches = 0;
  for (int i = 0; i < 60; ++i) {
    int64_t start[3], stop[3];
    for (int d = 0; d < 3; ++d) {
      start[d] = r.range(0, kShape[d] - 1);
      stop[d] = r.range(start[d] + 1, kShape[d]);
    }
    const size_t n = static_cast<size_t>((stop[0] - start[0]) * (stop[1] - start[1]) * (stop[2] - start[2])) * 4;
    std::vector<uint8_t> sf(n, 0x33), sm(n, 0x44), sp(n, 0x55), want;
    want.reserve(n);
    for (int64_t a0 = start[0]; a0 < stop[0]; ++a0)
      for (int64_t a1 = start[1]; a1 < stop[1]; ++a1)
        for (int64_t a2 = start[2]; a2 < stop[2]; ++a2) {
          const size_t at = static_cast<size_t>((a0 * kShape[1] + a1) * kShape[2] + a2) * 4;
          want.insert(want.end(), data.begin() + static_cast<std::ptrdiff_t>(at),
                      data.begin() + static_cast<std::ptrdiff_t>(at + 4));
        }
    REQUIRE_OK(array_slice_read(af, start, stop, bytes_mut(sf.data(), n)));
    REQUIRE_OK(array_slice_read(am, start, stop, bytes_mut(sm.data(), n)));
    REQUIRE_OK(array_slice_read(ap, start, stop, bytes_mut(sp.data(), n)));
    mismatches += sf != want;
    mismatches += sm != want;
    mismatches += sp != want;
  }
  CHECK_EQ(mismatches, 0u);
  int64_t coords[3] = {36, 40, 22};
  uint8_t item[4];
  REQUIRE_OK(array_element_read(am, coords, bytes_mut(item, 4)));
  CHECK(std::memcmp(item, data.data() + data.size() - 4, 4) == 0);

  // In place under the lease: the file path copied the chunks through read(), the mapping copied nothing.
  // Without leases the mapping reads through pread, as the file does.
  CHECK_LT(0u, file_count.read_bytes);
  if (leases_granted(path)) {
    CHECK_EQ(map_count.read_bytes, 0u);
    CHECK_EQ(map_count.read_calls, 0u);
  } else {
    CHECK_LT(0u, map_count.read_bytes);
  }
  CHECK(!m.leased);  // every read released its lease

  std::vector<uint8_t> via_pool(data.size(), 0x66);
  REQUIRE_OK(array_read(ap, bytes_mut(via_pool.data(), via_pool.size())));
  CHECK(via_pool == data);
  CHECK_OK(array_close(ap));
  CHECK_OK(array_close(am));
  CHECK_OK(array_close(af));
  CHECK_OK(posix_mapping_close(m));
  CHECK_OK(posix_file_close(f));
}

namespace {

// A small float32 array written to `path` through posix_file; its items in `data`.
void write_small_array(test::context& t, const std::string& path, std::vector<uint8_t>& data) {
  constexpr int64_t kShape[2] = {64, 96};
  data.resize(static_cast<size_t>(kShape[0] * kShape[1]) * 4);
  for (size_t i = 0; i < data.size() / 4; ++i) {
    const float v = static_cast<float>(i % 1000) * 0.5f;
    std::memcpy(data.data() + i * 4, &v, 4);
  }
  array_params p;
  p.ndim = 2;
  p.shape[0] = kShape[0];
  p.shape[1] = kShape[1];
  p.chunkshape[0] = 32;
  p.chunkshape[1] = 32;
  p.blockshape[0] = 8;
  p.blockshape[1] = 16;
  static const char kDtype[] = "<f4";
  p.dtype = span<const char>(kDtype, 3);
  auto fr = posix_file_open(path.c_str(), posix_open::replace);
  REQUIRE_OK(fr);
  posix_file f = *fr;
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(posix_file_storage(f)), posix_allocator(), p,
                          array_fill_buffer(bytes_view(data.data(), data.size()))));
  CHECK_OK(array_close(a));
  CHECK_OK(posix_file_close(f));
}

}  // namespace

TESSERA_TEST(posix_mapping, a_file_open_for_writing_is_read_through_pread) {
  // A writer anywhere (here: this process) refuses the lease: the reads take pread, with the writer's bytes.
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("w.b2nd");
  std::vector<uint8_t> data;
  write_small_array(t, path, data);
  const bool leases = leases_granted(path);
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  counting_storage count;
  count.inner = posix_mapping_storage(m);
  const storage s = count.get();
  array a;
  REQUIRE_OK(array_open(a, s, posix_allocator()));
  std::vector<uint8_t> back(data.size());

  auto wr = posix_file_open(path.c_str(), posix_open::read_write);
  REQUIRE_OK(wr);
  posix_file w = *wr;
  count.read_bytes = 0;
  REQUIRE_OK(array_read(a, bytes_mut(back.data(), back.size())));
  CHECK(back == data);
  CHECK_LT(0u, count.read_bytes);  // through pread: no lease while the writer is open
  {
    const reads_scope reads(s);
    CHECK(storage_view(s).empty());
    CHECK(!m.leased);
  }
  CHECK_OK(posix_file_close(w));

  count.read_bytes = 0;
  std::fill(back.begin(), back.end(), 0);
  REQUIRE_OK(array_read(a, bytes_mut(back.data(), back.size())));
  CHECK(back == data);
  if (leases) {
    CHECK_EQ(count.read_bytes, 0u);  // the writer gone, the read decodes from the map again
  } else {
    CHECK_LT(0u, count.read_bytes);
  }
  CHECK_OK(array_close(a));
  CHECK_OK(posix_mapping_close(m));
}

TESSERA_TEST(posix_mapping, a_file_cut_below_the_map_fails_reads_without_sigbus) {
  // Another program truncates the file between two reads: the next read finds the file shorter than the map, so
  // it keeps to pread and reports what is missing. Touching the map's cut pages would end the process (SIGBUS).
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("cut.b2nd");
  std::vector<uint8_t> data;
  write_small_array(t, path, data);
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  const storage s = posix_mapping_storage(m);
  array a;
  REQUIRE_OK(array_open(a, s, posix_allocator()));
  std::vector<uint8_t> back(data.size());
  REQUIRE_OK(array_read(a, bytes_mut(back.data(), back.size())));
  CHECK(back == data);

  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(m.size / 4)) == 0);
  {
    const reads_scope reads(s);
    CHECK(storage_view(s).empty());  // the file no longer covers the map
    CHECK(!m.leased);
  }
  const status st = array_read(a, bytes_mut(back.data(), back.size()));
  CHECK(!st.ok());
  CHECK(st.code == errc::truncated || st.code == errc::corrupt);
  int64_t start[2] = {40, 0}, stop[2] = {64, 96};  // the last chunks' rows: past the cut
  std::vector<uint8_t> part(24 * 96 * 4);
  CHECK(!array_slice_read(a, start, stop, bytes_mut(part.data(), part.size())).ok());
  CHECK_OK(array_close(a));
  CHECK_OK(posix_mapping_close(m));
}

TESSERA_TEST(posix_mapping, a_truncate_waits_for_the_read_that_holds_the_lease) {
  // Inside a read bracket the lease holds: a truncate from another thread (any program alike) waits in the
  // kernel until the bracket ends, so every mapped page stays readable meanwhile. Without leases the bracket
  // gives no view and the truncate goes ahead.
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("lease.bin");
  test::rng r(5);
  const std::vector<uint8_t> bytes = random_bytes(r, 3 * 65536 + 17);
  REQUIRE(write_os_file(path, bytes));
  const bool leases = leases_granted(path);
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  const storage s = posix_mapping_storage(m);
  std::atomic<bool> truncated{false};
  std::atomic<bool> started{false};
  std::thread cutter;
  {
    const reads_scope reads(s);
    const bytes_view v = storage_view(s);
    CHECK_EQ(!v.empty(), leases);
    cutter = std::thread([&] {
      started = true;
      truncated = ::truncate(path.c_str(), 0) == 0;
    });
    while (!started) std::this_thread::yield();
    // Give the truncate time to reach the kernel and wait on the lease; the pages must stay whole regardless.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (leases) {
      CHECK(!truncated);  // still waiting: the lease is held
      CHECK(std::memcmp(v.data(), bytes.data(), bytes.size()) == 0);  // every page, the last one included
    }
  }
  cutter.join();
  CHECK(truncated);  // the bracket ended: the truncate went ahead
  CHECK_EQ(::access(path.c_str(), F_OK), 0);
  {
    const reads_scope reads(s);
    CHECK(storage_view(s).empty());  // cut below the map
  }
  uint8_t b[1];
  CHECK_ERR(storage_read(s, 0, bytes_mut(b, 1)), errc::truncated);
  CHECK_OK(posix_mapping_close(m));
}

TESSERA_TEST(posix_mapping, brackets_out_of_order_and_a_closed_mapping) {
  // An unbalanced reads_end is a no-op; the storage of a closed mapping refuses reads and size (no descriptor).
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("c.bin");
  test::rng r(3);
  const std::vector<uint8_t> bytes = random_bytes(r, 5000);
  REQUIRE(write_os_file(path, bytes));
  const bool leases = leases_granted(path);
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  const storage s = posix_mapping_storage(m);
  s.reads_end(s.context);
  CHECK_EQ(m.reads, 0u);
  CHECK(!m.leased);
  s.reads_begin(s.context);
  CHECK_EQ(m.reads, 1u);
  CHECK_EQ(m.leased, leases);
  uint8_t b[8];
  REQUIRE_OK(storage_read(s, 100, bytes_mut(b, 8)));
  CHECK(std::memcmp(b, bytes.data() + 100, 8) == 0);
  CHECK_OK(posix_mapping_close(m));  // inside a bracket: the lease goes with the descriptor
  CHECK(!m.leased);
  CHECK_EQ(m.reads, 0u);
  CHECK_ERR(storage_read(s, 0, bytes_mut(b, 1)), errc::io);
  CHECK_ERR(storage_size(s), errc::io);
  CHECK(storage_view(s).empty());
  s.reads_end(s.context);  // the bracket the close cut short: a no-op
  CHECK_EQ(m.reads, 0u);
  s.reads_begin(s.context);  // a closed mapping takes no lease
  CHECK(!m.leased);
  CHECK(storage_view(s).empty());
  s.reads_end(s.context);

  // An empty file maps nothing: a bracket takes no lease and gives no view.
  const std::string empty = dir.file("empty.bin");
  REQUIRE(write_os_file(empty, {}));
  auto er = posix_mapping_open(empty.c_str());
  REQUIRE_OK(er);
  posix_mapping e = *er;
  const storage es = posix_mapping_storage(e);
  es.reads_begin(es.context);
  CHECK(!e.leased);
  CHECK(storage_view(es).empty());
  es.reads_end(es.context);
  CHECK_OK(posix_mapping_close(e));
}

TESSERA_TEST(posix_mapping, a_bracket_of_another_handle_lends_no_view) {
  // Handles share the storage: one handle's open read bracket must not let another handle, outside a bracket of
  // its own, read the map (that bracket may end at any moment). Handle b opens and reads while a bracket of
  // "another handle" (opened on the storage directly) holds the lease: its open goes through read, its array read
  // (its own bracket) through the view.
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("two.b2nd");
  std::vector<uint8_t> data;
  write_small_array(t, path, data);
  const bool leases = leases_granted(path);
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  counting_storage count;
  count.inner = posix_mapping_storage(m);
  const storage s = count.get();
  s.reads_begin(s.context);  // the other handle's read
  CHECK_EQ(!storage_view(s).empty(), leases);
  array b;
  REQUIRE_OK(array_open(b, s, posix_allocator()));
  CHECK_LT(0u, count.read_bytes);  // the header and index through read, the lease notwithstanding
  std::vector<uint8_t> back(data.size());
  REQUIRE_OK(array_read(b, bytes_mut(back.data(), back.size())));  // the first read loads the index's offsets
  CHECK(back == data);
  count.read_bytes = 0;
  std::fill(back.begin(), back.end(), 0);
  REQUIRE_OK(array_read(b, bytes_mut(back.data(), back.size())));
  CHECK(back == data);
  if (leases) CHECK_EQ(count.read_bytes, 0u);  // inside b's own bracket: the chunks through the view
  CHECK_EQ(m.reads, 1u);                         // b's bracket closed, the other still open
  CHECK_EQ(m.leased, leases);
  s.reads_end(s.context);
  CHECK(!m.leased);
  CHECK_OK(array_close(b));
  CHECK_OK(posix_mapping_close(m));
}

TESSERA_TEST(posix_mapping, handles_on_several_threads_share_the_lease) {
  // One handle per thread over one mapping (array_open_again), each reading slices at once: the brackets overlap
  // in every way, the lease is taken by the first and released by the last, and every read is right.
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("threads.b2nd");
  std::vector<uint8_t> data;
  write_small_array(t, path, data);
  auto mr = posix_mapping_open(path.c_str());
  REQUIRE_OK(mr);
  posix_mapping m = *mr;
  const storage s = posix_mapping_storage(m);
  constexpr int kThreads = 4;
  array handles[kThreads];
  REQUIRE_OK(array_open(handles[0], s, posix_allocator()));
  for (int i = 1; i < kThreads; ++i)
    REQUIRE_OK(array_open_again(handles[i], handles[0], posix_allocator(), executor_serial()));
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < kThreads; ++i) {
    readers.emplace_back([&, i] {
      test::rng r(static_cast<uint64_t>(100 + i));
      for (int k = 0; k < 200; ++k) {
        int64_t start[2] = {r.range(0, 63), r.range(0, 95)};
        int64_t stop[2] = {r.range(start[0] + 1, 64), r.range(start[1] + 1, 96)};
        std::vector<uint8_t> got(static_cast<size_t>((stop[0] - start[0]) * (stop[1] - start[1]) * 4));
        if (!array_slice_read(handles[i], start, stop, bytes_mut(got.data(), got.size())).ok()) {
          ++wrong;
          continue;
        }
        size_t at = 0;
        for (int64_t y = start[0]; y < stop[0]; ++y, at += static_cast<size_t>(stop[1] - start[1]) * 4)
          if (std::memcmp(got.data() + at, data.data() + static_cast<size_t>(y * 96 + start[1]) * 4,
                          static_cast<size_t>(stop[1] - start[1]) * 4) != 0)
            ++wrong;
      }
    });
  }
  for (auto& th : readers) th.join();
  CHECK_EQ(wrong.load(), 0);
  CHECK_EQ(m.reads, 0u);
  CHECK(!m.leased);
  for (auto& h : handles) CHECK_OK(array_close(h));
  CHECK_OK(posix_mapping_close(m));
}
