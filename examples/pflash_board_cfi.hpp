// SPDX-License-Identifier: BSD-3-Clause
// The board of the CFI logger images (pflash_logger.cpp, pflash_recover.cpp built for QEMU's riscv32 `virt`):
// pflash unit 1, a CFI parallel NOR bank at 0x22000000 (two x16 Intel/Sharp chips on a 32-bit bus, 32 MiB in
// blocks of 256 KiB), driven by port/flash's CFI driver. The array lives in the bank's first kRegionSectors
// blocks, so a finalized frame starts at byte 0 of the bank (and of its backing file on the host).
// What every board header gives the images (pflash_board_spinor.hpp is the other one): board, board_option,
// board_open, region, board_after_reset, board_describe, board_counters, board_finish.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tessera/port/flash_cfi.hpp"
#include "tessera/port/flash_frame.hpp"

namespace pflash {

inline constexpr uintptr_t kBankAddress = 0x22000000u;  // hw/riscv/virt.c: VIRT_FLASH base + 32 MiB (unit 1)
inline constexpr uint32_t kRegionSectors = 2;  // 512 KiB: room for about 250 chunks of this array

struct board {
  tessera::flash_cfi cfi;
  bool buffered = true;  // programs through the write buffer (E8h), else word by word (40h)
};

// The board's own argument: --word (word programs instead of buffered ones). false: not the board's.
inline bool board_option(board& b, const char* arg) {
  if (std::strcmp(arg, "--word") != 0) return false;
  b.buffered = false;
  return true;
}

// The bank: geometry from its CFI query table, then the driver.
inline tessera::status board_open(board& b) {
  tessera::flash_cfi_config cc;
  cc.base = reinterpret_cast<volatile uint8_t*>(kBankAddress);
  cc.bank_width = 4;
  TESSERA_TRY(tessera::flash_cfi_probe(cc));
  cc.use_buffer = b.buffered;
  return tessera::flash_cfi_init(b.cfi, cc);
}

// The log's region: the first kRegionSectors blocks of the bank.
inline tessera::flash_log_config region(board& b) {
  tessera::flash_log_config lc;
  lc.device = tessera::flash_cfi_device(b.cfi);
  lc.first_sector = 0;
  lc.sector_count = kRegionSectors;
  return lc;
}

// After a reset, before a mount that may append: parts with block locking power up with every block locked.
inline tessera::status board_after_reset(board& b) {
  for (uint32_t s = 0; s < kRegionSectors; ++s) TESSERA_TRY(tessera::flash_cfi_unlock(b.cfi, s));
  return tessera::ok_status();
}

inline void board_describe(const board& b) {
  std::printf("bank: %u bytes in %u blocks of %u, write buffer %u bytes, %s programs\n",
              static_cast<unsigned>(b.cfi.config.size), static_cast<unsigned>(b.cfi.sector_count),
              static_cast<unsigned>(b.cfi.config.sector_size), static_cast<unsigned>(b.cfi.config.buffer_size),
              b.buffered ? "buffered" : "word");
}

// The end of an image: QEMU's pflash has written its file before a program returns, nothing to wait for.
inline int board_finish(int status) { return status; }

inline void board_counters(const board& b) {
  std::printf("device: %u words programmed, %u blocks erased, at most %u status reads per operation",
              static_cast<unsigned>(b.cfi.programs), static_cast<unsigned>(b.cfi.erases),
              static_cast<unsigned>(b.cfi.polls_max));
}

}  // namespace pflash
