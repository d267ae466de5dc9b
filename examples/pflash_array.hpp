// SPDX-License-Identifier: BSD-3-Clause
// What the flash logger (pflash_logger.cpp) and its recovery (pflash_recover.cpp) share: the board's flash,
// the array's parameters and its items. The board is a header of its own, chosen when the images are built:
// pflash_board_cfi.hpp (QEMU's riscv32 `virt`, CFI parallel NOR, the default) or pflash_board_spinor.hpp (QEMU's
// riscv64 `sifive_u`, SPI NOR: PFLASH_BOARD_SPINOR defined).
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
#include "tessera/port/flash_frame.hpp"

#ifdef PFLASH_BOARD_SPINOR
#include "pflash_board_spinor.hpp"
#else
#include "pflash_board_cfi.hpp"
#endif

namespace pflash {

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
