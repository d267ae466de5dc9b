# SPDX-License-Identifier: BSD-3-Clause
# Layout: chunk and block geometry, slice planning, N-d strided copies.
# CMAKE_CURRENT_LIST_DIR is this file's folder (src/layout), wherever the fragment is included from.
target_sources(tessera_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/slice_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nd_copy.cpp)
# Runs of 33 - 128 bytes in AVX2 moves where the CPU has them (the same switches as the shuffle's AVX2 kernels).
string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" _layout_cpu)
if(TESSERA_SIMD AND TESSERA_SIMD_AVX2 AND _layout_cpu MATCHES "^(x86_64|amd64|i.86|x86)$")
  target_sources(tessera_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/nd_copy_avx2.cpp)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/nd_copy_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2")
endif()
