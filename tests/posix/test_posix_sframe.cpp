// SPDX-License-Identifier: BSD-3-Clause
// Sparse frames over posix_directory: the reference's sparse-dir golden read in place (decoded over the thread
// pool), a frame written, committed, reopened and read back through the filesystem, and the directory's
// listing: a writable open removes stray chunk files and leaves every other name and kind of file alone.
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_directory.hpp"
#include "tessera/port/thread_pool.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "posix_test_util.hpp"

using namespace tessera;
using posix_test::temp_dir;

namespace {

bool read_whole(const std::string& path, std::vector<uint8_t>& out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  out.clear();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return true;
}

// The names in a directory (readdir), "." and ".." left out.
std::set<std::string> names_in(const std::string& path) {
  std::set<std::string> out;
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return out;
  while (const struct dirent* e = readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.insert(e->d_name);
  closedir(d);
  return out;
}

bool touch(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  std::fputs("x", f);
  return std::fclose(f) == 0;
}

// storage_directory_list's names, collected.
status collect(void* arg, const char* name) noexcept {
  static_cast<std::set<std::string>*>(arg)->insert(name);
  return ok_status();
}

}  // namespace

TESSERA_TEST(posix_sframe, writable_open_sweeps_stray_chunk_files) {
  temp_dir tmp;
  REQUIRE(tmp.ok());
  const std::string path = tmp.file("a.b2nd");
  auto dr = posix_directory_open(path.c_str(), true);
  REQUIRE_OK(dr);
  posix_directory pd = *dr;
  const storage_directory sd = posix_directory_interface(pd);
  std::vector<uint8_t> raw(4096), chunk(4096 + kChunkMaxOverhead);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i / 7);
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, posix_allocator()));
  chunk_encode_params ep;
  ep.typesize = 4;
  ep.compressor = codec::blosclz;
  auto n = chunk_encode(enc, ep, bytes_view(raw.data(), raw.size()), bytes_mut(chunk.data(), chunk.size()));
  REQUIRE_OK(n);
  {
    frame f;
    frame_create_params fp;
    fp.typesize = 4;
    REQUIRE_OK(frame_create_sparse(f, sd, posix_allocator(), fp));
    for (int i = 0; i < 3; ++i) REQUIRE_OK(frame_chunk_append(f, bytes_view(chunk.data(), *n)));
    REQUIRE_OK(frame_commit(f));
    CHECK_OK(frame_close(f));
  }
  const std::set<std::string> committed = {"chunks.b2frame", "00000000.chunk", "00000001.chunk", "00000002.chunk"};
  CHECK(names_in(path) == committed);
  // Strays (a crash's leftovers) and foreign files, a directory and a link named like chunks, a name too long.
  const char* strays[] = {"00000005.chunk", "000000FF.chunk", "chunks.b2frame.tmp"};
  const char* foreign[] = {"0000000a.chunk", "notes.txt", "00000003.chunk.old", "a-name-longer-than-thirty-one-bytes.chunk"};
  for (const char* s : strays) REQUIRE(touch(path + "/" + s));
  for (const char* s : foreign) REQUIRE(touch(path + "/" + s));
  REQUIRE(mkdir((path + "/00000007.chunk").c_str(), 0777) == 0);
  REQUIRE(symlink("notes.txt", (path + "/00000008.chunk").c_str()) == 0);
  // The listing: regular files of acceptable names only.
  std::set<std::string> listed;
  REQUIRE_OK(storage_directory_list(sd, collect, &listed));
  std::set<std::string> want = committed;
  for (const char* s : strays) want.insert(s);
  for (const char* s : foreign)
    if (std::strlen(s) <= kStorageNameMax) want.insert(s);
  CHECK(listed == want);
  // Read-only: nothing goes.
  std::set<std::string> before = names_in(path);
  {
    frame f;
    REQUIRE_OK(frame_open_sparse(f, sd, posix_allocator()));
    CHECK_OK(frame_close(f));
  }
  CHECK(names_in(path) == before);
  // Writable: the strays go, the rest stays.
  {
    frame_open_options o;
    o.writable = true;
    frame f;
    REQUIRE_OK(frame_open_sparse(f, sd, posix_allocator(), o));
    CHECK_OK(frame_close(f));
  }
  std::set<std::string> after = before;
  for (const char* s : strays) after.erase(s);
  CHECK(names_in(path) == after);
  CHECK_OK(posix_directory_close(pd));
}

