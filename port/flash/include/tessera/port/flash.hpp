// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Raw NOR flash, littlefs style (lfs_config): the geometry of the part and four callbacks with a context.
/// The callbacks see sector-relative addresses and are only ever called with aligned, in-bounds requests (the
/// checked wrappers below reject anything else), so a port's callbacks can stay a few lines over the vendor HAL.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera {

/// A NOR flash part: its callbacks, their context, and its geometry (sizes in bytes).
struct flash_device {
  /// Reads dst.size() bytes at byte `offset` of `sector`. offset and size are multiples of read_size.
  status (*read)(void* context, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept = nullptr;
  /// Programs src at `offset` of `sector`: offset and size are multiples of prog_size and the range lies within
  /// one page (page_size). NOR programming only moves bits away from the erased value; callers program each
  /// prog_size unit at most once between erases (so parts with ECC over the unit work too).
  status (*prog)(void* context, uint32_t sector, uint32_t offset, bytes_view src) noexcept = nullptr;
  /// Sets every byte of the sector to erased_value.
  status (*erase)(void* context, uint32_t sector) noexcept = nullptr;
  /// Waits until every program and erase so far is durable. nullptr: they are durable when they return.
  status (*sync)(void* context) noexcept = nullptr;
  void* context = nullptr;  ///< passed to every callback

  uint32_t read_size = 1;     ///< read granularity
  uint32_t prog_size = 1;     ///< program granularity (a multiple of read_size)
  uint32_t page_size = 0;     ///< the largest program in one call (a multiple of prog_size); 0: one sector
  uint32_t sector_size = 0;   ///< erase granularity (a multiple of page_size)
  uint32_t sector_count = 0;  ///< sectors of the device (or of the region it exposes)
  uint8_t erased_value = 0xFF;  ///< every byte's value after an erase
  /// The device's bytes when it is memory-mapped (a microcontroller's internal flash, execute-in-place QSPI):
  /// sector s starts at mapped + s * sector_size. Optional: readers then use finalized frames in place
  /// (flash_frame_view); every write still goes through prog and erase. nullptr: read() only.
  const uint8_t* mapped = nullptr;
};

/// The page size in effect (page_size, or sector_size when it is 0).
[[nodiscard]] inline uint32_t flash_page_size(const flash_device& d) noexcept {
  return d.page_size == 0 ? d.sector_size : d.page_size;
}

/// Checks the geometry: nonzero sizes, each granularity a multiple of the one below, callbacks present
/// (read, prog, erase). errc::invalid_argument says which rule is broken.
[[nodiscard]] status flash_device_validate(const flash_device& d) noexcept;

/// \name Checked calls
/// Checked calls: misaligned or out-of-bounds requests are errc::invalid_argument / errc::out_of_range and never
/// reach the callbacks; a missing callback is errc::unsupported (sync: nothing to do).
///@{

/// d.read.
[[nodiscard]] status flash_read(const flash_device& d, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept;
/// d.prog.
[[nodiscard]] status flash_prog(const flash_device& d, uint32_t sector, uint32_t offset, bytes_view src) noexcept;
/// d.erase.
[[nodiscard]] status flash_erase(const flash_device& d, uint32_t sector) noexcept;
/// d.sync; ok when there is none.
[[nodiscard]] status flash_sync(const flash_device& d) noexcept;
///@}

/// CRC-32 (IEEE 802.3, the zlib one): crc32_update(0, data) of the whole buffer, or chained over pieces.
[[nodiscard]] uint32_t flash_crc32_update(uint32_t crc, bytes_view data) noexcept;

}  // namespace tessera
