// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A simulated NOR flash in RAM for tests (host and bare metal), in the spirit of littlefs's emubd: it enforces
/// the part's rules, counts erases per sector, and can cut the power at the Nth program or erase, tearing the
/// operation in flight. After a cut every call fails (errc::io) until flash_sim_power_on: the contents survive,
/// as on a real part, and the code under test re-mounts.
///
/// The other faults a firmware meets, injected the same way (one armed at a time, counted from its arming):
/// - transient errors (flash_sim_fail_after): the Nth read, program or erase (of the kinds asked for) and the
///   next count-1 of them return errc::io while the device keeps working; a failed program or erase leaves what
///   its flash_tear says (nothing, done, a prefix, a physical tear); a failed read fills its buffer with noise;
/// - weak erases (flash_tear::weak on a cut or a failed erase): the sector reads erased, but some cells kept their
///   charge; flash_sim_age (time passing) makes a few of them read programmed again. A full erase heals it;
/// - bit flips at rest (flash_sim_flip_bit): retention or read disturb, behind the rules' back.
///
/// Rules enforced (a violation is errc::invalid_argument and changes nothing):
/// - alignment and bounds of every read, program and erase (flash_read/flash_prog/flash_erase's checks);
/// - a program only moves bits away from the erased value. Programming an erased-state bit over a programmed one
///   ("a 1 over a 0" for erased 0xFF) is an error by default (it is always a bug in the caller), or with
///   overwrite = flash_overwrite::keep_programmed it is ignored bit by bit, as a real NOR part does;
/// - with prog_once, a prog_size unit may be programmed only while fully erased (parts with ECC per unit).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/port/flash.hpp"
#include "tessera/span.hpp"

namespace tessera {

/// What a program that sets an erased-state bit over a programmed one does (see the rules above).
enum class flash_overwrite : uint8_t {
  error = 0,            ///< programming an erased-state bit over a programmed one fails
  keep_programmed = 1,  ///< the programmed bit stays (real NOR behaviour): result = old AND new for erased 0xFF
};

/// What the operation in flight at a power cut leaves behind.
enum class flash_tear : uint8_t {
  none = 0,     ///< it completes, then the power is gone
  prefix = 1,   ///< a random-length prefix is done, the rest is as it was
  partial = 2,  ///< a random prefix is done; past it, every bit the operation was changing changed or not at random
                ///< (the physical tear: a program never sets a bit back to erased, an erase never programs one)
  garbage = 3,  ///< a random prefix is done; past it, the bytes of the operation are random (harsher than physics)
  nothing = 4,  ///< nothing is done: the bytes are as they were (an SPI timeout before the command reached the part)
  weak = 5,     ///< an erase completes to the eye but is weak (flash_sim_age flips some cells back); a program: as none
};

/// Operation kinds for flash_sim_fail_after (a mask).
enum flash_sim_op : uint8_t {
  flash_sim_op_read = 1,  ///< reads
  flash_sim_op_prog = 2,  ///< programs
  flash_sim_op_erase = 4  ///< erases
};

/// The simulated part: its geometry (as flash_device's) and its rules.
struct flash_sim_config {
  uint32_t read_size = 1;       ///< read granularity in bytes
  uint32_t prog_size = 1;       ///< program granularity in bytes
  uint32_t page_size = 256;     ///< the largest program in one call, in bytes
  uint32_t sector_size = 4096;  ///< erase granularity in bytes
  uint32_t sector_count = 16;   ///< sectors of the part
  uint8_t erased_value = 0xFF;  ///< every byte's value after an erase
  flash_overwrite overwrite = flash_overwrite::error;  ///< programming over programmed bits: error or as NOR does
  bool prog_once = true;        ///< a prog_size unit may be programmed only while fully erased
};

/// The simulator's state: contents, counters and armed faults. Tests read its fields; flash_sim_* change them.
struct flash_sim {
  flash_sim_config config{};           ///< the geometry and rules given at init
  owned_array<uint8_t> bytes;          ///< sector_size * sector_count
  owned_array<uint32_t> erase_counts;  ///< per sector, completed and torn erases alike

  /// Operation counters since init (programs and erases are the power-cut points; reads and syncs are not).
  uint64_t reads = 0;
  uint64_t progs = 0;       ///< programs since init
  uint64_t erases = 0;      ///< erases since init
  uint64_t syncs = 0;       ///< syncs since init
  uint64_t prog_bytes = 0;  ///< bytes programmed since init

