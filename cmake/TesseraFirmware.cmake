# SPDX-License-Identifier: BSD-3-Clause
# Bare metal is small by default (included by the root CMakeLists.txt before the libraries are defined):
#   - Release (and RelWithDebInfo) compile with -Os instead of -O3/-O2 (MinSizeRel already does), for the
#     targets of this project only: the variables below are directory-scoped, so a parent project that takes
#     Tessera in with add_subdirectory keeps its own flags. Hosts keep their speed-optimized flags.
#   - every function and object in its own section (-ffunction-sections -fdata-sections), so that a link with
#     --gc-sections (the project's programs; users' programs through tessera::core's INTERFACE link option, see
#     TesseraPackage.cmake) keeps only what the program calls;
#   - C++ without exceptions, RTTI or unwind tables: a program compiled with exceptions pulls the unwinder in for
#     its destructor cleanups (__gxx_personality_v0, __aeabi_unwind_cpp_pr0 and __cxa_end_cleanup from
#     libstdc++/libgcc: ~30 KB with the emergency exception pool's malloc, abort and the type_info code).
# tessera_firmware_image(<executable>): on bare metal, links it with a map file (<image>.map next to it, read
# by ci/size-report.sh) and adds the ctest test <executable>_no_unwinder (cmake/check_no_unwinder.cmake).

option(TESSERA_OPTIMIZE_SIZE "Compile for size (-Os, function sections, --gc-sections) in Release builds"
       ${TESSERA_BAREMETAL})

if(TESSERA_OPTIMIZE_SIZE)
  foreach(_lang C CXX)
    foreach(_config RELEASE RELWITHDEBINFO)
      string(REGEX REPLACE "(^| )-O[0-9]( |$)" "\\1-Os\\2" CMAKE_${_lang}_FLAGS_${_config}
             "${CMAKE_${_lang}_FLAGS_${_config}}")
    endforeach()
  endforeach()
  # Unless the toolchain file already asks for them (toolchains/baremetal.cmake does).
  if(NOT CMAKE_CXX_FLAGS MATCHES "-ffunction-sections")
    add_compile_options(-ffunction-sections -fdata-sections)
  endif()
  if(NOT CMAKE_EXE_LINKER_FLAGS MATCHES "--gc-sections")
    add_link_options(LINKER:--gc-sections)
  endif()
endif()
# The stack: GCC writes each object's call graph with every function's frame size (-fcallgraph-info=su: a .ci
# file next to the object; it changes no code). ci/stack.py computes the deepest path per public entry point
# from them; the ctest test tessera_stack_budget (examples/CMakeLists.txt) holds the budgets.
option(TESSERA_STACK_USAGE "Write GCC's call graph with stack usage (.ci files) for ci/stack.py"
       ${TESSERA_BAREMETAL})
if(TESSERA_STACK_USAGE)
  add_compile_options(-fcallgraph-info=su)
endif()
if(TESSERA_BAREMETAL AND NOT CMAKE_CXX_FLAGS MATCHES "-fno-exceptions")
  add_compile_options(
    "$<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions;-fno-rtti;-fno-unwind-tables;-fno-asynchronous-unwind-tables>")
endif()

set(_tessera_firmware_dir ${CMAKE_CURRENT_LIST_DIR})

function(tessera_firmware_image target)
  if(NOT TESSERA_BAREMETAL)
    return()
  endif()
  get_target_property(dir ${target} BINARY_DIR)
  target_link_options(${target} PRIVATE LINKER:-Map=${dir}/${target}.map)
  if(TESSERA_STACK_USAGE)  # the relocations tell ci/stack.py which functions' addresses the image takes
    target_link_options(${target} PRIVATE LINKER:--emit-relocs)
  endif()
  set_property(TARGET ${target} APPEND PROPERTY ADDITIONAL_CLEAN_FILES ${dir}/${target}.map)
  if(TESSERA_BUILD_TESTS AND CMAKE_NM)
    add_test(NAME ${target}_no_unwinder
             COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DIMAGE=$<TARGET_FILE:${target}>
                     -P ${_tessera_firmware_dir}/check_no_unwinder.cmake)
  endif()
endfunction()

# tessera_image_symbols(<target> ABSENT <regex> [PRESENT <regex>]): a ctest test that the image links no symbol
# matching ABSENT (and some matching PRESENT): a firmware pays only for what it calls.
function(tessera_image_symbols target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "ABSENT;PRESENT" "")
  if(NOT TESSERA_BAREMETAL OR NOT TESSERA_BUILD_TESTS OR NOT CMAKE_NM OR NOT TARGET ${target})
    return()
  endif()
  add_test(NAME ${target}_links_only_what_it_asks
           COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DIMAGE=$<TARGET_FILE:${target}> "-DABSENT=${arg_ABSENT}"
                   "-DPRESENT=${arg_PRESENT}" -P ${_tessera_firmware_dir}/check_image_symbols.cmake)
endfunction()

# The proof that the check fails: an image compiled with exceptions (a throw and a catch) must be rejected.
# Not where the toolchain has no C++ library (TESSERA_NO_CXX_LIBRARY): no such image links there at all.
if(TESSERA_BAREMETAL AND TESSERA_BUILD_TESTS AND CMAKE_NM AND NOT TESSERA_NO_CXX_LIBRARY)
  set(_probe ${CMAKE_BINARY_DIR}/unwinder_probe/unwinder_probe.cpp)
  file(CONFIGURE OUTPUT ${_probe} CONTENT [[// Generated: an image with the unwinder, which must FAIL the no-unwinder check.
static int thrower(int v) { if (v > 0) throw v; return v; }
int main(int argc, char**) { try { return thrower(argc); } catch (int v) { return v - 1; } }
]])
  add_executable(tessera_unwinder_probe ${_probe})
  target_compile_options(tessera_unwinder_probe PRIVATE -fexceptions)
  add_test(NAME tessera_no_unwinder_rejects_exceptions
           COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DIMAGE=$<TARGET_FILE:tessera_unwinder_probe>
                   -DEXPECT_VIOLATION=ON -P ${_tessera_firmware_dir}/check_no_unwinder.cmake)
endif()

# tessera_test_memory(): in the calling directory (tests/, examples/), programs are linked and run with the
# toolchain's test board when it has one (TESSERA_BM_TEST_LINK_OPTIONS, TESSERA_BM_TEST_EMULATOR): the Cortex-M0
# toolchain describes the micro:bit's 16 KiB of RAM, which the test programs and most examples outgrow, and runs
# them on the same core with more memory (toolchains/cortex-m.cmake). Images meant for the part itself set the
# part's map back (a later --defsym wins) and its emulator (examples/CMakeLists.txt: part_image).
macro(tessera_test_memory)
  if(TESSERA_BAREMETAL AND TESSERA_BM_TEST_LINK_OPTIONS)
    add_link_options(${TESSERA_BM_TEST_LINK_OPTIONS})
    set(CMAKE_CROSSCOMPILING_EMULATOR ${TESSERA_BM_TEST_EMULATOR})
  endif()
endmacro()
