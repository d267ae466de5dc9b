# SPDX-License-Identifier: BSD-3-Clause
# RISC-V 64-bit Linux (RV64GC, the Debian riscv64 baseline), run under qemu-riscv64.
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(TESSERA_CROSS_TRIPLE riscv64-linux-gnu)
set(TESSERA_CROSS_FLAGS "")
set(TESSERA_CROSS_QEMU qemu-riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