TESSERA_TEST(posix_sframe, reference_sparse_dir_decodes) {
  // sparse-dir (MANIFEST): shape 60x60 <f4, chunks 30x30, blocks 10x10, 4 chunks, LZ4 + shuffle.
  const std::string dir = std::string(TESSERA_TEST_DATA_DIR) + "/golden/b2nd/sparse-dir.b2nd";
  std::vector<uint8_t> raw;
  REQUIRE(read_whole(std::string(TESSERA_TEST_DATA_DIR) + "/golden/b2nd/sparse-dir.raw", raw));
  REQUIRE_EQ(raw.size(), 60u * 60u * 4u);
  auto dr = posix_directory_open(dir.c_str(), false);
  REQUIRE_OK(dr);
  posix_directory pd = *dr;
  const storage_directory sd = posix_directory_interface(pd);
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  chunk_decoder_options o;
  o.exec = thread_pool_executor(pool);
  chunk_decoder dec;
  REQUIRE_OK(chunk_decoder_init(dec, posix_allocator(), o));
  {
    frame f;
    REQUIRE_OK(frame_open_sparse(f, sd, posix_allocator()));
    const frame_info* info = frame_info_get(f);
    REQUIRE(info != nullptr);
    CHECK(info->kind == frame_kind::sparse);
    REQUIRE_EQ(info->nchunks, 4);
    std::vector<uint8_t> chunk(30 * 30 * 4);
    size_t mismatches = 0;
    for (int64_t c = 0; c < 4; ++c) {
      auto n = frame_chunk_decode(f, dec, c, bytes_mut(chunk.data(), chunk.size()));
      REQUIRE_OK(n);
      REQUIRE_EQ(*n, chunk.size());
      // Inside a chunk the items are stored block by block (10x10 blocks in C order, C order inside each).
      const size_t ci = static_cast<size_t>(c) / 2, cj = static_cast<size_t>(c) % 2;
      for (size_t i = 0; i < 30; ++i)
        for (size_t j = 0; j < 30; ++j) {
          const size_t block = (i / 10) * 3 + j / 10;
          const size_t at = (block * 100 + (i % 10) * 10 + j % 10) * 4;
          const size_t gi = ci * 30 + i, gj = cj * 30 + j;
          mismatches += std::memcmp(chunk.data() + at, raw.data() + (gi * 60 + gj) * 4, 4) != 0;
        }
    }
    CHECK_EQ(mismatches, 0u);
    CHECK_OK(frame_close(f));
  }
  CHECK_OK(posix_directory_close(pd));
}

TESSERA_TEST(posix_sframe, write_commit_reopen_read) {
  temp_dir tmp;
  REQUIRE(tmp.ok());
  const std::string path = tmp.file("arrays/data.b2nd");
  thread_pool pool;
  REQUIRE_OK(thread_pool_init(pool, 2));
  chunk_encoder_options eo;
  eo.exec = thread_pool_executor(pool);
  chunk_encoder enc;
  REQUIRE_OK(chunk_encoder_init(enc, posix_allocator(), eo));
  chunk_encode_params ep;
  ep.typesize = 4;
  ep.compressor = codec::blosclz;
  ep.blocksize = 16 * 1024;

  constexpr size_t kChunkBytes = 100 * 1024;
  constexpr int kChunks = 6;
  std::vector<std::vector<uint8_t>> data(kChunks, std::vector<uint8_t>(kChunkBytes));
  test::rng r(99);
  for (auto& d : data)
    for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<uint8_t>(i % 4 == 0 ? r.next() & 0x0f : i / 4096);

  {
    auto dr = posix_directory_open(path.c_str(), true);
    REQUIRE_OK(dr);
    posix_directory pd = *dr;
    const storage_directory sd = posix_directory_interface(pd);
    frame f;
    frame_create_params fp;
    fp.typesize = 4;
    REQUIRE_OK(frame_create_sparse(f, sd, posix_allocator(), fp));
    std::vector<uint8_t> out(chunk_encode_bound(kChunkBytes));
    for (const auto& d : data) {
      auto n = chunk_encode(enc, ep, bytes_view(d.data(), d.size()), bytes_mut(out.data(), out.size()));
      REQUIRE_OK(n);
      REQUIRE_OK(frame_chunk_append(f, bytes_view(out.data(), *n)));
    }
    REQUIRE_OK(frame_commit(f));
    CHECK_OK(frame_close(f));
    CHECK_OK(posix_directory_close(pd));
  }
  // The files a sparse frame consists of, and no temporary left behind.
  CHECK(access((path + "/chunks.b2frame").c_str(), F_OK) == 0);
  CHECK(access((path + "/chunks.b2frame.tmp").c_str(), F_OK) != 0);
  for (int c = 0; c < kChunks; ++c) {
    char name[32];
    std::snprintf(name, sizeof name, "/%08X.chunk", c);
    CHECK(access((path + name).c_str(), F_OK) == 0);
  }

  auto dr = posix_directory_open(path.c_str(), false);
  REQUIRE_OK(dr);
  posix_directory pd = *dr;
  const storage_directory sd = posix_directory_interface(pd);
  chunk_decoder_options dopt;
  dopt.exec = thread_pool_executor(pool);
  chunk_decoder dec;
  REQUIRE_OK(chunk_decoder_init(dec, posix_allocator(), dopt));
  {
    frame f;
    REQUIRE_OK(frame_open_sparse(f, sd, posix_allocator()));
    const frame_info* info = frame_info_get(f);
    REQUIRE(info != nullptr);
    REQUIRE_EQ(info->nchunks, kChunks);
    std::vector<uint8_t> back(kChunkBytes);
    for (int c = 0; c < kChunks; ++c) {
      auto n = frame_chunk_decode(f, dec, c, bytes_mut(back.data(), back.size()));
      REQUIRE_OK(n);
      CHECK_EQ(*n, kChunkBytes);
      CHECK(back == data[static_cast<size_t>(c)]);
    }
    CHECK_OK(frame_close(f));
  }
  CHECK_OK(posix_directory_close(pd));
}
