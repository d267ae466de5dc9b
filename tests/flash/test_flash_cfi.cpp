// SPDX-License-Identifier: BSD-3-Clause
// The CFI driver (tessera/port/flash_cfi.hpp) against a model of Intel/Sharp command-set chips written here,
// through the driver's bus functions: every wiring the driver supports (1, 2 or 4 chips on a bus of 1, 2 or 4
// bytes), and what QEMU's model never does (tests/flash/test_flash_cfi_pflash.cpp runs the driver on that one):
// a chip slow to get ready or never ready, one chip of two failing, locked blocks, a write buffer that is not
// free at once, commands that are not sent to every chip, a program over programmed bits (real NOR ANDs it).
// Last, an array written through the flash port on the model, remounted and read back.
#include <cstring>

#include "../support/check.hpp"
#include "port_roundtrip.hpp"
#include "../support/test_allocators.hpp"
#include "tessera/chunk.hpp"
#include "tessera/port/flash_cfi.hpp"
#include "tessera/port/flash_frame.hpp"

using namespace tessera;

namespace {

constexpr uint32_t kBlocks = 8;
constexpr uint32_t kChipBlock = 1024;  // bytes of a block in one chip
constexpr uint32_t kMaxBytes = 4 * kBlocks * kChipBlock;

// Chips of `lane` bytes, `chips` of them side by side on a bus of lane * chips bytes: a bank of kBlocks blocks,
// each chip with a write buffer of 2^buffer_log2 bytes (0: none). Commands are decoded from each chip's lane and
// must agree; status and query answers are given in every lane.
struct bank_model {
  uint32_t width = 4;
  uint32_t chips = 2;
  uint32_t lane = 2;
  uint32_t buffer_log2 = 5;
  uint16_t command_set = 1;
  uint8_t regions = 1;
  bool answers_query = true;

  uint8_t mem[kMaxBytes] = {};
  enum class mode : uint8_t { array, status, query } read_mode = mode::array;
  enum class step : uint8_t { none, program, erase, lock, buffer_count, buffer_data, buffer_confirm } next = step::none;
  uint8_t status[4] = {0x80, 0x80, 0x80, 0x80};
  bool locked[kBlocks] = {};

  // The buffered program in progress.
  uint32_t buffer_at = 0;
  uint32_t buffer_left = 0;
  uint32_t buffer_words = 0;
  uint32_t buffer_offsets[64] = {};
  uint32_t buffer_values[64] = {};

  // Faults.
  uint32_t busy_reads = 0;  // status reads answering busy after each program or erase
  uint32_t busy_left = 0;
  bool never_ready = false;
  int fail_chip = -1;  // the next program or erase fails on this chip with fail_bits
  uint8_t fail_bits = 0;
  bool fail_erase_only = false;  // the fault waits for an erase (the unlock before it works)
  uint32_t buffer_busy = 0;  // E8h answers "no buffer free" this many times
  bool drop_programs = false;  // programs report success and store nothing
  bool overridden[0x40] = {};  // query answers replaced by `overrides`
  uint8_t overrides[0x40] = {};

  // What the driver did.
  uint32_t unreplicated = 0;  // commands whose lanes differ
  uint32_t sequence_errors = 0;
  uint32_t status_reads = 0;
  uint32_t word_programs = 0;
  uint32_t buffer_programs = 0;
  uint32_t erases = 0;

