// SPDX-License-Identifier: BSD-3-Clause
// Readers of an array file that a writer is changing, and readers on several threads.
//  - A child process appends rows to an array file and commits after each append; the parent refreshes its
//    read-only array in a loop: every state it sees is a committed one (whole appends, the data the writer
//    wrote), its row count never goes back, and it ends with every row.
//  - One open array, one array_open_again handle per thread, each reading slices on its own (the storage is a
//    posix_file, whose pread may run concurrently; the allocator is malloc): every slice matches the data.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"

#include "../support/check.hpp"
#include "posix_test_util.hpp"

using namespace tessera;

namespace {

constexpr int64_t kCols = 24;
constexpr int64_t kRowsPerAppend = 8;
constexpr int kAppends = 40;

int32_t value_at(int64_t row, int64_t col) { return static_cast<int32_t>(row * 1000 + col); }

std::vector<int32_t> rows_of(int64_t first, int64_t count) {
  std::vector<int32_t> v(static_cast<size_t>(count * kCols));
  for (int64_t r = 0; r < count; ++r)
    for (int64_t c = 0; c < kCols; ++c) v[static_cast<size_t>(r * kCols + c)] = value_at(first + r, c);
  return v;
}

array_params params_2d(int64_t rows) {
  array_params p;
  p.ndim = 2;
  p.shape[0] = rows;
  p.shape[1] = kCols;
  p.chunkshape[0] = kRowsPerAppend;
  p.chunkshape[1] = kCols;
  p.blockshape[0] = 4;
  p.blockshape[1] = 8;
  p.dtype = span<const char>("<i4", 3);
  return p;
}

// The child: appends kAppends times, committing each; exit status 0 when every append succeeded.
int writer_main(const char* path) {
  auto f = posix_file_open(path, posix_open::read_write);
  if (!f.ok()) return 10;
  array a;
  array_open_options o;
  o.frame.writable = true;
  if (!array_open(a, posix_file_storage(*f), posix_allocator(), o).ok()) return 11;
  for (int k = 0; k < kAppends; ++k) {
    const std::vector<int32_t> rows = rows_of(k * kRowsPerAppend, kRowsPerAppend);
    if (!array_append(a, 0, kRowsPerAppend, bytes_view(reinterpret_cast<const uint8_t*>(rows.data()), rows.size() * 4)).ok())
      return 12;
    usleep(1000);
  }
  if (!array_close(a).ok()) return 13;
  return posix_file_close(*f).ok() ? 0 : 14;
}

}  // namespace

TESSERA_TEST(array_readers, a_reader_follows_a_writer_in_another_process) {
  posix_test::temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("log.b2nd");
  {
    auto f = posix_file_open(path.c_str(), posix_open::replace);
    REQUIRE_OK(f);
    array a;
    REQUIRE_OK(array_create(a, array_target_contiguous(posix_file_storage(*f)), posix_allocator(), params_2d(0),
                            array_fill_uninit()));
    REQUIRE_OK(array_close(a));
    REQUIRE_OK(posix_file_close(*f));
  }
  auto rf = posix_file_open(path.c_str(), posix_open::read);
  REQUIRE_OK(rf);
  array r;
  REQUIRE_OK(array_open(r, posix_file_storage(*rf), posix_allocator()));
  CHECK_EQ(array_layout_get(r).shape[0], 0);

  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(writer_main(path.c_str()));

  int64_t seen = 0;
  int states = 0;
  int mismatches = 0;
  int refresh_errors = 0;
  bool child_done = false;
  int child_status = -1;
  for (int spins = 0; spins < 200000; ++spins) {
    if (!child_done && waitpid(child, &child_status, WNOHANG) == child) child_done = true;
    const status st = array_refresh(r);
    if (!st.ok()) {
      ++refresh_errors;
      continue;
    }
    const int64_t rows = array_layout_get(r).shape[0];
    CHECK(rows >= seen);
    CHECK_EQ(rows % kRowsPerAppend, 0);
    if (rows != seen) {
      ++states;
      std::vector<int32_t> got(static_cast<size_t>(rows * kCols));
      const int64_t start[2] = {0, 0}, stop[2] = {rows, kCols};
      REQUIRE_OK(array_slice_read(r, start, stop, bytes_mut(reinterpret_cast<uint8_t*>(got.data()), got.size() * 4)));
      const std::vector<int32_t> want = rows_of(0, rows);
      mismatches += std::memcmp(got.data(), want.data(), got.size() * 4) != 0 ? 1 : 0;
      seen = rows;
    }
    if (child_done && seen == kAppends * kRowsPerAppend) break;
    if (child_done && spins > 0 && refresh_errors > 1000) break;
  }
  if (!child_done) {
    waitpid(child, &child_status, 0);
  }
  std::fprintf(stderr, "reader: %d states seen, %d refreshes retried\n", states, refresh_errors);
  CHECK(WIFEXITED(child_status));
  CHECK_EQ(WEXITSTATUS(child_status), 0);
  CHECK_EQ(seen, kAppends * kRowsPerAppend);
  CHECK_EQ(mismatches, 0);
  CHECK(states >= 2);  // the reader saw the array grow, not only its end
  // A refresh never fails for good: whatever error a torn read gave, the next one worked (bounded).
  CHECK(refresh_errors < 100);
  REQUIRE_OK(array_close(r));
  REQUIRE_OK(posix_file_close(*rf));
}

