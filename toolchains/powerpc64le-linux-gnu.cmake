# SPDX-License-Identifier: BSD-3-Clause
# 64-bit little-endian POWER8 Linux (Altivec + VSX), run under qemu-ppc64le.
set(CMAKE_SYSTEM_PROCESSOR ppc64le)
set(TESSERA_CROSS_TRIPLE powerpc64le-linux-gnu)
set(TESSERA_CROSS_FLAGS "-mcpu=power8 -maltivec -mvsx")
set(TESSERA_CROSS_QEMU qemu-ppc64le)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
