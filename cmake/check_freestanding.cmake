# SPDX-License-Identifier: BSD-3-Clause
# Freestanding proof: fails when a library references a symbol that a bare-metal program without a hosted
# runtime would have to provide (malloc, operator new, __cxa_*, _Unwind_*, printf, abort, __tls_get_addr...).
#
#   cmake -DNM=<target nm> -DLIBRARY=<libtessera_core.a> [-DALLOW=<regex>] [-DSTAMP=<file>]
#         -P check_freestanding.cmake
#   cmake ... -DEXPECT_VIOLATION=<symbol regex> -P check_freestanding.cmake
#         the negative test: runs the check itself in a child cmake and succeeds only if that check FAILED
#         (non-zero exit) naming a symbol that matches the regex.
#
# An ALLOW-list, not a deny-list: every undefined symbol that the library's own objects do not define must
# match one of the patterns below (or an extra pattern in ALLOW), so an unforeseen dependency fails too.
# Allowed: the four memory functions <cstring> may be used for, and the compiler's own helpers from libgcc
# (integer/float arithmetic, __aeabi_* run-time ABI, AArch64 outline atomics, POWER register save/restore,
# x86 CPU model for __builtin_cpu_supports) and the linker-defined GOT/TOC anchors.
# On success, writes STAMP (when given) so a build rule can depend on it.
cmake_minimum_required(VERSION 3.20)

if(NOT NM OR NOT LIBRARY)
  message(FATAL_ERROR "check_freestanding.cmake: pass -DNM=<nm> -DLIBRARY=<archive or object>")
endif()
if(NOT EXISTS "${LIBRARY}")
  message(FATAL_ERROR "check_freestanding.cmake: ${LIBRARY} does not exist")
endif()

