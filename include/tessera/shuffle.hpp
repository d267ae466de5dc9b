// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Byte shuffle and bit shuffle, the filters that make typed data compressible, with one kernel table per
/// instruction set (highway's way): a scalar reference always built, SIMD tables chosen once at run time.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"

namespace tessera {

/// An instruction set the shuffle kernels are built for.
/// Numeric values are stable; they order the levels within one architecture family.
enum class simd_level : uint8_t {
  scalar = 0,   ///< portable C++, always built
  sse2 = 1,     ///< x86-64 SSE2
  avx2 = 2,     ///< x86-64 AVX2
  neon = 3,     ///< ARM NEON (AArch64, ARMv7)
  altivec = 4   ///< POWER AltiVec/VSX
};

/// The level's name ("scalar", "sse2", ...).
[[nodiscard]] const char* simd_level_name(simd_level level) noexcept;

/// One instruction set's kernels. Every kernel accepts any typesize >= 1 and any size in bytes, and gives
/// exactly the reference's bytes:
/// - shuffle: byte j of element i goes to dst[j * n + i], n = size / typesize; the size % typesize trailing
///   bytes are copied unchanged.
/// - bitshuffle: bit-transposes the first n8 = (n - n % 8) elements (bit b of byte j of element i goes to bit
///   plane j * 8 + b, as the bitshuffle library does); the bytes past n8 elements are copied unchanged.
/// scratch holds `size` bytes the bit kernels may use; src, dst and scratch do not overlap.
/// A build with TESSERA_WITH_BITSHUFFLE 0 (config.hpp, small firmware) has no scalar bit kernels (null): do not
/// call bitshuffle/bitunshuffle there (chunk_filter_available(filter_id::bitshuffle) is false).
struct shuffle_kernels {
  simd_level level;  ///< the instruction set of these kernels
  /// Byte shuffle (see above).
  void (*shuffle)(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept;
  /// The inverse of shuffle.
  void (*unshuffle)(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept;
  /// Bit shuffle (see above).
  void (*bitshuffle)(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept;
  /// The inverse of bitshuffle.
  void (*bitunshuffle)(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept;
};

/// The kernels of one level, or nullptr when this build does not include it or this CPU cannot run it.
[[nodiscard]] const shuffle_kernels* shuffle_kernels_for(simd_level level) noexcept;

/// The kernels in use: the best level the CPU supports (detected once), capped by simd_level_force.
[[nodiscard]] const shuffle_kernels& shuffle_kernels_active() noexcept;

/// Caps dispatch at `level` (tests and benchmarks force lower levels with it). Fails with unsupported when the
/// level is not available here. Call it while no filter runs on another thread.
[[nodiscard]] status simd_level_force(simd_level level) noexcept;
/// Removes the cap.
void simd_level_unforce() noexcept;

/// Byte shuffle with the active kernels (shuffle_kernels::shuffle).
inline void shuffle(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  shuffle_kernels_active().shuffle(typesize, size, src, dst);
}
/// Byte unshuffle with the active kernels (shuffle_kernels::unshuffle).
inline void unshuffle(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  shuffle_kernels_active().unshuffle(typesize, size, src, dst);
}
/// Bit shuffle with the active kernels (shuffle_kernels::bitshuffle; not in a build without bitshuffle).
inline void bitshuffle(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  shuffle_kernels_active().bitshuffle(typesize, size, src, dst, scratch);
}
/// Bit unshuffle with the active kernels (shuffle_kernels::bitunshuffle; not in a build without bitshuffle).
inline void bitunshuffle(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  shuffle_kernels_active().bitunshuffle(typesize, size, src, dst, scratch);
}

}  // namespace tessera
