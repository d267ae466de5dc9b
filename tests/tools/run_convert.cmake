# SPDX-License-Identifier: BSD-3-Clause
# `tessera convert` of a golden array with options OPTS (separated by '|'): the result dumps to the golden .raw
# (or to its SHA-256, where tests/data keeps only that), passes verify, says the new parameters in info, keeps the
# other metalayers and the vlmetalayers, is the same file with 1 and 3 threads, and survives a trip through a
# sparse frame (converted back with the same options: byte-identical). Inputs: GOLDEN, NAME, OPTS, EXPECT (a
# regex info's output must match, '' none).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/convert/${NAME}${CASE})
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
string(REPLACE "|" ";" opts "${OPTS}")
set(src ${GOLDEN}/${NAME}.b2nd)

tool_ok(convert ${src} ${dir}/t1.b2nd ${opts} --threads 1)
tool_ok(convert ${src} ${dir}/t3.b2nd ${opts} --threads 3)
same_files(${dir}/t1.b2nd ${dir}/t3.b2nd "convert ${OPTS} with 1 and 3 threads")
tool_ok(dump ${dir}/t1.b2nd -o ${dir}/t1.raw)
same_as_reference(${dir}/t1.raw ${GOLDEN}/${NAME}.raw "convert ${OPTS} then dump")
tool_ok(verify ${dir}/t1.b2nd)
tool_ok(info ${dir}/t1.b2nd)
set(after "${tool_out}")
if(NOT EXPECT STREQUAL "" AND NOT after MATCHES "${EXPECT}")
  message(FATAL_ERROR "info after convert ${OPTS} does not match '${EXPECT}':\n${after}")
endif()
tool_ok(info ${src})
foreach(field "metalayers:[^\n]*" "vlmetalayers:[^\n]*" "shape:[^\n]*" "dtype:[^\n]*")
  string(REGEX MATCH "\n${field}" a "${tool_out}")
  string(REGEX MATCH "\n${field}" b "${after}")
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "convert ${OPTS} changed '${a}' into '${b}'")
  endif()
endforeach()

tool_ok(convert ${dir}/t1.b2nd ${dir}/sparse ${opts} --sparse)
tool_ok(info ${dir}/sparse)
if(NOT tool_out MATCHES "sparse frame")
  message(FATAL_ERROR "convert --sparse did not make a sparse frame:\n${tool_out}")
endif()
tool_ok(dump ${dir}/sparse -o ${dir}/sparse.raw)
same_as_reference(${dir}/sparse.raw ${GOLDEN}/${NAME}.raw "convert --sparse then dump")
tool_ok(convert ${dir}/sparse ${dir}/back.b2nd ${opts})
same_files(${dir}/back.b2nd ${dir}/t1.b2nd "cframe -> sframe -> cframe")
file(REMOVE_RECURSE ${dir})
