// SPDX-License-Identifier: BSD-3-Clause
// The POSIX port when its system calls fail: each call the port makes is failed on demand (syscall_faults.hpp,
// link-time wrapping) with each errno the port tells apart, and the tests assert the errc it returns, that EINTR
// is retried, that short transfers are completed, that descriptors are closed on the error paths, and that a
// failed write leaves the file (and an array in it) as last committed; a thread pool the system refuses memory,
// locks or threads to frees what it made.
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_directory.hpp"
#include "tessera/port/posix_file.hpp"
#include "tessera/port/posix_mapping.hpp"
#include "tessera/port/thread_pool.hpp"
#include "tessera/storage.hpp"

#include "../support/check.hpp"
#include "posix_test_util.hpp"
#include "syscall_faults.hpp"

using namespace tessera;
using posix_test::temp_dir;
using syscall_faults::call;

namespace {

// Faults armed only inside a test: disarmed at its start and end (gcov and the harness use these calls too).
struct fault_scope {
  fault_scope() { syscall_faults::reset(); }
  ~fault_scope() { syscall_faults::reset(); }
  fault_scope(const fault_scope&) = delete;
  fault_scope& operator=(const fault_scope&) = delete;
};

// An errno and the errc the port turns it into.
struct errno_case {
  int err;
  errc want;
};

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + seed);
  return v;
}

// The file's bytes as the OS sees them.
std::vector<uint8_t> os_contents(const std::string& path) {
  std::vector<uint8_t> v;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return v;
  uint8_t buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  return v;
}

void os_write(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

bool os_exists(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::fclose(f);
  return true;
}

}  // namespace

TESSERA_TEST(posix_faults, pread_errors_eintr_and_short_reads) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("r.bin");
  const auto data = pattern(5000, 1);
  os_write(path, data);
  auto f = posix_file_open(path.c_str(), posix_open::read);
  REQUIRE_OK(f);
  const storage s = posix_file_storage(*f);
  std::vector<uint8_t> back(data.size());

  for (const errno_case c : {errno_case{EIO, errc::io}, errno_case{EISDIR, errc::io}, errno_case{EBADF, errc::io},
                             errno_case{ENOMEM, errc::io}}) {
    syscall_faults::fail(call::pread, 1, c.err);
    CHECK_ERR(storage_read(s, 0, bytes_mut(back.data(), back.size())), c.want);
  }
  // EINTR, twice: retried.
  syscall_faults::reset();
  syscall_faults::fail(call::pread, 1, EINTR, 2);
  REQUIRE_OK(storage_read(s, 0, bytes_mut(back.data(), back.size())));
  CHECK(back == data);
  CHECK_EQ(syscall_faults::calls(call::pread), 3);
  // A short read is continued where it stopped.
  back.assign(back.size(), 0);
  syscall_faults::shorten(call::pread, 1, 100);
  REQUIRE_OK(storage_read(s, 0, bytes_mut(back.data(), back.size())));
  CHECK(back == data);
  CHECK_EQ(syscall_faults::calls(call::pread), 5);
  // A read that returns 0 (the file ends) is a truncated read.
  syscall_faults::shorten(call::pread, 1, 0);
  CHECK_ERR(storage_read(s, 0, bytes_mut(back.data(), back.size())), errc::truncated);
  posix_file ff = *f;
  CHECK_OK(posix_file_close(ff));
}

