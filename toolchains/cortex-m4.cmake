# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal ARM Cortex-M4F (ARMv7E-M, single-precision FPU, no OS), picolibc as the C library, programs run
# on QEMU's MPS2-AN386 board with semihosting (printf reaches the host, exit status becomes QEMU's).
# CMAKE_SYSTEM_NAME Generic makes the project's TESSERA_BAREMETAL ON (no GoogleTest, freestanding check on).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

set(_tessera_m4_flags "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 --specs=picolibcpp.specs")
# Firmware pays for what it calls: every function and object in its own section (the links below drop the
# unused ones), and C++ without exceptions, RTTI and unwind tables, so that no program built with this file
# (Tessera's and its users') links the unwinder. Tessera adds the same for any bare-metal toolchain, and -Os
# to its Release builds (cmake/TesseraFirmware.cmake).
set(_tessera_m4_size "-ffunction-sections -fdata-sections")
set(_tessera_m4_cxx "-fno-exceptions -fno-rtti -fno-unwind-tables -fno-asynchronous-unwind-tables")
set(CMAKE_C_FLAGS_INIT "${_tessera_m4_flags} ${_tessera_m4_size}")
set(CMAKE_CXX_FLAGS_INIT "${_tessera_m4_flags} ${_tessera_m4_size} ${_tessera_m4_cxx}")
set(CMAKE_ASM_FLAGS_INIT "${_tessera_m4_flags}")

# picolibc's semihosting crt0 brings the vector table and startup, its linker script (picolibcpp.ld) places
# the program from the --defsym values: code in the board's 4 MiB SSRAM1 at 0x0 (where the Cortex-M4 reads its
# reset vector), data, heap and stack in the 16 MiB PSRAM at 0x21000000. The stack (picolibc's default is
# 2 KiB) gets 256 KiB at the top of RAM; everything between .bss and the stack is malloc's heap.
string(JOIN " " CMAKE_EXE_LINKER_FLAGS_INIT
  --crt0=semihost --oslib=semihost -Wl,--gc-sections
  -Wl,--defsym=__flash=0x00000000 -Wl,--defsym=__flash_size=0x00400000
  -Wl,--defsym=__ram=0x21000000 -Wl,--defsym=__ram_size=0x01000000
  -Wl,--defsym=__stack_size=0x00040000)

# The codec libraries (LZ4, Zstd) that ci/cross-sysroots.sh builds for this CPU and ABI, without a heap:
# <TESSERA_SYSROOT_ROOT>/arm-none-eabi/usr/{include,lib}; src/codecs/libraries.cmake finds them there and turns
# TESSERA_WITH_LZ4/ZSTD on. Without that sysroot the build has BloscLZ only.
if(NOT DEFINED TESSERA_SYSROOT_ROOT)
  if(DEFINED ENV{TESSERA_SYSROOT_ROOT})
    set(TESSERA_SYSROOT_ROOT "$ENV{TESSERA_SYSROOT_ROOT}")
  else()
    set(TESSERA_SYSROOT_ROOT /opt/tessera-sysroots)
  endif()
endif()
set(TESSERA_SYSROOT_ROOT "${TESSERA_SYSROOT_ROOT}" CACHE PATH
    "Where ci/cross-sysroots.sh put the targets' codec libraries (one sysroot per GNU triple)")
set(CMAKE_FIND_ROOT_PATH /usr/lib/picolibc/arm-none-eabi /usr/lib/arm-none-eabi)
if(EXISTS ${TESSERA_SYSROOT_ROOT}/arm-none-eabi/usr)
  # Its usr/: CMake's Generic platform searches <root>/lib and <root>/include only.
  list(APPEND CMAKE_FIND_ROOT_PATH ${TESSERA_SYSROOT_ROOT}/arm-none-eabi/usr)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs `sh run-mps2-an386.sh <program.elf>`: the script boots QEMU on the ELF, returns the program's
# exit status, and kills a program that hangs (TESSERA_QEMU_TIMEOUT seconds, default 300) with exit 124.
set(CMAKE_CROSSCOMPILING_EMULATOR sh ${CMAKE_CURRENT_LIST_DIR}/run-mps2-an386.sh)
