// SPDX-License-Identifier: BSD-3-Clause
// A flash_device driver for a new part (docs/flash.md walks through it): a serial NOR chip of the common 25-series
// command set (READ 0x03, WRITE ENABLE 0x06, PAGE PROGRAM 0x02 of at most one 256-byte page, SECTOR ERASE 0x20
// of 4 KiB, READ STATUS 0x05 with its busy bit) behind a board's SPI transfer function. On a board, spi_transfer
// is the HAL's: chip select low, the command bytes, then bytes out or in, chip select high. Here it drives a
// model of such a chip in RAM that refuses what the part would not do (a command while busy, a program without
// write enable or across a page end), so ctest runs the driver on every target: an array is logged through it,
// mounted again as after a reset, finalized, and read back through flash_frame_storage (an SPI chip is not
// memory-mapped). No heap: an arena over a static buffer.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tessera/chunk.hpp"
#include "tessera/codecs.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/flash.hpp"
#include "tessera/port/flash_frame.hpp"

using namespace tessera;

namespace {

// ---- The board: one SPI transaction with the chip selected (the HAL's function on a real board).
using spi_transfer = bool (*)(void* bus, const uint8_t* cmd, size_t cmd_len, const uint8_t* out, size_t out_len,
                              uint8_t* in, size_t in_len) noexcept;

// ---- The driver: the part's commands behind the four callbacks, and its geometry.
constexpr uint32_t kSectorSize = 4096;  // SECTOR ERASE 0x20
constexpr uint32_t kPageSize = 256;     // PAGE PROGRAM 0x02 programs within one page
constexpr uint8_t kRead = 0x03, kWriteEnable = 0x06, kPageProgram = 0x02, kSectorErase = 0x20, kReadStatus = 0x05;
constexpr uint8_t kStatusBusy = 0x01;

struct nor_chip {
  spi_transfer transfer = nullptr;
  void* bus = nullptr;
  uint32_t base = 0;  // the region's first byte on the chip (a multiple of kSectorSize)
};

// A 3-byte address command.
status nor_command(const nor_chip& chip, uint8_t op, uint32_t addr, const uint8_t* out, size_t out_len, uint8_t* in,
                   size_t in_len) noexcept {
  const uint8_t cmd[4] = {op, static_cast<uint8_t>(addr >> 16), static_cast<uint8_t>(addr >> 8),
                          static_cast<uint8_t>(addr)};
  if (!chip.transfer(chip.bus, cmd, sizeof cmd, out, out_len, in, in_len)) {
    return make_error(errc::io, TESSERA_MSG("nor: SPI transfer failed"));
  }
  return ok_status();
}

// Polls the status register until the part is idle. Programs and erases return without waiting, so every command
// (and sync) waits for the one before: the port's calls never overlap on the part. A firmware with an RTOS would
// sleep between polls; the bound turns a dead part into an error instead of a hang.
status nor_wait_idle(const nor_chip& chip) noexcept {
  for (uint32_t poll = 0; poll < 1000000; ++poll) {
    uint8_t sr = 0;
    if (!chip.transfer(chip.bus, &kReadStatus, 1, nullptr, 0, &sr, 1)) {
      return make_error(errc::io, TESSERA_MSG("nor: SPI transfer failed"));
    }
    if ((sr & kStatusBusy) == 0) return ok_status();
  }
  return make_error(errc::io, TESSERA_MSG("nor: the part stays busy"));
}

status nor_write_enable(const nor_chip& chip) noexcept {
  if (!chip.transfer(chip.bus, &kWriteEnable, 1, nullptr, 0, nullptr, 0)) {
    return make_error(errc::io, TESSERA_MSG("nor: SPI transfer failed"));
  }
  return ok_status();
}

// The callbacks. The port calls them with sector-relative, aligned, in-bounds requests only (flash.hpp), and a
// program never crosses a page (page_size below), so each is a few commands.
status nor_read(void* context, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept {
  const nor_chip& chip = *static_cast<const nor_chip*>(context);
  if (auto e = nor_wait_idle(chip); !e.ok()) return e;
  return nor_command(chip, kRead, chip.base + sector * kSectorSize + offset, nullptr, 0, dst.data(), dst.size());
}

status nor_prog(void* context, uint32_t sector, uint32_t offset, bytes_view src) noexcept {
  const nor_chip& chip = *static_cast<const nor_chip*>(context);
  if (auto e = nor_wait_idle(chip); !e.ok()) return e;
  if (auto e = nor_write_enable(chip); !e.ok()) return e;
  return nor_command(chip, kPageProgram, chip.base + sector * kSectorSize + offset, src.data(), src.size(), nullptr,
                     0);
}

status nor_erase(void* context, uint32_t sector) noexcept {
  const nor_chip& chip = *static_cast<const nor_chip*>(context);
  if (auto e = nor_wait_idle(chip); !e.ok()) return e;
  if (auto e = nor_write_enable(chip); !e.ok()) return e;
  return nor_command(chip, kSectorErase, chip.base + sector * kSectorSize, nullptr, 0, nullptr, 0);
}

// Durable once the last program or erase has finished (the part has no write cache).
status nor_sync(void* context) noexcept { return nor_wait_idle(*static_cast<const nor_chip*>(context)); }

// The device: the callbacks, the chip as their context, and the part's geometry.
flash_device nor_device(nor_chip& chip, uint32_t sectors) noexcept {
  flash_device d;
  d.read = nor_read;
  d.prog = nor_prog;
  d.erase = nor_erase;
  d.sync = nor_sync;
  d.context = &chip;
  d.read_size = 1;    // READ starts at any byte
  d.prog_size = 1;    // NOR programs single bytes
  d.page_size = kPageSize;
  d.sector_size = kSectorSize;
  d.sector_count = sectors;
  d.erased_value = 0xFF;
  d.mapped = nullptr;  // behind SPI: reads go through read()
  return d;
}

// ---- A model of the part, standing in for the board's SPI bus and chip.
constexpr uint32_t kChipSectors = 24;
struct chip_model {
  uint8_t mem[kChipSectors * kSectorSize];
  bool write_enabled = false;
  uint32_t busy_polls = 0;  // status reads until a program or erase is done
  uint32_t programs = 0, erases = 0;
};
chip_model g_chip;

bool model_transfer(void* bus, const uint8_t* cmd, size_t cmd_len, const uint8_t* out, size_t out_len, uint8_t* in,
                    size_t in_len) noexcept {
  chip_model& m = *static_cast<chip_model*>(bus);
  if (cmd_len == 1 && cmd[0] == kReadStatus && in_len == 1) {
    in[0] = m.busy_polls > 0 ? kStatusBusy : 0;
    if (m.busy_polls > 0) --m.busy_polls;
    return true;
  }
  if (m.busy_polls > 0) return false;  // the part ignores commands while busy: a driver bug
  if (cmd_len == 1 && cmd[0] == kWriteEnable) {
    m.write_enabled = true;
    return true;
  }
  if (cmd_len != 4) return false;
  const uint32_t addr = static_cast<uint32_t>(cmd[1]) << 16 | static_cast<uint32_t>(cmd[2]) << 8 | cmd[3];
  switch (cmd[0]) {
    case kRead:
      if (addr + in_len > sizeof m.mem) return false;
      std::memcpy(in, m.mem + addr, in_len);
      return true;
    case kPageProgram:  // within one page, bits only cleared (NOR), after a write enable
      if (!m.write_enabled || addr % kPageSize + out_len > kPageSize || addr + out_len > sizeof m.mem) return false;
      for (size_t i = 0; i < out_len; ++i) m.mem[addr + i] &= out[i];
      m.write_enabled = false;
      m.busy_polls = 2;
      ++m.programs;
      return true;
    case kSectorErase:
      if (!m.write_enabled || addr % kSectorSize != 0 || addr >= sizeof m.mem) return false;
      std::memset(m.mem + addr, 0xFF, kSectorSize);
      m.write_enabled = false;
      m.busy_polls = 5;
      ++m.erases;
      return true;
    default:
      return false;
  }
}

// ---- The application: an int16 array logged through the driver.
constexpr int kChunks = 5;
constexpr int kItems = 1024;
alignas(64) uint8_t g_arena[256 * 1024];
int16_t g_samples[kItems];
uint8_t g_chunk[chunk_encode_bound(sizeof g_samples)];

int fail(const char* what, const error& e) {
  std::printf("flash_driver: %s: %s (%s)\n", what, e.message, errc_name(e.code));
  return 1;
}

void samples_fill(int c) {
  for (int i = 0; i < kItems; ++i) g_samples[i] = static_cast<int16_t>((c * 37 + i) % 3000 - 1500);
}

}  // namespace

int main() {
  for (size_t i = 0; i < sizeof g_chip.mem; ++i) g_chip.mem[i] = static_cast<uint8_t>(i * 131 + 7);  // a used part
  arena heap;
  arena_init(heap, g_arena, sizeof g_arena);
  const allocator alloc = arena_allocator(heap);

  // The array lives in 16 sectors from the chip's second sector (the first may hold a boot record).
  nor_chip chip;
  chip.transfer = model_transfer;
  chip.bus = &g_chip;
  chip.base = kSectorSize;
  flash_log_config lc;
  lc.device = nor_device(chip, 16);
  if (auto e = flash_device_validate(lc.device); !e.ok()) return fail("the device's geometry", e);

  frame_create_params fp;
  fp.typesize = 2;
  fp.chunksize = sizeof g_samples;
  flash_frame ff;
  if (auto e = flash_frame_create(ff, lc, alloc, fp); !e.ok()) return fail("create", e);
  chunk_encoder_options eo;
  eo.max_blocksize = sizeof g_samples;
  chunk_encoder enc;
  if (auto e = chunk_encoder_init(enc, alloc, eo); !e.ok()) return fail("encoder", e);
  chunk_encode_params cp;  // BloscLZ + shuffle, one block per chunk
  cp.typesize = 2;
  cp.blocksize = sizeof g_samples;
  for (int c = 0; c < kChunks; ++c) {
    samples_fill(c);
    auto n = chunk_encode(enc, cp, bytes_view(reinterpret_cast<const uint8_t*>(g_samples), sizeof g_samples),
                          bytes_mut(g_chunk, sizeof g_chunk));
    if (!n.ok()) return fail("encode", n.err());
    if (auto e = flash_frame_append(ff, bytes_view(g_chunk, *n)); !e.ok()) return fail("append", e);
  }

  // A reset: the array is mounted again from the flash alone, every appended chunk there, then finalized.
  flash_frame_close(ff);
  if (auto e = flash_frame_mount(ff, lc, alloc, fp); !e.ok()) return fail("mount", e);
  if (ff.nchunks != kChunks) {
    std::printf("flash_driver: mount found %lld chunks, not %d\n", static_cast<long long>(ff.nchunks), kChunks);
    return 1;
  }
  if (auto e = flash_frame_finalize(ff); !e.ok()) return fail("finalize", e);
  if (auto e = flash_frame_scrub(ff); !e.ok()) return fail("scrub", e);

  // The finalized region is a cframe, read through the driver (flash_frame_storage).
  frame f;
  if (auto e = frame_open(f, flash_frame_storage(ff), alloc); !e.ok()) return fail("open", e);
  chunk_decoder_options dopt;
  dopt.max_blocksize = sizeof g_samples;
  chunk_decoder dec;
  if (auto e = chunk_decoder_init(dec, alloc, dopt); !e.ok()) return fail("decoder", e);
  int wrong = 0;
  static int16_t back[kItems];
  for (int c = 0; c < kChunks; ++c) {
    auto n = frame_chunk_decode(f, dec, c, bytes_mut(reinterpret_cast<uint8_t*>(back), sizeof back));
    if (!n.ok()) return fail("decode", n.err());
    samples_fill(c);
    wrong += std::memcmp(back, g_samples, sizeof back) != 0;
  }
  std::printf("flash_driver: %d chunks through the SPI NOR driver, mounted after a reset, finalized (%llu bytes), "
              "read back %s; the part saw %u programs and %u sector erases\n",
              kChunks, static_cast<unsigned long long>(ff.frame_len), wrong == 0 ? "exactly" : "WRONG",
              static_cast<unsigned>(g_chip.programs), static_cast<unsigned>(g_chip.erases));
  return wrong == 0 ? 0 : 1;
}