TESSERA_TEST(posix_faults, pwrite_errors_leave_the_file_as_it_was) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("w.bin");
  const auto before = pattern(3000, 2);
  const auto update = pattern(2000, 9);
  os_write(path, before);
  auto f = posix_file_open(path.c_str(), posix_open::read_write);
  REQUIRE_OK(f);
  const storage s = posix_file_storage(*f);

  for (const errno_case c : {errno_case{ENOSPC, errc::no_space}, errno_case{EDQUOT, errc::no_space},
                             errno_case{EFBIG, errc::no_space}, errno_case{EIO, errc::io},
                             errno_case{EBADF, errc::io}}) {
    syscall_faults::fail(call::pwrite, 1, c.err);
    CHECK_ERR(storage_write(s, 500, bytes_view(update.data(), update.size())), c.want);
    CHECK(os_contents(path) == before);
  }
  // A write that moves nothing makes no progress: reported as full rather than retried forever.
  syscall_faults::shorten(call::pwrite, 1, 0);
  CHECK_ERR(storage_write(s, 500, bytes_view(update.data(), update.size())), errc::no_space);
  CHECK(os_contents(path) == before);

  // EINTR retried; a short write continued: the bytes land whole.
  auto expect = before;
  std::copy(update.begin(), update.end(), expect.begin() + 500);
  syscall_faults::reset();
  syscall_faults::fail(call::pwrite, 1, EINTR);
  syscall_faults::shorten(call::pwrite, 2, 7);
  REQUIRE_OK(storage_write(s, 500, bytes_view(update.data(), update.size())));
  CHECK_EQ(syscall_faults::calls(call::pwrite), 3);
  CHECK(os_contents(path) == expect);
  posix_file ff = *f;
  CHECK_OK(posix_file_close(ff));
}

TESSERA_TEST(posix_faults, fstat_ftruncate_fsync_errors) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("t.bin");
  os_write(path, pattern(1000, 3));
  auto f = posix_file_open(path.c_str(), posix_open::read_write);
  REQUIRE_OK(f);
  const storage s = posix_file_storage(*f);

  syscall_faults::fail(call::fstat, 1, EIO);
  CHECK_ERR(storage_size(s), errc::io);

  for (const errno_case c : {errno_case{ENOSPC, errc::no_space}, errno_case{EFBIG, errc::no_space},
                             errno_case{EIO, errc::io}, errno_case{EPERM, errc::io}}) {
    syscall_faults::fail(call::ftruncate, 1, c.err);
    CHECK_ERR(storage_truncate(s, 5000), c.want);
    CHECK_EQ(os_contents(path).size(), 1000u);
  }
  syscall_faults::fail(call::ftruncate, 1, EINTR);
  REQUIRE_OK(storage_truncate(s, 400));
  CHECK_EQ(os_contents(path).size(), 400u);

  for (const errno_case c : {errno_case{ENOSPC, errc::no_space}, errno_case{EDQUOT, errc::no_space},
                             errno_case{EIO, errc::io}}) {
    syscall_faults::fail(call::fsync, 1, c.err);
    CHECK_ERR(storage_sync(s), c.want);
  }
  syscall_faults::fail(call::fsync, 1, EINTR);
  CHECK_OK(storage_sync(s));
  posix_file ff = *f;
  CHECK_OK(posix_file_close(ff));
}

TESSERA_TEST(posix_faults, open_errors) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("o.bin");
  os_write(path, pattern(100, 4));

  const errno_case cases[] = {{ENOENT, errc::io},       {EACCES, errc::io},       {EPERM, errc::io},
                              {EISDIR, errc::io},       {ENOTDIR, errc::io},      {EROFS, errc::io},
                              {EEXIST, errc::io},       {EMFILE, errc::io},       {ENFILE, errc::io},
                              {ENAMETOOLONG, errc::io}, {EOVERFLOW, errc::io},    {ENOSPC, errc::no_space},
                              {EDQUOT, errc::no_space}, {EBUSY, errc::io}};
  for (const errno_case c : cases) {
    syscall_faults::fail(call::open, 1, c.err);
    CHECK_ERR(posix_file_open(path.c_str(), posix_open::read_write), c.want);
  }
  // EINTR: retried.
  syscall_faults::reset();
  syscall_faults::fail(call::open, 1, EINTR);
  {
    auto f = posix_file_open(path.c_str(), posix_open::read);
    REQUIRE_OK(f);
    CHECK_EQ(syscall_faults::calls(call::open), 2);
    posix_file ff = *f;
    CHECK_OK(posix_file_close(ff));
  }
  // fstat of the new descriptor fails: an error, and the descriptor is closed.
  syscall_faults::reset();
  syscall_faults::fail(call::fstat, 1, EIO);
  CHECK_ERR(posix_file_open(path.c_str(), posix_open::read), errc::io);
  CHECK_EQ(syscall_faults::calls(call::close), 1);
}

