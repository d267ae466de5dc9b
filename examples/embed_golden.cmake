# SPDX-License-Identifier: BSD-3-Clause
# Build step of the flash_reader example (examples/CMakeLists.txt): turns a golden array the reference wrote
# (ARRAY, a .b2nd contiguous frame) into a C++ source that holds its bytes as a `const uint8_t[]` (in .rodata:
# flash on a microcontroller), and, from the reference's own decode (RAW, C order, from item RAW_FIRST_ITEM on:
# tests/data keeps a window of the larger decodes), the expected bytes of the reads the example makes. No tool
# but CMake.
#   cmake -DARRAY=x.b2nd -DRAW=x.raw [-DRAW_FIRST_ITEM=0] [-DRAW_ORDER=c|chunks] -DSHAPE=40,50,60 -DCHUNKS=20,25,30 -DBLOCKS=10,5,15
#         -DITEMSIZE=4 -DNAME=codec-blosclz-f4-3d -DOUTPUT=flash_array.cpp -P embed_golden.cmake
# The reads (ndim >= 2), chosen from the geometry so that they cross chunk and block boundaries:
#   element  coords[d] = chunk[d] + block[d] + 1 (capped at shape[d] - 1): not in the first chunk or block;
#   slice    a 2-D window over the last two axes, [chunk - 5, chunk + 5) along each (capped), the leading axes
#            fixed at chunk[d] + 3: four chunks meet inside it.
cmake_minimum_required(VERSION 3.20)

foreach(var ARRAY RAW SHAPE CHUNKS BLOCKS ITEMSIZE NAME OUTPUT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "embed_golden.cmake: -D${var}=... is missing")
  endif()
endforeach()
foreach(file ARRAY RAW)
  if(NOT EXISTS "${${file}}")
    message(FATAL_ERROR "embed_golden.cmake: ${${file}} does not exist (TESSERA_TEST_DATA_DIR?)")
  endif()
endforeach()
if(NOT DEFINED RAW_ORDER)
  set(RAW_ORDER c)
endif()
if(NOT DEFINED RAW_FIRST_ITEM OR RAW_FIRST_ITEM STREQUAL "")
  set(RAW_FIRST_ITEM 0)
endif()
file(SIZE "${RAW}" raw_size)
string(REPLACE "," ";" shape "${SHAPE}")
string(REPLACE "," ";" chunks "${CHUNKS}")
string(REPLACE "," ";" blocks "${BLOCKS}")
list(LENGTH shape ndim)
if(ndim LESS 2)
  message(FATAL_ERROR "embed_golden.cmake: ${NAME}: the example reads a 2-D slice, the array has ${ndim} dims")
endif()
math(EXPR last "${ndim} - 1")

