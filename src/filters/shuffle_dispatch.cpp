// SPDX-License-Identifier: BSD-3-Clause
// Chooses the shuffle kernel table: on x86 from cpuid at the first call, elsewhere at compile time (NEON and
// Altivec are part of the targets' baselines). The choice lives in an atomic pointer: no static-init guards,
// and a race between first callers is harmless since they all compute the same table.
#include "tessera/cxx.hpp"

#include "filters/shuffle_kernels.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define TESSERA_X86 1
#endif

namespace tessera {
namespace {

#if defined(TESSERA_X86)
enum : unsigned { kCpuSse2 = 1u, kCpuAvx2 = 2u, kCpuDetected = 0x80u };

tessera::cxx::atomic<unsigned> g_cpu_features{0};

// GCOVR_EXCL_BR_START: what the CPU running the tests has (the CI host has SSE2 and AVX2): one side of each.
unsigned cpu_features_detect() noexcept {
  unsigned features = kCpuDetected;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return features;
  if (edx & (1u << 26)) features |= kCpuSse2;
  const bool osxsave = (ecx & (1u << 27)) != 0;
  const bool avx = (ecx & (1u << 28)) != 0;
  if (osxsave && avx) {
    // The OS must save the YMM state (XCR0 bits 1 and 2) for AVX2 code to be safe.
    unsigned xcr0_lo = 0, xcr0_hi = 0;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    (void)xcr0_hi;
    if ((xcr0_lo & 6u) == 6u && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (ebx & (1u << 5)))
      features |= kCpuAvx2;
  }
  return features;
}
// GCOVR_EXCL_BR_STOP

unsigned cpu_features() noexcept {
  unsigned features = g_cpu_features.load(tessera::cxx::memory_order_relaxed);
  if (features == 0) {
    features = cpu_features_detect();
    g_cpu_features.store(features, tessera::cxx::memory_order_relaxed);
  }
  return features;
}
#else
unsigned cpu_features() noexcept { return 0; }  // NEON and Altivec are part of the baseline: nothing needed
#endif

// The levels this build has, worst first, with the cpuid features each needs (none: part of the baseline).
struct level_entry {
  simd_level level;
  const shuffle_kernels* kernels;
  unsigned needs;
};
constexpr level_entry kLevels[] = {
    {simd_level::scalar, &detail::kShuffleScalar, 0},
#if defined(TESSERA_HAVE_SSE2)
    {simd_level::sse2, &detail::kShuffleSse2, kCpuSse2},
#endif
#if defined(TESSERA_HAVE_AVX2)
    {simd_level::avx2, &detail::kShuffleAvx2, kCpuAvx2},
#endif
#if defined(TESSERA_HAVE_NEON)
    {simd_level::neon, &detail::kShuffleNeon, 0},
#endif
#if defined(TESSERA_HAVE_ALTIVEC)
    {simd_level::altivec, &detail::kShuffleAltivec, 0},
#endif
};

// GCOVR_EXCL_BR_START: whether a level runs is the CPU's to say; every level this build has runs on the CI host.
bool level_runs(const level_entry& e) noexcept { return e.needs == 0 || (cpu_features() & e.needs) == e.needs; }
// GCOVR_EXCL_BR_STOP

// The best table this build and CPU can run.
const shuffle_kernels* shuffle_kernels_best() noexcept {
  const shuffle_kernels* best = &detail::kShuffleScalar;
  for (const level_entry& e : kLevels) {
    if (level_runs(e)) best = e.kernels;
  }
  return best;
}

tessera::cxx::atomic<const shuffle_kernels*> g_active{nullptr};

}  // namespace

const char* simd_level_name(simd_level level) noexcept {
  switch (level) {
    case simd_level::scalar: return "scalar";
    case simd_level::sse2: return "sse2";
    case simd_level::avx2: return "avx2";
    case simd_level::neon: return "neon";
    case simd_level::altivec: return "altivec";
  }
  return "unknown";
}

const shuffle_kernels* shuffle_kernels_for(simd_level level) noexcept {
  for (const level_entry& e : kLevels) {
    if (e.level == level) return level_runs(e) ? e.kernels : nullptr;
  }
  return nullptr;
}

const shuffle_kernels& shuffle_kernels_active() noexcept {
  const shuffle_kernels* active = g_active.load(tessera::cxx::memory_order_acquire);
  if (active == nullptr) {
    active = shuffle_kernels_best();
    g_active.store(active, tessera::cxx::memory_order_release);
  }
  return *active;
}

status simd_level_force(simd_level level) noexcept {
  // Every level below an available one in its family is available too, so the cap is the level itself.
  const shuffle_kernels* kernels = shuffle_kernels_for(level);
  if (kernels == nullptr) return make_error(errc::unsupported, TESSERA_MSG("simd_level_force: level not available here"));
  g_active.store(kernels, tessera::cxx::memory_order_release);
  return ok_status();
}

void simd_level_unforce() noexcept { g_active.store(shuffle_kernels_best(), tessera::cxx::memory_order_release); }

}  // namespace tessera
