# SPDX-License-Identifier: BSD-3-Clause
# Shared part of the Linux cross toolchain files: the including file sets
#   TESSERA_CROSS_TRIPLE     the GNU triple of Debian's cross compilers (aarch64-linux-gnu, ...)
#   TESSERA_CROSS_FLAGS      target flags for C and C++ (ISA level, SIMD units)
#   TESSERA_CROSS_QEMU       the qemu-user program that runs the target's binaries
#   TESSERA_CROSS_QEMU_ARGS  extra qemu-user options (optional, e.g. -cpu)
# Test programs link statically: a static binary needs nothing from /usr/<triple> at run time, and a mixed
# loader and libc aborted under qemu-ppc64le. CMAKE_CROSSCOMPILING_EMULATOR makes plain `ctest` (and
# gtest_discover_tests) run every program under qemu.
set(CMAKE_SYSTEM_NAME Linux)

set(CMAKE_C_COMPILER ${TESSERA_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TESSERA_CROSS_TRIPLE}-g++)
set(CMAKE_C_FLAGS_INIT "${TESSERA_CROSS_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${TESSERA_CROSS_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_USER_MAKE_RULES_OVERRIDE ${CMAKE_CURRENT_LIST_DIR}/linux-static-libraries.cmake)

# Headers and libraries of the target, searched in this order: the codec libraries' sysroot that
# ci/cross-sysroots.sh makes (<TESSERA_SYSROOT_ROOT>/<triple>/usr/{include,lib/<triple>}: Debian's -dev packages
# of the target, or for ppc64 Debian's sources built), Debian's cross sysroot /usr/<triple> (libc), then the
# host's own paths, where multiarch packages (liblz4-dev:arm64 in /usr/lib/<triple>) are found through
# CMAKE_LIBRARY_ARCHITECTURE. src/codecs/libraries.cmake link-checks what it finds. Programs come from the host.
# The root is a cache variable (from the environment at the first configure): try_compile and later
# re-configures see the same one.
if(NOT DEFINED TESSERA_SYSROOT_ROOT)
  if(DEFINED ENV{TESSERA_SYSROOT_ROOT})
    set(TESSERA_SYSROOT_ROOT "$ENV{TESSERA_SYSROOT_ROOT}")
  else()
    set(TESSERA_SYSROOT_ROOT /opt/tessera-sysroots)
  endif()
endif()
set(TESSERA_SYSROOT_ROOT "${TESSERA_SYSROOT_ROOT}" CACHE PATH
    "Where ci/cross-sysroots.sh put the targets' codec libraries (one sysroot per GNU triple)")
set(CMAKE_FIND_ROOT_PATH "")
if(EXISTS ${TESSERA_SYSROOT_ROOT}/${TESSERA_CROSS_TRIPLE}/usr)
  list(APPEND CMAKE_FIND_ROOT_PATH ${TESSERA_SYSROOT_ROOT}/${TESSERA_CROSS_TRIPLE})
endif()
if(EXISTS /usr/${TESSERA_CROSS_TRIPLE})
  list(APPEND CMAKE_FIND_ROOT_PATH /usr/${TESSERA_CROSS_TRIPLE})
  set(_tessera_qemu_sysroot -L /usr/${TESSERA_CROSS_TRIPLE})
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

find_program(TESSERA_CROSS_QEMU_PATH ${TESSERA_CROSS_QEMU})
if(NOT TESSERA_CROSS_QEMU_PATH)
  message(FATAL_ERROR "${TESSERA_CROSS_QEMU} not found: install qemu-user (ci/install-deps.sh)")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR ${TESSERA_CROSS_QEMU_PATH} ${TESSERA_CROSS_QEMU_ARGS} ${_tessera_qemu_sysroot})
