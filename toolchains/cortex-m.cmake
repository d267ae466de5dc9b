# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal ARM Cortex-M (no OS), picolibc as the C library, programs run under qemu-system-arm with
# semihosting on a board with that core. TESSERA_CORTEX_M_CPU picks the core (the thin files cortex-m0.cmake,
# cortex-m3.cmake, cortex-m4.cmake, cortex-m7.cmake and cortex-m33.cmake set it; or -DTESSERA_CORTEX_M_CPU=...
# with this file, or the environment variable of the same name):
#   m0   ARMv6-M (Thumb-1, no divide instruction, no unaligned access: it faults), no FPU; QEMU `microbit`
#        (nRF51: 256 KiB flash at 0x0, 16 KiB RAM at 0x20000000)
#   m3   ARMv7-M, no FPU; QEMU `mps2-an385` (4 MiB SSRAM1 at 0x0 for code, 16 MiB PSRAM at 0x21000000)
#   m4   ARMv7E-M, single-precision FPU (fpv4-sp-d16, hard float); QEMU `mps2-an386` (the AN385's map)
#   m7   ARMv7E-M, double-precision FPU (fpv5-d16, hard float); QEMU `mps2-an500` (4 MiB SSRAM1 at 0x0, 16 MiB
#        PSRAM at 0x60000000)
#   m33  ARMv8-M Mainline with TrustZone, single-precision FPU (fpv5-sp-d16, hard float); QEMU `mps2-an505`
#        (SSE-200 subsystem). The core resets in Secure state with its vector table at 0x10000000 (INITSVTOR0):
#        code goes in the Secure alias of the 4 MiB SSRAM1 there; data, heap and stack in the 16 MiB PSRAM at
#        0x80000000. With the SAU off every address is Secure, so the program runs Secure throughout.
# The mps2 boards get code in SSRAM1 (where the core reads its reset vector) and data, heap and stack in PSRAM.
# The micro:bit's map is the real part's: an image must fit it (examples/: the flash_reader images check their
# RAM at link time). Programs that need more than a micro:bit has (the test programs,
# the logger with its simulated flash) are linked with TESSERA_BM_TEST_LINK_OPTIONS and run with
# TESSERA_BM_TEST_EMULATOR: the same nRF51 and Cortex-M0, its flash enlarged to 4 MiB and its RAM
# to 16 MiB (run-cortex-m.sh's machine `microbit-test`). tests/ and examples/ apply them.
set(_tessera_cpus m0 m3 m4 m7 m33)
if(NOT DEFINED TESSERA_CORTEX_M_CPU AND DEFINED ENV{TESSERA_CORTEX_M_CPU})
  set(TESSERA_CORTEX_M_CPU "$ENV{TESSERA_CORTEX_M_CPU}")
endif()
if(NOT TESSERA_CORTEX_M_CPU IN_LIST _tessera_cpus)
  message(FATAL_ERROR "toolchains/cortex-m.cmake: TESSERA_CORTEX_M_CPU is one of ${_tessera_cpus}, not "
                      "'${TESSERA_CORTEX_M_CPU}'")
endif()
# try_compile projects read this file again: they get the core through the same variable.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TESSERA_CORTEX_M_CPU)

set(CMAKE_SYSTEM_PROCESSOR arm)
set(TESSERA_BM_PREFIX arm-none-eabi)
set(TESSERA_BM_PICOLIBC /usr/lib/picolibc/arm-none-eabi /usr/lib/arm-none-eabi)
set(_ssram 0x00000000)
set(_psram_size 0x01000000)
if(TESSERA_CORTEX_M_CPU STREQUAL "m0")
  set(_flags "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft")
  set(TESSERA_CORTEX_M_MACHINE microbit)
  set(TESSERA_BM_FLASH 0x00000000)
  set(TESSERA_BM_FLASH_SIZE 0x00040000)
  set(TESSERA_BM_RAM 0x20000000)
  set(TESSERA_BM_RAM_SIZE 0x00004000)
  set(TESSERA_BM_TEST_LINK_OPTIONS
      LINKER:--defsym=__flash_size=0x00400000 LINKER:--defsym=__ram_size=0x01000000)
  set(TESSERA_BM_TEST_EMULATOR sh ${CMAKE_CURRENT_LIST_DIR}/run-cortex-m.sh microbit-test)
elseif(TESSERA_CORTEX_M_CPU STREQUAL "m3")
  set(_flags "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft")
  set(TESSERA_CORTEX_M_MACHINE mps2-an385)
  set(_psram 0x21000000)
elseif(TESSERA_CORTEX_M_CPU STREQUAL "m4")
  set(_flags "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
  set(TESSERA_CORTEX_M_MACHINE mps2-an386)
  set(_psram 0x21000000)
elseif(TESSERA_CORTEX_M_CPU STREQUAL "m7")
  set(_flags "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16")
  set(TESSERA_CORTEX_M_MACHINE mps2-an500)
  set(_psram 0x60000000)
else()  # m33
  set(_flags "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16")
  set(TESSERA_CORTEX_M_MACHINE mps2-an505)
  set(_ssram 0x10000000)
  set(_psram 0x80000000)
endif()
if(NOT TESSERA_CORTEX_M_CPU STREQUAL "m0")
  set(TESSERA_BM_FLASH ${_ssram})
  set(TESSERA_BM_FLASH_SIZE 0x00400000)
  set(TESSERA_BM_RAM ${_psram})
  set(TESSERA_BM_RAM_SIZE ${_psram_size})
endif()
set(TESSERA_BM_FLAGS "${_flags} --specs=picolibcpp.specs")

# The codec libraries of this core (ci/cross-sysroots.sh cortex-<cpu>): the Cortex-M4's in arm-none-eabi/, the
# other cores' in arm-none-eabi-<cpu>/ (an archive of another core or float ABI would not link).
if(TESSERA_CORTEX_M_CPU STREQUAL "m4")
  set(TESSERA_BM_SYSROOT arm-none-eabi)
else()
  set(TESSERA_BM_SYSROOT arm-none-eabi-${TESSERA_CORTEX_M_CPU})
endif()

set(TESSERA_BM_EMULATOR sh ${CMAKE_CURRENT_LIST_DIR}/run-cortex-m.sh ${TESSERA_CORTEX_M_MACHINE})
include(${CMAKE_CURRENT_LIST_DIR}/baremetal.cmake)
