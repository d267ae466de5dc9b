// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/port/flash.hpp"

#include "flash_internal.hpp"

namespace tessera {

namespace {

bool multiple_of(uint32_t value, uint32_t unit) noexcept { return unit != 0 && value % unit == 0; }

enum class access : uint8_t { read, prog };

// What flash_read and flash_prog check before calling the device: its callback for `a`, the sector, and that
// [offset, offset + size) lies in the sector in whole units of read_size or prog_size. The messages name `a`.
detail::code_status access_check(const flash_device& d, access a, uint32_t sector, uint32_t offset, size_t size) noexcept {
  const bool read = a == access::read;
  if (read ? d.read == nullptr : d.prog == nullptr)
    return make_error(errc::unsupported, read ? TESSERA_MSG("flash: no read callback") : TESSERA_MSG("flash: no prog callback"));
  if (sector >= d.sector_count)
    return make_error(errc::out_of_range, read ? TESSERA_MSG("flash read: sector past the device")
                                               : TESSERA_MSG("flash prog: sector past the device"));
  if (offset > d.sector_size || size > d.sector_size - offset)
    return make_error(errc::out_of_range, read ? TESSERA_MSG("flash read: range crosses the end of the sector")
                                               : TESSERA_MSG("flash prog: range crosses the end of the sector"));
  const uint32_t unit = read ? d.read_size : d.prog_size;
  if (unit == 0 || offset % unit != 0 || size % unit != 0)
    return make_error(errc::invalid_argument, read ? TESSERA_MSG("flash read: offset or size not a multiple of read_size")
                                                   : TESSERA_MSG("flash prog: offset or size not a multiple of prog_size"));
  return ok_status();
}

}  // namespace

status flash_device_validate(const flash_device& d) noexcept {
  if (d.read == nullptr || d.prog == nullptr || d.erase == nullptr)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash: device needs read, prog and erase callbacks"));
  if (d.read_size == 0 || d.prog_size == 0 || d.sector_size == 0 || d.sector_count == 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash: read_size, prog_size, sector_size, sector_count must be > 0"));
  if (!multiple_of(d.prog_size, d.read_size))
    return make_error(errc::invalid_argument, TESSERA_MSG("flash: prog_size must be a multiple of read_size"));
  const uint32_t page = flash_page_size(d);
  if (!multiple_of(page, d.prog_size))
    return make_error(errc::invalid_argument, TESSERA_MSG("flash: page_size must be a multiple of prog_size"));
  if (!multiple_of(d.sector_size, page))
    return make_error(errc::invalid_argument, TESSERA_MSG("flash: sector_size must be a multiple of page_size"));
  return ok_status();
}

namespace detail {

code_status flash_read_checked(const flash_device& d, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept {
  TESSERA_TRY(access_check(d, access::read, sector, offset, dst.size()));
  if (dst.empty()) return ok_status();
  return d.read(d.context, sector, offset, dst);
}

code_status flash_prog_checked(const flash_device& d, uint32_t sector, uint32_t offset, bytes_view src) noexcept {
  TESSERA_TRY(access_check(d, access::prog, sector, offset, src.size()));
  const uint32_t page = flash_page_size(d);
  if (!src.empty() && offset / page != (offset + static_cast<uint32_t>(src.size()) - 1) / page)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash prog: range crosses a page boundary"));
  if (src.empty()) return ok_status();
  return d.prog(d.context, sector, offset, src);
}

code_status flash_erase_checked(const flash_device& d, uint32_t sector) noexcept {
  if (d.erase == nullptr) return make_error(errc::unsupported, TESSERA_MSG("flash: no erase callback"));
  if (sector >= d.sector_count) return make_error(errc::out_of_range, TESSERA_MSG("flash erase: sector past the device"));
  return d.erase(d.context, sector);
}

code_status flash_sync_checked(const flash_device& d) noexcept { return d.sync == nullptr ? ok_status() : d.sync(d.context); }

}  // namespace detail

status flash_read(const flash_device& d, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept {
  return detail::flash_read_checked(d, sector, offset, dst);
}

status flash_prog(const flash_device& d, uint32_t sector, uint32_t offset, bytes_view src) noexcept {
  return detail::flash_prog_checked(d, sector, offset, src);
}

status flash_erase(const flash_device& d, uint32_t sector) noexcept { return detail::flash_erase_checked(d, sector); }

status flash_sync(const flash_device& d) noexcept { return detail::flash_sync_checked(d); }

uint32_t flash_crc32_update(uint32_t crc, bytes_view data) noexcept {
#ifdef __OPTIMIZE_SIZE__
  // A size build (firmware): bit by bit, no table (a few cycles per bit, small beside programming the bytes).
  crc = ~crc;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
#else
  // Nibble-wise table: 64 bytes of constants, fast enough for commit records and verification reads.
  static constexpr uint32_t kTable[16] = {
      0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
      0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};
  crc = ~crc;
  for (uint8_t byte : data) {
    crc = (crc >> 4) ^ kTable[(crc ^ byte) & 0x0Fu];
    crc = (crc >> 4) ^ kTable[(crc ^ (byte >> 4)) & 0x0Fu];
  }
  return ~crc;
#endif
}

}  // namespace tessera
