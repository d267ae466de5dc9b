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

# Headers and libraries of the target: Debian's cross sysroot, then multiarch packages (e.g. liblz4-dev:arm64
# in /usr/lib/<triple>, found through CMAKE_LIBRARY_ARCHITECTURE). Programs always come from the host.
if(EXISTS /usr/${TESSERA_CROSS_TRIPLE})
  set(CMAKE_FIND_ROOT_PATH /usr/${TESSERA_CROSS_TRIPLE})
  set(_tessera_qemu_sysroot -L /usr/${TESSERA_CROSS_TRIPLE})
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

find_program(TESSERA_CROSS_QEMU_PATH ${TESSERA_CROSS_QEMU})
if(NOT TESSERA_CROSS_QEMU_PATH)
  message(FATAL_ERROR "${TESSERA_CROSS_QEMU} not found: install qemu-user (ci/install-deps.sh)")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR ${TESSERA_CROSS_QEMU_PATH} ${TESSERA_CROSS_QEMU_ARGS} ${_tessera_qemu_sysroot})
