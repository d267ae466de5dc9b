# SPDX-License-Identifier: BSD-3-Clause
# Build-time proofs about the compiled core (see check_freestanding.cmake and check_no_avx.cmake).
#
# tessera_check_freestanding(<library target>)
#   After the library is built, its undefined symbols are checked against the freestanding allow-list: a
#   violation FAILS THE BUILD (the check is a rule of the default target). The same check is a ctest test, and
#   negative tests prove it catches malloc, operator new, printf, a static destructor (__cxa_atexit /
#   __aeabi_atexit) and an unknown external symbol, each in a probe library compiled like the core.
# tessera_check_no_avx(<library target>)
#   x86-64: a ctest test disassembling the library to prove no AVX outside the *avx* objects.

set(TESSERA_FREESTANDING_ALLOW "" CACHE STRING
    "Extra regular expression of undefined symbols the freestanding check accepts (alternatives joined by |)")

set(_tessera_checks_dir ${CMAKE_CURRENT_LIST_DIR})

# The run-time prefixes (__<prefix>_*) an instrumented build's objects call, joined by | (empty when none): one
# group in the allow list (CMake's regular expressions take few parentheses).
function(tessera_instrumentation_prefixes out)
  set(prefixes "")
  if(TESSERA_SANITIZER_LIST)
    list(APPEND prefixes asan ubsan lsan tsan sanitizer)
  endif()
  if(TESSERA_COVERAGE)
    list(APPEND prefixes gcov)
  endif()
  string(JOIN "|" joined ${prefixes})
  set(${out} "${joined}" PARENT_SCOPE)
endfunction()

function(_tessera_freestanding_allow out)
  set(patterns ${TESSERA_FREESTANDING_ALLOW})
  # The API of the codec libraries the build links on purpose (src/codecs/libraries.cmake): the core calls
  # them with its own allocator (LZ4 *_extState, ZSTD_create*_advanced, zlib's zalloc/zfree).
  if(TESSERA_WITH_LZ4)
    list(APPEND patterns "^LZ4_")
  endif()
  if(TESSERA_WITH_ZSTD)
    list(APPEND patterns "^ZSTD_")
  endif()
  if(TESSERA_WITH_ZLIB)
    list(APPEND patterns "^(deflate|inflate)(Init2?_|End|Reset|Bound|SetDictionary|Params)?$"
                         "^(zlibVersion|compressBound|crc32|adler32)$")
  endif()
  # ZFP's two entry points, in the hosted library tessera_zfp (src/codecs/zfp.hpp), which the core calls when
  # the build has libzfp: libzfp allocates with malloc, so neither is part of the core or of this check.
  if(TESSERA_WITH_ZFP)
    list(APPEND patterns "^_ZN7tessera6detail1[24]zfp_[a-z]*compressE")  # zfp_decompress, zfp_compress
  endif()
  # Instrumented code calls the sanitizers' and gcov's run times; they are not linked into freestanding builds.
  tessera_instrumentation_prefixes(prefixes)
  if(prefixes)
    list(APPEND patterns "^__(${prefixes})_")
  endif()
  # One regular expression (the script takes one): alternatives joined with |, each in parentheses only when it
  # has alternatives of its own (CMake's regular expressions take at most 9 groups).
  set(allow "")
  foreach(pattern IN LISTS patterns)
    if(allow)
      string(APPEND allow "|")
    endif()
    if(pattern MATCHES "[|]")
      string(APPEND allow "(${pattern})")
    else()
      string(APPEND allow "${pattern}")
    endif()
  endforeach()
  set(${out} "${allow}" PARENT_SCOPE)
endfunction()

