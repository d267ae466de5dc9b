# SPDX-License-Identifier: BSD-3-Clause
# Bare-metal Cortex-M33 (ARMv8-M Mainline, TrustZone, Secure state), QEMU's MPS2-AN505:
# toolchains/cortex-m.cmake with TESSERA_CORTEX_M_CPU=m33: the flags, memory map and machine are there.
set(TESSERA_CORTEX_M_CPU m33)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