if(DEFINED EXPECT_VIOLATION)
  execute_process(COMMAND "${CMAKE_COMMAND}" "-DNM=${NM}" "-DLIBRARY=${LIBRARY}" "-DALLOW=${ALLOW}"
                          -P "${CMAKE_CURRENT_LIST_FILE}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc EQUAL 0)
    message(FATAL_ERROR "negative freestanding check: the check PASSED on ${LIBRARY}, which references "
                        "${EXPECT_VIOLATION}; it must fail:\n${_out}")
  endif()
  if(NOT _out MATCHES "tessera freestanding check FAILED" OR NOT _out MATCHES "\n +(${EXPECT_VIOLATION})[^\n]* +\\(referenced by")
    message(FATAL_ERROR "negative freestanding check: the check failed (${_rc}) but did not name a symbol "
                        "matching '${EXPECT_VIOLATION}':\n${_out}")
  endif()
  message("negative freestanding check OK: the check fails the build (exit ${_rc}) and names ${EXPECT_VIOLATION}:\n${_out}")
  return()
endif()

set(_allowed
  "^(memcpy|memset|memmove|memcmp)$"
  # ARM run-time ABI helpers (libgcc; the __aeabi_mem* ones are memcpy/memset/memmove under another name).
  # Not the hosted parts of that ABI (__aeabi_atexit, __aeabi_errno_addr, __aeabi_unwind_cpp_pr0...).
  "^__aeabi_(u?idiv|u?idivmod|u?ldivmod|lmul|llsl|llsr|lasr|u?lcmp|idiv0|ldiv0)$"
  "^__aeabi_[df](add|sub|rsub|mul|div|neg|cmpeq|cmplt|cmple|cmpge|cmpgt|cmpun)$"
  "^__aeabi_c[df]r?cmp(eq|le)$"
  "^__aeabi_(d|f|h|i|ui|l|ul)2(iz|uiz|lz|ulz|d|f|h)$"
  "^__aeabi_mem(cpy|move|set|clr)[48]?$"
  # libgcc integer and floating-point helpers: __udivdi3, __divti3, __clzsi2, __popcountdi2, __mulodi4,
  # __adddf3, __extendsfdf2, __muldc3...
  "^__[a-z]+(qi|hi|si|di|ti|sf|df|tf|xf|kf|hf|bf|sc|dc|tc|xc)[1-5]$"
  # libgcc conversions: __floatsidf, __floatundisf, __fixdfsi, __fixunssfdi...
  "^__(float|floatun|fix|fixuns)(si|di|ti|sf|df|tf|xf|kf|hf|bf)(si|di|ti|sf|df|tf|xf|kf|hf|bf)$"
  # x86 __builtin_cpu_supports / __builtin_cpu_init (libgcc).
  "^__(cpu_model|cpu_features2|cpu_indicator_init)$"
  # AArch64 outline atomics (libgcc): __aarch64_ldadd4_acq_rel, __aarch64_cas8_relax...
  "^__aarch64_(cas|swp|ldadd|ldclr|ldeor|ldset)(1|2|4|8|16)_(relax|acq|rel|acq_rel|sync)$"
  # POWER out-of-line register save/restore (libgcc, -Os).
  "^_(save|rest)(gpr[01]?|fpr|vr)_[0-9]+(_x)?$"
  # Anchors the static linker defines.
  "^(_GLOBAL_OFFSET_TABLE_|\\.TOC\\.)$")
# ALLOW: one more regular expression (alternatives joined with |), e.g. the sanitizers' run-time entry points.
if(ALLOW)
  list(APPEND _allowed "${ALLOW}")
endif()

execute_process(COMMAND "${NM}" -P -g -A "${LIBRARY}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _raw ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "check_freestanding.cmake: ${NM} failed on ${LIBRARY} (${_rc}): ${_err}")
endif()
# The same listing demangled, line for line, only to name offenders readably.
execute_process(COMMAND "${NM}" -P -g -A -C "${LIBRARY}" RESULT_VARIABLE _rc_c OUTPUT_VARIABLE _raw_c ERROR_QUIET)

# One list element per line: neutralise the characters CMake's list syntax interprets.
function(_split_lines text out)
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\\" "/" text "${text}")
  string(REGEX REPLACE "\n+$" "" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
_split_lines("${_raw}" _lines)
_split_lines("${_raw_c}" _lines_c)
list(LENGTH _lines _n)
list(LENGTH _lines_c _n_c)

set(_defined "")
set(_undefined "")
set(_parsed 0)
set(_index 0)
foreach(_line IN LISTS _lines)
  # "<archive>(<member>): <symbol> <type> [<value> <size>]"
  if(_line MATCHES "^(.*): ([^ ]+) ([A-Za-z?])( .*)?$")
    set(_file "${CMAKE_MATCH_1}")
    set(_sym "${CMAKE_MATCH_2}")
    set(_type "${CMAKE_MATCH_3}")
    math(EXPR _parsed "${_parsed} + 1")
    if(_type MATCHES "^[Uwv]$")
      list(APPEND _undefined "${_sym}")
      # Where it is referenced, and its demangled name, for the report.
      if(_file MATCHES "\\(([^()]*)\\)$")
        set(_file "${CMAKE_MATCH_1}")
      else()
        get_filename_component(_file "${_file}" NAME)
      endif()
      string(MAKE_C_IDENTIFIER "${_sym}" _key)
      list(APPEND _where_${_key} "${_file}")
      if(_n EQUAL _n_c AND NOT DEFINED _pretty_${_key})
        list(GET _lines_c ${_index} _line_c)
        if(_line_c MATCHES "^.*\\): (.+) [Uwv] *$" OR _line_c MATCHES "^[^:]*: (.+) [Uwv] *$")
          set(_pretty_${_key} "${CMAKE_MATCH_1}")
        endif()
      endif()
    else()
      list(APPEND _defined "${_sym}")
    endif()
  endif()
  math(EXPR _index "${_index} + 1")
endforeach()
if(_parsed EQUAL 0)
  message(FATAL_ERROR "check_freestanding.cmake: ${NM} listed no symbols for ${LIBRARY}: wrong nm or empty library?")
endif()

list(REMOVE_DUPLICATES _undefined)
list(SORT _undefined)
set(_external "")
set(_violations "")
foreach(_sym IN LISTS _undefined)
  if(_sym IN_LIST _defined)
    continue()  # provided by another object of the same library
  endif()
  list(APPEND _external "${_sym}")
  set(_ok FALSE)
  foreach(_re IN LISTS _allowed)
    if(_sym MATCHES "${_re}")
      set(_ok TRUE)
      break()
    endif()
  endforeach()
  if(NOT _ok)
    list(APPEND _violations "${_sym}")
  endif()
endforeach()

get_filename_component(_libname "${LIBRARY}" NAME)
if(_violations)
  list(LENGTH _violations _count)
  set(_report "")
  foreach(_sym IN LISTS _violations)
    string(MAKE_C_IDENTIFIER "${_sym}" _key)
    set(_where "${_where_${_key}}")
    list(REMOVE_DUPLICATES _where)
    string(REPLACE ";" ", " _where "${_where}")
    set(_pretty "")
    if(DEFINED _pretty_${_key} AND NOT _pretty_${_key} STREQUAL _sym)
      set(_pretty " = ${_pretty_${_key}}")
    endif()
    string(APPEND _report "\n  ${_sym}${_pretty}   (referenced by ${_where})")
  endforeach()
  message(FATAL_ERROR
    "tessera freestanding check FAILED: ${_libname} references ${_count} symbol(s) a freestanding program does "
    "not provide:${_report}\n"
    "The core may only call memcpy/memset/memmove/memcmp and the compiler's helpers; allocate through "
    "tessera::allocator, report errors as values (see cmake/check_freestanding.cmake).")
endif()

list(LENGTH _external _n_external)
string(REPLACE ";" " " _external_text "${_external}")
message("tessera freestanding check passed: ${_libname}: ${_n_external} external symbol(s), all allowed: ${_external_text}")
if(STAMP)
  file(WRITE "${STAMP}" "${_external_text}\n")
endif()
