# SPDX-License-Identifier: BSD-3-Clause
# Read through CMAKE_USER_MAKE_RULES_OVERRIDE (set by linux-cross.cmake), i.e. after CMake's platform defaults,
# which would otherwise prefer shared objects: the Linux cross toolchains link every program statically, so
# find_library must return static archives (liblz4.a, not liblz4.so, which a -static link rejects).
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