TESSERA_TEST(posix_faults, creating_a_file_syncs_its_directory) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  // The directory's fsync fails: the open fails and closes both descriptors (the file's, the directory's).
  syscall_faults::fail(call::fsync, 1, EIO);
  CHECK_ERR(posix_file_open(dir.file("a.bin").c_str(), posix_open::create), errc::io);
  CHECK_EQ(syscall_faults::calls(call::close), 2);
  // A file system that cannot fsync directories (EINVAL): success.
  syscall_faults::reset();
  syscall_faults::fail(call::fsync, 1, EINVAL);
  {
    auto f = posix_file_open(dir.file("b.bin").c_str(), posix_open::create);
    REQUIRE_OK(f);
    posix_file ff = *f;
    CHECK_OK(posix_file_close(ff));
  }
  // EINTR on the directory's fsync: retried.
  syscall_faults::reset();
  syscall_faults::fail(call::fsync, 1, EINTR);
  {
    auto f = posix_file_open(dir.file("c.bin").c_str(), posix_open::create);
    REQUIRE_OK(f);
    CHECK_EQ(syscall_faults::calls(call::fsync), 2);
    posix_file ff = *f;
    CHECK_OK(posix_file_close(ff));
  }
  // Opening the directory to fsync it fails (the second open: the first created the file).
  syscall_faults::reset();
  syscall_faults::fail(call::open, 2, EACCES);
  CHECK_ERR(posix_file_open(dir.file("d.bin").c_str(), posix_open::create), errc::io);
  // The file exists, then is removed between the exclusive open and the plain one: a third open creates it.
  syscall_faults::reset();
  syscall_faults::fail(call::open, 2, ENOENT);
  {
    auto f = posix_file_open(dir.file("b.bin").c_str(), posix_open::replace);
    REQUIRE_OK(f);
    CHECK_LE(3, syscall_faults::calls(call::open));
    posix_file ff = *f;
    CHECK_OK(posix_file_close(ff));
  }
}

TESSERA_TEST(posix_faults, close_errors) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("c.bin");
  os_write(path, pattern(10, 5));
  for (const errno_case c : {errno_case{EIO, errc::io}, errno_case{ENOSPC, errc::no_space},
                             errno_case{EDQUOT, errc::no_space}, errno_case{EINTR, errc::ok}}) {
    auto f = posix_file_open(path.c_str(), posix_open::read_write);
    REQUIRE_OK(f);
    posix_file ff = *f;
    syscall_faults::fail(call::close, 1, c.err);
    const status s = posix_file_close(ff);
    CHECK_EQ(s.code, c.want);
    CHECK_EQ(ff.fd, -1);
  }
}

TESSERA_TEST(posix_faults, rename_and_remove_errors) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string from = dir.file("from.bin");
  const std::string to = dir.file("to.bin");
  os_write(from, pattern(10, 6));
  for (const errno_case c : {errno_case{ENOENT, errc::io}, errno_case{ENOSPC, errc::no_space},
                             errno_case{EACCES, errc::io}, errno_case{EXDEV, errc::io}}) {
    syscall_faults::fail(call::rename, 1, c.err);
    CHECK_ERR(posix_file_rename(from.c_str(), to.c_str()), c.want);
    CHECK(os_exists(from));
    CHECK(!os_exists(to));
  }
  // The rename happens, its directory's fsync fails: reported (the entry may not be durable).
  syscall_faults::fail(call::fsync, 1, EIO);
  CHECK_ERR(posix_file_rename(from.c_str(), to.c_str()), errc::io);
  CHECK(os_exists(to));

  for (const int e : {ENOENT, EISDIR, EPERM, EIO}) {
    syscall_faults::fail(call::unlink, 1, e);
    CHECK_ERR(posix_file_remove(to.c_str()), errc::io);
    CHECK(os_exists(to));
  }
}

