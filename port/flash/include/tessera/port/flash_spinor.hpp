// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A flash_device for serial NOR flash with the JEDEC command set (the "25 series": Winbond W25Q, Macronix MX25,
/// ISSI IS25, GigaDevice GD25, Micron N25Q/MT25Q, and QEMU's m25p80 models of them). The JEDEC logic here is
/// portable; the board gives one function, flash_spinor_transport::transfer, that runs one transaction on its
/// SPI controller (examples/pflash_board_spinor.hpp has SiFive's). Freestanding: no heap, no libc but memcpy.
///
/// Commands (single-wire SPI, mode 0 or 3; `a` the address, 3 bytes, or 4 with the 4-byte opcodes in brackets):
/// \verbatim
///   9Fh read JEDEC id (manufacturer, memory type, capacity)     05h read status (bit 0 WIP busy, bit 1 WEL)
///   06h write enable (before each program and erase)            03h [13h] a, then data: read
///   02h [12h] a, data: page program (within one page)           20h [21h] a: 4 KiB sector erase
///   D8h [DCh] a: 64 KiB block erase
/// \endverbatim
///
/// What the driver guarantees the port (docs/flash.md, "A driver for SPI NOR"):
/// - prog and erase return only once the part reports idle (status polled, at most poll_limit reads: more is
///   errc::io), so sync has nothing to wait for (flash_device::sync is nullptr); every command first waits for
///   the part to be idle, so a program or erase a reset interrupted on the MCU's side is waited out;
/// - every program and erase is preceded by a write enable whose latch (WEL) is checked: a part that does not
///   set it (write-protect pin, status register protection) is errc::io before anything is sent;
/// - a program never crosses a page of the part (page_size: longer ranges are split at page ends, since the
///   part would wrap to the page's start);
/// - with verify (the default): prog reads its range first and refuses the call (errc::invalid_argument, nothing
///   programmed) when a byte is not erased (the port programs each byte once between erases); after a program
///   the range is read back, after an erase the sector, and a difference is errc::io, not a silent hole (block
///   protection, a worn sector).
/// The part is not memory-mapped through this driver (flash_device::mapped is nullptr): the port reads through
/// read().
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/port/flash.hpp"

namespace tessera {

/// The board's SPI controller, as the driver sees it: one transaction per call.
struct flash_spinor_transport {
  /// Selects the chip, sends `head` (command, address), then `out`, then clocks in.size() bytes in (sending
  /// anything), and deselects the chip. Any of the three may be empty. An error (the controller's) is passed up
  /// as it is.
  status (*transfer)(void* context, bytes_view head, bytes_view out, bytes_mut in) noexcept = nullptr;
  void* context = nullptr;  ///< passed to transfer
};

/// The part. Fill it from the part's data sheet, or leave size at 0 to take it from the JEDEC id.
struct flash_spinor_config {
  flash_spinor_transport transport{};  ///< the board's SPI transaction (required)
  /// The part's 9Fh answer, manufacturer << 16 | memory type << 8 | capacity (ISSI IS25WP256: 0x9D7019); init
  /// refuses another part. 0: any part that answers.
  uint32_t jedec_id = 0;
  uint32_t size = 0;  ///< bytes of the part; 0: 2^capacity (the id's last byte, as most vendors code it)
  uint32_t page_size = 256;  ///< the page program's window (a power of two)
  uint32_t erase_size = 4096;  ///< the device's sector: 4096 (20h sector erase) or 65536 (D8h block erase)
  /// 3 or 4 (the 4-byte opcodes 13h, 12h, 21h, DCh, which need no mode switch); 0: 3 up to 16 MiB, else 4.
  uint8_t address_bytes = 0;
  bool verify = true;  ///< check a program's range is erased first, and read programs and erases back
  uint32_t poll_limit = 1000000;  ///< status reads before a program or erase is given up as errc::io
};

/// The driver's state: the config and what it saw. Read its fields; change none (verify may change between
/// calls).
struct flash_spinor {
  flash_spinor_config config{};  ///< the config of flash_spinor_init, with size and address_bytes resolved
  uint32_t jedec_id = 0;  ///< the id the part answered
  uint8_t last_status = 0;  ///< the status register after the last failed wait or write enable
  uint32_t programs = 0;  ///< page programs sent
  uint32_t erases = 0;  ///< sector and block erases sent
  uint32_t polls_max = 0;  ///< the most status reads one wait took
};

/// Waits until the part is idle, reads its JEDEC id, checks it and the config, and resolves size and
/// address_bytes. Errors: errc::invalid_argument (no transfer function, a page or erase size it cannot use, an
/// erase size that does not divide the part, 3-byte addresses on a part over 16 MiB), errc::io (nothing answers:
/// an id of all zeros or all ones; the part stays busy), errc::unsupported (another part than config.jedec_id;
/// size 0 and a capacity byte that is not a size), and those of the transport.
[[nodiscard]] status flash_spinor_init(flash_spinor& nor, const flash_spinor_config& config) noexcept;

/// The device over the whole part: read_size and prog_size 1, page_size and sector_size those of the config
/// (sector s at byte s * erase_size), erased 0xFF, not mapped, no sync. `nor` must outlive it.
[[nodiscard]] flash_device flash_spinor_device(flash_spinor& nor) noexcept;

/// \name Byte-addressed access
/// The part by byte address, for a boot record or a region outside the port's. Errors: errc::out_of_range (past
/// the part), errc::invalid_argument (see each), errc::io, and the transport's.
///@{

/// Reads dst.size() bytes at `address`.
[[nodiscard]] status flash_spinor_read(flash_spinor& nor, uint32_t address, bytes_mut dst) noexcept;
/// Programs src at `address`, one page program per page it touches. With verify: errc::invalid_argument (nothing
/// programmed) when a byte of the range is not erased; errc::io when the range reads back different.
[[nodiscard]] status flash_spinor_program(flash_spinor& nor, uint32_t address, bytes_view src) noexcept;
/// Erases [address, address + size): with a 4 KiB erase_size, a 64 KiB block erase for each whole aligned block
/// of the range and sector erases for the rest; with a 64 KiB one, block erases. errc::invalid_argument when the
/// range is not whole sectors of erase_size.
[[nodiscard]] status flash_spinor_erase(flash_spinor& nor, uint32_t address, uint32_t size) noexcept;
///@}

}  // namespace tessera
