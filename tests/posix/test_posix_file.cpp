// SPDX-License-Identifier: BSD-3-Clause
// posix_file as a storage: read/write/size/truncate/sync against an in-memory model, reads past the end, holes,
// the open modes, and the errors of missing files, read-only files, directories and full devices.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "tessera/port/posix_file.hpp"
#include "tessera/storage.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "posix_test_util.hpp"

using namespace tessera;
using posix_test::temp_dir;

namespace {

bytes_view view_of(const std::vector<uint8_t>& v) { return bytes_view(v.data(), v.size()); }

std::vector<uint8_t> random_bytes(test::rng& r, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(r.next());
  return v;
}

// The file's bytes as the OS sees them (independent of the storage under test).
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

// The storage's size, or UINT64_MAX (and a failure) when it cannot say.
uint64_t size_of(test::context& t, const storage& s) {
  auto r = storage_size(s);
  CHECK_OK(r);
  return r.ok() ? *r : UINT64_MAX;
}

void write_os_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

}  // namespace

TESSERA_TEST(posix_file, write_read_size_truncate_sync) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("a.bin");
  posix_file f;
  {
    auto fr = posix_file_open(path.c_str(), posix_open::create);
    REQUIRE_OK(fr);
    f = *fr;
  }
  const storage s = posix_file_storage(f);
  REQUIRE(s.write != nullptr);
  REQUIRE(s.truncate != nullptr);
  CHECK_EQ(size_of(t, s), 0u);

  test::rng r(1);
  const auto data = random_bytes(r, 100000);
  REQUIRE_OK(storage_write(s, 0, view_of(data)));
  CHECK_EQ(size_of(t, s), 100000u);
  std::vector<uint8_t> back(100000);
  REQUIRE_OK(storage_read(s, 0, bytes_mut(back.data(), back.size())));
  CHECK(back == data);
  // A range in the middle.
  std::vector<uint8_t> mid(777);
  REQUIRE_OK(storage_read(s, 12345, bytes_mut(mid.data(), mid.size())));
  CHECK(std::memcmp(mid.data(), data.data() + 12345, mid.size()) == 0);
  CHECK_OK(storage_sync(s));
  CHECK(os_contents(path) == data);

  // Shrink, then extend with zeros.
  REQUIRE_OK(storage_truncate(s, 5000));
  CHECK_EQ(size_of(t, s), 5000u);
  REQUIRE_OK(storage_truncate(s, 9000));
  std::vector<uint8_t> ext(9000);
  REQUIRE_OK(storage_read(s, 0, bytes_mut(ext.data(), ext.size())));
  CHECK(std::memcmp(ext.data(), data.data(), 5000) == 0);
  bool zeros = true;
  for (size_t i = 5000; i < 9000; ++i) zeros = zeros && ext[i] == 0;
  CHECK(zeros);
  CHECK_OK(storage_sync(s));
  CHECK_OK(posix_file_close(f));
  CHECK_EQ(f.fd, -1);
  CHECK_OK(posix_file_close(f));  // closing twice is a no-op

  // Reopened with create: the contents are kept; with replace: emptied.
  {
    auto fr = posix_file_open(path.c_str(), posix_open::create);
    REQUIRE_OK(fr);
    f = *fr;
  }
  CHECK_EQ(size_of(t, posix_file_storage(f)), 9000u);
  CHECK_OK(posix_file_close(f));
  {
    auto fr = posix_file_open(path.c_str(), posix_open::replace);
    REQUIRE_OK(fr);
    f = *fr;
  }
  CHECK_EQ(size_of(t, posix_file_storage(f)), 0u);
  CHECK_OK(posix_file_close(f));
}

