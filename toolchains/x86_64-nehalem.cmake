# SPDX-License-Identifier: BSD-3-Clause
# The host's own x86-64 compilers, but every program runs under `qemu-x86_64 -cpu Nehalem`: a CPU without AVX
# or AVX2, so run-time SIMD dispatch must pick the SSE2/scalar kernels. Declaring the system (Linux) makes
# CMake treat the build as cross-compiled, which is what makes ctest use the emulator.
# The code is built for the x86-64 baseline (SSE2): no -march=native. Note qemu's TCG still EXECUTES AVX
# instructions under -cpu Nehalem (only CPUID hides them), so the test tessera_core_no_avx (cmake/) disassembles
# the core to prove no AVX code exists outside the files meant for it.
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(TESSERA_CROSS_TRIPLE x86_64-linux-gnu)
set(TESSERA_CROSS_FLAGS "-march=x86-64 -mtune=generic")
set(TESSERA_CROSS_QEMU qemu-x86_64)
set(TESSERA_CROSS_QEMU_ARGS -cpu Nehalem)
set(TESSERA_CHECK_NO_AVX ON)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
