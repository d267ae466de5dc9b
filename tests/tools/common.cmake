# SPDX-License-Identifier: BSD-3-Clause
# Shared by the run_*.cmake scripts: run the tool or the helper (through the emulator when cross-compiling).
cmake_minimum_required(VERSION 3.20)
# Inputs: TOOL, AID, EMU (the emulator command, its words separated by '|'), WORK.
string(REPLACE "|" ";" EMU_CMD "${EMU}")

# tool(RESULT_PREFIX arg...): runs the tool; sets <prefix>_rc, <prefix>_out, <prefix>_err.
function(tool prefix)
  execute_process(COMMAND ${EMU_CMD} ${TOOL} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_out "${out}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
endfunction()

# tool_ok(arg...): runs the tool and fails the test unless it exits 0 with nothing on stderr.
function(tool_ok)
  tool(t ${ARGN})
  if(NOT t_rc STREQUAL "0" OR NOT t_err STREQUAL "")
    message(FATAL_ERROR "tessera ${ARGN}\n  exit: ${t_rc}\n  stderr: ${t_err}")
  endif()
  set(tool_out "${t_out}" PARENT_SCOPE)
endfunction()

# aid(arg...): runs the test helper; fails the test when it fails.
function(aid)
  execute_process(COMMAND ${EMU_CMD} ${AID} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "testaid ${ARGN}\n  exit: ${rc}\n  ${out}${err}")
  endif()
  set(aid_out "${out}" PARENT_SCOPE)
endfunction()

# same_files(a b what): fails the test when the files differ.
function(same_files a b what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${a} ${b} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(SIZE ${a} sa)
    file(SIZE ${b} sb)
    message(FATAL_ERROR "${what}: ${a} (${sa} bytes) differs from ${b} (${sb} bytes)")
  endif()
endfunction()

# same_as_reference(file reference what): fails the test unless file is the reference output `reference` (a .raw
# of tests/data): the same bytes, or, where tests/data keeps only reference.sha256, the same SHA-256.
function(same_as_reference file reference what)
  if(EXISTS ${reference})
    same_files(${file} ${reference} "${what}")
  elseif(EXISTS ${reference}.sha256)
    file(READ ${reference}.sha256 line)
    string(REGEX MATCH "^[0-9a-f]+" want "${line}")
    file(SHA256 ${file} got)
    if(NOT got STREQUAL want)
      file(SIZE ${file} size)
      message(FATAL_ERROR "${what}: ${file} (${size} bytes) has SHA-256 ${got}, ${reference} has ${want}")
    endif()
  else()
    message(FATAL_ERROR "${what}: neither ${reference} nor ${reference}.sha256 exists")
  endif()
endfunction()

# expect_one_line_failure(prefix regex what): the run <prefix> exited non-zero (not by a signal) with exactly one
# line on stderr, "tessera: ..." matching regex.
function(expect_one_line_failure prefix regex what)
  set(rc "${${prefix}_rc}")
  set(err "${${prefix}_err}")
  if(NOT rc MATCHES "^[0-9]+$" OR rc STREQUAL "0" OR rc GREATER 125)
    message(FATAL_ERROR "${what}: expected a failure exit status, got '${rc}'\n  stderr: ${err}")
  endif()
  if(NOT err MATCHES "^tessera: [^\n]*\n$")
    message(FATAL_ERROR "${what}: expected one line 'tessera: ...' on stderr, got:\n${err}")
  endif()
  if(NOT err MATCHES "${regex}")
    message(FATAL_ERROR "${what}: stderr does not match '${regex}':\n${err}")
  endif()
endfunction()
