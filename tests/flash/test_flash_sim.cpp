// SPDX-License-Identifier: BSD-3-Clause
// The simulated NOR device: its rules (alignment, program only away from the erased value, one program per
// unit), erase counting, and the power cut with its tear modes.
#include <cstring>

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "tessera/port/flash.hpp"
#include "tessera/port/flash_sim.hpp"

using namespace tessera;

namespace {

flash_sim_config small_config() {
  flash_sim_config c;
  c.read_size = 4;
  c.prog_size = 8;
  c.page_size = 64;
  c.sector_size = 256;
  c.sector_count = 4;
  return c;
}

}  // namespace

TESSERA_TEST(flash_sim, geometry_is_validated) {
  test::counting_allocator counting;
  flash_sim sim;
  flash_sim_config c = small_config();
  c.prog_size = 6;  // not a multiple of read_size 4
  CHECK_ERR(flash_sim_init(sim, c, counting.get()), errc::invalid_argument);
  c = small_config();
  c.page_size = 60;  // not a multiple of prog_size
  CHECK_ERR(flash_sim_init(sim, c, counting.get()), errc::invalid_argument);
  c = small_config();
  c.sector_size = 96;  // not a multiple of page_size
  CHECK_ERR(flash_sim_init(sim, c, counting.get()), errc::invalid_argument);
  c = small_config();
  c.sector_count = 0;
  CHECK_ERR(flash_sim_init(sim, c, counting.get()), errc::invalid_argument);
  REQUIRE_OK(flash_sim_init(sim, small_config(), counting.get()));
  flash_device d = flash_sim_device(sim);
  CHECK_OK(flash_device_validate(d));
  d.erase = nullptr;
  CHECK_ERR(flash_device_validate(d), errc::invalid_argument);
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}

TESSERA_TEST(flash_sim, alignment_and_bounds_are_enforced) {
  test::counting_allocator counting;
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, small_config(), counting.get()));
  const flash_device d = flash_sim_device(sim);
  uint8_t buf[128];
  std::memset(buf, 0x5A, sizeof buf);
  CHECK_ERR(flash_read(d, 0, 2, bytes_mut(buf, 4)), errc::invalid_argument);    // offset % read_size
  CHECK_ERR(flash_read(d, 0, 0, bytes_mut(buf, 6)), errc::invalid_argument);    // size % read_size
  CHECK_ERR(flash_read(d, 0, 252, bytes_mut(buf, 8)), errc::out_of_range);      // crosses the sector end
  CHECK_ERR(flash_read(d, 4, 0, bytes_mut(buf, 4)), errc::out_of_range);        // no sector 4
  CHECK_ERR(flash_prog(d, 0, 4, bytes_view(buf, 8)), errc::invalid_argument);   // offset % prog_size
  CHECK_ERR(flash_prog(d, 0, 0, bytes_view(buf, 12)), errc::invalid_argument);  // size % prog_size
  CHECK_ERR(flash_prog(d, 0, 56, bytes_view(buf, 16)), errc::invalid_argument); // crosses a page
  CHECK_ERR(flash_prog(d, 0, 0, bytes_view(buf, 128)), errc::invalid_argument); // longer than a page
  CHECK_ERR(flash_erase(d, 4), errc::out_of_range);
  CHECK_EQ(sim.progs, 0u);
  CHECK_OK(flash_prog(d, 0, 64, bytes_view(buf, 64)));  // exactly one page
  CHECK_OK(flash_read(d, 0, 64, bytes_mut(buf + 64, 64)));
  CHECK(std::memcmp(buf, buf + 64, 64) == 0);
  flash_sim_release(sim);
}

