// SPDX-License-Identifier: BSD-3-Clause
// A data logger on a real command set: the B2ND array of pflash_array.hpp written chunk by chunk through the
// flash port onto a flash part QEMU models, then finalized: the part's backing file on the host then holds a
// plain Blosc2 cframe at the region's first byte, which `tessera dump` reads (tests/flash/pflash_logger_test.sh).
// Built twice: pflash_logger for the CFI parallel NOR of QEMU's riscv32 `virt` board (port/flash's CFI driver,
// pflash unit 1, pflash_board_cfi.hpp) and spinor_logger for the SPI NOR of its riscv64 `sifive_u` (port/flash's
// SPI NOR driver, pflash_board_spinor.hpp). The same image is the victim of the power-cut test
// (tests/flash/pflash_power_cut.sh), which kills QEMU at random points of this run: every step is printed as it
// happens, flushed, so the host knows what had returned before the kill. It ends through board_finish (the
// board may need to let QEMU write its file first).
// Usage (semihosting arguments): pflash_logger [--word] [--chunks N], spinor_logger [--block] [--chunks N]
//   --word      (CFI) program word by word (40h) instead of through the 4 KiB write buffer (E8h)
//   --block     (SPI NOR) erase sectors of 64 KiB (D8h) instead of 4 KiB (20h)
//   --chunks N  chunks of kChunkRows rows to log (default 24)
// Output: "creating", "created", "appending K" and "appended K crc C bytes B" per chunk, "finalizing",
// "finalized frame_start S frame_len L chunks N".
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "pflash_array.hpp"

using namespace tessera;
using namespace pflash;

namespace {

alignas(64) uint8_t g_arena[192 * 1024];
int32_t g_items[kChunkRows * kColumns];
array_frame_setup g_setup;  // the array's (shape (0, kColumns)): large, so static
array_frame_setup g_chunk_setup;  // a one-chunk array's, for the packer
uint8_t g_meta[sizeof g_setup.meta_bytes];
board g_board;  // the flash and its driver

int count_of(const char* text) {  // a decimal count (the shims of this build have no strtol)
  int n = 0;
  for (; *text >= '0' && *text <= '9' && n < 100000; ++text) n = n * 10 + (*text - '0');
  return n;
}

void say(const char* text) {
  std::printf("%s\n", text);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kName = "pflash_logger";
  int chunks = kDefaultChunks;
  for (int i = 1; i < argc; ++i) {
    if (board_option(g_board, argv[i])) continue;
    if (std::strcmp(argv[i], "--chunks") == 0 && i + 1 < argc) chunks = count_of(argv[++i]);
  }
  arena heap;
  arena_init(heap, g_arena, sizeof g_arena);
  const allocator alloc = arena_allocator(heap);

  if (auto e = board_open(g_board); !e.ok()) return fail(kName, "flash", e);
  board_describe(g_board);
  if (auto e = array_setup(g_setup, 0); !e.ok()) return fail(kName, "setup", e);
  if (auto e = array_setup(g_chunk_setup, kChunkRows); !e.ok()) return fail(kName, "setup", e);

  say("creating");
  flash_frame ff;
  if (auto e = flash_frame_create(ff, region(g_board), alloc, g_setup.frame); !e.ok()) return fail(kName, "create", e);
  say("created");
  array_chunk_packer packer;
  if (auto e = array_chunk_packer_init(packer, g_chunk_setup, alloc); !e.ok()) return fail(kName, "packer", e);
  for (int k = 0; k < chunks; ++k) {
    for (int32_t r = 0; r < kChunkRows; ++r)
      for (int32_t c = 0; c < kColumns; ++c)
        g_items[r * kColumns + c] = pflash_item(static_cast<int64_t>(k) * kChunkRows + r, c);
    auto chunk = array_chunk_pack(packer, 0, bytes_view(reinterpret_cast<const uint8_t*>(g_items), sizeof g_items));
    if (!chunk.ok()) return fail(kName, "pack", chunk.err());
    std::printf("appending %d\n", k);
    std::fflush(stdout);
    if (auto e = flash_frame_append(ff, *chunk); !e.ok()) return fail(kName, "append", e);
    std::printf("appended %d crc %08x bytes %u\n", k, static_cast<unsigned>(flash_crc32_update(0, *chunk)),
                static_cast<unsigned>(chunk->size()));
    std::fflush(stdout);
  }
  say("finalizing");
  if (auto e = set_rows(ff, g_setup, static_cast<int64_t>(chunks) * kChunkRows, g_meta, sizeof g_meta); !e.ok())
    return fail(kName, "meta update", e);
  if (auto e = flash_frame_finalize(ff); !e.ok()) return fail(kName, "finalize", e);
  std::printf("finalized frame_start %u frame_len %u chunks %d\n", static_cast<unsigned>(ff.frame_start),
              static_cast<unsigned>(ff.frame_len), chunks);
  board_counters(g_board);
  std::printf("; arena high water %u bytes\n", static_cast<unsigned>(heap.high_water));
  std::fflush(stdout);
  flash_frame_close(ff);
  return board_finish(0);
}
