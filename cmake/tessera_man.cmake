# SPDX-License-Identifier: BSD-3-Clause
# Writes the tool's manual page from its own help text (cmake/TesseraPackage.cmake runs it after the tool is
# built), so the page says what `tessera --help` says and nothing else:
#   cmake -DTOOL=<tessera> -DOUT=<tessera.1> -DVERSION=<x.y.z> -P tessera_man.cmake
foreach(var TOOL OUT VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "tessera_man.cmake: ${var} is not set")
  endif()
endforeach()
execute_process(COMMAND "${TOOL}" --help RESULT_VARIABLE rc OUTPUT_VARIABLE help ERROR_VARIABLE errors)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "tessera_man.cmake: '${TOOL} --help' failed (${rc}): ${errors}")
endif()
# roff: a backslash is \e, and a line starting with . or ' is a request unless it starts with \&.
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(REGEX REPLACE "^usage:\n" "" help "${help}")
file(WRITE "${OUT}.tmp" ".\\\" SPDX-License-Identifier: BSD-3-Clause
.\\\" Generated from 'tessera --help' by cmake/tessera_man.cmake.
.TH TESSERA 1 \"\" \"tessera ${VERSION}\" \"User Commands\"
.SH NAME
tessera \\- inspect, extract, create, convert, check and compact Blosc2 B2ND arrays
.SH SYNOPSIS
.nf
${help}.fi
.SH EXIT STATUS
0 on success, 1 for bad data or I/O, 2 for a bad command line; every failure is one line on standard error.
.SH SEE ALSO
The tool's guide, docs/tool.md in Tessera's sources.
")
file(RENAME "${OUT}.tmp" "${OUT}")