TESSERA_TEST(flash_sim, program_only_moves_bits_away_from_erased) {
  test::counting_allocator counting;
  flash_sim sim;
  flash_sim_config c = small_config();
  c.prog_once = false;
  REQUIRE_OK(flash_sim_init(sim, c, counting.get()));
  const flash_device d = flash_sim_device(sim);
  const uint8_t first[8] = {0xF0, 0x0F, 0xAA, 0x55, 0x00, 0xFF, 0x81, 0x7E};
  const uint8_t fewer[8] = {0xF0, 0x0F, 0xAA, 0x55, 0x00, 0x0F, 0x01, 0x7E};  // only clears more bits
  const uint8_t sets_bit[8] = {0xF1, 0x0F, 0xAA, 0x55, 0x00, 0xFF, 0x81, 0x7E};  // 0xF0 -> 0xF1 sets bit 0
  uint8_t out[8];
  REQUIRE_OK(flash_prog(d, 1, 0, bytes_view(first, 8)));
  CHECK_OK(flash_prog(d, 1, 0, bytes_view(fewer, 8)));  // legal on NOR without prog_once
  CHECK_ERR(flash_prog(d, 1, 0, bytes_view(sets_bit, 8)), errc::invalid_argument);
  REQUIRE_OK(flash_read(d, 1, 0, bytes_mut(out, 8)));
  CHECK(std::memcmp(out, fewer, 8) == 0);  // the rejected program changed nothing
  flash_sim_release(sim);

  // keep_programmed: the real part's behaviour, programmed bits stay (old AND new for erased 0xFF).
  c.overwrite = flash_overwrite::keep_programmed;
  REQUIRE_OK(flash_sim_init(sim, c, counting.get()));
  const flash_device d2 = flash_sim_device(sim);
  REQUIRE_OK(flash_prog(d2, 0, 8, bytes_view(first, 8)));
  REQUIRE_OK(flash_prog(d2, 0, 8, bytes_view(sets_bit, 8)));
  REQUIRE_OK(flash_read(d2, 0, 8, bytes_mut(out, 8)));
  for (int i = 0; i < 8; ++i) CHECK_EQ(out[i], static_cast<uint8_t>(first[i] & sets_bit[i]));
  flash_sim_release(sim);

  // prog_once: a unit is programmed once between erases, even with bits that would be legal.
  c = small_config();
  REQUIRE_OK(flash_sim_init(sim, c, counting.get()));
  const flash_device d3 = flash_sim_device(sim);
  REQUIRE_OK(flash_prog(d3, 2, 16, bytes_view(first, 8)));
  CHECK_ERR(flash_prog(d3, 2, 16, bytes_view(fewer, 8)), errc::invalid_argument);
  REQUIRE_OK(flash_erase(d3, 2));
  CHECK_OK(flash_prog(d3, 2, 16, bytes_view(fewer, 8)));
  CHECK_EQ(sim.erase_counts[2], 1u);
  CHECK_EQ(sim.erase_counts[1], 0u);
  flash_sim_release(sim);
}

TESSERA_TEST(flash_sim, erased_value_zero_programs_by_setting_bits) {
  test::counting_allocator counting;
  flash_sim sim;
  flash_sim_config c = small_config();
  c.erased_value = 0x00;
  c.prog_once = false;
  REQUIRE_OK(flash_sim_init(sim, c, counting.get()));
  const flash_device d = flash_sim_device(sim);
  uint8_t out[8];
  REQUIRE_OK(flash_read(d, 3, 0, bytes_mut(out, 8)));
  for (uint8_t b : out) CHECK_EQ(b, 0u);
  const uint8_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint8_t clears[8] = {0, 2, 3, 4, 5, 6, 7, 8};
  REQUIRE_OK(flash_prog(d, 3, 0, bytes_view(v, 8)));
  CHECK_ERR(flash_prog(d, 3, 0, bytes_view(clears, 8)), errc::invalid_argument);
  REQUIRE_OK(flash_erase(d, 3));
  REQUIRE_OK(flash_read(d, 3, 0, bytes_mut(out, 8)));
  for (uint8_t b : out) CHECK_EQ(b, 0u);
  flash_sim_release(sim);
}

