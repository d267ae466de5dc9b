# Streaming and threads: a 64 MiB array (256^3 float32) created from a file and through a pipe, with 1, 2 and 3
# threads, equals byte for byte the array the library writes from the whole buffer at once (testaid
# arraycreate, the tool's former way); dump with 1, 2 and 3 threads, to a file and to stdout (-o -), returns the
# input; and create and dump each stay below LIMIT_KIB of peak resident memory (testaid rss: getrusage of the
# child), far below the array's 65536 KiB. Inputs: LIMIT_KIB (empty: no memory check, e.g. under an emulator).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/stream)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
aid(gen ${dir}/in.raw <f4 16777216 11)
set(geom --dtype <f4 --shape 256,256,256 --chunks 64,64,64 --blocks 16,16,16 --codec lz4 --filters shuffle)
aid(arraycreate ${dir}/ref.b2nd ${dir}/in.raw <f4 256,256,256 64,64,64 16,16,16 lz4 5 1)

# rss(name arg...): runs the tool under testaid rss (when LIMIT_KIB is set) or plainly.
function(run_measured)
  if(LIMIT_KIB STREQUAL "")
    tool_ok(${ARGN})
  else()
    aid(rss ${LIMIT_KIB} ${TOOL} ${ARGN})
    message(STATUS "tessera ${ARGV0}: ${aid_out}")
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
