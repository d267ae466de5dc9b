# SPDX-License-Identifier: BSD-3-Clause
# Runs doxygen with docs/Doxyfile, its output and warning log moved into OUTPUT_DIR, and fails when doxygen
# fails or warns, printing every warning (file:line: text).
#
#   cmake -DDOXYGEN=<doxygen or NOTFOUND> -DSOURCE_DIR=<repository root> -DOUTPUT_DIR=<dir> -P api_reference.cmake
cmake_minimum_required(VERSION 3.20)

if(NOT SOURCE_DIR OR NOT OUTPUT_DIR)
  message(FATAL_ERROR "api_reference.cmake: pass -DSOURCE_DIR=<repository root> -DOUTPUT_DIR=<dir>")
endif()
# Found at configure time, or installed since (a configure does not have to be repeated).
if(NOT DOXYGEN OR NOT EXISTS "${DOXYGEN}")
  unset(DOXYGEN)
  find_program(DOXYGEN doxygen)
endif()
if(NOT DOXYGEN)
  message(FATAL_ERROR "doxygen not found: install doxygen (Debian: apt-get install doxygen; ci/install-deps.sh "
                      "installs it) to build and check the API reference")
endif()

file(MAKE_DIRECTORY "${OUTPUT_DIR}")
set(log "${OUTPUT_DIR}/warnings.log")
file(REMOVE "${log}")
file(READ "${SOURCE_DIR}/docs/Doxyfile" config)
string(APPEND config "\n# Added by docs/api_reference.cmake\n"
       "OUTPUT_DIRECTORY = \"${OUTPUT_DIR}\"\n"
       "WARN_LOGFILE = \"${log}\"\n")
file(WRITE "${OUTPUT_DIR}/Doxyfile" "${config}")

execute_process(COMMAND "${DOXYGEN}" "${OUTPUT_DIR}/Doxyfile" WORKING_DIRECTORY "${SOURCE_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
set(warnings "")
if(EXISTS "${log}")
  file(READ "${log}" warnings)
  string(STRIP "${warnings}" warnings)
endif()
if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  set(count 0)
  if(NOT warnings STREQUAL "")
    string(REGEX MATCHALL "\n" newlines "${warnings}")
    list(LENGTH newlines count)
    math(EXPR count "${count} + 1")
  endif()
  # The warnings as doxygen wrote them (one per line), then the verdict.
  message(NOTICE "${warnings}\n${out}")
  message(FATAL_ERROR "API reference: doxygen exited with ${rc} and ${count} warning line(s) (above); every "
                      "public declaration needs a doc comment (/// before it, ///< after a field or enumerator)")
endif()
message(STATUS "API reference: no warnings; ${OUTPUT_DIR}/html/index.html")
