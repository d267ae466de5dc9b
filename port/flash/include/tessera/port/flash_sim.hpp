// A simulated NOR flash in RAM for tests (host and bare metal), in the spirit of littlefs's emubd: it enforces
// the part's rules, counts erases per sector, and can cut the power at the Nth program or erase, tearing the
// operation in flight. After a cut every call fails (errc::io) until flash_sim_power_on: the contents survive,
// as on a real part, and the code under test re-mounts.
//
// Rules enforced (a violation is errc::invalid_argument and changes nothing):
// - alignment and bounds of every read, program and erase (flash_read/flash_prog/flash_erase's checks);
// - a program only moves bits away from the erased value. Programming an erased-state bit over a programmed one
//   ("a 1 over a 0" for erased 0xFF) is an error by default (it is always a bug in the caller), or with
//   overwrite = flash_overwrite::keep_programmed it is ignored bit by bit, as a real NOR part does;
// - with prog_once, a prog_size unit may be programmed only while fully erased (parts with ECC per unit).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/port/flash.hpp"
#include "tessera/span.hpp"

namespace tessera {

enum class flash_overwrite : uint8_t {
  error = 0,            ///< programming an erased-state bit over a programmed one fails
  keep_programmed = 1,  ///< the programmed bit stays (real NOR behaviour): result = old AND new for erased 0xFF
};

/// What the operation in flight at a power cut leaves behind.
enum class flash_tear : uint8_t {
  none = 0,     ///< it completes, then the power is gone
  prefix = 1,   ///< a random-length prefix is done, the rest is as it was
  partial = 2,  ///< a random prefix is done; past it, every bit the operation was changing changed or not at random
                /// (the physical tear: a program never sets a bit back to erased, an erase never programs one)
  garbage = 3,  ///< a random prefix is done; past it, the bytes of the operation are random (harsher than physics)
};

struct flash_sim_config {
  uint32_t read_size = 1;
  uint32_t prog_size = 1;
  uint32_t page_size = 256;
  uint32_t sector_size = 4096;
  uint32_t sector_count = 16;
  uint8_t erased_value = 0xFF;
  flash_overwrite overwrite = flash_overwrite::error;
  bool prog_once = true;
};

struct flash_sim {
  flash_sim_config config{};
  owned_array<uint8_t> bytes;          ///< sector_size * sector_count
  owned_array<uint32_t> erase_counts;  ///< per sector, completed and torn erases alike

  /// Operation counters since init (programs and erases are the power-cut points; reads and syncs are not).
  uint64_t reads = 0;
  uint64_t progs = 0;
  uint64_t erases = 0;
  uint64_t syncs = 0;
  uint64_t prog_bytes = 0;

  /// The power cut: the program or erase numbered cut_at (1-based, counted from flash_sim_cut_after) is the last.
  uint64_t ops_since_arm = 0;
  uint64_t cut_at = 0;  ///< 0: no cut armed
  flash_tear tear = flash_tear::none;
  uint64_t rng_state = 0;
  bool dead = false;
};

/// Allocates the contents (all erased) and the counters from `alloc`.
[[nodiscard]] status flash_sim_init(flash_sim& sim, const flash_sim_config& config, const allocator& alloc) noexcept;
void flash_sim_release(flash_sim& sim) noexcept;
/// The device to hand to the code under test; it refers to `sim`, which must outlive it.
[[nodiscard]] flash_device flash_sim_device(flash_sim& sim) noexcept;

/// Arms a cut: the Nth program or erase from now (n >= 1) is torn as `tear` says, returns errc::io, and every
/// later call fails until flash_sim_power_on. `seed` drives the tear's randomness.
void flash_sim_cut_after(flash_sim& sim, uint64_t n, flash_tear tear, uint64_t seed) noexcept;
/// Power back on: the device works again with its contents as the cut left them; no cut stays armed.
void flash_sim_power_on(flash_sim& sim) noexcept;
/// Programs and erases since the last flash_sim_cut_after (or init): the length of a sequence to cut through.
[[nodiscard]] inline uint64_t flash_sim_ops(const flash_sim& sim) noexcept { return sim.ops_since_arm; }

/// Test helpers: the raw contents, filling them (e.g. with an old array's garbage) behind the rules' back,
/// and the largest erase count of sectors [first, first + count).
[[nodiscard]] inline bytes_mut flash_sim_bytes(flash_sim& sim) noexcept {
  return bytes_mut(sim.bytes.data(), sim.bytes.size());
}
void flash_sim_fill_random(flash_sim& sim, uint64_t seed) noexcept;
void flash_sim_reset_erase_counts(flash_sim& sim) noexcept;
[[nodiscard]] uint32_t flash_sim_max_erase_count(const flash_sim& sim, uint32_t first, uint32_t count) noexcept;

}  // namespace tessera
