# SPDX-License-Identifier: BSD-3-Clause
# A failed create or convert leaves nothing under the target name (it writes a temporary and renames it at the
# end): an existing target keeps its contents, a new one does not appear, no temporary remains; a successful
# one replaces a file or a sparse frame's directory; a directory holding other files is not replaced.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/atomic)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
aid(gen ${dir}/in.raw <i4 60000 5)  # 240000 bytes
set(geom --dtype <i4 --shape 300,200 --chunks 64,64 --blocks 16,32)

function(no_temporaries what)
  file(GLOB left ${dir}/.*tessera-*)
  if(left)
    message(FATAL_ERROR "${what}: temporaries left: ${left}")
  endif()
endfunction()

# piped_create(prefix input_bytes arg...): the first input_bytes of in.raw through a pipe.
function(piped_create prefix nbytes)
  aid(truncate ${dir}/in.raw ${dir}/part.raw ${nbytes})
  execute_process(COMMAND ${CMAKE_COMMAND} -E cat ${dir}/part.raw ${dir}/part.raw
                  COMMAND ${EMU_CMD} ${TOOL} create ${ARGN} --input -
                  RESULTS_VARIABLE rcs ERROR_VARIABLE err)
  list(GET rcs 1 rc)
  set(${prefix}_rc "${rc}" PARENT_SCOPE)
  set(${prefix}_err "${err}" PARENT_SCOPE)
endfunction()

# 1. An existing file target, a short and a long piped input (noticed after writing began): the old file stays.
file(WRITE ${dir}/old.b2nd "the old contents")
piped_create(r 100000 ${dir}/old.b2nd ${geom})  # 2 x 100000 bytes: too short
expect_one_line_failure(r "create: --input: stdin: 200000 bytes, the array needs 240000" "short piped input")
file(READ ${dir}/old.b2nd old)
if(NOT old STREQUAL "the old contents")
  message(FATAL_ERROR "a failed create changed the existing target")
endif()
piped_create(r 120004 ${dir}/old.b2nd ${geom})  # 240008 bytes: too long
expect_one_line_failure(r "create: --input: stdin: more than the 240000 bytes" "long piped input")
file(READ ${dir}/old.b2nd old)
if(NOT old STREQUAL "the old contents")
  message(FATAL_ERROR "a failed create changed the existing target")
endif()
no_temporaries("failed create")
# ... a new target does not appear, file or sparse directory.
piped_create(r 100000 ${dir}/new.b2nd ${geom})
expect_one_line_failure(r "needs 240000" "short piped input, new target")
piped_create(r 100000 ${dir}/newdir ${geom} --sparse)
expect_one_line_failure(r "needs 240000" "short piped input, new sparse target")
if(EXISTS ${dir}/new.b2nd OR EXISTS ${dir}/newdir)
  message(FATAL_ERROR "a failed create left its target")
endif()
no_temporaries("failed create of a new target")

# 2. Success replaces the file.
tool_ok(create ${dir}/old.b2nd ${geom} --input ${dir}/in.raw)
tool_ok(dump ${dir}/old.b2nd -o ${dir}/out.raw)
same_files(${dir}/out.raw ${dir}/in.raw "create over an existing file")

# 3. convert of a damaged array fails in the middle: nothing under the target.
file(COPY_FILE ${dir}/old.b2nd ${dir}/bad.b2nd)
aid(corrupt ${dir}/bad.b2nd)
tool(r convert ${dir}/bad.b2nd ${dir}/conv.b2nd --codec zstd)
expect_one_line_failure(r "convert: .*bad.b2nd: " "convert of a damaged array")
if(EXISTS ${dir}/conv.b2nd)
  message(FATAL_ERROR "a failed convert left its target")
endif()
no_temporaries("failed convert")

# 4. Sparse: a new array replaces an existing sparse frame's directory (fewer chunks: no stale chunk files).
tool_ok(create ${dir}/sp ${geom} --input ${dir}/in.raw --sparse)
file(GLOB before ${dir}/sp/*)
tool_ok(convert ${dir}/sp ${dir}/sp --chunks 300,200 --sparse)
file(GLOB after ${dir}/sp/*)
list(LENGTH after n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "the replaced sparse frame holds ${n} files (chunks.b2frame and one chunk expected): ${after}")
endif()
tool_ok(dump ${dir}/sp -o ${dir}/sp.raw)
same_files(${dir}/sp.raw ${dir}/in.raw "convert --sparse over its own input")
no_temporaries("sparse replace")
# ... but not a directory holding anything else.
file(WRITE ${dir}/sp/notes.txt "mine")
tool(r create ${dir}/sp ${geom} --input ${dir}/in.raw --sparse)
expect_one_line_failure(r "create: .*sp: the directory holds other files" "sparse target with a foreign file")
if(NOT EXISTS ${dir}/sp/notes.txt OR NOT EXISTS ${dir}/sp/chunks.b2frame)
  message(FATAL_ERROR "a refused sparse create touched the directory")
endif()
no_temporaries("refused sparse create")

# 5. OUT that is not a regular file: a FIFO (as a device would be) is refused and left as it is; a symbolic link is
# followed (the file it names gets the array, the link stays a link); a link to nothing is refused.
tool_ok(create ${dir}/a.b2nd ${geom} --input ${dir}/in.raw)
execute_process(COMMAND mkfifo ${dir}/fifo RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mkfifo failed: ${rc}")
endif()
tool(r convert ${dir}/a.b2nd ${dir}/fifo)
expect_one_line_failure(r "convert: .*fifo: not a regular file \\(a FIFO\\)" "convert to a FIFO")
execute_process(COMMAND test -p ${dir}/fifo RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a refused convert replaced the FIFO")
endif()
no_temporaries("refused FIFO")
file(WRITE ${dir}/old.b2nd "not an array yet")
file(CREATE_LINK old.b2nd ${dir}/link SYMBOLIC)
tool_ok(convert ${dir}/a.b2nd ${dir}/link --codec zstd)
if(NOT IS_SYMLINK ${dir}/link)
  message(FATAL_ERROR "convert through a symbolic link replaced the link")
endif()
tool_ok(dump ${dir}/old.b2nd -o ${dir}/old.raw)
same_files(${dir}/old.raw ${dir}/in.raw "the file a symbolic link names")
file(CREATE_LINK nothing.b2nd ${dir}/dangling SYMBOLIC)
tool(r create ${dir}/dangling ${geom} --input ${dir}/in.raw)
expect_one_line_failure(r "create: .*dangling: a symbolic link to nothing" "create through a dangling link")
if(EXISTS ${dir}/nothing.b2nd)
  message(FATAL_ERROR "a refused create wrote where a dangling link points")
endif()
no_temporaries("refused dangling link")
file(REMOVE_RECURSE ${dir})
