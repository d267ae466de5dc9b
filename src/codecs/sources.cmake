# SPDX-License-Identifier: BSD-3-Clause
# Codecs: BloscLZ, written in-house, and the in-house LZ4 block reader (the walk everywhere; on x86-64 hosts an
# AVX2 decoder for shuffled blocks, compiled with its own flags and chosen at run time). The wrappers of the
# codec libraries live in libraries.cmake.
tessera_core_sources(blosclz.cpp lz4_block.cpp)
# NDLZ (c-blosc2's registered codec 32), in-house, one object file per direction (linked on demand on bare metal).
tessera_core_sources(ndlz_decode.cpp ndlz_encode.cpp)
string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" _codecs_cpu)
if(TESSERA_SIMD AND TESSERA_SIMD_AVX2 AND NOT TESSERA_BAREMETAL AND _codecs_cpu MATCHES "^(x86_64|amd64)$")
  tessera_core_sources(lz4_block_avx2.cpp)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/lz4_block_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2")
  target_compile_definitions(tessera_core PRIVATE TESSERA_HAVE_LZ4_AVX2=1)
endif()