  uint32_t bank_block() const { return kChipBlock * chips; }
  uint32_t size() const { return bank_block() * kBlocks; }
  uint32_t lane_mask() const { return lane >= 4 ? 0xFFFFFFFFu : (1u << (8 * lane)) - 1u; }
  uint32_t in_every_lane(uint32_t v) const {
    uint32_t r = 0;
    for (uint32_t k = 0; k < chips; ++k) r |= (v & lane_mask()) << (8 * lane * k);
    return r;
  }
  uint8_t cfi(uint32_t index) const {
    if (index < 0x40 && overridden[index]) return overrides[index];
    const uint32_t chip_size = kChipBlock * kBlocks;
    switch (index) {
      case 0x10: return answers_query ? 'Q' : 0;
      case 0x11: return 'R';
      case 0x12: return 'Y';
      case 0x13: return static_cast<uint8_t>(command_set);
      case 0x14: return static_cast<uint8_t>(command_set >> 8);
      case 0x27: {
        uint8_t n = 0;
        while ((1u << n) < chip_size) ++n;
        return n;
      }
      case 0x2A: return static_cast<uint8_t>(buffer_log2);
      case 0x2C: return regions;
      case 0x2D: return kBlocks - 1;
      case 0x2F: return static_cast<uint8_t>(kChipBlock >> 8);
      case 0x30: return static_cast<uint8_t>(kChipBlock >> 16);
      default: return 0;
    }
  }
  uint32_t word_at(uint32_t offset) const {
    uint32_t v = 0;
    if (width == 1) v = mem[offset];
    if (width == 2) {
      uint16_t h;
      std::memcpy(&h, mem + offset, 2);
      v = h;
    }
    if (width == 4) std::memcpy(&v, mem + offset, 4);
    return v;
  }
  // Programs AND: a bit only goes from 1 to 0, as on real NOR.
  void program_and(uint32_t offset, uint32_t value) {
    if (drop_programs) return;
    uint8_t b[4] = {};
    if (width == 1) b[0] = static_cast<uint8_t>(value);
    if (width == 2) {
      const auto h = static_cast<uint16_t>(value);
      std::memcpy(b, &h, 2);
    }
    if (width == 4) std::memcpy(b, &value, 4);
    for (uint32_t i = 0; i < width; ++i) mem[offset + i] &= b[i];
  }
  // After a program or erase: ready (after busy_reads busy reads), with the error bits the faults say.
  bool operation_fails(uint32_t offset, uint8_t error_bit) {
    read_mode = mode::status;
    busy_left = busy_reads;
    if (locked[offset / bank_block()]) {
      for (uint32_t k = 0; k < chips; ++k) status[k] |= static_cast<uint8_t>(0x02 | error_bit);
      return true;
    }
    if (fail_chip >= 0) {
      status[fail_chip] |= fail_bits;
      fail_chip = -1;
      return true;
    }
    return false;
  }

  uint32_t read(uint32_t offset) {
    if (read_mode == mode::array) return word_at(offset);
    if (read_mode == mode::query) return in_every_lane(cfi(offset / width));
    ++status_reads;
    uint32_t r = 0;
    for (uint32_t k = 0; k < chips; ++k) {
      uint32_t s = status[k];
      if (never_ready || busy_left > 0) s &= ~0x80u;
      r |= s << (8 * lane * k);
    }
    if (busy_left > 0) --busy_left;
    return r;
  }

