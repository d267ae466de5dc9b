// SPDX-License-Identifier: BSD-3-Clause
// The CFI driver (port/flash/flash_cfi) against a model of the part that nobody here wrote: QEMU's pflash_cfi01
// on the RISC-V `virt` board, pflash unit 1 (32 MiB at 0x22000000: two x16 chips side by side on a 32-bit bus,
// blocks of 256 KiB, a 4 KiB write buffer), backed by a host file that tests/flash/pflash_driver_test.sh
// creates erased (all 0xFF) and checks afterwards.
//   (no argument)  a writable bank: the CFI geometry, word and buffered programs read back, the erased-only rule
//                  (a program over a programmed word is refused and changes nothing), erase, and last a pattern
//                  in block 126 that the script finds in the host file (what the guest programs lands there)
//   --readonly     the same file given read-only (`readonly=on`): the model sets the status register's error
//                  bits (erase 20h, program 10h), which the driver must report as errc::io, and the bank stays
//                  usable (read array) after each error
// Exit status 0 when every check passes; each failure is printed.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tessera/port/flash_cfi.hpp"

using namespace tessera;

namespace {

int g_failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      ++g_failures;                                                        \
      std::printf("%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                      \
  } while (0)

constexpr uint32_t kPatternSector = 126;  // the script reads it from the host file
constexpr uint32_t kScratchSector = 127;

uint8_t g_buf[4096];
uint8_t g_back[4096];

void fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>((i * 131u + seed * 7u + (i >> 8)) & 0xFFu);
}

bool erased(const flash_device& d, uint32_t sector, uint32_t offset, uint32_t size) {
  while (size > 0) {
    const uint32_t n = size < sizeof g_back ? size : static_cast<uint32_t>(sizeof g_back);
    if (!flash_read(d, sector, offset, bytes_mut(g_back, n)).ok()) return false;
    for (uint32_t i = 0; i < n; ++i)
      if (g_back[i] != 0xFF) return false;
    offset += n;
    size -= n;
  }
  return true;
}

bool reads_back(const flash_device& d, uint32_t sector, uint32_t offset, const uint8_t* want, uint32_t size) {
  return flash_read(d, sector, offset, bytes_mut(g_back, size)).ok() && std::memcmp(g_back, want, size) == 0;
}

void writable(flash_cfi& cfi) {
  flash_device d = flash_cfi_device(cfi);
  CHECK(flash_device_validate(d).ok());
  // Word programs.
  cfi.config.use_buffer = false;
  CHECK(flash_erase(d, kScratchSector).ok());
  CHECK(erased(d, kScratchSector, 0, d.sector_size));
  fill(g_buf, 64, 1);
  std::memset(g_buf + 8, 0xFF, 4);  // an all-ones word inside: not programmed, stays erased
  uint32_t before = cfi.programs;
  CHECK(flash_prog(d, kScratchSector, 0, bytes_view(g_buf, 64)).ok());
  CHECK(cfi.programs - before == 15);
  CHECK(reads_back(d, kScratchSector, 0, g_buf, 64));
  // The erased-only rule: over programmed words (and a range with one programmed word inside) nothing is
  // programmed, the range is as it was.
  uint8_t other[16];
  fill(other, sizeof other, 9);
  before = cfi.programs;
  CHECK(flash_prog(d, kScratchSector, 0, bytes_view(other, 16)).code == errc::invalid_argument);
  CHECK(flash_prog(d, kScratchSector, 60, bytes_view(other, 8)).code == errc::invalid_argument);
  CHECK(cfi.programs == before);
  CHECK(reads_back(d, kScratchSector, 0, g_buf, 64));
  CHECK(erased(d, kScratchSector, 64, 4));
  // The all-ones word left erased can still be programmed once.
  CHECK(flash_prog(d, kScratchSector, 8, bytes_view(other, 4)).ok());
  std::memcpy(g_buf + 8, other, 4);
  CHECK(reads_back(d, kScratchSector, 0, g_buf, 64));
  CHECK(flash_prog(d, kScratchSector, 8, bytes_view(other, 4)).code == errc::invalid_argument);

  // Buffered programs: a whole window, two words, one word (a word program), a window's tail.
  cfi.config.use_buffer = true;
  fill(g_buf, d.page_size, 2);
  before = cfi.programs;
  CHECK(flash_prog(d, kScratchSector, d.page_size, bytes_view(g_buf, d.page_size)).ok());
  CHECK(cfi.programs - before == d.page_size / 4);
  CHECK(reads_back(d, kScratchSector, d.page_size, g_buf, d.page_size));
  CHECK(erased(d, kScratchSector, 2 * d.page_size, d.page_size));
  CHECK(erased(d, kScratchSector, 64 + 4, d.page_size - 68));
  fill(g_buf, 8, 3);
  CHECK(flash_prog(d, kScratchSector, 2 * d.page_size + 4, bytes_view(g_buf, 8)).ok());
  CHECK(reads_back(d, kScratchSector, 2 * d.page_size + 4, g_buf, 8));
  CHECK(erased(d, kScratchSector, 2 * d.page_size, 4) && erased(d, kScratchSector, 2 * d.page_size + 12, 4));
  CHECK(flash_prog(d, kScratchSector, 2 * d.page_size + 100, bytes_view(g_buf, 4)).ok());
  CHECK(reads_back(d, kScratchSector, 2 * d.page_size + 100, g_buf, 4));
  fill(g_buf, 96, 4);
  CHECK(flash_prog(d, kScratchSector, 4 * d.page_size - 96, bytes_view(g_buf, 96)).ok());
  CHECK(reads_back(d, kScratchSector, 4 * d.page_size - 96, g_buf, 96));
  CHECK(erased(d, kScratchSector, 4 * d.page_size, 64));
  CHECK(flash_prog(d, kScratchSector, 4 * d.page_size - 8, bytes_view(g_buf, 8)).code == errc::invalid_argument);
  // A page-crossing program never reaches the driver (the port's checked call).
  CHECK(flash_prog(d, kScratchSector, d.page_size - 4, bytes_view(g_buf, 8)).code == errc::invalid_argument);

  // Erase makes the block programmable again.
  CHECK(flash_erase(d, kScratchSector).ok());
  CHECK(erased(d, kScratchSector, 0, d.sector_size));
  fill(g_buf, 64, 5);
  CHECK(flash_prog(d, kScratchSector, 0, bytes_view(g_buf, 64)).ok());
  CHECK(reads_back(d, kScratchSector, 0, g_buf, 64));
  CHECK(flash_cfi_unlock(cfi, kScratchSector).ok());
  CHECK(flash_cfi_unlock(cfi, cfi.sector_count).code == errc::out_of_range);
  CHECK(flash_erase(d, cfi.sector_count).code == errc::out_of_range);

  // The pattern the script finds in the host file: 16 bytes by word programs at the block's start, a buffer
  // window of fill(.., 6) at page_size.
  CHECK(flash_erase(d, kPatternSector).ok());
  cfi.config.use_buffer = false;
  CHECK(flash_prog(d, kPatternSector, 0, bytes_view(reinterpret_cast<const uint8_t*>("TESSERA-CFI-OK!!"), 16)).ok());
  cfi.config.use_buffer = true;
  fill(g_buf, d.page_size, 6);
  CHECK(flash_prog(d, kPatternSector, d.page_size, bytes_view(g_buf, d.page_size)).ok());
  CHECK(cfi.last_status == 0);
  std::printf("writable: %u words programmed, %u blocks erased, at most %u status reads per operation\n",
              static_cast<unsigned>(cfi.programs), static_cast<unsigned>(cfi.erases),
              static_cast<unsigned>(cfi.polls_max));
}

void read_only(flash_cfi& cfi) {
  flash_device d = flash_cfi_device(cfi);
  // The pattern the writable run left is there (the file was kept), and every write fails with the status.
  CHECK(reads_back(d, kPatternSector, 0, reinterpret_cast<const uint8_t*>("TESSERA-CFI-OK!!"), 16));
  status s = flash_erase(d, kScratchSector);
  CHECK(s.code == errc::io);
  std::printf("read-only erase: %s, status %02x\n", errc_name(s.code), cfi.last_status);
  CHECK((cfi.last_status & 0x20) != 0);  // erase error
  CHECK(reads_back(d, kPatternSector, 0, reinterpret_cast<const uint8_t*>("TESSERA-CFI-OK!!"), 16));
  fill(g_buf, 64, 7);
  for (int k = 0; k < 2; ++k) {
    const bool buffered = k == 1;
    cfi.config.use_buffer = buffered;
    cfi.last_status = 0;
    s = flash_prog(d, kScratchSector, 2 * d.page_size, bytes_view(g_buf, 64));
    CHECK(s.code == errc::io);
    std::printf("read-only %s program: %s, status %02x\n", buffered ? "buffered" : "word", errc_name(s.code),
                cfi.last_status);
    CHECK((cfi.last_status & 0x10) != 0);  // program error
    CHECK(erased(d, kScratchSector, 2 * d.page_size, 64));
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool readonly = false;
  for (int i = 1; i < argc; ++i) readonly = readonly || std::strcmp(argv[i], "--readonly") == 0;
  flash_cfi_config cc;
  cc.base = reinterpret_cast<volatile uint8_t*>(0x22000000u);
  cc.bank_width = 4;
  const status probed = flash_cfi_probe(cc);
  CHECK(probed.ok());
  std::printf("CFI: %u chip(s) on a %u-byte bus, %u bytes in blocks of %u, write buffer %u bytes\n",
              static_cast<unsigned>(cc.chips), static_cast<unsigned>(cc.bank_width), static_cast<unsigned>(cc.size),
              static_cast<unsigned>(cc.sector_size), static_cast<unsigned>(cc.buffer_size));
  // What QEMU's virt board builds (hw/riscv/virt.c: width 4, device-width 2, 256 KiB sectors, 32 MiB).
  CHECK(cc.chips == 2 && cc.size == 32u * 1024 * 1024 && cc.sector_size == 256u * 1024 && cc.buffer_size == 4096);
  flash_cfi cfi;
  CHECK(flash_cfi_init(cfi, cc).ok());
  if (g_failures == 0) {
    if (readonly) read_only(cfi);
    else writable(cfi);
  }
  std::printf("%s: %d failure(s)\n", readonly ? "read-only" : "writable", g_failures);
  std::fflush(stdout);
  return g_failures == 0 ? 0 : 1;
}
