# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal Cortex-M0 (ARMv6-M, no FPU), QEMU's micro:bit:
# toolchains/cortex-m.cmake with TESSERA_CORTEX_M_CPU=m0: the flags, memory map and machine are there.
set(TESSERA_CORTEX_M_CPU m0)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
