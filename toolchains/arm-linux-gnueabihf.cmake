# SPDX-License-Identifier: BSD-3-Clause
# 32-bit ARMv7-A Linux, hard-float, with NEON (-mfpu=neon makes NEON the baseline), run under qemu-arm.
# _FILE_OFFSET_BITS=64: under qemu-arm on a 64-bit host, readdir() of 32-bit file offsets fails with EOVERFLOW
# (directory offsets are 64-bit hashes), so the golden-file tests that list folders found nothing.
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(TESSERA_CROSS_TRIPLE arm-linux-gnueabihf)
set(TESSERA_CROSS_FLAGS "-march=armv7-a -mfpu=neon -mfloat-abi=hard -D_FILE_OFFSET_BITS=64")
set(TESSERA_CROSS_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