  void write(uint32_t offset, uint32_t value) {
    const uint32_t lane0 = value & lane_mask();
    const uint8_t cmd = static_cast<uint8_t>(lane0);
    switch (next) {
      case step::program:
        next = step::none;
        ++word_programs;
        if (!operation_fails(offset, 0x10)) program_and(offset, value);
        return;
      case step::buffer_count:
        if (value != in_every_lane(lane0) || lane0 + 1 > (1u << buffer_log2) / lane) {
          ++sequence_errors;
          next = step::none;
          return;
        }
        buffer_left = lane0 + 1;
        buffer_words = 0;
        next = step::buffer_data;
        return;
      case step::buffer_data: {
        const uint32_t window = (1u << buffer_log2) * chips;
        if (offset / window != buffer_at / window) ++sequence_errors;
        buffer_offsets[buffer_words] = offset;
        buffer_values[buffer_words] = value;
        ++buffer_words;
        if (--buffer_left == 0) next = step::buffer_confirm;
        return;
      }
      default: break;
    }
    if (value != in_every_lane(lane0) && cmd != 0x98) ++unreplicated;  // 98h: the probe sends it in every byte
    const step was = next;
    next = step::none;
    if (was == step::buffer_confirm) {
      if (cmd != 0xD0) {
        ++sequence_errors;
        return;
      }
      ++buffer_programs;
      if (!operation_fails(buffer_at, 0x10))
        for (uint32_t i = 0; i < buffer_words; ++i) program_and(buffer_offsets[i], buffer_values[i]);
      return;
    }
    if (was == step::erase || was == step::lock) {
      if (cmd != 0xD0 && cmd != 0x01) {
        ++sequence_errors;
        return;
      }
      const uint32_t block = offset / bank_block();
      if (was == step::lock) {
        read_mode = mode::status;
        busy_left = busy_reads;
        if (fail_chip >= 0 && !fail_erase_only) {
          status[fail_chip] |= fail_bits;
          fail_chip = -1;
        } else {
          locked[block] = cmd == 0x01;
        }
        return;
      }
      ++erases;
      if (!operation_fails(offset, 0x20)) std::memset(mem + block * bank_block(), 0xFF, bank_block());
      return;
    }
    switch (cmd) {
      case 0xFF: read_mode = mode::array; break;
      case 0x70: read_mode = mode::status; break;
      case 0x50:
        for (uint32_t k = 0; k < chips; ++k) status[k] &= 0x80;
        break;
      case 0x98: read_mode = mode::query; break;
      case 0x40:
      case 0x10: next = step::program; break;
      case 0x20: next = step::erase; break;
      case 0x60: next = step::lock; break;
      case 0xE8:
        read_mode = mode::status;
        if (buffer_busy > 0) {  // extended status: no buffer free, ask again
          --buffer_busy;
          for (uint32_t k = 0; k < chips; ++k) status[k] &= 0x7F;
          return;
        }
        for (uint32_t k = 0; k < chips; ++k) status[k] |= 0x80;
        buffer_at = offset;
        next = step::buffer_count;
        break;
      default: ++sequence_errors; break;
    }
  }
};

bank_model g_model;  // static: too big for the bare-metal stack

uint32_t model_read(void* context, uint32_t offset) noexcept { return static_cast<bank_model*>(context)->read(offset); }
void model_write(void* context, uint32_t offset, uint32_t value) noexcept {
  static_cast<bank_model*>(context)->write(offset, value);
}

// A fresh model of `chips` chips on a bus of `width` bytes (its cells all erased).
bank_model& fresh_model(uint32_t width, uint32_t chips) {
  g_model = bank_model{};
  g_model.width = width;
  g_model.chips = chips;
  g_model.lane = width / chips;
  std::memset(g_model.mem, 0xFF, sizeof g_model.mem);
  return g_model;
}

flash_cfi_config model_config(bank_model& m) {
  flash_cfi_config c;
  c.bus.read = model_read;
  c.bus.write = model_write;
  c.bus.context = &m;
  c.bank_width = static_cast<uint8_t>(m.width);
  return c;
}

// Probe and init on the model; true when both worked.
bool open_model(test::context& t, bank_model& m, flash_cfi& cfi) {
  flash_cfi_config c = model_config(m);
  const status probed = flash_cfi_probe(c);
  CHECK_OK(probed);
  if (!probed.ok()) return false;
  c.poll_limit = 100;
  const status s = flash_cfi_init(cfi, c);
  CHECK_OK(s);
  return s.ok();
}

void fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 37u + seed * 11u + 1u);
}

}  // namespace