TESSERA_TEST(flash_sim, power_cut_kills_the_device_until_power_on) {
  test::counting_allocator counting;
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, small_config(), counting.get()));
  const flash_device d = flash_sim_device(sim);
  uint8_t data[64];
  for (int i = 0; i < 64; ++i) data[i] = static_cast<uint8_t>(i);
  flash_sim_cut_after(sim, 3, flash_tear::none, 1);
  CHECK_OK(flash_prog(d, 0, 0, bytes_view(data, 8)));
  CHECK_OK(flash_erase(d, 1));
  CHECK_ERR(flash_prog(d, 0, 8, bytes_view(data + 8, 8)), errc::io);  // the third: done, but reported lost
  uint8_t out[16];
  CHECK_ERR(flash_read(d, 0, 0, bytes_mut(out, 16)), errc::io);
  CHECK_ERR(flash_prog(d, 0, 16, bytes_view(data, 8)), errc::io);
  CHECK_ERR(flash_erase(d, 2), errc::io);
  CHECK_ERR(flash_sync(d), errc::io);
  CHECK_EQ(flash_sim_ops(sim), 3u);
  flash_sim_power_on(sim);
  REQUIRE_OK(flash_read(d, 0, 0, bytes_mut(out, 16)));
  CHECK(std::memcmp(out, data, 16) == 0);  // tear none: the op in flight completed
  CHECK_OK(flash_prog(d, 0, 16, bytes_view(data, 8)));  // no cut armed any more
  flash_sim_release(sim);
}

// Every tear mode leaves a prefix done; past it the bytes obey the mode.
TESSERA_TEST(flash_sim, torn_programs_obey_their_mode) {
  test::counting_allocator counting;
  flash_sim sim;
  flash_sim_config c = small_config();
  c.page_size = 256;
  REQUIRE_OK(flash_sim_init(sim, c, counting.get()));
  const flash_device d = flash_sim_device(sim);
  test::rng rng(7);
  uint8_t want[256], out[256];
  int short_tears[4] = {0, 0, 0, 0};
  for (int round = 0; round < 400; ++round) {
    const auto mode = static_cast<flash_tear>(round % 4);
    REQUIRE_OK(flash_erase(d, 1));
    for (auto& b : want) b = static_cast<uint8_t>(rng.next());
    flash_sim_cut_after(sim, 1, mode, rng.next());
    CHECK_ERR(flash_prog(d, 1, 0, bytes_view(want, 256)), errc::io);
    flash_sim_power_on(sim);
    REQUIRE_OK(flash_read(d, 1, 0, bytes_mut(out, 256)));
    size_t done = 0;
    while (done < 256 && out[done] == want[done]) ++done;
    if (done < 256) ++short_tears[round % 4];
    for (size_t i = done; i < 256; ++i) {
      if (mode == flash_tear::prefix) CHECK_EQ(out[i], 0xFFu);  // as it was: erased
      // The physical tear: only bits the program was clearing may be cleared.
      if (mode == flash_tear::partial) CHECK_EQ(static_cast<uint8_t>(want[i] & ~out[i]), 0u);
    }
  }
  CHECK_EQ(short_tears[0], 0);  // none: always complete
  CHECK_LT(50, short_tears[1]);
  CHECK_LT(50, short_tears[2]);
  CHECK_LT(50, short_tears[3]);
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}