TESSERA_TEST(posix_faults, mapping_errors) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("m.bin");
  os_write(path, pattern(4096, 7));
  syscall_faults::fail(call::open, 1, ENOENT);
  CHECK_ERR(posix_mapping_open(path.c_str()), errc::io);
  syscall_faults::reset();
  syscall_faults::fail(call::fstat, 1, EIO);
  CHECK_ERR(posix_mapping_open(path.c_str()), errc::io);
  CHECK_EQ(syscall_faults::calls(call::close), 1);
  for (const int e : {ENOMEM, EOVERFLOW, EACCES, EPERM, ENODEV, EAGAIN, EINVAL}) {
    syscall_faults::reset();
    syscall_faults::fail(call::mmap, 1, e);
    CHECK_ERR(posix_mapping_open(path.c_str()), errc::io);
    CHECK_EQ(syscall_faults::calls(call::close), 1);  // the descriptor is not leaked
  }
  syscall_faults::reset();
  auto m = posix_mapping_open(path.c_str());
  REQUIRE_OK(m);
  posix_mapping mm = *m;
  // fstat failing: the size reports it, and a read bracket takes no lease (its check of the file's size failed)
  // and so gives no view.
  const storage ms = posix_mapping_storage(mm);
  syscall_faults::reset();
  syscall_faults::fail(call::fstat, 1, EIO);
  CHECK_ERR(storage_size(ms), errc::io);
  syscall_faults::reset();
  syscall_faults::fail(call::fstat, 1, EIO);
  ms.reads_begin(ms.context);
  CHECK(!mm.leased);
  CHECK(storage_view(ms).empty());
  ms.reads_end(ms.context);
  syscall_faults::reset();
  syscall_faults::fail(call::munmap, 1, EINVAL);
  CHECK_ERR(posix_mapping_close(mm), errc::io);
  CHECK(mm.data == nullptr);
}

TESSERA_TEST(posix_faults, directory_errors) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string sub = dir.file("sub");
  for (const errno_case c : {errno_case{EACCES, errc::io}, errno_case{EPERM, errc::io}, errno_case{ENOTDIR, errc::io},
                             errno_case{ENOSPC, errc::no_space}, errno_case{EIO, errc::io}}) {
    syscall_faults::fail(call::mkdir, 1, c.err);
    CHECK_ERR(posix_directory_open(sub.c_str(), true), c.want);
  }
  for (const errno_case c : {errno_case{ENOTDIR, errc::io}, errno_case{EMFILE, errc::io}}) {
    syscall_faults::fail(call::open, 1, c.err);
    CHECK_ERR(posix_directory_open(dir.path().c_str(), false), c.want);
  }
  auto d = posix_directory_open(sub.c_str(), true);
  REQUIRE_OK(d);
  const storage_directory sd = posix_directory_interface(*d);

  // Opening an entry: openat fails; the new entry's directory fsync fails.
  storage st;
  syscall_faults::fail(call::openat, 1, ENOSPC);
  CHECK_ERR(storage_directory_open(sd, "e", storage_open::replace, &st), errc::no_space);
  syscall_faults::fail(call::fsync, 1, EIO);
  CHECK_ERR(storage_directory_open(sd, "e", storage_open::replace, &st), errc::io);
  REQUIRE_OK(storage_directory_open(sd, "e", storage_open::replace, &st));
  CHECK_OK(storage_directory_close(sd, &st));

  for (const errno_case c : {errno_case{ENOENT, errc::io}, errno_case{ENOSPC, errc::no_space},
                             errno_case{EACCES, errc::io}, errno_case{EPERM, errc::io}, errno_case{EIO, errc::io}}) {
    syscall_faults::fail(call::renameat, 1, c.err);
    CHECK_ERR(storage_directory_rename(sd, "e", "f"), c.want);
  }
  for (const int e : {ENOENT, EISDIR, EPERM, EACCES, EIO}) {
    syscall_faults::fail(call::unlinkat, 1, e);
    CHECK_ERR(storage_directory_remove(sd, "e"), errc::io);
  }
  CHECK(os_exists(sub + "/e"));
  syscall_faults::fail(call::fsync, 1, EIO);
  CHECK_ERR(storage_directory_remove(sd, "e"), errc::io);  // removed; its directory's fsync failed
  CHECK(!os_exists(sub + "/e"));

  posix_directory dd = *d;
  syscall_faults::fail(call::close, 1, EIO);
  CHECK_ERR(posix_directory_close(dd), errc::io);
  CHECK_EQ(dd.fd, -1);
}

