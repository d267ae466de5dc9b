# SPDX-License-Identifier: BSD-3-Clause
# Fails when a linked bare-metal image carries the C++ exception machinery: the unwinder (_Unwind_*, ARM EHABI
# personality routines __aeabi_unwind_cpp_pr*, __gnu_unwind_*), libstdc++'s personality and catch/throw support
# (__gxx_personality_v0, __cxa_begin_catch, __cxa_end_cleanup, __cxa_throw, __cxa_allocate_exception...) or
# std::terminate. A firmware compiled without exceptions (cmake/TesseraFirmware.cmake) links none of them.
#
#   cmake -DNM=<target nm> -DIMAGE=<program.elf> -P check_no_unwinder.cmake
#   cmake ... -DEXPECT_VIOLATION=ON -P check_no_unwinder.cmake
#         the negative test: succeeds only when the check itself fails on IMAGE, naming an unwinder symbol.
cmake_minimum_required(VERSION 3.20)

if(NOT NM OR NOT IMAGE)
  message(FATAL_ERROR "check_no_unwinder.cmake: pass -DNM=<nm> -DIMAGE=<program.elf>")
endif()
if(NOT EXISTS "${IMAGE}")
  message(FATAL_ERROR "check_no_unwinder.cmake: ${IMAGE} does not exist")
endif()

if(EXPECT_VIOLATION)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DNM=${NM}" "-DIMAGE=${IMAGE}" -P "${CMAKE_CURRENT_LIST_FILE}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  # CMake wraps a FATAL_ERROR's text to the terminal's width, so the phrase may break anywhere between words
  # (a longer build path moves the break): match words separated by any run of blanks.
  if(rc EQUAL 0 OR NOT out MATCHES "links[ \n]+the[ \n]+C\\+\\+[ \n]+unwinder" OR
     NOT out MATCHES "\n +(_Unwind_|__gxx_personality|__cxa_|__aeabi_unwind)")
    message(FATAL_ERROR "negative no-unwinder check: the check did not fail naming an unwinder symbol on ${IMAGE} "
                        "(exit ${rc}):\n${out}")
  endif()
  message("negative no-unwinder check OK: the check fails on ${IMAGE}:\n${out}")
  return()
endif()

execute_process(COMMAND "${NM}" -P "${IMAGE}" RESULT_VARIABLE rc OUTPUT_VARIABLE symbols ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_no_unwinder.cmake: ${NM} failed on ${IMAGE} (${rc}): ${err}")
endif()
if(NOT symbols MATCHES "(^|\n)main ")
  message(FATAL_ERROR "check_no_unwinder.cmake: ${NM} lists no `main` in ${IMAGE}: not a program, or stripped?")
endif()
# "<symbol> <type> <value> [<size>]" lines; the symbols of the exception machinery, mangled where C++.
set(pattern "(^|\n)((_Unwind_|__gnu_unwind_|__aeabi_unwind_cpp_pr|__gxx_personality_|__cxa_(begin|end)_catch|__cxa_end_cleanup|__cxa_throw|__cxa_rethrow|__cxa_allocate_exception|__cxa_call_unexpected|_ZSt9terminatev|_ZN10__cxxabiv1[0-9]+__terminate)[^ \n]*) ")
string(REGEX MATCHALL "${pattern}" found "${symbols}")
if(found)
  list(TRANSFORM found REPLACE "^\n?([^ ]+) $" "\\1")
  list(REMOVE_DUPLICATES found)
  list(LENGTH found count)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR "${IMAGE} links the C++ unwinder (${count} symbol(s)):\n  ${text}\n"
                      "Compile every C++ object of a bare-metal image with -fno-exceptions -fno-unwind-tables "
                      "(cmake/TesseraFirmware.cmake) and see the link map's archive members for who pulls it in.")
endif()
message("no unwinder in ${IMAGE}")