TESSERA_TEST(flash_cfi, probe_reads_every_wiring) {
  struct wiring {
    uint32_t width, chips;
  };
  static const wiring wirings[] = {{1, 1}, {2, 1}, {2, 2}, {4, 1}, {4, 2}, {4, 4}};
  for (const wiring& w : wirings) {
    bank_model& m = fresh_model(w.width, w.chips);
    flash_cfi_config c = model_config(m);
    REQUIRE_OK(flash_cfi_probe(c));
    CHECK_EQ(static_cast<uint32_t>(c.chips), w.chips);
    CHECK_EQ(c.sector_size, kChipBlock * w.chips);
    CHECK_EQ(c.size, kChipBlock * kBlocks * w.chips);
    CHECK_EQ(c.buffer_size, 32u * w.chips);
    CHECK(m.read_mode == bank_model::mode::array);
    // Every wiring programs and reads back, word by word and through the buffer, commands in every lane.
    flash_cfi cfi;
    REQUIRE_OK(flash_cfi_init(cfi, c));
    const flash_device d = flash_cfi_device(cfi);
    CHECK(d.mapped == nullptr);
    CHECK_OK(flash_device_validate(d));
    uint8_t src[64];
    uint8_t back[64];
    fill(src, sizeof src, w.width * 10 + w.chips);
    const uint32_t n = d.page_size < sizeof src ? d.page_size : static_cast<uint32_t>(sizeof src);
    CHECK_OK(flash_erase(d, 1));
    cfi.config.use_buffer = false;
    CHECK_OK(flash_prog(d, 1, 0, bytes_view(src, n)));
    cfi.config.use_buffer = true;
    CHECK_OK(flash_prog(d, 1, d.page_size, bytes_view(src, n)));
    CHECK_OK(flash_read(d, 1, 0, bytes_mut(back, n)));
    CHECK(std::memcmp(back, src, n) == 0);
    CHECK_OK(flash_read(d, 1, d.page_size + 1, bytes_mut(back, n - 1)));  // an odd offset and length
    CHECK(std::memcmp(back, src + 1, n - 1) == 0);
    CHECK_EQ(m.word_programs, n / w.width);
    CHECK_EQ(m.buffer_programs, 1u);
    CHECK_EQ(m.unreplicated, 0u);
    CHECK_EQ(m.sequence_errors, 0u);
    CHECK(m.read_mode == bank_model::mode::array);
  }
}

TESSERA_TEST(flash_cfi, probe_refuses_what_it_cannot_drive) {
  bank_model& m = fresh_model(4, 2);
  flash_cfi_config c = model_config(m);
  m.answers_query = false;
  CHECK_ERR(flash_cfi_probe(c), errc::unsupported);
  CHECK(m.read_mode == bank_model::mode::array);
  m.answers_query = true;
  m.command_set = 2;  // AMD/Fujitsu
  CHECK_ERR(flash_cfi_probe(c), errc::unsupported);
  m.command_set = 3;  // Intel standard: driven
  CHECK_OK(flash_cfi_probe(c));
  m.regions = 2;  // boot blocks
  CHECK_ERR(flash_cfi_probe(c), errc::unsupported);
  m.regions = 1;
  c.bank_width = 3;
  CHECK_ERR(flash_cfi_probe(c), errc::invalid_argument);
  c = flash_cfi_config{};  // no base and no bus
  CHECK_ERR(flash_cfi_probe(c), errc::invalid_argument);
  c = model_config(m);
  c.bus.write = nullptr;  // half a bus
  CHECK_ERR(flash_cfi_probe(c), errc::invalid_argument);
}

TESSERA_TEST(flash_cfi, probe_reads_odd_tables) {
  bank_model& m = fresh_model(4, 2);
  flash_cfi_config c = model_config(m);
  m.overridden[0x2F] = m.overridden[0x30] = true;  // block size field 0: 128-byte blocks
  REQUIRE_OK(flash_cfi_probe(c));
  CHECK_EQ(c.sector_size, 256u);
  m.overridden[0x2A] = true;  // no write buffer
  REQUIRE_OK(flash_cfi_probe(c));
  CHECK_EQ(c.buffer_size, 0u);
  m.overrides[0x2A] = 17;  // a 128 KiB buffer: not a part
  CHECK_ERR(flash_cfi_probe(c), errc::unsupported);
  m.overridden[0x2A] = false;
  m.overridden[0x2D] = m.overridden[0x2E] = true;  // 65536 blocks of 16 MiB: more than 32 bits of bank
  m.overrides[0x2D] = m.overrides[0x2E] = 0xFF;
  m.overrides[0x2F] = 0;
  m.overrides[0x30] = 0x01;
  CHECK_ERR(flash_cfi_probe(c), errc::unsupported);
  CHECK(m.read_mode == bank_model::mode::array);
}

