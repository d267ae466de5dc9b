# SPDX-License-Identifier: BSD-3-Clause
# ctest driver of example_firmware_logger: runs the logger (through the emulator: qemu-user, or QEMU system with
# semihosting on the Cortex-M4, where the image reaches the host file through semihosting), checks that the image
# it wrote starts as a Blosc2 cframe, then, when a tool is given, that `tessera info` reads the expected shape and
# dtype from it.
# Inputs: LOGGER, EMU (emulator command, words separated by '|'; may be empty), OUT (the image's path),
# SHAPE ("N,3"), DTYPE ("<i2"), optional TOOL and TOOL_EMU (the tool's emulator, same form as EMU), optional CODEC
# (the codec `tessera info` must report, e.g. lz4).
# The logger's array grows until a sensor event ends, so its row count is known only from its output ("logged N
# samples"): SHAPE's first extent is a placeholder that this script replaces with that count.
cmake_minimum_required(VERSION 3.20)
string(REPLACE "|" ";" emu "${EMU}")
string(REPLACE "|" ";" tool_emu "${TOOL_EMU}")

file(REMOVE "${OUT}")
execute_process(COMMAND ${emu} ${LOGGER} -o ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "firmware_logger failed (exit ${rc})")
endif()
if(NOT out MATCHES "logged ([0-9]+) samples")
  message(FATAL_ERROR "firmware_logger did not say how many samples it logged")
endif()
set(rows ${CMAKE_MATCH_1})
string(REGEX REPLACE "^[^,]+" "${rows}" SHAPE "${SHAPE}")

if(NOT EXISTS "${OUT}")
  message(FATAL_ERROR "firmware_logger did not write ${OUT}")
endif()
file(SIZE "${OUT}" size)
if(size LESS 64)
  message(FATAL_ERROR "${OUT}: ${size} bytes, too small for a cframe")
endif()
# A cframe header opens with msgpack fixarray(14) (0x9e), str(8) (0xa8) and the magic "b2frame\0"
# (README_CFRAME_FORMAT.rst), then int32 (0xd2) header_len and uint64 (0xcf) frame_len.
file(READ "${OUT}" head LIMIT 24 HEX)
string(REPEAT "[0-9a-f]" 8 hex4)  # CMake regexes have no {n}
if(NOT head MATCHES "^9ea862326672616d6500d2${hex4}cf(${hex4}${hex4})$")
  message(FATAL_ERROR "${OUT}: does not start as a cframe: ${head}")
endif()
# frame_len (big-endian) must be the file's size: the logger wrote exactly the frame.
math(EXPR frame_len "0x${CMAKE_MATCH_1}")
if(NOT frame_len EQUAL size)
  message(FATAL_ERROR "${OUT}: the header's frame_len is ${frame_len}, the file has ${size} bytes")
endif()
message("image: ${OUT}, ${size} bytes, a cframe")

if(NOT TOOL)
  message("no tessera tool in this build (set TESSERA_HOST_TOOL): `tessera info` not run")
  return()
endif()
if(NOT EXISTS "${TOOL}")
  message(FATAL_ERROR "the tessera tool ${TOOL} does not exist (TESSERA_HOST_TOOL: build the host first)")
endif()
execute_process(COMMAND ${tool_emu} ${TOOL} info ${OUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("tessera info:\n${out}${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "tessera info ${OUT} failed (exit ${rc})")
endif()
string(FIND "${out}" "\nshape: ${SHAPE}\n" at_shape)
string(FIND "${out}" "\ndtype: ${DTYPE}\n" at_dtype)
if(at_shape LESS 0 OR at_dtype LESS 0)
  message(FATAL_ERROR "tessera info does not report shape ${SHAPE} and dtype ${DTYPE}")
endif()
if(CODEC)
  string(FIND "${out}" "\ncodec: ${CODEC}\n" at_codec)
  if(at_codec LESS 0)
    message(FATAL_ERROR "tessera info does not report codec ${CODEC}")
  endif()
endif()
