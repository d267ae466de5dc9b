// SPDX-License-Identifier: BSD-3-Clause
// The board of the SPI NOR logger images (pflash_logger.cpp, pflash_recover.cpp built as spinor_logger and
// spinor_recover for QEMU's riscv64 `sifive_u`): the SiFive SPI controller QSPI0 at 0x10040000 with an ISSI
// IS25WP256 on chip select 0 (QEMU's m25p80 model, JEDEC id 9D 70 19: 32 MiB, 256-byte pages, 4 KiB sectors and
// 64 KiB blocks), backed on the host by `-drive if=mtd`. port/flash's SPI NOR driver does the JEDEC commands;
// this file is the only board code: the transport, one transaction on the controller (what a port to another
// MCU's SPI peripheral rewrites). The array lives in 512 KiB from byte 16 MiB of the part (past what 3-byte
// addresses reach, so the driver uses the 4-byte opcodes): a finalized frame starts at byte kRegionStart of the
// backing file (tessera --offset).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tessera/port/flash_frame.hpp"
#include "tessera/port/flash_spinor.hpp"

namespace pflash {

inline constexpr uintptr_t kSpiAddress = 0x10040000u;  // QSPI0 (hw/riscv/sifive_u.c), the flash on CS 0
inline constexpr uint32_t kJedecId = 0x9D7019;  // ISSI IS25WP256
inline constexpr uint32_t kRegionStart = 16u << 20;
inline constexpr uint32_t kRegionBytes = 512u * 1024;

// ---- The transport: SiFive's SPI controller (FU540 and FE310 manuals, "SPI"), programmed I/O.
// Registers (32-bit words): sckdiv 00h, csid 10h, csmode 18h (0 auto, 2 hold), fmt 40h (proto, endian,
// direction, frame length), txdata 48h (bit 31: FIFO full), rxdata 4Ch (bit 31: FIFO empty).
struct sifive_spi {
  volatile uint32_t* regs = nullptr;
  uint32_t poll_limit = 100000;  // FIFO polls per byte before the transfer is an error
};

inline constexpr uint32_t kCsId = 0x10 / 4, kCsMode = 0x18 / 4, kFmt = 0x40 / 4, kTxData = 0x48 / 4,
                          kRxData = 0x4C / 4;
inline constexpr uint32_t kCsModeAuto = 0, kCsModeHold = 2;
inline constexpr uint32_t kFifoBit = 0x80000000u;

// Chip select held for the whole transaction (hold mode), each byte sent and its answer read before the next:
// the 8-byte receive FIFO never overflows, and the last byte is on the wire when select is released.
inline tessera::status sifive_spi_transfer(void* context, tessera::bytes_view head, tessera::bytes_view out,
                                           tessera::bytes_mut in) noexcept {
  sifive_spi& spi = *static_cast<sifive_spi*>(context);
  volatile uint32_t* r = spi.regs;
  tessera::status s = tessera::ok_status();
  r[kCsMode] = kCsModeHold;
  const size_t total = head.size() + out.size() + in.size();
  for (size_t i = 0; i < total && s.ok(); ++i) {
    const uint8_t tx = i < head.size() ? head[i] : i < head.size() + out.size() ? out[i - head.size()] : 0;
    uint32_t polls = 0;
    while ((r[kTxData] & kFifoBit) != 0 && ++polls < spi.poll_limit) {}
    r[kTxData] = tx;
    uint32_t rx = kFifoBit;
    for (polls = 0; (rx & kFifoBit) != 0 && polls < spi.poll_limit; ++polls) rx = r[kRxData];
    if ((rx & kFifoBit) != 0)
      s = tessera::make_error(tessera::errc::io, TESSERA_MSG("sifive spi: no byte came back"));
    else if (i >= head.size() + out.size())
      in[i - head.size() - out.size()] = static_cast<uint8_t>(rx);
  }
  r[kCsMode] = kCsModeAuto;  // releases chip select
  return s;
}

// Single lane, most significant bit first, full duplex, 8-bit frames, chip select 0; the receive FIFO emptied.
inline void sifive_spi_init(sifive_spi& spi, uintptr_t address) {
  spi.regs = reinterpret_cast<volatile uint32_t*>(address);
  spi.regs[kCsMode] = kCsModeAuto;
  spi.regs[kCsId] = 0;
  spi.regs[kFmt] = 8u << 16;
  for (int i = 0; i < 16 && (spi.regs[kRxData] & kFifoBit) == 0; ++i) {}
}

// ---- What the images ask of a board (pflash_board_cfi.hpp says the list).
struct board {
  sifive_spi spi;
  tessera::flash_spinor nor;
  bool block = false;  // sectors of 64 KiB (D8h block erase) instead of 4 KiB (20h sector erase)
};

// The board's own argument: --block (64 KiB erase sectors). false: not the board's.
inline bool board_option(board& b, const char* arg) {
  if (std::strcmp(arg, "--block") != 0) return false;
  b.block = true;
  return true;
}

inline tessera::status board_open(board& b) {
  sifive_spi_init(b.spi, kSpiAddress);
  tessera::flash_spinor_config c;
  c.transport.transfer = sifive_spi_transfer;
  c.transport.context = &b.spi;
  c.jedec_id = kJedecId;  // the size comes from the id: 2^0x19
  c.erase_size = b.block ? 65536 : 4096;
  return tessera::flash_spinor_init(b.nor, c);
}

inline tessera::flash_log_config region(board& b) {
  tessera::flash_log_config lc;
  lc.device = tessera::flash_spinor_device(b.nor);
  lc.first_sector = kRegionStart / lc.device.sector_size;
  lc.sector_count = kRegionBytes / lc.device.sector_size;
  return lc;
}

inline tessera::status board_after_reset(board&) { return tessera::ok_status(); }  // no block locking

inline void board_describe(const board& b) {
  std::printf("spi nor: JEDEC id %06x, %u bytes, %u-byte addresses, pages of %u, %s erases; region at %u\n",
              static_cast<unsigned>(b.nor.jedec_id), static_cast<unsigned>(b.nor.config.size),
              static_cast<unsigned>(b.nor.config.address_bytes), static_cast<unsigned>(b.nor.config.page_size),
              b.block ? "64 KiB block" : "4 KiB sector", static_cast<unsigned>(kRegionStart));
}

// QEMU's m25p80 queues each page's write to the backing file and lets the guest go on; semihosting's exit ends
// the process at once, dropping writes still queued. So the images end through board_finish, which here waits
// 100 ms first (the CLINT's mtime, 1 MHz on sifive_u): the file then holds what the part does.
inline int board_finish(int status) {
  const volatile uint64_t* mtime = reinterpret_cast<const volatile uint64_t*>(0x0200BFF8u);
  const uint64_t end = *mtime + 100000;
  while (*mtime < end) {}
  return status;
}

inline void board_counters(const board& b) {
  std::printf("device: %u page programs, %u erases, at most %u status reads per operation",
              static_cast<unsigned>(b.nor.programs), static_cast<unsigned>(b.nor.erases),
              static_cast<unsigned>(b.nor.polls_max));
}

}  // namespace pflash