TESSERA_TEST(flash_cfi, mapped_bank_reads_plain_memory) {
  // The mapped path (no bus functions) on a RAM stand-in: init's commands land in it, reads are plain memory,
  // and the erased-only check reads the words through the bus. (No RAM answers a status read: no programs.)
  alignas(4) static uint8_t ram[1024];
  for (uint8_t w = 1; w <= 4; w *= 2) {
    for (size_t i = 0; i < sizeof ram; ++i) ram[i] = static_cast<uint8_t>(i);
    flash_cfi_config c;
    c.base = ram;
    c.bank_width = w;
    c.sector_size = 256;
    c.size = sizeof ram;
    flash_cfi cfi;
    REQUIRE_OK(flash_cfi_init(cfi, c));
    uint32_t first = 0;  // init's last command: read array (FFh) in the word's low lane, in the CPU's byte order
    if (w == 1) first = ram[0];
    if (w == 2) {
      uint16_t h;
      std::memcpy(&h, ram, 2);
      first = h;
    }
    if (w == 4) std::memcpy(&first, ram, 4);
    CHECK_EQ(first, 0xFFu);
    const flash_device d = flash_cfi_device(cfi);
    CHECK(d.mapped == ram);
    uint8_t back[16];
    CHECK_OK(flash_read(d, 1, 5, bytes_mut(back, sizeof back)));
    CHECK_EQ(back[0], 5);
    CHECK_EQ(back[15], 20);
    const uint8_t src[4] = {1, 2, 3, 4};
    CHECK_ERR(flash_prog(d, 2, 0, bytes_view(src, w)), errc::invalid_argument);
    CHECK_EQ(ram[512], 0);
  }
}

TESSERA_TEST(flash_cfi, init_checks_the_config) {
  bank_model& m = fresh_model(4, 2);
  flash_cfi_config good = model_config(m);
  REQUIRE_OK(flash_cfi_probe(good));
  flash_cfi cfi;
  CHECK_OK(flash_cfi_init(cfi, good));
  flash_cfi_config c = good;
  c.chips = 3;
  CHECK_ERR(flash_cfi_init(cfi, c), errc::invalid_argument);
  c = good;
  c.sector_size = 32;  // smaller than the write buffer
  CHECK_ERR(flash_cfi_init(cfi, c), errc::invalid_argument);
  c = good;
  c.size = good.sector_size * 3 + 4;
  CHECK_ERR(flash_cfi_init(cfi, c), errc::invalid_argument);
  c = good;
  c.buffer_size = 48;
  CHECK_ERR(flash_cfi_init(cfi, c), errc::invalid_argument);
  c = good;
  c.bank_width = 1;
  c.chips = 1;
  c.buffer_size = 1024;  // 1024 words: the count does not fit a byte lane
  CHECK_ERR(flash_cfi_init(cfi, c), errc::invalid_argument);
  c = good;
  c.poll_limit = 0;
  CHECK_ERR(flash_cfi_init(cfi, c), errc::invalid_argument);
  c = good;
  c.bus = flash_cfi_bus{};  // neither a base
  CHECK_ERR(flash_cfi_init(cfi, c), errc::invalid_argument);
  alignas(4) static uint8_t ram[8];
  c.base = ram + 1;  // misaligned for a 32-bit bus
  CHECK_ERR(flash_cfi_init(cfi, c), errc::invalid_argument);
}