TESSERA_TEST(flash_sim, torn_erases_obey_their_mode) {
  test::counting_allocator counting;
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, small_config(), counting.get()));
  const flash_device d = flash_sim_device(sim);
  test::rng rng(11);
  uint8_t old_bytes[256], out[256];
  int short_tears[4] = {0, 0, 0, 0};
  for (int round = 0; round < 200; ++round) {
    const auto mode = static_cast<flash_tear>(round % 4);
    REQUIRE_OK(flash_erase(d, 2));
    for (auto& b : old_bytes) b = static_cast<uint8_t>(rng.next());
    for (uint32_t at = 0; at < 256; at += 64) REQUIRE_OK(flash_prog(d, 2, at, bytes_view(old_bytes + at, 64)));
    const uint32_t count_before = sim.erase_counts[2];
    flash_sim_cut_after(sim, 1, mode, rng.next());
    CHECK_ERR(flash_erase(d, 2), errc::io);
    CHECK_EQ(sim.erase_counts[2], count_before + 1);  // a torn erase still wears the sector
    flash_sim_power_on(sim);
    REQUIRE_OK(flash_read(d, 2, 0, bytes_mut(out, 256)));
    size_t done = 0;
    while (done < 256 && out[done] == 0xFF) ++done;
    if (done < 256) ++short_tears[round % 4];
    for (size_t i = done; i < 256; ++i) {
      if (mode == flash_tear::prefix) CHECK_EQ(out[i], old_bytes[i]);
      if (mode == flash_tear::partial) CHECK_EQ(static_cast<uint8_t>(old_bytes[i] & ~out[i]), 0u);  // never programs
    }
  }
  CHECK_EQ(short_tears[0], 0);
  CHECK_LT(20, short_tears[1]);
  CHECK_LT(20, short_tears[2]);
  CHECK_LT(20, short_tears[3]);
  flash_sim_release(sim);
}

// Transient faults: the Nth operation of the kinds asked for fails with errc::io, leaves what its effect says,
// and the device keeps working; weak erases read erased until the sector ages; a flipped bit at rest.
TESSERA_TEST(flash_sim, transient_faults_weak_erases_and_flips) {
  test::counting_allocator counting;
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, small_config(), counting.get()));
  const flash_device d = flash_sim_device(sim);
  uint8_t data[64], out[64];
  for (int i = 0; i < 64; ++i) data[i] = static_cast<uint8_t>(i * 5 + 1);
  // The second program fails without doing anything; the third works.
  flash_sim_fail_after(sim, flash_sim_op_prog, 2, 1, flash_tear::nothing, 3);
  CHECK_OK(flash_prog(d, 0, 0, bytes_view(data, 8)));
  CHECK_ERR(flash_prog(d, 0, 8, bytes_view(data + 8, 8)), errc::io);
  CHECK_OK(flash_erase(d, 3));  // erases are not counted by this fault
  REQUIRE_OK(flash_read(d, 0, 8, bytes_mut(out, 8)));
  for (int i = 0; i < 8; ++i) CHECK_EQ(out[i], 0xFFu);
  CHECK_OK(flash_prog(d, 0, 8, bytes_view(data + 8, 8)));
  CHECK_EQ(flash_sim_fail_ops(sim), 3u);
  CHECK_EQ(sim.faults, 1u);
  // A failed program reported as an error but done (effect none).
  flash_sim_fail_after(sim, flash_sim_op_prog, 1, 1, flash_tear::none, 3);
  CHECK_ERR(flash_prog(d, 0, 16, bytes_view(data + 16, 8)), errc::io);
  REQUIRE_OK(flash_read(d, 0, 0, bytes_mut(out, 24)));
  CHECK(std::memcmp(out, data, 24) == 0);
  // Two reads in a row fail (noise in the buffer), then reads work.
  flash_sim_fail_after(sim, flash_sim_op_read, 1, 2, flash_tear::nothing, 3);
  CHECK_ERR(flash_read(d, 0, 0, bytes_mut(out, 8)), errc::io);
  CHECK_ERR(flash_read(d, 0, 0, bytes_mut(out, 8)), errc::io);
  REQUIRE_OK(flash_read(d, 0, 0, bytes_mut(out, 8)));
  CHECK(std::memcmp(out, data, 8) == 0);
  // A weak erase (a cut one here): the sector reads erased; aging makes some cells read programmed.
  for (uint32_t at = 0; at < 256; at += 64) REQUIRE_OK(flash_prog(d, 2, at, bytes_view(data, 64)));
  flash_sim_cut_after(sim, 1, flash_tear::weak, 9);
  CHECK_ERR(flash_erase(d, 2), errc::io);
  flash_sim_power_on(sim);
  uint8_t sector[256];
  REQUIRE_OK(flash_read(d, 2, 0, bytes_mut(sector, 256)));
  int programmed = 0;
  for (uint8_t b : sector) programmed += b != 0xFF;
  CHECK_EQ(programmed, 0);
  CHECK_EQ(sim.weak[2], 1u);
  flash_sim_age(sim, 5);
  REQUIRE_OK(flash_read(d, 2, 0, bytes_mut(sector, 256)));
  for (uint8_t b : sector) programmed += b != 0xFF;
  CHECK_LT(0, programmed);
  // A full erase heals it: aging changes nothing then.
  REQUIRE_OK(flash_erase(d, 2));
  flash_sim_fail_after(sim, flash_sim_op_erase, 1, 1, flash_tear::weak, 4);  // a failed erase can be weak too
  CHECK_ERR(flash_erase(d, 1), errc::io);
  CHECK_EQ(sim.weak[1], 1u);
  CHECK_EQ(sim.weak[2], 0u);
  flash_sim_age(sim, 6);
  REQUIRE_OK(flash_read(d, 2, 0, bytes_mut(sector, 256)));
  programmed = 0;
  for (uint8_t b : sector) programmed += b != 0xFF;
  CHECK_EQ(programmed, 0);
  // A flip at rest.
  flash_sim_flip_bit(sim, 3 * 256 + 10, 2);
  REQUIRE_OK(flash_read(d, 3, 8, bytes_mut(out, 4)));
  CHECK_EQ(out[2], 0xFBu);
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}

