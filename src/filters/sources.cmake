# SPDX-License-Identifier: BSD-3-Clause
# Filters: the scalar shuffle kernels (the reference every SIMD kernel is tested against) are always built;
# each SIMD file is compiled with its own flags, only for the architectures that have it.
option(TESSERA_SIMD "Build SIMD shuffle kernels" ON)
option(TESSERA_SIMD_SSE2 "x86: SSE2 kernels" ON)
option(TESSERA_SIMD_AVX2 "x86: AVX2 kernels (chosen at run time from cpuid)" ON)
option(TESSERA_SIMD_NEON "ARM: NEON kernels (aarch64; armv7 built with -mfpu=neon)" ON)
option(TESSERA_SIMD_ALTIVEC "Power: Altivec/VSX kernels" ON)
# OFF (small firmware): the scalar table has no bit kernels and chunks that use bitshuffle are unsupported.
option(TESSERA_WITH_BITSHUFFLE "Build the bitshuffle filter" ON)
if(NOT TESSERA_WITH_BITSHUFFLE)
  target_compile_definitions(tessera_core PUBLIC TESSERA_WITH_BITSHUFFLE=0)
endif()

# CMAKE_CURRENT_LIST_DIR is this file's own folder (src/filters), also when included from src/.
set(_filters ${CMAKE_CURRENT_LIST_DIR})
target_sources(tessera_core PRIVATE
  ${_filters}/shuffle_scalar.cpp
  ${_filters}/shuffle_dispatch.cpp)

string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" _cpu)
if(TESSERA_SIMD)
  if(_cpu MATCHES "^(x86_64|amd64|i.86|x86)$")
    if(TESSERA_SIMD_SSE2)
      target_sources(tessera_core PRIVATE ${_filters}/shuffle_sse2.cpp)
      set_source_files_properties(${_filters}/shuffle_sse2.cpp PROPERTIES COMPILE_OPTIONS "-msse2")
      target_compile_definitions(tessera_core PRIVATE TESSERA_HAVE_SSE2=1)
    endif()
    if(TESSERA_SIMD_AVX2)
      target_sources(tessera_core PRIVATE ${_filters}/shuffle_avx2.cpp)
      set_source_files_properties(${_filters}/shuffle_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2")
      target_compile_definitions(tessera_core PRIVATE TESSERA_HAVE_AVX2=1)
    endif()
  elseif(_cpu MATCHES "^(aarch64|arm64|arm.*)$")
    # NEON is part of the target's baseline (aarch64, or armv7 with -mfpu=neon): chosen at compile time.
    if(TESSERA_SIMD_NEON AND NOT TESSERA_BAREMETAL)
      target_sources(tessera_core PRIVATE ${_filters}/shuffle_neon.cpp)
      target_compile_definitions(tessera_core PRIVATE TESSERA_HAVE_NEON=1)
    endif()
  elseif(_cpu MATCHES "^(ppc64|ppc64le|powerpc64|powerpc64le)$")
    if(TESSERA_SIMD_ALTIVEC)
      target_sources(tessera_core PRIVATE ${_filters}/shuffle_altivec.cpp)
      target_compile_definitions(tessera_core PRIVATE TESSERA_HAVE_ALTIVEC=1)
    endif()
  endif()
endif()
