# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal RISC-V RV64IMAC (LP64, no FPU: the SiFive FU540's E51 core), Debian's riscv64-unknown-elf GCC (its
# rv64imac/lp64 multilib) with picolibc, programs run on QEMU's `sifive_u` board with semihosting. The board of
# the SPI NOR driver's tests: its SPI controller QSPI0 (0x10040000) has an ISSI IS25WP256 flash (QEMU's m25p80
# model) backed by `-drive if=mtd` (examples/pflash_board_spinor.hpp). Otherwise as
# toolchains/riscv32-baremetal.cmake: no C++ library, BloscLZ only, TESSERA_BAREMETAL ON.
# Every hart starts the image: toolchains/riscv64-sifive-u-start.S, assembled here and linked ahead of picolibc's
# crt0 (so it is the image's first instruction, at RAM's base), parks all but hart 0.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv64)

set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)

set(_tessera_rv64_arch -march=rv64imac -mabi=lp64)
string(JOIN " " _tessera_rv64_flags ${_tessera_rv64_arch} -mcmodel=medany --specs=picolibc.specs)
set(_tessera_rv64_size "-ffunction-sections -fdata-sections")
set(_tessera_rv64_cxx "-fno-exceptions -fno-rtti -fno-unwind-tables -fno-asynchronous-unwind-tables")
set(CMAKE_C_FLAGS_INIT "${_tessera_rv64_flags} ${_tessera_rv64_size}")
set(CMAKE_CXX_FLAGS_INIT "${_tessera_rv64_flags} ${_tessera_rv64_size} ${_tessera_rv64_cxx}")
set(CMAKE_ASM_FLAGS_INIT "${_tessera_rv64_flags}")
set(TESSERA_NO_CXX_LIBRARY ON)

# The start: the parking code, then picolibc's semihosting crt0 (-nostartfiles: the driver would put crt0 first).
# Programs are linked by the C driver (there is no C++ library for g++ to add).
set(_tessera_start ${CMAKE_BINARY_DIR}/tessera-sifive-u-start.o)
execute_process(COMMAND riscv64-unknown-elf-gcc ${_tessera_rv64_arch} -c
                        ${CMAKE_CURRENT_LIST_DIR}/riscv64-sifive-u-start.S -o ${_tessera_start}
                RESULT_VARIABLE _tessera_status)
execute_process(COMMAND riscv64-unknown-elf-gcc ${_tessera_rv64_arch} -print-multi-directory
                OUTPUT_VARIABLE _tessera_multi OUTPUT_STRIP_TRAILING_WHITESPACE)
set(_tessera_crt0 /usr/lib/picolibc/riscv64-unknown-elf/lib/${_tessera_multi}/crt0-semihost.o)
if(NOT _tessera_status EQUAL 0 OR NOT EXISTS ${_tessera_crt0})
  message(FATAL_ERROR "riscv64-baremetal-sifive-u: cannot assemble the start code or find ${_tessera_crt0}")
endif()
foreach(_lang C CXX)
  set(CMAKE_${_lang}_LINK_EXECUTABLE "riscv64-unknown-elf-gcc <FLAGS> <CMAKE_${_lang}_LINK_FLAGS> <LINK_FLAGS> \
-nostartfiles ${_tessera_start} ${_tessera_crt0} <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
endforeach()

# RAM at 0x80000000 (where the boot ROM sends every hart with -bios none): code, data, heap and a 256 KiB stack
# in its first 16 MiB, as on the RV32 `virt` board.
string(JOIN " " CMAKE_EXE_LINKER_FLAGS_INIT
  --oslib=semihost -Wl,--gc-sections -Wl,-e,__tessera_sifive_u_start
  -Wl,--defsym=__flash=0x80000000 -Wl,--defsym=__flash_size=0x00400000
  -Wl,--defsym=__ram=0x80400000 -Wl,--defsym=__ram_size=0x00c00000
  -Wl,--defsym=__stack_size=0x00040000)

set(CMAKE_FIND_ROOT_PATH /usr/lib/picolibc/riscv64-unknown-elf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs `sh run-riscv64-sifive-u.sh <program.elf>`: as run-riscv32-virt.sh, on the sifive_u board.
set(CMAKE_CROSSCOMPILING_EMULATOR sh ${CMAKE_CURRENT_LIST_DIR}/run-riscv64-sifive-u.sh)