TESSERA_TEST(flash_cfi, programs_only_erased_words_and_skips_all_ones) {
  bank_model& m = fresh_model(4, 2);
  flash_cfi cfi;
  REQUIRE(open_model(t, m, cfi));
  const flash_device d = flash_cfi_device(cfi);
  uint8_t src[64];
  fill(src, sizeof src, 3);
  std::memset(src, 0xFF, 8);  // leading all-ones words: not programmed
  std::memset(src + 24, 0xFF, 4);  // one inside: in the buffer (an erased word written as erased)
  std::memset(src + 56, 0xFF, 8);  // trailing
  CHECK_OK(flash_prog(d, 2, 64, bytes_view(src, sizeof src)));
  CHECK_EQ(m.buffer_programs, 1u);
  CHECK_EQ(m.buffer_words, 12u);  // words 2 to 13
  cfi.config.use_buffer = false;
  CHECK_OK(flash_prog(d, 2, 128, bytes_view(src, sizeof src)));
  CHECK_EQ(m.word_programs, 11u);  // 16 words, 5 of them all ones
  uint8_t back[64];
  CHECK_OK(flash_read(d, 2, 64, bytes_mut(back, sizeof back)));
  CHECK(std::memcmp(back, src, sizeof back) == 0);
  // A range with one programmed word: refused before anything is programmed. On real NOR the program would AND
  // the new bits in and the read-back would differ: the refusal is what keeps the bytes.
  const uint32_t programs = m.word_programs + m.buffer_programs;
  for (int buffered = 0; buffered < 2; ++buffered) {
    cfi.config.use_buffer = buffered == 1;
    uint8_t other[16];
    fill(other, sizeof other, 4);
    CHECK_ERR(flash_prog(d, 2, 128 + 48, bytes_view(other, 8)), errc::invalid_argument);
    CHECK_ERR(flash_prog(d, 2, 64 + 4, bytes_view(other, 16)), errc::invalid_argument);  // an all-ones word first
    CHECK_EQ(m.word_programs + m.buffer_programs, programs);
  }
  CHECK_OK(flash_read(d, 2, 128, bytes_mut(back, sizeof back)));
  CHECK(std::memcmp(back, src, sizeof back) == 0);
  // A word left erased (all ones in src) takes one program later.
  uint8_t word[4] = {1, 2, 3, 4};
  CHECK_OK(flash_prog(d, 2, 64 + 24, bytes_view(word, 4)));
  CHECK_ERR(flash_prog(d, 2, 64 + 24, bytes_view(word, 4)), errc::invalid_argument);
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_cfi, status_errors_are_io_and_leave_the_bank_usable) {
  bank_model& m = fresh_model(4, 2);
  flash_cfi cfi;
  REQUIRE(open_model(t, m, cfi));
  const flash_device d = flash_cfi_device(cfi);
  uint8_t src[32];
  fill(src, sizeof src, 5);
  uint8_t back[32];
  for (int buffered = 0; buffered < 2; ++buffered) {
    cfi.config.use_buffer = buffered == 1;
    const uint32_t at = 256 * static_cast<uint32_t>(buffered);
    // The second chip fails the program: the bus word's status has the error in its lane only.
    m.fail_chip = 1;
    m.fail_bits = 0x10;
    cfi.last_status = 0;
    CHECK_ERR(flash_prog(d, 0, at, bytes_view(src, sizeof src)), errc::io);
    CHECK_EQ(cfi.last_status, 0x90);
    CHECK_EQ(m.status[1], 0x80);  // cleared (50h)
    CHECK(m.read_mode == bank_model::mode::array);
    // Nothing was programmed by the failed call here; the next call works.
    CHECK_OK(flash_prog(d, 0, at, bytes_view(src, sizeof src)));
    CHECK_OK(flash_read(d, 0, at, bytes_mut(back, sizeof back)));
    CHECK(std::memcmp(back, src, sizeof back) == 0);
  }
  // A part that says it programmed and did not (a stuck bit, a lost write): the read-back finds it.
  m.drop_programs = true;
  CHECK_ERR(flash_prog(d, 0, 512, bytes_view(src, sizeof src)), errc::io);
  m.drop_programs = false;
  m.fail_chip = 0;
  m.fail_bits = 0x28;  // erase error, VPP low
  m.fail_erase_only = true;
  CHECK_ERR(flash_erase(d, 3), errc::io);
  CHECK_EQ(cfi.last_status, 0xA8);
  CHECK(m.read_mode == bank_model::mode::array);
  CHECK_OK(flash_erase(d, 3));
  CHECK_EQ(m.sequence_errors, 0u);
  CHECK_EQ(m.unreplicated, 0u);
}

