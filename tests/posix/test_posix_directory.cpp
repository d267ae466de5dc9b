// SPDX-License-Identifier: BSD-3-Clause
// posix_directory as a storage_directory: mkdir -p on create, entries opened in every mode, replace, remove,
// rename (atomic replacement), name checks, and the errors of missing entries and paths.
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "tessera/port/posix_directory.hpp"
#include "tessera/storage.hpp"
#include "tessera/storage_directory.hpp"

#include "../support/check.hpp"
#include "posix_test_util.hpp"

using namespace tessera;
using posix_test::temp_dir;

namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string os_read(const std::string& path) {
  std::string s;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "<missing>";
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

status put(const storage_directory& d, const char* name, const char* text) {
  storage s;
  TESSERA_TRY(storage_directory_open(d, name, storage_open::replace, &s));
  status w = storage_write(s, 0, bytes_view(reinterpret_cast<const uint8_t*>(text), std::strlen(text)));
  if (w.ok()) w = storage_sync(s);
  const status c = storage_directory_close(d, &s);
  return w.ok() ? c : w;
}

}  // namespace

TESSERA_TEST(posix_directory, create_makes_missing_parents) {
  temp_dir tmp;
  REQUIRE(tmp.ok());
  const std::string deep = tmp.file("a/b//c/frame.b2nd");
  auto missing = posix_directory_open(deep.c_str(), false);
  CHECK_ERR(missing, errc::io);
  CHECK(!is_dir(tmp.file("a")));
  auto dr = posix_directory_open(deep.c_str(), true);
  REQUIRE_OK(dr);
  posix_directory d = *dr;
  CHECK(d.fd >= 0);
  CHECK(is_dir(tmp.file("a/b/c/frame.b2nd")));
  CHECK_OK(posix_directory_close(d));
  CHECK_EQ(d.fd, -1);
  CHECK_OK(posix_directory_close(d));
  // Opening an existing directory with create is fine; a trailing slash too.
  auto again = posix_directory_open((deep + "/").c_str(), true);
  REQUIRE_OK(again);
  posix_directory d2 = *again;
  CHECK_OK(posix_directory_close(d2));
  // A regular file is not a directory, with or without create; nor is a path through it.
  const std::string file = tmp.file("plain");
  FILE* f = std::fopen(file.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fclose(f);
  CHECK_ERR(posix_directory_open(file.c_str(), false), errc::io);
  CHECK_ERR(posix_directory_open(file.c_str(), true), errc::io);
  CHECK_ERR(posix_directory_open((file + "/sub").c_str(), true), errc::io);
  CHECK_ERR(posix_directory_open("", true), errc::invalid_argument);
}

TESSERA_TEST(posix_directory, entries_open_write_read_replace) {
  temp_dir tmp;
  REQUIRE(tmp.ok());
  auto dr = posix_directory_open(tmp.file("sf").c_str(), true);
  REQUIRE_OK(dr);
  posix_directory pd = *dr;
  const storage_directory d = posix_directory_interface(pd);

  storage s;
  CHECK_ERR(storage_directory_open(d, "chunks.b2frame", storage_open::read, &s), errc::io);
  CHECK_ERR(storage_directory_open(d, "chunks.b2frame", storage_open::read_write, &s), errc::io);
  CHECK(s.read == nullptr);  // a failed open leaves no storage behind
  CHECK_OK(put(d, "chunks.b2frame", "hello frame"));
  CHECK(os_read(tmp.file("sf/chunks.b2frame")) == "hello frame");

  // read: read-only storage over the entry.
  REQUIRE_OK(storage_directory_open(d, "chunks.b2frame", storage_open::read, &s));
  CHECK(s.write == nullptr);
  char buf[32] = {};
  CHECK_OK(storage_read(s, 6, bytes_mut(reinterpret_cast<uint8_t*>(buf), 5)));
  CHECK(std::strcmp(buf, "frame") == 0);
  CHECK_ERR(storage_read(s, 6, bytes_mut(reinterpret_cast<uint8_t*>(buf), 6)), errc::truncated);
  CHECK_ERR(storage_write(s, 0, bytes_view(reinterpret_cast<const uint8_t*>("x"), 1)), errc::unsupported);
  CHECK_OK(storage_directory_close(d, &s));
  CHECK(s.read == nullptr);

  // read_write: contents kept, writable.
  REQUIRE_OK(storage_directory_open(d, "chunks.b2frame", storage_open::read_write, &s));
  auto sz = storage_size(s);
  REQUIRE_OK(sz);
  CHECK_EQ(*sz, 11u);
  CHECK_OK(storage_write(s, 0, bytes_view(reinterpret_cast<const uint8_t*>("J"), 1)));
  CHECK_OK(storage_sync(s));
  CHECK_OK(storage_directory_close(d, &s));
  CHECK(os_read(tmp.file("sf/chunks.b2frame")) == "Jello frame");

  // replace: emptied.
  REQUIRE_OK(storage_directory_open(d, "chunks.b2frame", storage_open::replace, &s));
  auto sz2 = storage_size(s);
  REQUIRE_OK(sz2);
  CHECK_EQ(*sz2, 0u);
  CHECK_OK(storage_directory_close(d, &s));

  // Many entries at once (an sframe's chunk files), each with its own contents.
  std::vector<storage> open(40);
  for (int i = 0; i < 40; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "%08X.chunk", i);
    REQUIRE_OK(storage_directory_open(d, name, storage_open::replace, &open[static_cast<size_t>(i)]));
    const uint8_t v[3] = {static_cast<uint8_t>(i), 7, static_cast<uint8_t>(255 - i)};
    CHECK_OK(storage_write(open[static_cast<size_t>(i)], 0, bytes_view(v, 3)));
  }
  for (int i = 0; i < 40; ++i) {
    uint8_t v[3];
    CHECK_OK(storage_read(open[static_cast<size_t>(i)], 0, bytes_mut(v, 3)));
    CHECK(v[0] == i && v[1] == 7 && v[2] == 255 - i);
    CHECK_OK(storage_directory_close(d, &open[static_cast<size_t>(i)]));
  }
  CHECK(os_read(tmp.file("sf/00000027.chunk")).size() == 3);
  CHECK_OK(posix_directory_close(pd));
}

