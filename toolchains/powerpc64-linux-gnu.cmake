# SPDX-License-Identifier: BSD-3-Clause
# 64-bit BIG-endian POWER8 Linux (Altivec + VSX), run under qemu-ppc64: the big-endian target of the matrix,
# so every byte-order assumption is exercised. qemu-ppc64's default CPU runs POWER8 code.
set(CMAKE_SYSTEM_PROCESSOR ppc64)
set(TESSERA_CROSS_TRIPLE powerpc64-linux-gnu)
set(TESSERA_CROSS_FLAGS "-mcpu=power8 -maltivec -mvsx")
set(TESSERA_CROSS_QEMU qemu-ppc64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