function(tessera_check_freestanding target)
  if(NOT CMAKE_NM)
    message(FATAL_ERROR "TESSERA_CHECK_FREESTANDING needs the toolchain's nm (CMAKE_NM is not set)")
  endif()
  _tessera_freestanding_allow(allow)
  set(script ${_tessera_checks_dir}/check_freestanding.cmake)
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${target}.freestanding)
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBRARY=$<TARGET_FILE:${target}> -DALLOW=${allow}
            -DSTAMP=${stamp} -P ${script}
    DEPENDS ${target} ${script}
    COMMENT "Checking that ${target} references no hosted symbol (freestanding)"
    VERBATIM)
  add_custom_target(${target}_freestanding ALL DEPENDS ${stamp})

  if(TESSERA_BUILD_TESTS)
    add_test(NAME ${target}_freestanding
      COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBRARY=$<TARGET_FILE:${target}> -DALLOW=${allow} -P ${script})

    # Negative tests: probe libraries that each reference one hosted symbol, compiled with the core's flags.
    set(probe_new [[int* tessera_probe(int v) { return new int(v); }]])
    set(probe_malloc [[#include <stdlib.h>
void* tessera_probe(unsigned n) { return malloc(n); }]])
    set(probe_printf [[#include <stdio.h>
void tessera_probe(int v) { printf("%d\n", v); }]])
    set(probe_atexit [[struct tessera_probe_object { ~tessera_probe_object(); int v; };
tessera_probe_object& tessera_probe() { static tessera_probe_object o; return o; }]])
    set(probe_unknown [[extern "C" void tessera_probe_os_call();
void tessera_probe() { tessera_probe_os_call(); }]])
    set(expect_new "_Znw")
    set(expect_malloc "malloc")
    set(expect_printf "printf")
    set(expect_atexit "__cxa_atexit|__aeabi_atexit")
    set(expect_unknown "tessera_probe_os_call")
    foreach(probe new malloc printf atexit unknown)
      set(source ${CMAKE_CURRENT_BINARY_DIR}/freestanding_probes/${probe}.cpp)
      file(CONFIGURE OUTPUT ${source} CONTENT "// Generated: must FAIL the freestanding check.\n${probe_${probe}}\n")
      add_library(tessera_probe_${probe} STATIC ${source})
      target_compile_options(tessera_probe_${probe} PRIVATE
        $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti -fno-threadsafe-statics>)
      add_test(NAME ${target}_freestanding_rejects_${probe}
        COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBRARY=$<TARGET_FILE:tessera_probe_${probe}>
                -DALLOW=${allow} "-DEXPECT_VIOLATION=${expect_${probe}}" -P ${script})
    endforeach()
  endif()
endfunction()

function(tessera_check_no_avx target)
  if(NOT TESSERA_BUILD_TESTS)
    return()
  endif()
  if(NOT CMAKE_OBJDUMP)
    message(FATAL_ERROR "tessera_check_no_avx needs objdump (CMAKE_OBJDUMP is not set)")
  endif()
  set(script ${_tessera_checks_dir}/check_no_avx.cmake)
  add_test(NAME ${target}_no_avx
    COMMAND ${CMAKE_COMMAND} -DOBJDUMP=${CMAKE_OBJDUMP} -DLIBRARY=$<TARGET_FILE:${target}> -DEXCLUDE=avx -P ${script})

  # Negative test: AVX2 code in an object not named *avx* must be reported.
  set(source ${CMAKE_CURRENT_BINARY_DIR}/no_avx_probe/vector_probe.cpp)
  file(CONFIGURE OUTPUT ${source} CONTENT [[// Generated: AVX2 code that must FAIL the no-AVX check.
#include <immintrin.h>
void tessera_probe(int* data) {
  __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(data), _mm256_add_epi32(v, v));
}
]])
  add_library(tessera_probe_vector STATIC ${source})
  target_compile_options(tessera_probe_vector PRIVATE -mavx2)
  add_test(NAME ${target}_no_avx_rejects_avx2
    COMMAND ${CMAKE_COMMAND} -DOBJDUMP=${CMAKE_OBJDUMP} -DLIBRARY=$<TARGET_FILE:tessera_probe_vector> -DEXCLUDE=avx
            -P ${script})
  # Passes only when the check fails with its report (the message is printed only on that path).
  set_tests_properties(${target}_no_avx_rejects_avx2 PROPERTIES
    PASS_REGULAR_EXPRESSION "AVX instructions outside the AVX kernels.*vector_probe.*%ymm")
endfunction()
