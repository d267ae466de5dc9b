# SPDX-License-Identifier: BSD-3-Clause
# `--flash-log GEOMETRY` (info, dump, verify, convert): a raw image of NOR flash whose region holds a logger's
# array, written through the flash port on the simulated part (testaid flashimage), is read without writing to
# it: an array never finalized (the logger lost power) dumps exactly its committed chunks, one whose last append
# was cut too (the cut chunk is not there), a finalized one reads as its cframe; the image's bytes are the same
# after every command; bad geometry is a clear error.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/flash_log)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
set(geo offset=16K,size=128K,sector=4096,unit=4)
foreach(mode open torn final)
  aid(flashimage ${dir}/${mode}.bin ${dir}/${mode}.raw 5 ${mode})
  file(SHA256 ${dir}/${mode}.bin before)
  set(hash_${mode} ${before})
  tool_ok(dump --flash-log ${geo} ${dir}/${mode}.bin --format raw -o ${dir}/${mode}.out)
  same_files(${dir}/${mode}.out ${dir}/${mode}.raw "dump --flash-log of the ${mode} image: the committed chunks' items")
  tool_ok(info --flash-log=${geo} ${dir}/${mode}.bin)
  if(mode STREQUAL "final")
    set(want "5 chunks committed, finalized")
  else()
    set(want "5 chunks committed, not finalized")
  endif()
  string(FIND "${tool_out}" "${want}" at)
  if(at LESS 0)
    message(FATAL_ERROR "info --flash-log of the ${mode} image does not say '${want}':\n${tool_out}")
  endif()
  tool_ok(verify --flash-log ${geo} ${dir}/${mode}.bin --quiet)
  tool_ok(convert --flash-log ${geo} ${dir}/${mode}.bin ${dir}/${mode}.b2nd)
  tool_ok(dump ${dir}/${mode}.b2nd --format raw -o ${dir}/${mode}.conv)
  same_files(${dir}/${mode}.conv ${dir}/${mode}.raw "convert --flash-log of the ${mode} image, then dump")
  file(SHA256 ${dir}/${mode}.bin after)
  if(NOT before STREQUAL after)
    message(FATAL_ERROR "the ${mode} image changed while the tool read it")
  endif()
endforeach()
# The finalized array keeps its shape and dtype (its header); one never finalized reads as one dimension of
# items, of the dtype given.
tool_ok(info --flash-log ${geo} ${dir}/final.bin)
if(NOT tool_out MATCHES "shape: 320,3" OR NOT tool_out MATCHES "dtype: <i2")
  message(FATAL_ERROR "info --flash-log of the finalized image:\n${tool_out}")
endif()
tool_ok(dump --flash-log ${geo},dtype=<i2 ${dir}/open.bin --format text --slice 3:5)
if(NOT tool_out STREQUAL "111 1148\n")
  message(FATAL_ERROR "dump --flash-log ...,dtype=<i2 --format text --slice 3:5: '${tool_out}'")
endif()
# Bad geometry: exit 2 for a geometry that cannot be, 1 for one the image does not match; one line each.
foreach(case
    "2|offset=16K,size=130000,sector=4096,unit=4|not a whole number of sectors"
    "2|offset=16K,size=128K,sector=4096,unit=3|must divide"
    "2|offset=16K,size=128K,unit=4|needs size= and sector="
    "2|offset=16K,size=128K,sector=4096,unit=4,colour=red|unknown key"
    "2|offset=16K,size=12Q,sector=4096|is not a size"
    "1|offset=200K,size=128K,sector=4096,unit=4|reaches past the image's end"
    "1|offset=16K,size=128K,sector=4096,unit=1|no flash log of this geometry"
    "1|offset=0,size=128K,sector=4096,unit=4|no flash log of this geometry")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 want_rc)
  list(GET parts 1 bad)
  list(GET parts 2 want_err)
  tool(r dump --flash-log ${bad} ${dir}/open.bin --format raw -o ${dir}/bad.out)
  string(FIND "${r_err}" "${want_err}" at)
  if(NOT r_rc STREQUAL want_rc OR at LESS 0)
    message(FATAL_ERROR "dump --flash-log ${bad}: exit ${r_rc} (want ${want_rc}), stderr '${r_err}' (want '${want_err}')")
  endif()
endforeach()
tool(r dump --flash-log ${geo} --offset 4 ${dir}/open.bin)
if(NOT r_rc STREQUAL "2")
  message(FATAL_ERROR "--flash-log with --offset exited ${r_rc}, not 2")
endif()
tool(r create ${dir}/x.b2nd --flash-log ${geo} --dtype <i4 --shape 4 --input ${dir}/open.raw)
if(NOT r_rc STREQUAL "2")
  message(FATAL_ERROR "create --flash-log exited ${r_rc}, not 2")
endif()
file(SHA256 ${dir}/open.bin after)
if(NOT after STREQUAL hash_open)
  message(FATAL_ERROR "the open image changed while the tool refused its geometry")
endif()
