# SPDX-License-Identifier: BSD-3-Clause
# One golden array (GOLDEN/NAME.b2nd, written by the reference): `tessera dump --format raw` gives its .raw
# (the whole array; where tests/data keeps only NAME.raw.sha256, a dump with that SHA-256, which then stands for
# the .raw), and two slices give the same slices of the .raw (computed by testaid with plain loops).
# Also `info` names its shape and `verify` passes.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(src ${GOLDEN}/${NAME}.b2nd)
set(raw ${GOLDEN}/${NAME}.raw)
set(dir ${WORK}/golden/${NAME})
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
if(NOT EXISTS ${src} OR (NOT EXISTS ${raw} AND NOT EXISTS ${raw}.sha256))
  message(FATAL_ERROR "golden file missing: ${src}, or both ${raw} and ${raw}.sha256")
endif()

tool_ok(dump ${src} --format raw -o ${dir}/all.raw)
set(expected_all ${raw})
if(NAME STREQUAL "filter-delta-shuffle-i4")
  # The reference's .raw of this file has one wrong block (its single-block delta decode; see
  # tests/array/test_array_golden.cpp): check the difference is confined to one block that is not a block 0,
  # and take the slices' expected bytes from the checked dump.
  aid(blockdiff ${dir}/all.raw ${raw} ${ITEMSIZE} ${SHAPE} ${CHUNKS} ${BLOCKS})
  set(expected_all ${dir}/all.raw)
else()
  same_as_reference(${dir}/all.raw ${raw} "dump of ${NAME}")
  if(NOT EXISTS ${raw})
    set(expected_all ${dir}/all.raw)  # the reference's .raw: its SHA-256 says so
  endif()
endif()

tool_ok(info ${src})
if(NOT tool_out MATCHES "\nshape: ${SHAPE}[\n(]" OR NOT tool_out MATCHES "\ntypesize: ${ITEMSIZE}\n")
  message(FATAL_ERROR "info of ${NAME} does not say shape ${SHAPE}, typesize ${ITEMSIZE}:\n${tool_out}")
endif()
tool_ok(verify ${src})

if(SHAPE STREQUAL "")
  return()  # a scalar: no slices
endif()
# Slice 1: [s/4, s - s/5) in every dimension. Slice 2: the whole first dimension (empty bounds), then [s/3, end).
string(REPLACE "," ";" dims "${SHAPE}")
set(s1 "")
set(s2 "")
set(first TRUE)
foreach(s IN LISTS dims)
  math(EXPR a "${s} / 4")
  math(EXPR b "${s} - ${s} / 5")
  math(EXPR c "${s} / 3")
  if(first)
    set(s1 "${a}:${b}")
    set(s2 ":")
    set(first FALSE)
  else()
    set(s1 "${s1},${a}:${b}")
    set(s2 "${s2},${c}:")
  endif()
endforeach()
set(i 0)
foreach(sl IN ITEMS "${s1}" "${s2}")
  math(EXPR i "${i} + 1")
  tool_ok(dump ${src} --slice ${sl} -o ${dir}/slice${i}.raw)
  aid(slice ${expected_all} ${ITEMSIZE} ${SHAPE} ${sl} ${dir}/expect${i}.raw)
  same_files(${dir}/slice${i}.raw ${dir}/expect${i}.raw "dump --slice ${sl} of ${NAME}")
endforeach()
# Text output: one line per row of the last dimension.
tool_ok(dump ${src} --slice ${s1} --format text)
