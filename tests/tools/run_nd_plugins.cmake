# SPDX-License-Identifier: BSD-3-Clause
# The tool with c-blosc2's n-d plugins: `create` and `convert` with `--codec ndlz:4|ndlz:8` and `--filters
# ndcell:N,ndmean:N`. `info` names the codec and filters with their metas; `dump` returns the input for the
# lossless ones (NDLZ, NDCELL) and the reference's decode for the golden arrays converted; NDMEAN's output is the
# same size and not the input (lossy). Bad metas and settings the reference refuses (a cell edge of 5 for NDLZ,
# NDCELL's 0, NDMEAN on 2-byte integers, NDLZ on a 3-D block, a cell larger than the block) fail with one line
# naming the cause and leave no file. Inputs: common.cmake's, PLUGINS (tests/data/plugins).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/nd_plugins)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
foreach(f ndlz4_u1 ndcell4_i2 ndmean4_f4)
  if(NOT EXISTS ${PLUGINS}/${f}.b2nd OR NOT EXISTS ${PLUGINS}/${f}.raw)
    message(FATAL_ERROR "${PLUGINS}/${f}.b2nd or .raw is missing (tests/data/plugins)")
  endif()
endforeach()

aid(gen ${dir}/u1.raw |u1 3840 42)      # 48 x 80
aid(gen ${dir}/i2.raw <i2 3600 43)      # 60 x 60
aid(gen ${dir}/f4.raw <f4 8000 44)      # 20 x 20 x 20

# info's codec and filters lines.
function(info_has file codec filters)
  tool_ok(info ${file})
  if(NOT tool_out MATCHES "\ncodec: ${codec}\n")
    message(FATAL_ERROR "info ${file}: no 'codec: ${codec}' line:\n${tool_out}")
  endif()
  if(NOT tool_out MATCHES "\nfilters: ${filters}\n")
    message(FATAL_ERROR "info ${file}: no 'filters: ${filters}' line:\n${tool_out}")
  endif()
endfunction()

# Lossless: create, info, dump equals the input, verify.
# case | input | dtype | shape | chunks | blocks | codec | filters | info's codec line | info's filters line
set(cases
  "ndlz4|u1|\\|u1|48,80|24,40|8,16|ndlz:4|none|ndlz:4 \\(c-blosc2's registered codec 32\\)|none"
  "ndlz8|u1|\\|u1|48,80|24,40|16,16|ndlz:8|none|ndlz:8 \\(c-blosc2's registered codec 32\\)|none"
  "ndlz4_ndcell4|u1|\\|u1|48,80|24,40|8,16|ndlz:4|ndcell:4|ndlz:4 \\(c-blosc2's registered codec 32\\)|ndcell:4"
  "ndcell4_lz4|i2|<i2|60,60|30,30|10,10|lz4|ndcell:4,shuffle|lz4|ndcell:4,shuffle"
  "ndcell3|i2|<i2|60,60|30,30|10,10|blosclz|ndcell:3|blosclz|ndcell:3")
foreach(c IN LISTS cases)
  string(REPLACE "|" ";" c "${c}")
  list(GET c 0 name)
  list(GET c 1 input)
  list(GET c 2 dtype)
  list(GET c 3 shape)
  list(GET c 4 chunks)
  list(GET c 5 blocks)
  list(GET c 6 codec)
  list(GET c 7 filters)
  list(GET c 8 codec_re)
  list(GET c 9 filters_re)
  string(REPLACE "\\" "" dtype "${dtype}")
  tool_ok(create ${dir}/${name}.b2nd --input ${dir}/${input}.raw --dtype ${dtype} --shape ${shape} --chunks ${chunks}
          --blocks ${blocks} --codec ${codec} --filters ${filters})
  info_has(${dir}/${name}.b2nd "${codec_re}" "${filters_re}")
  tool_ok(dump ${dir}/${name}.b2nd --format raw -o ${dir}/${name}.out)
  same_files(${dir}/${name}.out ${dir}/${input}.raw "create --codec ${codec} --filters ${filters}, then dump")
  tool_ok(verify ${dir}/${name}.b2nd)
endforeach()

# NDMEAN (lossy): the cells' means, so the same size but not the input; a second pass over its own output is
# read back as written.
tool_ok(create ${dir}/ndmean.b2nd --input ${dir}/f4.raw --dtype <f4 --shape 20,20,20 --chunks 10,10,10 --blocks 5,5,5
        --codec zstd --filters ndmean:4)