// An array in a file, the disk full from the Nth pwrite of an update on (each N the update makes): the update
// fails with no_space and the file reopened holds the array as last committed, or (a full disk met only by the
// tidying after the commit, whose errors are not the caller's) it succeeds and the file holds the update.
TESSERA_TEST(posix_faults, a_full_disk_leaves_the_array_as_committed) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("a.b2frame");
  array_params p;
  p.ndim = 1;
  p.shape[0] = 64;
  p.chunkshape[0] = 16;
  p.blockshape[0] = 8;
  p.dtype = span<const char>("<i4", 3);
  std::vector<int32_t> committed(64), update(64);
  for (int i = 0; i < 64; ++i) {
    committed[static_cast<size_t>(i)] = i;
    update[static_cast<size_t>(i)] = 1000 - i;
  }
  {
    auto f = posix_file_open(path.c_str(), posix_open::create);
    REQUIRE_OK(f);
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(posix_file_storage(*f)), posix_allocator(), p,
                            array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(committed.data()), 256))));
    REQUIRE_OK(array_close(a));
    posix_file ff = *f;
    REQUIRE_OK(posix_file_close(ff));
  }
  // How many pwrites a successful update makes, on a copy of the file.
  int writes = 0;
  {
    const std::string copy = dir.file("copy.b2frame");
    os_write(copy, os_contents(path));
    auto f = posix_file_open(copy.c_str(), posix_open::read_write);
    REQUIRE_OK(f);
    array a;
    array_open_options o;
    o.frame.writable = true;
    REQUIRE_OK(array_open(a, posix_file_storage(*f), posix_allocator(), o));
    const int64_t start[1] = {0}, stop[1] = {64};
    syscall_faults::reset();
    REQUIRE_OK(array_slice_write(a, start, stop, bytes_view(reinterpret_cast<const uint8_t*>(update.data()), 256)));
    writes = syscall_faults::calls(call::pwrite);
    REQUIRE_OK(array_close(a));
    posix_file ff = *f;
    REQUIRE_OK(posix_file_close(ff));
  }
  REQUIRE(writes > 0);
  int failed = 0;
  for (int n = 1; n <= writes; ++n) {
    syscall_faults::reset();
    auto f = posix_file_open(path.c_str(), posix_open::read_write);
    REQUIRE_OK(f);
    array a;
    array_open_options o;
    o.frame.writable = true;
    REQUIRE_OK(array_open(a, posix_file_storage(*f), posix_allocator(), o));
    const int64_t start[1] = {0}, stop[1] = {64};
    syscall_faults::fail(call::pwrite, n, ENOSPC, 1000);
    const status w =
        array_slice_write(a, start, stop, bytes_view(reinterpret_cast<const uint8_t*>(update.data()), 256));
    if (!w.ok()) {
      CHECK_EQ(w.code, errc::no_space);
      ++failed;
    }
    syscall_faults::reset();
    (void)array_close(a);  // uncommitted: the failed write's changes are dropped
    posix_file ff = *f;
    REQUIRE_OK(posix_file_close(ff));

    auto r = posix_file_open(path.c_str(), posix_open::read);
    REQUIRE_OK(r);
    array b;
    REQUIRE_OK(array_open(b, posix_file_storage(*r), posix_allocator()));
    std::vector<int32_t> back(64, -1);
    REQUIRE_OK(array_read(b, bytes_mut(reinterpret_cast<uint8_t*>(back.data()), 256)));
    CHECK(back == (w.ok() ? update : committed));
    REQUIRE_OK(array_close(b));
    posix_file rr = *r;
    REQUIRE_OK(posix_file_close(rr));
  }
  CHECK_LE(1, failed);
}

