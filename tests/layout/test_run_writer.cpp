// SPDX-License-Identifier: BSD-3-Clause
// run_writer (src/layout/run_writer.hpp), the row writer of large reads: runs of pieces land exactly where a plain
// copy puts them, with and without streaming stores, whatever the pieces' sizes (1 byte up) and the runs'
// alignments; runs that continue the previous one merge; the bytes between runs are untouched; and the reads
// around the pieces stay within the 15 bytes the caller allows (none without `overread`: every piece is then
// its own exact-size heap block, which ASan watches).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "../../src/layout/run_writer.hpp"  // internal header: the core keeps src/ private
#include "../support/check.hpp"
#include "../support/random.hpp"

using namespace tessera;
using detail::run_writer;

namespace {

constexpr uint8_t kUntouched = 0xab;

struct run_case {
  size_t dst = 0;
  std::vector<size_t> lens;
  std::vector<const uint8_t*> srcs;
};

// A piece's bytes: with `overread`, inside a block with exactly 15 readable bytes either side (poison, not to be
// copied); without, a block of exactly its size.
const uint8_t* make_piece(std::vector<std::unique_ptr<uint8_t[]>>& keep, test::rng& r, size_t len, bool overread) {
  const size_t slack = overread ? 15 : 0;
  keep.emplace_back(new uint8_t[len + 2 * slack]);
  uint8_t* block = keep.back().get();
  std::memset(block, 0xee, len + 2 * slack);
  for (size_t i = 0; i < len; ++i) block[slack + i] = static_cast<uint8_t>(r.next());
  return block + slack;
}

size_t piece_len(test::rng& r) {
  switch (r.range(0, 3)) {
    case 0:
      return static_cast<size_t>(r.range(1, 15));  // shorter than a unit
    case 1:
      return static_cast<size_t>(r.range(16, 40));
    case 2:
      return 100;  // a 25-item row of 4-byte items (the whole-array read's pieces)
    default:
      return static_cast<size_t>(r.range(1, 300));
  }
}

}  // namespace

TESSERA_TEST(run_writer, runs_of_pieces_land_as_a_plain_copy_puts_them) {
  test::rng r(0x5eed0f5);
  size_t merged_runs = 0, streamed_cases = 0;
  for (int round = 0; round < 600; ++round) {
    const bool streaming = round % 4 >= 2;
    const bool overread = round % 2 == 1;
    std::vector<std::unique_ptr<uint8_t[]>> keep;
    std::vector<run_case> runs;
    size_t at = static_cast<size_t>(r.range(0, 63));  // the first run's alignment
    const int nruns = static_cast<int>(r.range(1, 12));
    for (int k = 0; k < nruns; ++k) {
      run_case c;
      if (k > 0 && r.chance(50)) {
        ++merged_runs;  // starts where the last one ended
      } else {
        at += static_cast<size_t>(r.range(k == 0 ? 0 : 1, 90));
      }
      c.dst = at;
      const int npieces = static_cast<int>(r.range(1, 18));
      for (int p = 0; p < npieces; ++p) {
        const size_t len = piece_len(r);
        c.lens.push_back(len);
        c.srcs.push_back(make_piece(keep, r, len, overread));
        at += len;
      }
      runs.push_back(std::move(c));
    }
    const size_t total = at + static_cast<size_t>(r.range(0, 80));
    // The output is 64-byte aligned, so the runs' alignments are the offsets drawn above.
    std::vector<uint8_t> expected(total + 64, kUntouched), got(total + 64, kUntouched);
    uint8_t* out = got.data() + ((64 - (reinterpret_cast<uintptr_t>(got.data()) & 63)) & 63);
    for (const run_case& c : runs) {
      size_t o = c.dst;
      for (size_t p = 0; p < c.lens.size(); ++p) {
        std::memcpy(expected.data() + o, c.srcs[p], c.lens[p]);
        o += c.lens[p];
      }
    }
    run_writer w(streaming, overread);
    for (const run_case& c : runs) {
      w.begin(out + c.dst);
      for (size_t p = 0; p < c.lens.size(); ++p) w.put(c.srcs[p], c.lens[p]);
      if (r.chance(30)) w.end();  // ending a run early or not changes nothing
    }
    w.end();
    detail::run_writer_fence();
    streamed_cases += streaming && run_writer::kCanStream;
    if (std::memcmp(out, expected.data(), total) != 0) {
      size_t first = 0;
      while (out[first] == expected[first]) ++first;
      char text[160];
      std::snprintf(text, sizeof text,
                    "round %d (streaming %d, overread %d): the output differs from a plain copy from byte %zu", round,
                    int{streaming}, int{overread}, first);
      test::report_failure(t, __FILE__, __LINE__, text);
      return;
    }
  }
  CHECK(merged_runs > 1000);
  if (run_writer::kCanStream) CHECK(streamed_cases == 300);
}

TESSERA_TEST(run_writer, a_unit_gathered_from_many_one_byte_pieces) {
  // Streaming, a 16-byte unit made of single bytes from 16 pieces, then a long piece, at every alignment.
  for (size_t align = 0; align < 64; ++align) {
    for (int overread = 0; overread < 2; ++overread) {
      test::rng r(align);
      std::vector<std::unique_ptr<uint8_t[]>> keep;
      std::vector<const uint8_t*> srcs;
      std::vector<size_t> lens;
      for (int p = 0; p < 40; ++p) {
        lens.push_back(p == 20 ? 130 : 1);
        srcs.push_back(make_piece(keep, r, lens.back(), overread != 0));
      }
      std::vector<uint8_t> buffer(256 + 128, kUntouched), expected;
      uint8_t* out = buffer.data() + ((64 - (reinterpret_cast<uintptr_t>(buffer.data()) & 63)) & 63) + 64 + align;
      for (size_t p = 0; p < lens.size(); ++p) expected.insert(expected.end(), srcs[p], srcs[p] + lens[p]);
      run_writer w(true, overread != 0);
      w.begin(out);
      for (size_t p = 0; p < lens.size(); ++p) w.put(srcs[p], lens[p]);
      w.end();
      detail::run_writer_fence();
      CHECK(std::memcmp(out, expected.data(), expected.size()) == 0);
      CHECK(out[-1] == kUntouched);
      CHECK(out[expected.size()] == kUntouched);
    }
  }
}