info_has(${dir}/ndmean.b2nd zstd "ndmean:4")
tool_ok(dump ${dir}/ndmean.b2nd --format raw -o ${dir}/ndmean.out)
file(SIZE ${dir}/ndmean.out n_out)
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${dir}/ndmean.out ${dir}/f4.raw RESULT_VARIABLE same)
if(NOT n_out EQUAL 32000 OR same EQUAL 0)
  message(FATAL_ERROR "ndmean: dump is ${n_out} bytes (want 32000) and must differ from the input (lossy)")
endif()
tool_ok(verify ${dir}/ndmean.b2nd)

# convert: the reference's arrays rewritten with the plugins dump the reference's decode.
foreach(c "ndlz4_u1|--codec|ndlz:8|ndlz:8 \\(c-blosc2's registered codec 32\\)|none"
          "ndcell4_i2|--filters|ndcell:2|lz4|ndcell:2"
          "ndmean4_f4|--filters|none|zstd|none"
          "ndlz4_u1|--filters|ndcell:4|ndlz:4 \\(c-blosc2's registered codec 32\\)|ndcell:4")
  string(REPLACE "|" ";" c "${c}")
  list(GET c 0 golden)
  list(GET c 1 option)
  list(GET c 2 value)
  list(GET c 3 codec_re)
  list(GET c 4 filters_re)
  string(REPLACE ":" "" out "${golden}_${value}")
  tool_ok(convert ${PLUGINS}/${golden}.b2nd ${dir}/${out}.b2nd ${option} ${value})
  info_has(${dir}/${out}.b2nd "${codec_re}" "${filters_re}")
  tool_ok(dump ${dir}/${out}.b2nd --format raw -o ${dir}/${out}.out)
  same_files(${dir}/${out}.out ${PLUGINS}/${golden}.raw "convert ${golden} ${option} ${value}, then dump")
endforeach()

# Refusals: one line naming the cause, and no file under OUT (nor a temporary one beside it).
function(refused what regex)
  file(REMOVE ${dir}/bad.b2nd)
  tool(r ${ARGN})
  expect_one_line_failure(r "${regex}" "${what}")
  file(GLOB left ${dir}/bad.b2nd ${dir}/.bad.b2nd*)
  if(left)
    message(FATAL_ERROR "${what}: the failed command left ${left}")
  endif()
endfunction()
set(u1 --input ${dir}/u1.raw --dtype |u1 --shape 48,80 --chunks 24,40 --blocks 8,16)
set(i2 --input ${dir}/i2.raw --dtype <i2 --shape 60,60 --chunks 30,30 --blocks 10,10)
refused("ndlz:5" "--codec: unknown 'ndlz:5'" create ${dir}/bad.b2nd ${u1} --codec ndlz:5)
refused("ndlz without its cell edge" "--codec ndlz needs its cell edge: ndlz:4, ndlz:8 or --codec-meta 4\\|8" create ${dir}/bad.b2nd ${u1} --codec ndlz)
refused("ndcell:0" "ndcell:EDGE needs EDGE in \\[1, 255\\], got '0'" create ${dir}/bad.b2nd ${u1} --filters ndcell:0)
refused("ndmean:0" "ndmean:EDGE needs EDGE in \\[1, 127\\], got '0'" create ${dir}/bad.b2nd ${u1} --filters ndmean:0)
refused("ndmean:128" "ndmean:EDGE needs EDGE in \\[1, 127\\]" create ${dir}/bad.b2nd ${u1} --filters ndmean:128)
refused("ndmean on <i2" "ndmean: writing needs float32 or float64 items" create ${dir}/bad.b2nd ${i2}
        --filters ndmean:4)
refused("ndmean on |u1 (convert)" "ndmean: writing needs float32 or float64 items" convert ${PLUGINS}/ndlz4_u1.b2nd
        ${dir}/bad.b2nd --codec blosclz --filters ndmean:4)
refused("ndlz on 3-D blocks" "ndlz: NDLZ codes 2-D blocks only" create ${dir}/bad.b2nd --input ${dir}/f4.raw
        --dtype |u1 --shape 40,40,20 --chunks 20,20,10 --blocks 10,10,5 --codec ndlz:4)
refused("ndcell larger than the block" "ndcell: a cell .* larger than the block" create ${dir}/bad.b2nd ${i2}
        --filters ndcell:11)
