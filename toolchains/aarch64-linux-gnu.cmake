# SPDX-License-Identifier: BSD-3-Clause
# AArch64 Linux (NEON is part of the baseline), run under qemu-aarch64.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(TESSERA_CROSS_TRIPLE aarch64-linux-gnu)
set(TESSERA_CROSS_FLAGS "")
set(TESSERA_CROSS_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
