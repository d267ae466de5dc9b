# SPDX-License-Identifier: BSD-3-Clause
# `dump --format text` prints values by dtype: arrays made from spelled-out bytes (testaid writehex), each with
# its expected text worked out by hand from the bytes (byte order, sign, float formats, complex, bool, strings
# as NumPy shows them, UCS-4 as UTF-8, records of simple fields as tuples, hex for the rest).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/text)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
# dtype @ shape @ bytes (hex) @ expected output
set(cases
  "|u1@2,4@4142434441424344@65 66 67 68\n65 66 67 68\n"
  "<u4@2@4142434441424344@1145258561 1145258561\n"
  ">u4@2@4142434441424344@1094861636 1094861636\n"
  "<i2@4@feff0180ff7f0000@-2 -32767 32767 0\n"
  ">i4@2@ffffffff80000000@-1 -2147483648\n"
  ">i8@1@4142434441424344@4702394921359917892\n"
  "|i1@3@80ff7f@-128 -1 127\n"
  "|b1@4@00010200@false true true false\n"
  "<f4@2@0000c03f41414141@1.5 12.0784311\n"
  ">f4@1@3fc00000@1.5\n"
  "<f8@1@000000000000d0bf@-0.25\n"
  "<f2@3@003c00c0ff7b@1 -2 65504\n"
  "<c8@1@0000c03f000080bf@(1.5-1j)\n"
  ">c16@1@3ff80000000000004000000000000000@(1.5+2j)\n"
  "|S3@2@414243616263@b'ABC' b'abc'\n"
  "|S4@3@61275c000a000000ff000000@b'a\\'\\\\' b'\\x0a' b'\\xff'\n"
  "<U2@2@61000000e9000000ac20000000000000@'aé' '€'\n"
  ">U1@2@0001f60000000027@'😀' '\\''\n"
  "<M8[s]@1@0100000000000000@0x0100000000000000\n"
  "<f4@@0000c03f@1.5\n")
set(i 0)
foreach(c IN LISTS cases)
  math(EXPR i "${i} + 1")
  string(REPLACE "@" ";" f "${c}")
  list(GET f 0 dtype)
  list(GET f 1 shape)
  list(GET f 2 hex)
  list(GET f 3 expect)
  string(REPLACE "\\n" "\n" expect "${expect}")
  aid(writehex ${dir}/in${i}.raw ${hex})
  tool_ok(create ${dir}/a${i}.b2nd "--dtype=${dtype}" "--shape=${shape}" --input ${dir}/in${i}.raw)
  tool_ok(dump ${dir}/a${i}.b2nd --format text)
  if(NOT tool_out STREQUAL expect)
    message(FATAL_ERROR "dump --format text of ${dtype} bytes ${hex}:\n got: '${tool_out}'\n want: '${expect}'")
  endif()
endforeach()
