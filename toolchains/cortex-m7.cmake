# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal Cortex-M7 (ARMv7E-M, double-precision FPU), QEMU's MPS2-AN500:
# toolchains/cortex-m.cmake with TESSERA_CORTEX_M_CPU=m7: the flags, memory map and machine are there.
set(TESSERA_CORTEX_M_CPU m7)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
