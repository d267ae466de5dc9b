# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal RISC-V RV32IMAC (ILP32, no FPU: the ESP32-C3 class of microcontrollers), Debian's riscv64-unknown-elf
# GCC (its rv32imac/ilp32 multilib) with picolibc as the C library, programs run on QEMU's `virt` board with
# semihosting; the bare-metal part shared with the Cortex-M files is toolchains/baremetal.cmake. That compiler
# ships no C++ library: the core must build from the C library's headers alone.
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(TESSERA_BM_PREFIX riscv64-unknown-elf)
set(TESSERA_BM_FLAGS "-march=rv32imac -mabi=ilp32 -mcmodel=medany --specs=picolibc.specs")
set(TESSERA_BM_PICOLIBC /usr/lib/picolibc/riscv64-unknown-elf)
# QEMU virt's RAM starts at 0x80000000 (where -bios none jumps); code, data, heap and stack in its first 16 MiB.
set(TESSERA_BM_FLASH 0x80000000)
set(TESSERA_BM_FLASH_SIZE 0x00400000)
set(TESSERA_BM_RAM 0x80400000)
set(TESSERA_BM_RAM_SIZE 0x00c00000)
# The codec libraries that ci/cross-sysroots.sh would build for this CPU (<root>/riscv32-unknown-elf/usr), else
# BloscLZ only.
set(TESSERA_BM_SYSROOT riscv32-unknown-elf)
# ctest runs `sh run-riscv32-virt.sh <program.elf>`: QEMU's virt board on the ELF, the program's exit status, a
# hung program killed after TESSERA_QEMU_TIMEOUT seconds (default 300) with exit 124.
set(TESSERA_BM_EMULATOR sh ${CMAKE_CURRENT_LIST_DIR}/run-riscv32-virt.sh)
include(${CMAKE_CURRENT_LIST_DIR}/baremetal.cmake)

# No C++ library to link: C++ programs are linked by the C driver (g++ would ask for -lstdc++).
set(TESSERA_NO_CXX_LIBRARY ON)
set(CMAKE_CXX_LINK_EXECUTABLE
    "riscv64-unknown-elf-gcc <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
