// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/port/flash_sim.hpp"

#include <string.h>

namespace tessera {

namespace {

uint64_t rng_next(uint64_t& state) noexcept {  // splitmix64
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

status power_lost() noexcept { return make_error(errc::io, TESSERA_MSG("flash sim: power lost")); }

// Counts a program or erase; true when it is the one the cut falls on.
bool count_op(flash_sim& sim) noexcept {
  ++sim.ops_since_arm;
  return sim.cut_at != 0 && sim.ops_since_arm == sim.cut_at;
}

// Where the operation torn as `mode` says stops: bytes before it are done, the rest torn as the mode says.
size_t tear_point(flash_sim& sim, flash_tear mode, size_t n) noexcept {
  if (mode == flash_tear::none || mode == flash_tear::weak || n == 0) return n;
  if (mode == flash_tear::nothing) return 0;
  return static_cast<size_t>(rng_next(sim.rng_state) % n);
}

// Moves one byte towards `target` (what the completed operation leaves) as a tear past its tear point does.
uint8_t torn_byte(flash_sim& sim, flash_tear mode, uint8_t cell, uint8_t target) noexcept {
  switch (mode) {
    case flash_tear::partial:
      return static_cast<uint8_t>(cell ^ ((cell ^ target) & rng_next(sim.rng_state)));
    case flash_tear::garbage:
      return static_cast<uint8_t>(rng_next(sim.rng_state));
    default:
      return cell;  // prefix, nothing: as it was
  }
}

// Counts an operation of kind `op` for the transient faults; true when this one fails.
bool fail_now(flash_sim& sim, uint8_t op) noexcept {
  if ((sim.fail_ops & op) == 0) return false;
  ++sim.fail_seen;
  if (sim.fail_at == 0 || sim.fail_seen < sim.fail_at || sim.fail_seen - sim.fail_at >= sim.fail_count) return false;
  ++sim.faults;
  return true;
}

status transient_error() noexcept { return make_error(errc::io, TESSERA_MSG("flash sim: transient device error")); }

// The faults of an armed simulator (flash_sim::fault_hook, installed by flash_sim_cut_after and
// flash_sim_fail_after): the operation `op` on the `n` bytes at `cell`, counted and torn or failed as armed. A
// read copies into dst, a program takes src (an erase neither). Only the arming calls name it, so an image that
// never arms a fault (a logger on the simulator) leaves it, the tears and the random numbers out (--gc-sections).
status sim_fault_op(flash_sim& sim, uint8_t op, uint32_t sector, uint8_t* cell, const uint8_t* src, uint8_t* dst,
                    size_t n) noexcept {
  if (op == flash_sim_op_read) {
    if (fail_now(sim, flash_sim_op_read)) {
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(rng_next(sim.rng_state));
      return transient_error();
    }
    memcpy(dst, cell, n);
    return ok_status();
  }
  const uint8_t erased = sim.config.erased_value;
  const bool cut = count_op(sim);
  const bool failed = !cut && fail_now(sim, op);
  const flash_tear mode = cut ? sim.tear : failed ? sim.fail_effect : flash_tear::none;
  const size_t done = tear_point(sim, mode, n);
  for (size_t i = 0; i < n; ++i) {
    // A completed program leaves every bit programmed in either the old or the new value; an erase, none.
    const uint8_t target = src != nullptr ? static_cast<uint8_t>(erased ^ ((cell[i] ^ erased) | (src[i] ^ erased)))
                                          : erased;
    cell[i] = i < done ? target : torn_byte(sim, mode, cell[i], target);
  }
  // A complete erase heals a weak one; a weak one reads erased until flash_sim_age.
  if (src == nullptr && mode == flash_tear::none) sim.weak[sector] = 0;
  if (src == nullptr && mode == flash_tear::weak) sim.weak[sector] = 1;
  if (cut) {
    sim.dead = true;
    return power_lost();
  }
  return failed ? transient_error() : ok_status();
}

status sim_read(void* context, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept {
  auto& sim = *static_cast<flash_sim*>(context);
  if (sim.dead) return power_lost();
  ++sim.reads;
  uint8_t* cell = sim.bytes.data() + static_cast<size_t>(sector) * sim.config.sector_size + offset;
  if (sim.fault_hook != nullptr)
    return sim.fault_hook(sim, flash_sim_op_read, sector, cell, nullptr, dst.data(), dst.size());
  memcpy(dst.data(), cell, dst.size());
  return ok_status();
}

status sim_prog(void* context, uint32_t sector, uint32_t offset, bytes_view src) noexcept {
  auto& sim = *static_cast<flash_sim*>(context);
  if (sim.dead) return power_lost();
  const uint8_t erased = sim.config.erased_value;
  uint8_t* cell = sim.bytes.data() + static_cast<size_t>(sector) * sim.config.sector_size + offset;
  // The rules are checked before anything changes: a rejected program is a bug in the caller, not a cut point.
  for (size_t i = 0; i < src.size(); ++i) {
    const uint8_t programmed_old = static_cast<uint8_t>(cell[i] ^ erased);
    const uint8_t programmed_new = static_cast<uint8_t>(src[i] ^ erased);
    if (sim.config.overwrite == flash_overwrite::error && (programmed_old & ~programmed_new) != 0)
      return make_error(errc::invalid_argument, TESSERA_MSG("flash sim: program would move a bit back to the erased value"));
  }
  if (sim.config.prog_once) {
    const uint32_t unit = sim.config.prog_size;
    for (size_t u = 0; u < src.size(); u += unit) {
      for (size_t i = 0; i < unit; ++i) {
        if (cell[u + i] != erased)
          return make_error(errc::invalid_argument, TESSERA_MSG("flash sim: prog_size unit programmed twice without erase"));
      }
    }
  }
  ++sim.progs;
  sim.prog_bytes += src.size();
  if (sim.fault_hook != nullptr)
    return sim.fault_hook(sim, flash_sim_op_prog, sector, cell, src.data(), nullptr, src.size());
  ++sim.ops_since_arm;
  for (size_t i = 0; i < src.size(); ++i) cell[i] = static_cast<uint8_t>(erased ^ ((cell[i] ^ erased) | (src[i] ^ erased)));
  return ok_status();
}

status sim_erase(void* context, uint32_t sector) noexcept {
  auto& sim = *static_cast<flash_sim*>(context);
  if (sim.dead) return power_lost();
  ++sim.erases;
  ++sim.erase_counts[sector];
  uint8_t* cell = sim.bytes.data() + static_cast<size_t>(sector) * sim.config.sector_size;
  if (sim.fault_hook != nullptr)
    return sim.fault_hook(sim, flash_sim_op_erase, sector, cell, nullptr, nullptr, sim.config.sector_size);
  ++sim.ops_since_arm;
  memset(cell, sim.config.erased_value, sim.config.sector_size);
  return ok_status();
}

status sim_sync(void* context) noexcept {
  auto& sim = *static_cast<flash_sim*>(context);
  if (sim.dead) return power_lost();
  ++sim.syncs;
  return ok_status();
}

}  // namespace

status flash_sim_init(flash_sim& sim, const flash_sim_config& config, const allocator& alloc) noexcept {
  flash_sim_release(sim);
  sim.config = config;
  flash_device probe = flash_sim_device(sim);
  TESSERA_TRY(flash_device_validate(probe));
  const uint64_t total = static_cast<uint64_t>(config.sector_size) * config.sector_count;
  if (total > SIZE_MAX) return make_error(errc::overflow, TESSERA_MSG("flash sim: device larger than memory"));
  TESSERA_TRY(sim.bytes.allocate(alloc, static_cast<size_t>(total)));
  TESSERA_TRY(sim.erase_counts.allocate(alloc, config.sector_count));
  TESSERA_TRY(sim.weak.allocate(alloc, config.sector_count));
  memset(sim.weak.data(), 0, sim.weak.size());
  memset(sim.bytes.data(), config.erased_value, sim.bytes.size());
  flash_sim_reset_erase_counts(sim);
  return ok_status();
}

void flash_sim_release(flash_sim& sim) noexcept {
  sim.bytes.reset();
  sim.erase_counts.reset();
  sim.weak.reset();
  sim.fail_ops = 0;
  sim.fail_seen = sim.fail_at = sim.faults = 0;
  sim.fail_count = 0;
  sim.reads = sim.progs = sim.erases = sim.syncs = sim.prog_bytes = 0;
  sim.ops_since_arm = sim.cut_at = 0;
  sim.dead = false;
  sim.fault_hook = nullptr;
}

flash_device flash_sim_device(flash_sim& sim) noexcept {
  flash_device d;
  d.read = sim_read;
  d.prog = sim_prog;
  d.erase = sim_erase;
  d.sync = sim_sync;
  d.context = &sim;
  d.read_size = sim.config.read_size;
  d.prog_size = sim.config.prog_size;
  d.page_size = sim.config.page_size;
  d.sector_size = sim.config.sector_size;
  d.sector_count = sim.config.sector_count;
  d.erased_value = sim.config.erased_value;
  d.mapped = sim.bytes.data();  // the simulated chip is memory-mapped, as a microcontroller's internal flash is
  return d;
}

void flash_sim_cut_after(flash_sim& sim, uint64_t n, flash_tear tear, uint64_t seed) noexcept {
  sim.fault_hook = sim_fault_op;
  sim.ops_since_arm = 0;
  sim.cut_at = n;
  sim.tear = tear;
  sim.rng_state = seed;
}

void flash_sim_power_on(flash_sim& sim) noexcept {
  sim.dead = false;
  sim.cut_at = 0;
  sim.ops_since_arm = 0;
  sim.fail_ops = 0;
  sim.fail_at = 0;
  sim.fail_seen = 0;
}

void flash_sim_fail_after(flash_sim& sim, uint8_t ops, uint64_t n, uint32_t count, flash_tear effect,
                          uint64_t seed) noexcept {
  sim.fault_hook = sim_fault_op;
  sim.fail_ops = ops;
  sim.fail_seen = 0;
  sim.fail_at = n;
  sim.fail_count = count;
  sim.fail_effect = effect;
  sim.rng_state = seed;
}

void flash_sim_age(flash_sim& sim, uint64_t seed) noexcept {
  uint64_t state = seed;
  const uint8_t programmed = static_cast<uint8_t>(~sim.config.erased_value);
  for (size_t s = 0; s < sim.weak.size(); ++s) {
    if (sim.weak[s] == 0) continue;
    uint8_t* cell = sim.bytes.data() + s * sim.config.sector_size;
    for (size_t i = 0; i < sim.config.sector_size; ++i) {
      const uint64_t r = rng_next(state);
      if ((r & 63u) != 0) continue;
      const uint8_t mask = static_cast<uint8_t>(1u << ((r >> 8) & 7u));
      cell[i] = static_cast<uint8_t>((cell[i] & ~mask) | (programmed & mask));
    }
    sim.weak[s] = 0;
  }
}

void flash_sim_flip_bit(flash_sim& sim, size_t offset, unsigned bit) noexcept {
  if (offset < sim.bytes.size()) sim.bytes[offset] = static_cast<uint8_t>(sim.bytes[offset] ^ (1u << (bit & 7u)));
}

void flash_sim_fill_random(flash_sim& sim, uint64_t seed) noexcept {
  uint64_t state = seed;
  for (size_t i = 0; i < sim.bytes.size(); ++i) sim.bytes[i] = static_cast<uint8_t>(rng_next(state) >> 56);
}

void flash_sim_reset_erase_counts(flash_sim& sim) noexcept {
  for (size_t i = 0; i < sim.erase_counts.size(); ++i) sim.erase_counts[i] = 0;
}

uint32_t flash_sim_max_erase_count(const flash_sim& sim, uint32_t first, uint32_t count) noexcept {
  uint32_t most = 0;
  for (uint32_t s = first; s < first + count && s < sim.erase_counts.size(); ++s) {
    if (sim.erase_counts[s] > most) most = sim.erase_counts[s];
  }
  return most;
}

}  // namespace tessera