// Slices read from a file through pread (the tasks read their blocks, a run of consecutive blocks with one
// pread, after one pread of each chunk's header and block starts): each pread of a read failed in turn is io,
// each one that meets the file's end (returns 0) is truncated, each one cut short is continued and the read is
// right; one and two threads. And the file cut short under an open array: reads fail as truncated or read right.
TESSERA_TEST(posix_faults, slice_reads_from_a_file_fail_at_every_pread) {
  fault_scope faults;
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("planes.b2nd");
  array_params p;
  p.ndim = 3;
  const int64_t shape[3] = {40, 48, 56};
  const int32_t chunks[3] = {20, 24, 28}, blocks[3] = {5, 8, 7};
  for (int d = 0; d < 3; ++d) {
    p.shape[d] = shape[d];
    p.chunkshape[d] = chunks[d];
    p.blockshape[d] = blocks[d];
  }
  p.dtype = span<const char>("<f4", 3);
  p.compressor = codec::blosclz;
  std::vector<float> items(40 * 48 * 56);
  for (size_t i = 0; i < items.size(); ++i) items[i] = static_cast<float>(i % 977) * 0.5f + static_cast<float>(i / 3000);
  {
    auto f = posix_file_open(path.c_str(), posix_open::replace);
    REQUIRE_OK(f);
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(posix_file_storage(*f)), posix_allocator(), p,
                            array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(items.data()), items.size() * 4))));
    REQUIRE_OK(array_close(a));
    posix_file ff = *f;
    REQUIRE_OK(posix_file_close(ff));
  }
  // A plane along y (runs of 4 blocks along z in each chunk), along z (no runs), along x, a box, the whole array.
  const int64_t starts[5][3] = {{0, 17, 0}, {0, 0, 30}, {12, 0, 0}, {3, 5, 9}, {0, 0, 0}};
  const int64_t stops[5][3] = {{40, 18, 56}, {40, 48, 31}, {13, 48, 56}, {37, 40, 50}, {40, 48, 56}};
  const auto expected = [&](int q) {
    std::vector<float> want;
    for (int64_t x = starts[q][0]; x < stops[q][0]; ++x)
      for (int64_t y = starts[q][1]; y < stops[q][1]; ++y)
        for (int64_t z = starts[q][2]; z < stops[q][2]; ++z) want.push_back(items[static_cast<size_t>((x * 48 + y) * 56 + z)]);
    return want;
  };
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  auto f = posix_file_open(path.c_str(), posix_open::read);
  REQUIRE_OK(f);
  for (int threads = 1; threads <= 2; ++threads) {
    array a;
    array_open_options o;
    if (threads == 2) o.exec = thread_pool_executor(pool);
    REQUIRE_OK(array_open(a, posix_file_storage(*f), posix_allocator(), o));
    for (int q = 0; q < 5; ++q) {
      const std::vector<float> want = expected(q);
      std::vector<float> got(want.size());
      const bytes_mut out(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4);
      REQUIRE_OK(array_slice_read(a, starts[q], stops[q], out));  // the index read, if the open left it
      syscall_faults::reset();
      REQUIRE_OK(array_slice_read(a, starts[q], stops[q], out));
      CHECK(got == want);
      const int preads = syscall_faults::calls(call::pread);
      // The plane along y: 4 chunks, each one pread of its prefix and one per run of 4 blocks (4 x 4 runs).
      if (q == 0) CHECK_EQ(preads, 4 * (1 + 4));
      REQUIRE(preads > 0);
      for (int n = 1; n <= preads; ++n) {
        syscall_faults::reset();
        syscall_faults::fail(call::pread, n, EIO);
        CHECK_ERR(array_slice_read(a, starts[q], stops[q], out), errc::io);
        syscall_faults::reset();
        syscall_faults::shorten(call::pread, n, 0);
        CHECK_ERR(array_slice_read(a, starts[q], stops[q], out), errc::truncated);
        syscall_faults::reset();
        syscall_faults::shorten(call::pread, n, 3);
        got.assign(got.size(), -1.0f);
        REQUIRE_OK(array_slice_read(a, starts[q], stops[q], out));
        CHECK(got == want);
      }
    }
    REQUIRE_OK(array_close(a));
  }
  // The file cut short under an open array (another process truncating it): each read fails as truncated or,
  // when its bytes lie before the cut, reads right.
  syscall_faults::reset();
  const std::vector<uint8_t> whole = os_contents(path);
  REQUIRE(whole.size() > 4096);
  int cut_reads = 0;
  for (size_t cut = 1024; cut < whole.size(); cut += whole.size() / 9) {
    array a;
    REQUIRE_OK(array_open(a, posix_file_storage(*f), posix_allocator()));
    REQUIRE(::truncate(path.c_str(), static_cast<off_t>(cut)) == 0);
    for (int q = 0; q < 5; ++q) {
      const std::vector<float> want = expected(q);
      std::vector<float> got(want.size());
      const status s = array_slice_read(a, starts[q], stops[q], bytes_mut(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4));
      if (s.ok()) {
        CHECK(got == want);
      } else {
        CHECK_EQ(s.code, errc::truncated);
        ++cut_reads;
      }
    }
    REQUIRE_OK(array_close(a));
    os_write(path, whole);
  }
  CHECK_LE(5, cut_reads);
  posix_file ff = *f;
  REQUIRE_OK(posix_file_close(ff));
  thread_pool_release(pool);
}

