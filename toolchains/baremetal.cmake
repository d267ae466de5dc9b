# SPDX-License-Identifier: BSD-3-Clause
# Shared part of the bare-metal toolchain files (cortex-m.cmake, riscv32-baremetal.cmake): picolibc as the C
# library, its semihosting crt0 and linker script, programs run under QEMU with semihosting (printf reaches the
# host, the exit status becomes QEMU's). The including file sets
#   TESSERA_BM_PREFIX      the compilers' prefix (arm-none-eabi, riscv64-unknown-elf)
#   TESSERA_BM_FLAGS       target flags (CPU, ABI, picolibc's --specs), for C, C++ and assembly
#   TESSERA_BM_FLASH, TESSERA_BM_FLASH_SIZE, TESSERA_BM_RAM, TESSERA_BM_RAM_SIZE
#                          the memory map picolibc's linker script places the program in (--defsym values)
#   TESSERA_BM_PICOLIBC    where the compiler's picolibc is (headers and multilib libraries)
#   TESSERA_BM_SYSROOT     the folder under TESSERA_SYSROOT_ROOT where ci/cross-sysroots.sh puts this CPU's codec
#                          libraries (<root>/<folder>/usr/{include,lib}); without it, the build has BloscLZ only
#   TESSERA_BM_EMULATOR    the command ctest runs a program with (a toolchains/run-*.sh script and its arguments)
# CMAKE_SYSTEM_NAME Generic makes the project's TESSERA_BAREMETAL ON (no GoogleTest, freestanding check on).
set(CMAKE_SYSTEM_NAME Generic)

set(CMAKE_C_COMPILER ${TESSERA_BM_PREFIX}-gcc)
set(CMAKE_CXX_COMPILER ${TESSERA_BM_PREFIX}-g++)
set(CMAKE_ASM_COMPILER ${TESSERA_BM_PREFIX}-gcc)

# Firmware pays for what it calls: every function and object in its own section (the links below drop the
# unused ones), and C++ without exceptions, RTTI and unwind tables, so that no program built with these files
# (Tessera's and its users') links the unwinder. Tessera adds the same for any bare-metal toolchain, and -Os
# to its Release builds (cmake/TesseraFirmware.cmake).
set(_tessera_bm_size "-ffunction-sections -fdata-sections")
set(_tessera_bm_cxx "-fno-exceptions -fno-rtti -fno-unwind-tables -fno-asynchronous-unwind-tables")
set(CMAKE_C_FLAGS_INIT "${TESSERA_BM_FLAGS} ${_tessera_bm_size}")
set(CMAKE_CXX_FLAGS_INIT "${TESSERA_BM_FLAGS} ${_tessera_bm_size} ${_tessera_bm_cxx}")
set(CMAKE_ASM_FLAGS_INIT "${TESSERA_BM_FLAGS}")

# picolibc's semihosting crt0 brings the vector table (or trap vector) and the startup; its linker script
# places code and read-only data at __flash, data, heap and stack at __ram. The stack starts at the top of RAM;
# the script reserves its default 2 KiB for it (a --defsym of __stack_size comes after the script on the
# command line, too late for it) and everything between .bss and those 2 KiB is malloc's heap, into which a
# deeper stack grows. A later --defsym of the same symbol wins (cortex-m.cmake's TESSERA_BM_TEST_LINK_OPTIONS
# rely on it).
string(JOIN " " CMAKE_EXE_LINKER_FLAGS_INIT
  --crt0=semihost --oslib=semihost -Wl,--gc-sections
  -Wl,--defsym=__flash=${TESSERA_BM_FLASH} -Wl,--defsym=__flash_size=${TESSERA_BM_FLASH_SIZE}
  -Wl,--defsym=__ram=${TESSERA_BM_RAM} -Wl,--defsym=__ram_size=${TESSERA_BM_RAM_SIZE})

# The codec libraries (LZ4, Zstd) that ci/cross-sysroots.sh builds for this CPU and ABI, without a heap:
# <TESSERA_SYSROOT_ROOT>/<TESSERA_BM_SYSROOT>/usr/{include,lib}; src/codecs/libraries.cmake finds them there and
# turns TESSERA_WITH_LZ4/ZSTD on. The root is a cache variable (from the environment at the first configure).
if(NOT DEFINED TESSERA_SYSROOT_ROOT)
  if(DEFINED ENV{TESSERA_SYSROOT_ROOT})
    set(TESSERA_SYSROOT_ROOT "$ENV{TESSERA_SYSROOT_ROOT}")
  else()
    set(TESSERA_SYSROOT_ROOT /opt/tessera-sysroots)
  endif()
endif()
set(TESSERA_SYSROOT_ROOT "${TESSERA_SYSROOT_ROOT}" CACHE PATH
    "Where ci/cross-sysroots.sh put the targets' codec libraries (one sysroot per GNU triple or CPU)")
set(CMAKE_FIND_ROOT_PATH ${TESSERA_BM_PICOLIBC})
if(EXISTS ${TESSERA_SYSROOT_ROOT}/${TESSERA_BM_SYSROOT}/usr)
  # Its usr/: CMake's Generic platform searches <root>/lib and <root>/include only.
  list(APPEND CMAKE_FIND_ROOT_PATH ${TESSERA_SYSROOT_ROOT}/${TESSERA_BM_SYSROOT}/usr)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs `sh run-....sh [machine] <program.elf>`: the script boots QEMU on the ELF, returns the program's exit
# status, and kills a program that hangs (TESSERA_QEMU_TIMEOUT seconds, default 300) with exit 124.
set(CMAKE_CROSSCOMPILING_EMULATOR ${TESSERA_BM_EMULATOR})