TESSERA_TEST(array_readers, one_handle_per_thread_reads_concurrently) {
  posix_test::temp_dir dir;
  REQUIRE(dir.ok());
  const std::string path = dir.file("shared.b2nd");
  const int64_t rows = 400;
  const std::vector<int32_t> all = rows_of(0, rows);
  {
    auto f = posix_file_open(path.c_str(), posix_open::replace);
    REQUIRE_OK(f);
    array a;
    array_params p = params_2d(rows);
    p.compressor = codec::lz4;
    REQUIRE_OK(array_create(a, array_target_contiguous(posix_file_storage(*f)), posix_allocator(), p,
                            array_fill_buffer(bytes_view(reinterpret_cast<const uint8_t*>(all.data()), all.size() * 4))));
    REQUIRE_OK(array_close(a));
    REQUIRE_OK(posix_file_close(*f));
  }
  auto rf = posix_file_open(path.c_str(), posix_open::read);
  REQUIRE_OK(rf);
  array shared;
  REQUIRE_OK(array_open(shared, posix_file_storage(*rf), posix_allocator()));
  constexpr int kThreads = 4;
  array readers[kThreads];
  for (auto& reader : readers) REQUIRE_OK(array_open_again(reader, shared, posix_allocator()));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t_i = 0; t_i < kThreads; ++t_i) {
    threads.emplace_back([&, t_i] {
      uint32_t seed = 12345u + static_cast<uint32_t>(t_i);
      std::vector<int32_t> out;
      for (int k = 0; k < 200; ++k) {
        seed = seed * 1664525u + 1013904223u;
        const int64_t r0 = (seed >> 8) % rows;
        const int64_t r1 = r0 + 1 + (seed >> 20) % (rows - r0);
        const int64_t c0 = (seed >> 4) % kCols;
        const int64_t start[2] = {r0, c0}, stop[2] = {r1, kCols};
        out.assign(static_cast<size_t>((r1 - r0) * (kCols - c0)), -1);
        if (!array_slice_read(readers[t_i], start, stop, bytes_mut(reinterpret_cast<uint8_t*>(out.data()), out.size() * 4)).ok()) {
          ++bad;
          continue;
        }
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < kCols; ++c)
            if (out[static_cast<size_t>((r - r0) * (kCols - c0) + c - c0)] != value_at(r, c)) {
              ++bad;
              r = r1;
              break;
            }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK_EQ(bad.load(), 0);
  // The readers see what the shared array sees, and closing one leaves the others working.
  CHECK_EQ(array_layout_get(readers[0]).shape[0], rows);
  REQUIRE_OK(array_close(readers[1]));
  int32_t v = 0;
  const int64_t coords[2] = {rows - 1, kCols - 1};
  REQUIRE_OK(array_element_read(readers[2], coords, bytes_mut(reinterpret_cast<uint8_t*>(&v), 4)));
  CHECK_EQ(v, value_at(rows - 1, kCols - 1));
  CHECK_ERR(array_refresh(readers[1]), errc::invalid_argument);  // closed
  for (auto& reader : readers) (void)array_close(reader);
  REQUIRE_OK(array_close(shared));
  REQUIRE_OK(posix_file_close(*rf));
}