// A thread pool whose memory, lock, condition variables or threads the system refuses: init returns
// out_of_memory (ENOMEM, EAGAIN, or no memory) or io (any other error), leaves the pool empty (a serial
// executor), joins the threads it had started and frees everything (LeakSanitizer); the next init works.
TESSERA_TEST(posix_faults, thread_pool_init_errors) {
  fault_scope scope;
  struct fault_case {
    call c;
    int nth;
    int err;
    errc want;
  };
  const fault_case cases[] = {
      {call::posix_memalign, 1, ENOMEM, errc::out_of_memory}, {call::pthread_mutex_init, 1, EAGAIN, errc::out_of_memory},
      {call::pthread_mutex_init, 1, EINVAL, errc::io},        {call::pthread_cond_init, 1, ENOMEM, errc::out_of_memory},
      {call::pthread_cond_init, 2, EPERM, errc::io},           {call::calloc, 1, ENOMEM, errc::out_of_memory},
      {call::pthread_create, 1, EAGAIN, errc::out_of_memory},  {call::pthread_create, 3, EPERM, errc::io},
  };
  for (const fault_case& fc : cases) {
    syscall_faults::reset();
    syscall_faults::fail(fc.c, fc.nth, fc.err);
    thread_pool pool;
    const status s = thread_pool_init(pool, 4);
    CHECK_ERR(s, fc.want);
    CHECK_EQ(syscall_faults::calls(fc.c), fc.nth);
    CHECK_EQ(thread_pool_workers(pool), 0u);
    syscall_faults::reset();
    REQUIRE_OK(thread_pool_init(pool, 4));
    CHECK_EQ(thread_pool_workers(pool), 4u);
  }
}