namespace {
int g_syncs = 0;
status count_sync(void*) noexcept {
  ++g_syncs;
  return ok_status();
}
}  // namespace

// The device layer's own checks, before any callback runs: a missing read, prog or erase callback (unsupported
// from the call that needs it, invalid_argument from validate), each zero size, a prog_size that is no multiple
// of read_size; empty reads and programs call nothing; sync calls the device's callback when it has one.
TESSERA_TEST(flash_sim, device_callbacks_and_sizes_are_checked) {
  test::counting_allocator counting;
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, small_config(), counting.get()));
  const flash_device good = flash_sim_device(sim);
  uint8_t buf[16] = {};
  flash_device d = good;
  d.read = nullptr;
  CHECK_ERR(flash_read(d, 0, 0, bytes_mut(buf, 4)), errc::unsupported);
  CHECK_ERR(flash_device_validate(d), errc::invalid_argument);
  d = good;
  d.prog = nullptr;
  CHECK_ERR(flash_prog(d, 0, 0, bytes_view(buf, 8)), errc::unsupported);
  CHECK_ERR(flash_device_validate(d), errc::invalid_argument);
  d = good;
  d.erase = nullptr;
  CHECK_ERR(flash_erase(d, 0), errc::unsupported);
  for (int k = 0; k < 4; ++k) {
    d = good;
    if (k == 0) d.read_size = 0;
    if (k == 1) d.prog_size = 0;
    if (k == 2) d.sector_size = 0;
    if (k == 3) d.sector_count = 0;
    CHECK_ERR(flash_device_validate(d), errc::invalid_argument);
  }
  d = good;
  d.read_size = 0;
  CHECK_ERR(flash_read(d, 0, 0, bytes_mut(buf, 4)), errc::invalid_argument);  // a unit of 0 divides nothing
  CHECK_ERR(flash_prog(d, 4, 0, bytes_view(buf, 8)), errc::out_of_range);     // no sector 4
  CHECK_ERR(flash_prog(d, 0, 252, bytes_view(buf, 8)), errc::out_of_range);   // crosses the sector end
  const uint64_t reads = sim.reads, progs = sim.progs;
  CHECK_OK(flash_read(good, 0, 0, bytes_mut(buf, 0)));
  CHECK_OK(flash_prog(good, 0, 0, bytes_view(buf, 0)));
  CHECK_EQ(sim.reads, reads);
  CHECK_EQ(sim.progs, progs);
  d = good;
  d.sync = count_sync;
  g_syncs = 0;
  CHECK_OK(flash_sync(d));
  CHECK_EQ(g_syncs, 1);
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}