# "0x12, 0x34, ..." lines of 16 bytes from a hex string.
function(hex_to_c hex out)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," text "${hex}")
  string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)  # CMake regexes have no {n}
  string(REGEX REPLACE "(${line})" "\\1\n" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
function(cap value limit out)  # min(value, limit)
  if(value GREATER limit)
    set(value ${limit})
  endif()
  set(${out} ${value} PARENT_SCOPE)
endfunction()
# RAW_ORDER=chunks: RAW is the array's chunks decoded one after the other (tests/data/README.md: the compat
# folder's decodes), each chunk as the reference lays it out, its blocks in C order and each block's items in C
# order, the chunk's edges padded to whole blocks. The byte offset of the item at coords there:
function(raw_offset_chunks coords out)
  set(chunk_index 0)
  set(block_index 0)
  set(in_block 0)
  set(chunk_items 1)
  set(block_items 1)
  foreach(d RANGE ${last})
    list(GET shape ${d} n)
    list(GET chunks ${d} c)
    list(GET blocks ${d} b)
    list(GET coords ${d} x)
    math(EXPR chunk_index "${chunk_index} * ((${n} + ${c} - 1) / ${c}) + ${x} / ${c}")
    math(EXPR block_index "${block_index} * ((${c} + ${b} - 1) / ${b}) + (${x} % ${c}) / ${b}")
    math(EXPR in_block "${in_block} * ${b} + (${x} % ${c}) % ${b}")
    math(EXPR chunk_items "${chunk_items} * ((${c} + ${b} - 1) / ${b}) * ${b}")
    math(EXPR block_items "${block_items} * ${b}")
  endforeach()
  math(EXPR offset "((${chunk_index} * ${chunk_items}) + ${block_index} * ${block_items} + ${in_block}) * ${ITEMSIZE}")
  math(EXPR end "${offset} + ${ITEMSIZE}")
  if(end GREATER raw_size)
    message(FATAL_ERROR "embed_golden.cmake: ${RAW} (chunk order) does not hold the item at ${coords}")
  endif()
  set(${out} ${offset} PARENT_SCOPE)
endfunction()
# The hex of the `count` items from coords on along the last axis, C order.
function(raw_items coords count out)
  if(RAW_ORDER STREQUAL "chunks")
    set(hex "")
    list(GET coords ${last} x0)
    math(EXPR n_last "${count} - 1")
    foreach(i RANGE ${n_last})
      list(REMOVE_AT coords ${last})
      math(EXPR x "${x0} + ${i}")
      list(APPEND coords ${x})
      raw_offset_chunks("${coords}" at)
      file(READ "${RAW}" one OFFSET ${at} LIMIT ${ITEMSIZE} HEX)
      string(APPEND hex "${one}")
    endforeach()
  else()
    raw_offset("${coords}" at ${count})
    math(EXPR length "${count} * ${ITEMSIZE}")
    file(READ "${RAW}" hex OFFSET ${at} LIMIT ${length} HEX)
  endif()
  set(${out} "${hex}" PARENT_SCOPE)
endfunction()
# The byte offset in RAW of the `count` items from coords on (C order), which RAW must hold.
function(raw_offset coords out count)
  set(offset 0)
  foreach(d RANGE ${last})
    list(GET shape ${d} n)
    list(GET coords ${d} c)
    math(EXPR offset "${offset} * ${n} + ${c}")
  endforeach()
  math(EXPR offset "(${offset} - ${RAW_FIRST_ITEM}) * ${ITEMSIZE}")
  math(EXPR end "${offset} + ${count} * ${ITEMSIZE}")
  if(offset LESS 0 OR end GREATER raw_size)
    message(FATAL_ERROR
            "embed_golden.cmake: ${RAW} (from item ${RAW_FIRST_ITEM}) does not hold the ${count} items at ${coords}")
  endif()
  set(${out} ${offset} PARENT_SCOPE)
endfunction()

# The element.
set(element "")
foreach(d RANGE ${last})
  list(GET shape ${d} n)
  list(GET chunks ${d} c)
  list(GET blocks ${d} b)
  math(EXPR v "${c} + ${b} + 1")
  math(EXPR top "${n} - 1")
  cap(${v} ${top} v)
  list(APPEND element ${v})
endforeach()
raw_items("${element}" 1 element_hex)

# The slice: its start and stop, then its rows (the last axis, contiguous in the raw file) one by one.
set(start "")
set(stop "")
math(EXPR first_window "${ndim} - 2")
foreach(d RANGE ${last})
  list(GET shape ${d} n)
  list(GET chunks ${d} c)
  if(d LESS first_window)
    math(EXPR s "${c} + 3")
    math(EXPR top "${n} - 1")
    cap(${s} ${top} s)
    math(EXPR e "${s} + 1")
  else()
    math(EXPR s "${c} - 5")
    if(s LESS 0)
      set(s 0)
    endif()
    math(EXPR e "${c} + 5")
    cap(${e} ${n} e)
  endif()
  list(APPEND start ${s})
  list(APPEND stop ${e})
endforeach()
list(GET start ${first_window} row_begin)
list(GET stop ${first_window} row_end)
list(GET start ${last} col_begin)
list(GET stop ${last} col_end)
set(slice_hex "")
math(EXPR row_last "${row_end} - 1")
foreach(row RANGE ${row_begin} ${row_last})
  set(coords ${start})
  list(REMOVE_AT coords ${first_window})
  list(INSERT coords ${first_window} ${row})
  math(EXPR row_items "${col_end} - ${col_begin}")
  raw_items("${coords}" ${row_items} hex)
  string(APPEND slice_hex "${hex}")
endforeach()

file(READ "${ARRAY}" array_hex HEX)
hex_to_c("${array_hex}" array_c)
hex_to_c("${element_hex}" element_c)
hex_to_c("${slice_hex}" slice_c)
file(SIZE "${ARRAY}" array_size)
string(REPLACE ";" ", " element_list "${element}")
string(REPLACE ";" ", " start_list "${start}")
string(REPLACE ";" ", " stop_list "${stop}")
get_filename_component(array_file "${ARRAY}" NAME)

# Written only when it changes: the example is not recompiled when nothing did.
set(text "// Generated by examples/embed_golden.cmake from ${array_file} (the reference's array) and its .raw: do not edit.
#include \"flash_reader_data.hpp\"

namespace {
// In .rodata: in flash, read in place by the firmware (execute in place).
alignas(8) const uint8_t kArray[${array_size}] = {
${array_c}};
const uint8_t kElement[] = {${element_c}};
const uint8_t kSlice[] = {
${slice_c}};
const int64_t kElementCoords[] = {${element_list}};
const int64_t kSliceStart[] = {${start_list}};
const int64_t kSliceStop[] = {${stop_list}};
}  // namespace

const flash_golden kFlashGolden = {\"${NAME}\", kArray, sizeof kArray, ${ndim}, kElementCoords, kElement, sizeof kElement,
                                   kSliceStart, kSliceStop, kSlice, sizeof kSlice};
")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${text}")