TESSERA_TEST(posix_file, random_operations_match_a_model) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("model.bin");
  auto fr = posix_file_open(path.c_str(), posix_open::replace);
  REQUIRE_OK(fr);
  posix_file f = *fr;
  const storage s = posix_file_storage(f);
  std::vector<uint8_t> model;
  test::rng r(2024);
  std::vector<uint8_t> buf;
  for (int op = 0; op < 3000; ++op) {
    const int kind = static_cast<int>(r.range(0, 9));
    if (kind < 4) {  // write, sometimes past the end (a hole)
      const uint64_t off = static_cast<uint64_t>(r.range(0, static_cast<int64_t>(model.size()) + 3000));
      const size_t n = static_cast<size_t>(r.range(1, r.chance(5) ? 70000 : 600));
      buf = random_bytes(r, n);
      REQUIRE_OK(storage_write(s, off, view_of(buf)));
      if (model.size() < off + n) model.resize(off + n, 0);
      std::memcpy(model.data() + off, buf.data(), n);
    } else if (kind < 8) {  // read: inside, or reaching past the end
      const uint64_t off = static_cast<uint64_t>(r.range(0, static_cast<int64_t>(model.size()) + 10));
      const size_t n = static_cast<size_t>(r.range(1, 5000));
      buf.assign(n, 0xee);
      const status st = storage_read(s, off, bytes_mut(buf.data(), n));
      if (off + n <= model.size()) {
        REQUIRE_OK(st);
        REQUIRE(std::memcmp(buf.data(), model.data() + off, n) == 0);
      } else {
        CHECK_ERR(st, errc::truncated);
      }
    } else if (kind == 8) {
      const uint64_t n = static_cast<uint64_t>(r.range(0, static_cast<int64_t>(model.size()) + 4000));
      REQUIRE_OK(storage_truncate(s, n));
      model.resize(n, 0);
    } else {
      REQUIRE_EQ(size_of(t, s), model.size());
      if (r.chance(10)) CHECK_OK(storage_sync(s));
    }
  }
  CHECK_OK(storage_sync(s));
  CHECK_OK(posix_file_close(f));
  CHECK(os_contents(path) == model);
}

TESSERA_TEST(posix_file, read_past_end_is_truncated) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("short.bin");
  write_os_file(path, std::vector<uint8_t>(100, 7));
  auto fr = posix_file_open(path.c_str(), posix_open::read);
  REQUIRE_OK(fr);
  posix_file f = *fr;
  const storage s = posix_file_storage(f);
  uint8_t b[200];
  CHECK_OK(storage_read(s, 0, bytes_mut(b, 100)));
  CHECK_OK(storage_read(s, 99, bytes_mut(b, 1)));
  CHECK_ERR(storage_read(s, 99, bytes_mut(b, 2)), errc::truncated);  // straddles the end
  CHECK_ERR(storage_read(s, 100, bytes_mut(b, 1)), errc::truncated);  // starts at the end
  CHECK_ERR(storage_read(s, 0, bytes_mut(b, 101)), errc::truncated);
  CHECK_ERR(storage_read(s, uint64_t{1} << 40, bytes_mut(b, 1)), errc::truncated);
  // Offsets no off_t can hold: an error value, not a wrapped offset.
  const status far = storage_read(s, UINT64_MAX - 10, bytes_mut(b, 5));
  CHECK(!far.ok());
  CHECK_OK(storage_read(s, 5, bytes_mut(b, 0)));  // empty reads succeed anywhere
  CHECK_OK(posix_file_close(f));
}

TESSERA_TEST(posix_file, write_past_end_leaves_a_zero_hole) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("hole.bin");
  auto fr = posix_file_open(path.c_str(), posix_open::create);
  REQUIRE_OK(fr);
  posix_file f = *fr;
  const storage s = posix_file_storage(f);
  const uint8_t head[3] = {1, 2, 3};
  const uint8_t tail[4] = {9, 8, 7, 6};
  REQUIRE_OK(storage_write(s, 0, bytes_view(head, 3)));
  const uint64_t far = (uint64_t{1} << 20) + 17;  // past the end: a hole (sparse on most file systems)
  REQUIRE_OK(storage_write(s, far, bytes_view(tail, 4)));
  CHECK_EQ(size_of(t, s), far + 4);
  std::vector<uint8_t> all(static_cast<size_t>(far + 4), 0xff);
  REQUIRE_OK(storage_read(s, 0, bytes_mut(all.data(), all.size())));
  CHECK(std::memcmp(all.data(), head, 3) == 0);
  CHECK(std::memcmp(all.data() + far, tail, 4) == 0);
  size_t nonzero = 0;
  for (size_t i = 3; i < far; ++i) nonzero += all[i] != 0;
  CHECK_EQ(nonzero, 0u);
  CHECK_OK(posix_file_close(f));
  CHECK_EQ(os_contents(path).size(), far + 4);
}

