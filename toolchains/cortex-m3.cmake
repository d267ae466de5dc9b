# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal Cortex-M3 (ARMv7-M, no FPU), QEMU's MPS2-AN385:
# toolchains/cortex-m.cmake with TESSERA_CORTEX_M_CPU=m3: the flags, memory map and machine are there.
set(TESSERA_CORTEX_M_CPU m3)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
