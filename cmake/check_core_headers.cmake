# SPDX-License-Identifier: BSD-3-Clause
# The core needs only a C library: no file under include/ and src/ includes a C++ standard library header (what
# the core used from them is in include/tessera/cxx.hpp, from the compiler alone). Angle-bracket includes must
# name a .h file: the C library's, the compiler's (intrinsics) or a codec library's.
#
#   cmake -DROOT=<source dir> -P check_core_headers.cmake
#   cmake -DROOT=<dir> -DEXPECT_VIOLATION=ON -P check_core_headers.cmake   succeeds only if the check FAILS on ROOT
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "check_core_headers.cmake: pass -DROOT=<source dir>")
endif()

if(EXPECT_VIOLATION)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DROOT=${ROOT}" -P "${CMAKE_CURRENT_LIST_FILE}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc EQUAL 0 OR NOT _out MATCHES "includes a C\\+\\+ library header")
    message(FATAL_ERROR "negative header check: the check did not fail on ${ROOT} (${_rc}):\n${_out}")
  endif()
  message("negative header check OK: ${_out}")
  return()
endif()

file(GLOB_RECURSE _files "${ROOT}/include/*.h" "${ROOT}/include/*.hpp" "${ROOT}/src/*.h" "${ROOT}/src/*.hpp"
     "${ROOT}/src/*.cpp")
set(_bad "")
foreach(_f IN LISTS _files)
  file(STRINGS "${_f}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*<")
  foreach(_l IN LISTS _lines)
    if(NOT _l MATCHES "<[^>]+\\.h>")
      file(RELATIVE_PATH _rel "${ROOT}" "${_f}")
      string(APPEND _bad "\n  ${_rel}: ${_l}")
    endif()
  endforeach()
endforeach()
list(LENGTH _files _n)
if(_bad)
  message(FATAL_ERROR "tessera core header check FAILED: the core includes a C++ library header:${_bad}")
endif()
message("tessera core header check: ${_n} files include C headers only")
