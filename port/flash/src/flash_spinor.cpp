// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/port/flash_spinor.hpp"

namespace tessera {

namespace {

// The JEDEC command set (JESD216's basic commands and the 4-byte address instructions).
constexpr uint8_t kReadId = 0x9F;
constexpr uint8_t kReadStatus = 0x05;
constexpr uint8_t kWriteEnable = 0x06;
constexpr uint8_t kRead[2] = {0x03, 0x13};  // [3-byte, 4-byte address]
constexpr uint8_t kPageProgram[2] = {0x02, 0x12};
constexpr uint8_t kSectorErase[2] = {0x20, 0x21};  // 4 KiB
constexpr uint8_t kBlockErase[2] = {0xD8, 0xDC};  // 64 KiB
constexpr uint32_t kSector = 4096;
constexpr uint32_t kBlock = 65536;
// Status register bits.
constexpr uint8_t kBusy = 0x01;  // WIP: a program or erase runs
constexpr uint8_t kWriteEnabled = 0x02;  // WEL
// The piece read at a time to check erased bytes or compare a program (the stack stays small).
constexpr uint32_t kCheckPiece = 64;

status transfer(const flash_spinor& nor, bytes_view head, bytes_view out, bytes_mut in) noexcept {
  const flash_spinor_transport& t = nor.config.transport;
  return t.transfer(t.context, head, out, in);
}

status read_status(flash_spinor& nor, uint8_t& value) noexcept {
  return transfer(nor, bytes_view(&kReadStatus, 1), bytes_view(), bytes_mut(&value, 1));
}

// Polls the status until WIP clears, at most poll_limit reads.
status wait_idle(flash_spinor& nor) noexcept {
  uint8_t s = kBusy;
  uint32_t polls = 0;
  while ((s & kBusy) != 0 && polls < nor.config.poll_limit) {
    TESSERA_TRY(read_status(nor, s));
    ++polls;
  }
  if (polls > nor.polls_max) nor.polls_max = polls;
  if ((s & kBusy) == 0) return ok_status();
  nor.last_status = s;
  return make_error(errc::io, TESSERA_MSG("flash spinor: the part stays busy (poll_limit)"));
}

// 06h, then the latch checked: a protected part ignores programs and erases without saying so.
status write_enable(flash_spinor& nor) noexcept {
  TESSERA_TRY(transfer(nor, bytes_view(&kWriteEnable, 1), bytes_view(), bytes_mut()));
  uint8_t s = 0;
  TESSERA_TRY(read_status(nor, s));
  if ((s & kWriteEnabled) != 0) return ok_status();
  nor.last_status = s;
  return make_error(errc::io, TESSERA_MSG("flash spinor: write enable did not latch (write-protected?)"));
}

// An opcode of `ops` (3- or 4-byte address form) and the address, big-endian: the command's head.
uint32_t head_of(const flash_spinor& nor, const uint8_t (&ops)[2], uint32_t address, uint8_t (&head)[5]) noexcept {
  const bool four = nor.config.address_bytes == 4;
  head[0] = ops[four ? 1 : 0];
  uint32_t n = 1;
  if (four) head[n++] = static_cast<uint8_t>(address >> 24);
  head[n++] = static_cast<uint8_t>(address >> 16);
  head[n++] = static_cast<uint8_t>(address >> 8);
  head[n++] = static_cast<uint8_t>(address);
  return n;
}

status read_at(flash_spinor& nor, uint32_t address, bytes_mut dst) noexcept {
  uint8_t head[5];
  const uint32_t n = head_of(nor, kRead, address, head);
  return transfer(nor, bytes_view(head, n), bytes_view(), dst);
}

enum class check : uint8_t { erased, equal };

// Reads [address, address + size) in pieces and compares each byte with 0xFF or with `expected`'s.
status compare_at(flash_spinor& nor, uint32_t address, uint32_t size, check what, const uint8_t* expected,
                  bool& same) noexcept {
  uint8_t piece[kCheckPiece];
  same = true;
  for (uint32_t done = 0; done < size && same; done += kCheckPiece) {
    const uint32_t n = size - done < kCheckPiece ? size - done : kCheckPiece;
    TESSERA_TRY(read_at(nor, address + done, bytes_mut(piece, n)));
    for (uint32_t i = 0; i < n && same; ++i) same = piece[i] == (what == check::erased ? 0xFF : expected[done + i]);
  }
  return ok_status();
}

// Write enable, the command, then the wait: the part is idle again when it returns.
status write_command(flash_spinor& nor, const uint8_t (&ops)[2], uint32_t address, bytes_view data) noexcept {
  TESSERA_TRY(write_enable(nor));
  uint8_t head[5];
  const uint32_t n = head_of(nor, ops, address, head);
  TESSERA_TRY(transfer(nor, bytes_view(head, n), data, bytes_mut()));
  return wait_idle(nor);
}

status range_check(const flash_spinor& nor, uint32_t address, size_t size) noexcept {
  if (nor.config.transport.transfer == nullptr)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash spinor: not initialized"));
  if (address > nor.config.size || size > nor.config.size - address)
    return make_error(errc::out_of_range, TESSERA_MSG("flash spinor: range past the part"));
  return ok_status();
}

// One erase of `unit` (kSector or kBlock) at `address`, and with verify the unit read back erased.
status erase_unit(flash_spinor& nor, uint32_t address, uint32_t unit) noexcept {
  TESSERA_TRY(write_command(nor, unit == kBlock ? kBlockErase : kSectorErase, address, bytes_view()));
  ++nor.erases;
  if (!nor.config.verify) return ok_status();
  bool erased = false;
  TESSERA_TRY(compare_at(nor, address, unit, check::erased, nullptr, erased));
  if (!erased) return make_error(errc::io, TESSERA_MSG("flash spinor: an erased sector reads back not erased"));
  return ok_status();
}

flash_spinor& state(void* context) noexcept { return *static_cast<flash_spinor*>(context); }

status spinor_read(void* context, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept {
  flash_spinor& nor = state(context);
  return flash_spinor_read(nor, sector * nor.config.erase_size + offset, dst);
}

status spinor_prog(void* context, uint32_t sector, uint32_t offset, bytes_view src) noexcept {
  flash_spinor& nor = state(context);
  return flash_spinor_program(nor, sector * nor.config.erase_size + offset, src);
}

status spinor_erase(void* context, uint32_t sector) noexcept {
  flash_spinor& nor = state(context);
  return flash_spinor_erase(nor, sector * nor.config.erase_size, nor.config.erase_size);
}

bool power_of_two(uint32_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

status flash_spinor_init(flash_spinor& nor, const flash_spinor_config& config) noexcept {
  const uint32_t page = config.page_size;
  const uint32_t erase = config.erase_size;
  if (config.transport.transfer == nullptr || config.poll_limit == 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash spinor: no transfer function, or poll_limit 0"));
  if (!power_of_two(page) || page > kSector || (erase != kSector && erase != kBlock))
    return make_error(errc::invalid_argument,
                      TESSERA_MSG("flash spinor: page_size not a power of two up to 4096, or erase_size not 4096 or 65536"));
  if (config.address_bytes != 0 && config.address_bytes != 3 && config.address_bytes != 4)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash spinor: address_bytes not 0, 3 or 4"));
  nor = flash_spinor{};
  nor.config = config;
  // A reset of the MCU does not stop a program or erase the part had started: wait it out before the id.
  TESSERA_TRY(wait_idle(nor));
  uint8_t id[3] = {0, 0, 0};
  TESSERA_TRY(transfer(nor, bytes_view(&kReadId, 1), bytes_view(), bytes_mut(id, sizeof id)));
  nor.jedec_id = static_cast<uint32_t>(id[0]) << 16 | static_cast<uint32_t>(id[1]) << 8 | id[2];
  status s = ok_status();
  if (nor.jedec_id == 0 || nor.jedec_id == 0xFFFFFFu) {
    s = make_error(errc::io, TESSERA_MSG("flash spinor: no part answers the JEDEC id command"));
  } else if (config.jedec_id != 0 && nor.jedec_id != config.jedec_id) {
    s = make_error(errc::unsupported, TESSERA_MSG("flash spinor: the JEDEC id is not the configured part's"));
  } else if (config.size == 0 && (id[2] < 16 || id[2] > 31)) {
    s = make_error(errc::unsupported,
                   TESSERA_MSG("flash spinor: the capacity byte is not a size: set config.size"));
  } else {
    const uint32_t size = config.size != 0 ? config.size : 1u << id[2];
    uint8_t address_bytes = config.address_bytes;
    if (address_bytes == 0) address_bytes = size > (1u << 24) ? 4 : 3;
    if (size % erase != 0 || size < erase)
      s = make_error(errc::invalid_argument, TESSERA_MSG("flash spinor: erase_size does not divide the part"));
    else if (address_bytes == 3 && size > (1u << 24))
      s = make_error(errc::invalid_argument, TESSERA_MSG("flash spinor: 3-byte addresses reach 16 MiB of the part"));
    nor.config.size = size;
    nor.config.address_bytes = address_bytes;
  }
  if (!s.ok()) nor.config.transport.transfer = nullptr;  // calls on a failed init: invalid_argument
  return s;
}

flash_device flash_spinor_device(flash_spinor& nor) noexcept {
  flash_device d;
  d.read = spinor_read;
  d.prog = spinor_prog;
  d.erase = spinor_erase;
  d.sync = nullptr;  // prog and erase return once the part is idle: nothing is left pending
  d.context = &nor;
  d.read_size = 1;
  d.prog_size = 1;
  d.page_size = nor.config.page_size;
  d.sector_size = nor.config.erase_size;
  d.sector_count = nor.config.erase_size == 0 ? 0 : nor.config.size / nor.config.erase_size;
  d.erased_value = 0xFF;
  d.mapped = nullptr;
  return d;
}

status flash_spinor_read(flash_spinor& nor, uint32_t address, bytes_mut dst) noexcept {
  TESSERA_TRY(range_check(nor, address, dst.size()));
  if (dst.empty()) return ok_status();
  TESSERA_TRY(wait_idle(nor));
  return read_at(nor, address, dst);
}

status flash_spinor_program(flash_spinor& nor, uint32_t address, bytes_view src) noexcept {
  TESSERA_TRY(range_check(nor, address, src.size()));
  if (src.empty()) return ok_status();
  const auto n = static_cast<uint32_t>(src.size());
  TESSERA_TRY(wait_idle(nor));
  // Refused before anything is programmed: NOR programming only clears bits, so a byte programmed twice is
  // the AND of both values, not the new one.
  if (nor.config.verify) {
    bool erased = false;
    TESSERA_TRY(compare_at(nor, address, n, check::erased, nullptr, erased));
    if (!erased)
      return make_error(errc::invalid_argument, TESSERA_MSG("flash spinor: program over a byte that is not erased"));
  }
  const uint32_t page = nor.config.page_size;
  for (uint32_t done = 0; done < n;) {
    // Up to the end of this page: the part wraps within the page, it never carries into the next.
    const uint32_t at = address + done;
    const uint32_t room = page - at % page;
    const uint32_t take = n - done < room ? n - done : room;
    TESSERA_TRY(write_command(nor, kPageProgram, at, src.subspan(done, take)));
    ++nor.programs;
    done += take;
  }
  if (!nor.config.verify) return ok_status();
  bool same = false;
  TESSERA_TRY(compare_at(nor, address, n, check::equal, src.data(), same));
  if (!same) return make_error(errc::io, TESSERA_MSG("flash spinor: programmed bytes read back different"));
  return ok_status();
}

status flash_spinor_erase(flash_spinor& nor, uint32_t address, uint32_t size) noexcept {
  TESSERA_TRY(range_check(nor, address, size));
  const uint32_t unit = nor.config.erase_size;
  if (address % unit != 0 || size % unit != 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash spinor: erase range not whole sectors"));
  TESSERA_TRY(wait_idle(nor));
  for (uint32_t done = 0; done < size;) {
    const uint32_t at = address + done;
    // A whole aligned 64 KiB block in the range: one block erase instead of sixteen sector erases.
    const uint32_t step = at % kBlock == 0 && size - done >= kBlock ? kBlock : kSector;
    TESSERA_TRY(erase_unit(nor, at, step));
    done += step;
  }
  return ok_status();
}

}  // namespace tessera
