# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal RISC-V RV32IMAC (ILP32, no FPU: the ESP32-C3 class of microcontrollers), Debian's riscv64-unknown-elf
# GCC (its rv32imac/ilp32 multilib) with picolibc as the C library, programs run on QEMU's `virt` board with
# semihosting (printf reaches the host, the exit status becomes QEMU's), as toolchains/cortex-m4.cmake does for
# the Cortex-M4. That compiler ships no C++ library: the core must build from the C library's headers alone.
# CMAKE_SYSTEM_NAME Generic makes the project's TESSERA_BAREMETAL ON (no GoogleTest, freestanding check on).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)

set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)

set(_tessera_rv32_flags "-march=rv32imac -mabi=ilp32 -mcmodel=medany --specs=picolibc.specs")
set(_tessera_rv32_size "-ffunction-sections -fdata-sections")
set(_tessera_rv32_cxx "-fno-exceptions -fno-rtti -fno-unwind-tables -fno-asynchronous-unwind-tables")
set(CMAKE_C_FLAGS_INIT "${_tessera_rv32_flags} ${_tessera_rv32_size}")
set(CMAKE_CXX_FLAGS_INIT "${_tessera_rv32_flags} ${_tessera_rv32_size} ${_tessera_rv32_cxx}")
set(CMAKE_ASM_FLAGS_INIT "${_tessera_rv32_flags}")
# No C++ library to link: C++ programs are linked by the C driver (g++ would ask for -lstdc++).
set(TESSERA_NO_CXX_LIBRARY ON)
set(CMAKE_CXX_LINK_EXECUTABLE
    "riscv64-unknown-elf-gcc <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")

# picolibc's semihosting crt0 and its linker script: QEMU virt's RAM starts at 0x80000000 (where -bios none
# jumps); code, data, heap and a 256 KiB stack in its first 16 MiB.
string(JOIN " " CMAKE_EXE_LINKER_FLAGS_INIT
  --crt0=semihost --oslib=semihost -Wl,--gc-sections
  -Wl,--defsym=__flash=0x80000000 -Wl,--defsym=__flash_size=0x00400000
  -Wl,--defsym=__ram=0x80400000 -Wl,--defsym=__ram_size=0x00c00000
  -Wl,--defsym=__stack_size=0x00040000)

# The codec libraries that ci/cross-sysroots.sh would build for this CPU (<root>/riscv32-unknown-elf/usr), else
# BloscLZ only.
if(NOT DEFINED TESSERA_SYSROOT_ROOT)
  if(DEFINED ENV{TESSERA_SYSROOT_ROOT})
    set(TESSERA_SYSROOT_ROOT "$ENV{TESSERA_SYSROOT_ROOT}")
  else()
    set(TESSERA_SYSROOT_ROOT /opt/tessera-sysroots)
  endif()
endif()
set(TESSERA_SYSROOT_ROOT "${TESSERA_SYSROOT_ROOT}" CACHE PATH
    "Where ci/cross-sysroots.sh put the targets' codec libraries (one sysroot per GNU triple)")
set(CMAKE_FIND_ROOT_PATH /usr/lib/picolibc/riscv64-unknown-elf)
if(EXISTS ${TESSERA_SYSROOT_ROOT}/riscv32-unknown-elf/usr)
  list(APPEND CMAKE_FIND_ROOT_PATH ${TESSERA_SYSROOT_ROOT}/riscv32-unknown-elf/usr)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs `sh run-riscv32-virt.sh <program.elf>`: QEMU's virt board on the ELF, the program's exit status, a
# hung program killed after TESSERA_QEMU_TIMEOUT seconds (default 300) with exit 124.
set(CMAKE_CROSSCOMPILING_EMULATOR sh ${CMAKE_CURRENT_LIST_DIR}/run-riscv32-virt.sh)