  /// The power cut: the program or erase numbered cut_at (1-based, counted from flash_sim_cut_after) is the last.
  uint64_t ops_since_arm = 0;
  uint64_t cut_at = 0;  ///< 0: no cut armed
  flash_tear tear = flash_tear::none;  ///< what the cut leaves of the operation in flight
  uint64_t rng_state = 0;  ///< the random state of tears, faults and noise
  bool dead = false;       ///< the power is cut: every call fails until flash_sim_power_on

  /// Transient faults (flash_sim_fail_after): operations of the kinds in fail_ops numbered fail_at to
  /// fail_at + fail_count - 1 (1-based, counted from the arming) fail with errc::io.
  uint8_t fail_ops = 0;
  uint64_t fail_seen = 0;   ///< operations of the kinds in fail_ops since the arming
  uint64_t fail_at = 0;     ///< the first failing one (0: none armed)
  uint32_t fail_count = 0;  ///< how many fail in a row
  flash_tear fail_effect = flash_tear::nothing;  ///< what a failed program or erase leaves
  uint64_t faults = 0;                 ///< operations failed so far (transient faults, not cuts)
  owned_array<uint8_t> weak;           ///< per sector: 1 while a weak erase is not healed
  /// The fault injection (cuts, transient faults, tears) of every read, program and erase: installed by
  /// flash_sim_cut_after and flash_sim_fail_after, null until then (and after release), so an image that never
  /// arms a fault does not link it.
  status (*fault_hook)(flash_sim& sim, uint8_t op, uint32_t sector, uint8_t* cell, const uint8_t* src, uint8_t* dst,
                       size_t n) noexcept = nullptr;
};

/// Allocates the contents (all erased) and the counters from `alloc`.
[[nodiscard]] status flash_sim_init(flash_sim& sim, const flash_sim_config& config, const allocator& alloc) noexcept;
/// Frees the contents and counters and resets the state.
void flash_sim_release(flash_sim& sim) noexcept;
/// The device to hand to the code under test; it refers to `sim`, which must outlive it.
[[nodiscard]] flash_device flash_sim_device(flash_sim& sim) noexcept;

/// Arms a cut: the Nth program or erase from now (n >= 1) is torn as `tear` says, returns errc::io, and every
/// later call fails until flash_sim_power_on. `seed` drives the tear's randomness.
void flash_sim_cut_after(flash_sim& sim, uint64_t n, flash_tear tear, uint64_t seed) noexcept;
/// Power back on: the device works again with its contents as the cut left them; no cut stays armed (nor a
/// transient fault).
void flash_sim_power_on(flash_sim& sim) noexcept;
/// Arms transient faults: of the operations whose kind is in `ops` (flash_sim_op bits), the Nth from now (n >= 1)
/// and the count - 1 after it fail with errc::io, leaving what `effect` says (a program or erase: as a tear; a
/// read: noise in the buffer). The device keeps working. n == 0 disarms.
void flash_sim_fail_after(flash_sim& sim, uint8_t ops, uint64_t n, uint32_t count, flash_tear effect,
                          uint64_t seed) noexcept;
/// Operations of the kinds in `ops` since the last flash_sim_fail_after (or init): the fault points of a sequence.
[[nodiscard]] inline uint64_t flash_sim_fail_ops(const flash_sim& sim) noexcept { return sim.fail_seen; }
/// Time passes: every weakly erased sector gets a few cells (about one byte in 64) read programmed again, at
/// random from `seed`; the sector is no longer weak (what decayed stays).
void flash_sim_age(flash_sim& sim, uint64_t seed) noexcept;
/// Flips one bit of the contents (byte `offset` of the device, bit 0..7): a flip at rest.
void flash_sim_flip_bit(flash_sim& sim, size_t offset, unsigned bit) noexcept;
/// Programs and erases since the last flash_sim_cut_after (or init): the length of a sequence to cut through.
[[nodiscard]] inline uint64_t flash_sim_ops(const flash_sim& sim) noexcept { return sim.ops_since_arm; }

/// Test helpers: the raw contents, filling them (e.g. with an old array's garbage) behind the rules' back,
/// and the largest erase count of sectors [first, first + count).
[[nodiscard]] inline bytes_mut flash_sim_bytes(flash_sim& sim) noexcept {
  return bytes_mut(sim.bytes.data(), sim.bytes.size());
}
/// Fills the contents with random bytes from `seed`, behind the rules' back.
void flash_sim_fill_random(flash_sim& sim, uint64_t seed) noexcept;
/// Sets every sector's erase count to 0.
void flash_sim_reset_erase_counts(flash_sim& sim) noexcept;
/// The largest erase count of sectors [first, first + count) (those past the device are ignored).
[[nodiscard]] uint32_t flash_sim_max_erase_count(const flash_sim& sim, uint32_t first, uint32_t count) noexcept;

}  // namespace tessera
