# SPDX-License-Identifier: BSD-3-Clause
# Streaming and threads: a 64 MiB array (256^3 float32) created from a file and through a pipe, with 1, 2 and 3
# threads, equals byte for byte the array the library writes from the whole buffer at once (testaid
# arraycreate, the tool's former way); dump with 1, 2 and 3 threads, to a file and to stdout (-o -), returns the
# input; and create and dump each hold at most LIMIT_KIB at once in the tool's allocator (the tool's own figure,
# written where TESSERA_MEMORY_REPORT says), far below the array's 65536 KiB, on every target and build. Where
# RSS_LIMIT_KIB is set (a host build without sanitizers: their shadow memory and quarantine, or an emulator's own
# memory, would count), the peak resident set (testaid rss) must stay below it too.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/stream)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
aid(gen ${dir}/in.raw <f4 16777216 11)
set(geom --dtype <f4 --shape 256,256,256 --chunks 64,64,64 --blocks 16,16,16 --codec lz4 --filters shuffle)
aid(arraycreate ${dir}/ref.b2nd ${dir}/in.raw <f4 256,256,256 64,64,64 16,16,16 lz4 5 1)

# run_measured(name arg...): runs the tool, checks the peak its allocator reports against LIMIT_KIB and, when
# RSS_LIMIT_KIB is set, its peak resident set (testaid rss); prints both.
function(run_measured)
  set(report ${dir}/memory.txt)
  file(REMOVE ${report})
  set(rss_text "")
  if(RSS_LIMIT_KIB STREQUAL "")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env TESSERA_MEMORY_REPORT=${report} ${EMU_CMD} ${TOOL} ${ARGN}
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc STREQUAL "0" OR NOT err STREQUAL "")
      message(FATAL_ERROR "tessera ${ARGN}\n  exit: ${rc}\n  stderr: ${err}")
    endif()
  else()
    execute_process(COMMAND ${CMAKE_COMMAND} -E env TESSERA_MEMORY_REPORT=${report} ${AID} rss ${RSS_LIMIT_KIB}
                            ${TOOL} ${ARGN}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc STREQUAL "0")
      message(FATAL_ERROR "tessera ${ARGN} under testaid rss\n  exit: ${rc}\n  ${out}${err}")
    endif()
    string(STRIP "${out}" rss_text)
    set(rss_text ", ${rss_text}")
  endif()
  if(NOT EXISTS ${report})
    message(FATAL_ERROR "tessera ${ARGN}: no memory report in ${report}")
  endif()
  file(READ ${report} text)
  if(NOT text MATCHES "^peak_allocated_bytes ([0-9]+)\n$")
    message(FATAL_ERROR "tessera ${ARGN}: unexpected memory report '${text}'")
  endif()
  math(EXPR kib "(${CMAKE_MATCH_1} + 1023) / 1024")
  message(STATUS "tessera ${ARGV0} --threads ${t}: peak allocated ${kib} KiB (limit ${LIMIT_KIB} KiB)${rss_text}")
  if(kib GREATER LIMIT_KIB)
    message(FATAL_ERROR "tessera ${ARGN}: the tool's allocator held ${kib} KiB at once, limit ${LIMIT_KIB} KiB")
  endif()
endfunction()

foreach(t 1 2 3)
  run_measured(create ${dir}/file${t}.b2nd ${geom} --threads ${t} --input ${dir}/in.raw)
  same_files(${dir}/file${t}.b2nd ${dir}/ref.b2nd "create --threads ${t} from a file vs array_create")
  # A real pipe: cmake -E cat | tessera create --input -
  execute_process(COMMAND ${CMAKE_COMMAND} -E cat ${dir}/in.raw
                  COMMAND ${EMU_CMD} ${TOOL} create ${dir}/pipe${t}.b2nd ${geom} --threads ${t} --input -
                  RESULTS_VARIABLE rcs ERROR_VARIABLE err)
  if(NOT rcs STREQUAL "0;0" OR NOT err STREQUAL "")
    message(FATAL_ERROR "create through a pipe (--threads ${t}): ${rcs}\n${err}")
  endif()
  same_files(${dir}/pipe${t}.b2nd ${dir}/ref.b2nd "create --threads ${t} through a pipe vs array_create")
  run_measured(dump ${dir}/ref.b2nd --threads ${t} -o ${dir}/out${t}.raw)
  same_files(${dir}/out${t}.raw ${dir}/in.raw "dump --threads ${t}")
  file(REMOVE ${dir}/out${t}.raw ${dir}/file${t}.b2nd ${dir}/pipe${t}.b2nd)
endforeach()
# -o - writes stdout; a slice's text is the same whatever the thread count.
execute_process(COMMAND ${EMU_CMD} ${TOOL} dump ${dir}/ref.b2nd -o - OUTPUT_FILE ${dir}/stdout.raw
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc STREQUAL "0" OR NOT err STREQUAL "")
  message(FATAL_ERROR "dump -o -: ${rc}\n${err}")
endif()
same_files(${dir}/stdout.raw ${dir}/in.raw "dump -o -")
foreach(t 1 3)
  tool_ok(dump ${dir}/ref.b2nd --threads ${t} --slice 3:200,17:18,5:250 --format text -o ${dir}/text${t}.txt)
endforeach()
same_files(${dir}/text1.txt ${dir}/text3.txt "dump --format text with 1 and 3 threads")
file(REMOVE_RECURSE ${dir})