TESSERA_TEST(flash_cfi, ready_is_polled_with_a_bound) {
  bank_model& m = fresh_model(4, 2);
  flash_cfi cfi;
  REQUIRE(open_model(t, m, cfi));  // poll_limit 100
  const flash_device d = flash_cfi_device(cfi);
  uint8_t src[8];
  fill(src, sizeof src, 6);
  m.busy_reads = 30;  // slow but within the limit
  CHECK_OK(flash_erase(d, 4));
  CHECK_OK(flash_prog(d, 4, 0, bytes_view(src, sizeof src)));
  CHECK_EQ(cfi.polls_max, 31u);
  m.never_ready = true;
  cfi.config.use_buffer = false;
  const uint32_t reads = m.status_reads;
  CHECK_ERR(flash_prog(d, 4, 8, bytes_view(src, sizeof src)), errc::io);
  CHECK_EQ(m.status_reads - reads, 100u);
  CHECK(m.read_mode == bank_model::mode::array);
  CHECK_ERR(flash_erase(d, 5), errc::io);
  m.never_ready = false;
  m.busy_reads = 0;
  // A write buffer that is not free at once: E8h again until it is; never free: io.
  cfi.config.use_buffer = true;
  m.buffer_busy = 3;
  const uint32_t buffered = m.buffer_programs;
  CHECK_OK(flash_prog(d, 4, 64, bytes_view(src, sizeof src)));
  CHECK_EQ(m.buffer_programs, buffered + 1);
  CHECK_EQ(m.buffer_busy, 0u);
  m.buffer_busy = 1000;
  CHECK_ERR(flash_prog(d, 4, 128, bytes_view(src, sizeof src)), errc::io);
  CHECK(m.read_mode == bank_model::mode::array);
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_cfi, locked_blocks_fail_until_unlocked) {
  bank_model& m = fresh_model(4, 2);
  flash_cfi cfi;
  REQUIRE(open_model(t, m, cfi));
  const flash_device d = flash_cfi_device(cfi);
  uint8_t src[8];
  fill(src, sizeof src, 7);
  for (bool& b : m.locked) b = true;  // as P30-class parts power up
  CHECK_ERR(flash_prog(d, 6, 0, bytes_view(src, sizeof src)), errc::io);
  CHECK_EQ(cfi.last_status & 0x12, 0x12);  // locked, program error
  m.fail_chip = 1;
  m.fail_bits = 0x20;  // a lock-bit clear fails as an erase does
  CHECK_ERR(flash_cfi_unlock(cfi, 6), errc::io);
  CHECK(m.locked[6]);
  CHECK_OK(flash_cfi_unlock(cfi, 6));
  CHECK(!m.locked[6]);
  CHECK_OK(flash_prog(d, 6, 0, bytes_view(src, sizeof src)));
  CHECK_OK(flash_erase(d, 7));  // erase unlocks its block itself
  CHECK(!m.locked[7]);
  CHECK_ERR(flash_cfi_unlock(cfi, kBlocks), errc::out_of_range);
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_cfi, an_array_through_the_port_on_the_model) {
  bank_model& m = fresh_model(2, 1);  // one x16 chip: 8 KiB in blocks of 1 KiB, a 32-byte buffer
  flash_cfi cfi;
  REQUIRE(open_model(t, m, cfi));
  flash_log_config lc;
  lc.device = flash_cfi_device(cfi);
  lc.first_sector = 1;
  lc.sector_count = 6;
  test::check_array_through_port<64>(t, lc);
  CHECK_EQ(m.sequence_errors, 0u);
  CHECK_EQ(m.unreplicated, 0u);
  CHECK(m.buffer_programs > 0);
  CHECK_EQ(cfi.erases, 6u);
}
