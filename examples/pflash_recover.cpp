// SPDX-License-Identifier: BSD-3-Clause
// What a firmware does at boot after losing power while logging (pflash_logger.cpp, killed by
// tests/flash/pflash_power_cut.sh): mount the array on the board's flash (pflash_board_cfi.hpp or
// pflash_board_spinor.hpp, as the logger), report what it holds, finalize it if the logger could not, and check
// the result. Over semihosting it prints:
//   "no array"                          the region holds no array (the cut fell before create returned)
//   "mounted chunks N finalized F torn_records T dead_blob D"
//   "chunk K crc C bytes B"             for each chunk (read back and checked against its record's CRC)
//   "finalized frame_start S frame_len L chunks N"   (the logger's finalize, or this one's)
//   "verified R rows"                   every item of the finalized array equals pflash_item: read in place
//                                       (array_view) on a mapped part, through the driver on another
//   "remounted finalized chunks N frame_start S"     a second mount finds the same finalized array
// Arguments: the board's, as the logger's (--block: the region's sectors are 64 KiB). Exit status 0 when all of
// it holds; 1 on any error (printed).
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "pflash_array.hpp"
#include "tessera/array.hpp"
#include "tessera/array_view.hpp"

using namespace tessera;
using namespace pflash;

namespace {

constexpr const char* kName = "pflash_recover";
alignas(64) uint8_t g_arena[160 * 1024];
alignas(8) uint8_t g_chunk[chunk_encode_bound(kChunkRows * kColumns * sizeof(int32_t))];
int32_t g_items[kChunkRows * kColumns];
array_frame_setup g_setup;
board g_board;  // the flash and its driver
uint8_t g_meta[sizeof g_setup.meta_bytes];

// Chunk k's rows of the finalized array into g_items, from v (a mapped part: in place) or a (through the driver).
status rows_read(array_view* v, array* a, int64_t k) {
  const int64_t start[2] = {k * kChunkRows, 0};
  const int64_t stop[2] = {(k + 1) * kChunkRows, kColumns};
  const bytes_mut out(reinterpret_cast<uint8_t*>(g_items), sizeof g_items);
  return v != nullptr ? array_view_slice_read(*v, start, stop, out) : array_slice_read(*a, start, stop, out);
}

// Every item of the array open in v or a against pflash_item.
int check(array_view* v, array* a, const array_layout& layout, int64_t chunks) {
  int wrong = layout.ndim != 2 || layout.shape[0] != chunks * kChunkRows || layout.shape[1] != kColumns;
  for (int64_t k = 0; k < chunks && wrong == 0; ++k) {
    if (auto e = rows_read(v, a, k); !e.ok()) return fail(kName, "slice", e);
    for (int32_t r = 0; r < kChunkRows; ++r)
      for (int32_t c = 0; c < kColumns; ++c) wrong += g_items[r * kColumns + c] != pflash_item(k * kChunkRows + r, c);
  }
  if (wrong != 0) {
    std::printf("%s: the finalized array differs from what was logged (%d items or its shape)\n", kName, wrong);
    return 1;
  }
  std::printf("verified %lld rows\n", static_cast<long long>(chunks * kChunkRows));
  return 0;
}

// The finalized frame read in place when the part is mapped, else through the driver (flash_frame_storage).
int verify(flash_frame& ff, const allocator& alloc, int64_t chunks) {
  if (!flash_frame_view(ff).empty()) {
    array_view v;
    if (auto e = array_view_open(v, flash_frame_view(ff), alloc); !e.ok()) return fail(kName, "array_view_open", e);
    const int r = check(&v, nullptr, v.layout, chunks);
    array_view_close(v);
    return r;
  }
  array a;
  if (auto e = array_open(a, flash_frame_storage(ff), alloc); !e.ok()) return fail(kName, "array_open", e);
  const int r = check(nullptr, &a, array_layout_get(a), chunks);
  (void)array_close(a);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  arena heap;
  arena_init(heap, g_arena, sizeof g_arena);
  const allocator alloc = arena_allocator(heap);
  for (int i = 1; i < argc; ++i) (void)board_option(g_board, argv[i]);  // the logger's board arguments
  if (auto e = board_open(g_board); !e.ok()) return fail(kName, "flash", e);
  // Parts with block locking power up locked: a firmware unlocks its region before appending after a reset.
  if (auto e = board_after_reset(g_board); !e.ok()) return fail(kName, "unlock", e);
  if (auto e = array_setup(g_setup, 0); !e.ok()) return fail(kName, "setup", e);

  flash_frame ff;
  const status mounted = flash_frame_mount(ff, region(g_board), alloc, g_setup.frame);
  if (mounted.code == errc::malformed) {
    std::printf("no array\n");
    return board_finish(0);
  }
  if (!mounted.ok()) return fail(kName, "mount", mounted);
  const int64_t chunks = ff.nchunks;
  std::printf("mounted chunks %lld finalized %d torn_records %u dead_blob %u\n", static_cast<long long>(chunks),
              ff.finalized ? 1 : 0, static_cast<unsigned>(ff.log.torn_records),
              static_cast<unsigned>(ff.log.dead_record));
  for (int64_t k = 0; k < chunks; ++k) {
    auto n = flash_frame_chunk_read(ff, k, bytes_mut(g_chunk, sizeof g_chunk));
    if (!n.ok()) return fail(kName, "chunk read", n.err());
    std::printf("chunk %lld crc %08x bytes %u\n", static_cast<long long>(k),
                static_cast<unsigned>(flash_crc32_update(0, bytes_view(g_chunk, *n))), static_cast<unsigned>(*n));
  }
  if (!ff.finalized) {
    if (auto e = set_rows(ff, g_setup, chunks * kChunkRows, g_meta, sizeof g_meta); !e.ok())
      return fail(kName, "meta update", e);
    if (auto e = flash_frame_finalize(ff); !e.ok()) return fail(kName, "finalize", e);
  }
  std::printf("finalized frame_start %u frame_len %u chunks %lld\n", static_cast<unsigned>(ff.frame_start),
              static_cast<unsigned>(ff.frame_len), static_cast<long long>(chunks));
  std::fflush(stdout);
  if (verify(ff, alloc, chunks) != 0) return board_finish(1);
  const uint32_t frame_start = ff.frame_start;
  flash_frame_close(ff);

  flash_frame again;
  if (auto e = flash_frame_mount(again, region(g_board), alloc, g_setup.frame); !e.ok()) return fail(kName, "remount", e);
  std::printf("remounted finalized chunks %lld frame_start %u\n", static_cast<long long>(again.nchunks),
              static_cast<unsigned>(again.frame_start));
  const bool same = again.finalized && again.nchunks == chunks && again.frame_start == frame_start;
  flash_frame_close(again);
  if (!same) std::printf("%s: the second mount does not find the array finalized as it was\n", kName);
  std::fflush(stdout);
  return board_finish(same ? 0 : 1);
}
