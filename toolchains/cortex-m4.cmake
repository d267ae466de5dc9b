# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal Cortex-M4F (ARMv7E-M, single-precision FPU), QEMU's MPS2-AN386:
# toolchains/cortex-m.cmake with TESSERA_CORTEX_M_CPU=m4: the flags, memory map and machine are there.
set(TESSERA_CORTEX_M_CPU m4)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