TESSERA_TEST(posix_file, open_errors) {
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string missing = dir.file("missing.bin");
  CHECK_ERR(posix_file_open(missing.c_str(), posix_open::read), errc::io);
  CHECK_ERR(posix_file_open(missing.c_str(), posix_open::read_write), errc::io);
  CHECK(access(missing.c_str(), F_OK) != 0);  // neither mode creates it
  const std::string in_missing_dir = dir.file("no/such/dir.bin");
  CHECK_ERR(posix_file_open(in_missing_dir.c_str(), posix_open::create), errc::io);
  CHECK_ERR(posix_file_open("", posix_open::read), errc::invalid_argument);
  CHECK_ERR(posix_file_open(nullptr, posix_open::read), errc::invalid_argument);
  auto e = posix_file_open(missing.c_str(), posix_open::read).err();
  CHECK(std::strstr(e.message, "open") != nullptr);  // the message names the operation

  // A directory, in every mode.
  for (posix_open m : {posix_open::read, posix_open::read_write, posix_open::create, posix_open::replace}) {
    auto r = posix_file_open(dir.path().c_str(), m);
    CHECK_ERR(r, errc::io);
    if (!r.ok()) CHECK(std::strstr(r.err().message, "directory") != nullptr);
  }
  // A regular file below a regular file.
  const std::string plain = dir.file("plain");
  write_os_file(plain, {1});
  CHECK_ERR(posix_file_open((plain + "/x").c_str(), posix_open::create), errc::io);
}

TESSERA_TEST(posix_file, read_only_files) {
  temp_dir dir;
  REQUIRE(dir.ok());
  REQUIRE(chmod(dir.path().c_str(), 0755) == 0);
  const std::string path = dir.file("ro.bin");
  write_os_file(path, std::vector<uint8_t>(64, 5));
  REQUIRE(chmod(path.c_str(), 0444) == 0);

  // Opened for reading: the storage has no write or truncate, and the checked calls say so.
  auto fr = posix_file_open(path.c_str(), posix_open::read);
  REQUIRE_OK(fr);
  posix_file f = *fr;
  CHECK(!f.writable);
  const storage s = posix_file_storage(f);
  CHECK(s.write == nullptr);
  CHECK(s.truncate == nullptr);
  const uint8_t x = 1;
  CHECK_ERR(storage_write(s, 0, bytes_view(&x, 1)), errc::unsupported);
  CHECK_ERR(storage_truncate(s, 0), errc::unsupported);
  uint8_t b[64];
  CHECK_OK(storage_read(s, 0, bytes_mut(b, 64)));
  CHECK_EQ(b[63], 5);

  // A descriptor that cannot write, behind a storage that claims it can: pwrite's failure is an io error
  // naming the call.
  posix_file lying = f;
  lying.writable = true;
  const storage ls = posix_file_storage(lying);
  const status ws = storage_write(ls, 0, bytes_view(&x, 1));
  CHECK_ERR(ws, errc::io);
  CHECK(std::strstr(ws.message, "pwrite") != nullptr);
  CHECK_ERR(storage_truncate(ls, 0), errc::io);
  CHECK_OK(posix_file_close(f));

  // Opening it for writing is refused by the permissions (root ignores them: test as an unprivileged user).
  const bool root = geteuid() == 0;
  if (root) REQUIRE(seteuid(65534) == 0);
  auto w = posix_file_open(path.c_str(), posix_open::read_write);
  auto c = posix_file_open(path.c_str(), posix_open::create);
  auto blocked = posix_file_open(dir.file("new.bin").c_str(), posix_open::create);  // the directory is 0755
  if (root) REQUIRE(seteuid(0) == 0);
  CHECK_ERR(w, errc::io);
  if (!w.ok()) CHECK(std::strstr(w.err().message, "permission") != nullptr);
  CHECK_ERR(c, errc::io);
  CHECK_ERR(blocked, errc::io);
  CHECK_EQ(os_contents(path).size(), 64u);
}

TESSERA_TEST(posix_file, full_device_is_no_space) {
  // /dev/full: every write fails with ENOSPC.
  auto fr = posix_file_open("/dev/full", posix_open::read_write);
  REQUIRE_OK(fr);
  posix_file f = *fr;
  const uint8_t data[16] = {};
  CHECK_ERR(storage_write(posix_file_storage(f), 0, bytes_view(data, 16)), errc::no_space);
  CHECK_OK(posix_file_close(f));
}

TESSERA_TEST(posix_file, file_size_limit_is_no_space_after_a_short_write) {
  // RLIMIT_FSIZE: pwrite stops short at the limit, then fails with EFBIG. The loop must write up to the limit
  // and report no_space, not io, and not spin.
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("limited.bin");
  auto fr = posix_file_open(path.c_str(), posix_open::create);
  REQUIRE_OK(fr);
  posix_file f = *fr;
  const storage s = posix_file_storage(f);
  struct rlimit old;
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = 10000;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  std::vector<uint8_t> data(30000, 0x3c);
  const status st = storage_write(s, 0, view_of(data));
  const status st2 = storage_truncate(s, 20000);
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  CHECK_ERR(st, errc::no_space);
  CHECK_ERR(st2, errc::no_space);
  CHECK_EQ(size_of(t, s), 10000u);  // the short write went through up to the limit
  CHECK_OK(posix_file_close(f));
}