TESSERA_TEST(posix_directory, remove_and_rename) {
  temp_dir tmp;
  REQUIRE(tmp.ok());
  auto dr = posix_directory_open(tmp.path().c_str(), false);
  REQUIRE_OK(dr);
  posix_directory pd = *dr;
  const storage_directory d = posix_directory_interface(pd);
  CHECK_OK(put(d, "a.tmp", "new"));
  CHECK_OK(put(d, "a", "old"));
  CHECK_OK(storage_directory_rename(d, "a.tmp", "a"));  // replaces a atomically
  CHECK(os_read(tmp.file("a")) == "new");
  CHECK(access(tmp.file("a.tmp").c_str(), F_OK) != 0);
  CHECK_ERR(storage_directory_rename(d, "a.tmp", "b"), errc::io);
  CHECK_OK(storage_directory_remove(d, "a"));
  CHECK(access(tmp.file("a").c_str(), F_OK) != 0);
  CHECK_ERR(storage_directory_remove(d, "a"), errc::io);
  REQUIRE(mkdir(tmp.file("sub").c_str(), 0755) == 0);
  CHECK_ERR(storage_directory_remove(d, "sub"), errc::io);
  storage s;
  CHECK_ERR(storage_directory_open(d, "sub", storage_open::read, &s), errc::io);
  CHECK_ERR(storage_directory_open(d, "sub", storage_open::replace, &s), errc::io);
  CHECK_OK(posix_directory_close(pd));
}

TESSERA_TEST(posix_directory, entry_names_are_checked) {
  temp_dir tmp;
  REQUIRE(tmp.ok());
  auto dr = posix_directory_open(tmp.path().c_str(), false);
  REQUIRE_OK(dr);
  posix_directory pd = *dr;
  const storage_directory d = posix_directory_interface(pd);
  storage s;
  const char* bad[] = {"", ".", "..", "../escape", "a/b", "/abs", "0123456789012345678901234567890123"};
  for (const char* name : bad) {
    CHECK_ERR(storage_directory_open(d, name, storage_open::replace, &s), errc::invalid_argument);
    CHECK_ERR(storage_directory_remove(d, name), errc::invalid_argument);
    CHECK_ERR(storage_directory_rename(d, name, "ok"), errc::invalid_argument);
    CHECK_ERR(storage_directory_rename(d, "ok", name), errc::invalid_argument);
  }
  CHECK_ERR(storage_directory_open(d, nullptr, storage_open::replace, &s), errc::invalid_argument);
  // The longest allowed name works.
  const char* longest = "0123456789012345678901234567890";  // kStorageNameMax bytes
  REQUIRE_EQ(std::strlen(longest), kStorageNameMax);
  CHECK_OK(put(d, longest, "x"));
  CHECK(access(tmp.file("../escape").c_str(), F_OK) != 0);
  CHECK_OK(posix_directory_close(pd));
}

namespace {
status count_entry(void* arg, const char*) noexcept {
  ++*static_cast<int*>(arg);
  return ok_status();
}
}  // namespace

// What the directory refuses, with its code: every call on a closed directory, an unknown open mode, no storage
// to open into, empty paths; closing a storage that is not open does nothing.
TESSERA_TEST(posix_directory, calls_it_refuses) {
  temp_dir tmp;
  REQUIRE(tmp.ok());
  CHECK_ERR(posix_directory_open(nullptr, true), errc::invalid_argument);
  CHECK_ERR(posix_directory_open("", true), errc::invalid_argument);
  auto dr = posix_directory_open(tmp.file("d").c_str(), true);
  REQUIRE_OK(dr);
  posix_directory d = *dr;
  const storage_directory open_dir = posix_directory_interface(d);
  storage s;
  CHECK_ERR(storage_directory_open(open_dir, "x", static_cast<storage_open>(99), &s), errc::invalid_argument);
  CHECK_ERR(open_dir.open(open_dir.context, "x", storage_open::replace, nullptr), errc::invalid_argument);
  storage none;
  CHECK_OK(storage_directory_close(open_dir, &none));
  CHECK_OK(open_dir.close(open_dir.context, nullptr));
  REQUIRE_OK(put(open_dir, "x", "kept"));
  CHECK_OK(posix_directory_close(d));
  const storage_directory closed = posix_directory_interface(d);  // the descriptor is gone
  CHECK_ERR(storage_directory_open(closed, "x", storage_open::read, &s), errc::invalid_argument);
  CHECK_ERR(storage_directory_remove(closed, "x"), errc::invalid_argument);
  CHECK_ERR(storage_directory_rename(closed, "x", "y"), errc::invalid_argument);
  int n = 0;
  CHECK_ERR(storage_directory_list(closed, count_entry, &n), errc::invalid_argument);
  CHECK_EQ(n, 0);
  CHECK(os_read(tmp.file("d/x")) == "kept");
}
