// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A flash_device for memory-mapped parallel NOR that speaks the CFI Intel/Sharp command set (command set 0001h
/// or 0003h: Intel StrataFlash, P30/P33, Micron/Numonyx parts, and QEMU's pflash_cfi01 model, which the RISC-V
/// and Arm `virt` boards map). Freestanding: no heap, no libc but memcpy; the state is one flash_cfi struct.
///
/// Commands (written to the bus, replicated for each chip of an interleaved bank):
/// \verbatim
///   FFh read array       70h read status      50h clear status      98h CFI query (at word 55h)
///   40h word program (then the data)          E8h buffered program (then count - 1, the data, D0h)
///   20h + D0h block erase                      60h + D0h clear the block's lock bit
/// \endverbatim
/// Status register (per chip): bit 7 ready, 5 erase error, 4 program error, 3 VPP low, 1 block locked.
///
/// What the driver guarantees the port (docs/firmware.md, "A driver for CFI parallel NOR"):
/// - prog and erase return only once the chips report ready (the status register polled, at most poll_limit
///   reads: more is errc::io), so sync has nothing to wait for (flash_device::sync is nullptr);
/// - a program or erase whose status reports an error (or a timeout) is errc::io; the status is cleared and the
///   bank is back in read-array mode whatever happened, so the next call starts clean;
/// - prog reads every word of its range first and refuses the call (errc::invalid_argument, nothing programmed)
///   when one is not erased: the port programs each unit once between erases, NOR programming can only clear
///   bits, and many parts (QEMU's model too) do not even do that, they store the new value. All-ones words of src
///   are left erased (word by word; through the buffer, those at either end of a buffer window);
/// - after programming, the range is read back and compared (errc::io when it differs).
/// The bank is left in read-array mode between calls: flash_device::mapped is the bank's base, for reading
/// finalized frames in place. Not while a program or erase runs (the bus returns the status then): one context
/// at a time, as the port requires anyway.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/port/flash.hpp"

namespace tessera {

/// Bus accesses through functions instead of the mapped address: a bank behind a controller that needs them,
/// or a model of the part (tests/flash/test_flash_cfi.cpp). Both or neither.
struct flash_cfi_bus {
  /// The bus word (bank_width bytes, in the low bits) at byte `offset` of the bank (a bank_width multiple).
  uint32_t (*read)(void* context, uint32_t offset) noexcept = nullptr;
  /// Writes the bus word `value` at byte `offset` of the bank.
  void (*write)(void* context, uint32_t offset, uint32_t value) noexcept = nullptr;
  void* context = nullptr;  ///< passed to both
};

/// Where the bank is and how it is wired. Fill it by hand from the board's and the part's data sheets, or set
/// base and bank_width and let flash_cfi_probe read the rest from the chips' CFI query table.
struct flash_cfi_config {
  volatile uint8_t* base = nullptr;  ///< the bank's first byte (e.g. reinterpret_cast<volatile uint8_t*>(0x22000000))
  flash_cfi_bus bus{};  ///< instead of base, when set: every access through it (the bank is not mapped)
  uint8_t bank_width = 4;  ///< bytes of the data bus: 1, 2 or 4 (the program unit)
  uint8_t chips = 1;  ///< chips side by side on the bus (bank_width / a chip's width): 1, 2 or 4
  uint32_t size = 0;  ///< bytes of the bank (all chips)
  uint32_t sector_size = 0;  ///< bytes of one erase block of the bank (all chips): uniform blocks only
  /// Bytes of the write buffer of the bank (all chips; a power of two): buffered programs never cross a
  /// multiple of it. 0: the part has none (word programs only). It is the device's page_size either way.
  uint32_t buffer_size = 0;
  bool use_buffer = true;  ///< program through the write buffer (E8h) when there is one, else word by word
  uint32_t poll_limit = 1000000;  ///< status reads before a program or erase is given up as errc::io
};

/// The driver's state: the config and what it saw. Read its fields; change none.
struct flash_cfi {
  flash_cfi_config config{};  ///< the config of flash_cfi_init (use_buffer may be changed between calls)
  uint32_t replicate = 1;  ///< a command byte times this is the command to every chip on the bus
  uint32_t sector_count = 0;  ///< size / sector_size
  uint8_t last_status = 0;  ///< the status of the last failed program or erase (every chip's bits ORed)
  uint32_t programs = 0;  ///< bus words programmed (word programs, or words through the buffer)
  uint32_t erases = 0;  ///< blocks erased
  uint32_t polls_max = 0;  ///< the most status reads one operation took
};

/// Reads the CFI query table of the bank at config.base with config.bank_width and fills chips, size,
/// sector_size and buffer_size. Errors: errc::unsupported (no "QRY" answer for any chip count, another command
/// set than Intel/Sharp, or erase blocks of more than one size), errc::invalid_argument (bank_width not 1, 2 or 4).
/// Leaves the bank in read-array mode.
[[nodiscard]] status flash_cfi_probe(flash_cfi_config& config) noexcept;

/// Checks the config and resets the bank's state (clear status, read array). Errors: errc::invalid_argument.
[[nodiscard]] status flash_cfi_init(flash_cfi& cfi, const flash_cfi_config& config) noexcept;

/// The device over the whole bank (sector s at config.base + s * sector_size): read_size 1, prog_size
/// bank_width, page_size buffer_size (or the sector), erased 0xFF, mapped at the base (not with config.bus).
/// `cfi` must outlive it.
[[nodiscard]] flash_device flash_cfi_device(flash_cfi& cfi) noexcept;

/// Clears the lock bit of `sector` (60h, D0h). Intel parts with block locking (P30, P33) power up with every
/// block locked: programs to a locked block fail (status bit 1). Erase unlocks its block itself; call this over
/// a region mounted after a reset, before appending. Errors: errc::io, errc::out_of_range.
[[nodiscard]] status flash_cfi_unlock(flash_cfi& cfi, uint32_t sector) noexcept;

}  // namespace tessera