TESSERA_TEST(posix_file, closed_file_storage_has_no_callbacks) {
  posix_file f;
  const storage s = posix_file_storage(f);
  uint8_t b[4];
  CHECK_ERR(storage_read(s, 0, bytes_mut(b, 4)), errc::unsupported);
  CHECK_ERR(storage_size(s), errc::unsupported);
}

TESSERA_TEST(posix_file, storage_outlives_the_handle_variable) {
  // The storage's context is the descriptor: it works after the posix_file it came from went out of scope.
  temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("ctx.bin");
  storage s;
  int fd = -1;
  {
    auto fr = posix_file_open(path.c_str(), posix_open::create);
    REQUIRE_OK(fr);
    s = posix_file_storage(*fr);
    fd = fr->fd;
  }
  const uint8_t v[5] = {1, 2, 3, 4, 5};
  CHECK_OK(storage_write(s, 0, bytes_view(v, 5)));
  CHECK_EQ(size_of(t, s), 5u);
  posix_file f;
  f.fd = fd;
  CHECK_OK(posix_file_close(f));
}

TESSERA_TEST(posix_file, rename_and_remove) {
  temp_dir dir;
  REQUIRE(dir.ok());
  REQUIRE(mkdir(dir.file("sub").c_str(), 0755) == 0);
  const std::string a = dir.file("a.tmp");
  const std::string b = dir.file("b.bin");
  const std::string c = dir.file("sub/c.bin");
  write_os_file(a, {1, 2, 3});
  write_os_file(b, {9});
  CHECK_OK(posix_file_rename(a.c_str(), b.c_str()));  // replaces b
  CHECK(access(a.c_str(), F_OK) != 0);
  CHECK(os_contents(b) == (std::vector<uint8_t>{1, 2, 3}));
  CHECK_OK(posix_file_rename(b.c_str(), c.c_str()));  // across directories
  CHECK(os_contents(c) == (std::vector<uint8_t>{1, 2, 3}));
  CHECK_ERR(posix_file_rename(a.c_str(), b.c_str()), errc::io);  // a is gone
  CHECK_OK(posix_file_remove(c.c_str()));
  CHECK(access(c.c_str(), F_OK) != 0);
  CHECK_ERR(posix_file_remove(c.c_str()), errc::io);
  CHECK_ERR(posix_file_remove(dir.file("sub").c_str()), errc::io);  // a directory is not a file
  CHECK_OK(posix_directory_sync_parent(c.c_str()));
  CHECK_ERR(posix_directory_sync_parent(dir.file("nope/x").c_str()), errc::io);
}

// What the file port refuses, with its code: writes and truncations past the largest file offset (no_space),
// an unknown open mode, empty or null paths; a parent to sync for a bare name, a name under the root, and a
// parent longer than any path the kernel takes.
TESSERA_TEST(posix_file, calls_it_refuses) {
  temp_dir tmp;
  REQUIRE(tmp.ok());
  const std::string path = tmp.file("f.bin");
  CHECK_ERR(posix_file_open(path.c_str(), static_cast<posix_open>(99)), errc::invalid_argument);
  auto f = posix_file_open(path.c_str(), posix_open::replace);
  REQUIRE_OK(f);
  const storage st = posix_file_storage(*f);
  const uint8_t byte = 1;
  const uint64_t top = static_cast<uint64_t>(INT64_MAX);
  CHECK_ERR(storage_write(st, top, bytes_view(&byte, 1)), errc::no_space);
  CHECK_ERR(storage_truncate(st, top + 1), errc::no_space);
  result<uint64_t> size = storage_size(st);
  CHECK(size.ok() && *size == 0u);
  CHECK_OK(posix_file_close(*f));
  CHECK_ERR(posix_file_rename(nullptr, path.c_str()), errc::invalid_argument);
  CHECK_ERR(posix_file_rename(path.c_str(), ""), errc::invalid_argument);
  CHECK_ERR(posix_file_remove(nullptr), errc::invalid_argument);
  CHECK_ERR(posix_file_remove(""), errc::invalid_argument);
  CHECK_ERR(posix_directory_sync_parent(""), errc::invalid_argument);
  CHECK_OK(posix_directory_sync_parent("no_slash.b2nd"));  // the working directory
  CHECK_OK(posix_directory_sync_parent("/tmp"));            // the root
  const std::string long_parent = "/" + std::string(5000, 'a') + "/x";
  CHECK_ERR(posix_directory_sync_parent(long_parent.c_str()), errc::io);
}
