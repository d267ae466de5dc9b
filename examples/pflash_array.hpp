// SPDX-License-Identifier: BSD-3-Clause
// What the pflash logger (pflash_logger.cpp) and its recovery (pflash_recover.cpp) share: the board's flash,
// the array's parameters and its items. The board is QEMU's riscv32 `virt` with pflash unit 1: a CFI parallel
// NOR bank at 0x22000000 (two x16 Intel/Sharp chips on a 32-bit bus, 32 MiB in blocks of 256 KiB), driven by
// port/flash's CFI driver. The array lives in the bank's first kRegionSectors blocks, so a finalized frame
// starts at byte 0 of the bank (and of its backing file on the host).
//
// The array: int32, kColumns columns, chunks of kChunkRows rows (blocks of kBlockRows), BloscLZ + shuffle,
// row r and column c holding pflash_item(r, c) (tests/flash/pflash_lib.sh's pflash_expected prints the same numbers
// for the host's check). It is created with shape (0, kColumns); the finalized shape is (chunks * kChunkRows,
// kColumns).
#pragma once

#include <cstdint>
#include <cstdio>

#include "tessera/array.hpp"
#include "tessera/chunk.hpp"
#include "tessera/port/flash_cfi.hpp"
#include "tessera/port/flash_frame.hpp"

namespace pflash {

inline constexpr uintptr_t kBankAddress = 0x22000000u;  // hw/riscv/virt.c: VIRT_FLASH base + 32 MiB (unit 1)
inline constexpr uint32_t kRegionSectors = 2;  // 512 KiB: room for about 250 chunks of this array
inline constexpr int32_t kColumns = 16;
inline constexpr int32_t kChunkRows = 64;
inline constexpr int32_t kBlockRows = 16;
inline constexpr int kDefaultChunks = 24;

inline int32_t pflash_item(int64_t row, int32_t column) {
  return static_cast<int32_t>((row * kColumns + column) * 3 + (row * 7 + column * 13) % 29 - 1000);
}

inline int fail(const char* program, const char* what, const tessera::error& e) {
  std::printf("%s: %s: %s (%s)\n", program, what, e.message, tessera::errc_name(e.code));
  std::fflush(stdout);
  return 1;
}

// The bank: geometry from its CFI query table, then the driver. `buffered`: programs through the write buffer.
inline tessera::status bank_open(tessera::flash_cfi& cfi, bool buffered) {
  tessera::flash_cfi_config cc;
  cc.base = reinterpret_cast<volatile uint8_t*>(kBankAddress);
  cc.bank_width = 4;
  TESSERA_TRY(tessera::flash_cfi_probe(cc));
  cc.use_buffer = buffered;
  return tessera::flash_cfi_init(cfi, cc);
}

// The log's region: the first kRegionSectors blocks of the bank.
inline tessera::flash_log_config region(tessera::flash_cfi& cfi) {
  tessera::flash_log_config lc;
  lc.device = tessera::flash_cfi_device(cfi);
  lc.first_sector = 0;
  lc.sector_count = kRegionSectors;
  return lc;
}

// The array's frame parameters (shape (0, kColumns)); with rows > 0 those of a one-chunk array of the same
// geometry, for the packer (see firmware_logger.cpp: chunks are cut out of the array's shape).
inline tessera::status array_setup(tessera::array_frame_setup& setup, int64_t rows) {
  tessera::array_params p;
  p.ndim = 2;
  p.shape[0] = rows;
  p.shape[1] = kColumns;
  p.chunkshape[0] = kChunkRows;
  p.chunkshape[1] = kColumns;
  p.blockshape[0] = kBlockRows;
  p.blockshape[1] = kColumns;
  p.dtype = tessera::span<const char>("<i4", 3);
  p.compressor = tessera::codec::blosclz;
  return tessera::array_frame_setup_make(setup, p);
}

// The b2nd metalayer with `rows` rows (the same size as create's: its extents are fixed-width), into the frame.
inline tessera::status set_rows(tessera::flash_frame& ff, const tessera::array_frame_setup& setup, int64_t rows,
                                uint8_t* buffer, size_t buffer_size) {
  auto meta = tessera::b2nd_meta_decode(setup.metalayers[0].content);
  if (!meta.ok()) return meta.err();
  meta->shape[0] = rows;
  auto len = tessera::b2nd_meta_encode(*meta, tessera::bytes_mut(buffer, buffer_size));
  if (!len.ok()) return len.err();
  return tessera::flash_frame_meta_update(ff, setup.metalayers[0].name, tessera::bytes_view(buffer, *len));
}

}  // namespace pflash
