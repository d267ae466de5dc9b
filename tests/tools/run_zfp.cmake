# SPDX-License-Identifier: BSD-3-Clause
# ZFP in the tool (c-blosc2's codecs 33-35). ZFP=ON (a build with libzfp): each golden ZFP array (GOLDEN/NAME)
# dumps to the reference's decode (run_golden.cmake); `create` writes each mode from that decode, `info` names the
# codec and its meta, the array reads back to what `dump` gives and `verify` passes; a bad or missing meta, an
# integer dtype and a shuffle are one-line errors and leave nothing under OUT; `help create` gives each meta's
# meaning. ZFP=OFF: dump and create say ZFP is not in this build, and nothing is written.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/zfp/${NAME})
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
set(src ${GOLDEN}/${NAME}.b2nd)
if(NOT EXISTS ${src})
  message(FATAL_ERROR "golden file missing: ${src}")
endif()

if(NOT ZFP)
  tool(d dump ${src} --format raw -o ${dir}/all.raw)
  expect_one_line_failure(d "codec|ZFP|zfp" "dump of ${NAME} without ZFP")
  tool(c create ${dir}/out.b2nd --dtype <f4 --shape 8 --codec zfp_rate --codec-meta 50 --input ${src})
  expect_one_line_failure(c "zfp_rate is not in this build" "create with zfp_rate without ZFP")
  if(EXISTS ${dir}/out.b2nd)
    message(FATAL_ERROR "create without ZFP left ${dir}/out.b2nd")
  endif()
  return()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/run_golden.cmake)
set(dir ${WORK}/zfp/${NAME})  # run_golden.cmake used its own folder
tool_ok(dump ${src} --format raw -o ${dir}/items.raw)
string(REGEX REPLACE "^.*([0-9])$" "\\1" size "${ITEMSIZE}")
foreach(mode "zfp_acc;-3;tolerance 10\\^-3" "zfp_prec;12;bit planes" "zfp_rate;40;40% of the items' bits")
  list(GET mode 0 codec)
  list(GET mode 1 meta)
  list(GET mode 2 says)
  set(out ${dir}/${codec}.b2nd)
  tool_ok(create ${out} --dtype <f${size} --shape ${SHAPE} --chunks ${CHUNKS} --blocks ${BLOCKS} --codec ${codec}
          --codec-meta=${meta} --input ${dir}/items.raw -q)
  tool_ok(info ${out})
  if(NOT tool_out MATCHES "\ncodec: ${codec}, meta ${meta} [(][^\n]*${says}" OR NOT tool_out MATCHES "\nfilters: none\n")
    message(FATAL_ERROR "info of ${out} does not say ${codec}, meta ${meta} (${says}), no filters:\n${tool_out}")
  endif()
  tool_ok(verify ${out})
  tool_ok(dump ${out} --format raw -o ${dir}/${codec}.raw)
  file(SIZE ${dir}/${codec}.raw got)
  file(SIZE ${dir}/items.raw want)
  if(NOT got EQUAL want)
    message(FATAL_ERROR "dump of ${out}: ${got} bytes, not ${want}")
  endif()
endforeach()
# Refusals, before anything is written.
set(out ${dir}/refused.b2nd)
set(common create ${out} --dtype <f${size} --shape ${SHAPE} --chunks ${CHUNKS} --blocks ${BLOCKS} --input ${dir}/items.raw)
foreach(bad "--codec;zfp_acc;needs --codec-meta" "--codec;zfp_rate;--codec-meta;101;not a meta of zfp_rate"
            "--codec;zfp_prec;--codec-meta;0;not a meta of zfp_prec" "--codec;zfp_acc;--codec-meta;-129;not a meta of zfp_acc"
            "--codec;zfp_acc;--codec-meta;x;not a meta of zfp_acc" "--codec-meta;3;needs --codec"
            "--codec;zfp_rate;--codec-meta;30;--filters;shuffle;no shuffle or bitshuffle")
  list(POP_BACK bad says)
  tool(r ${common} ${bad})
  expect_one_line_failure(r "${says}" "create ${bad}")
  if(EXISTS ${out})
    message(FATAL_ERROR "create ${bad} left ${out}")
  endif()
endforeach()
tool(r create ${out} --dtype <i${size} --shape ${SHAPE} --chunks ${CHUNKS} --blocks ${BLOCKS} --input ${dir}/items.raw
     --codec zfp_prec --codec-meta 20)
expect_one_line_failure(r "float32 or float64" "create with an integer dtype")
tool_ok(help create)
foreach(says "zfp_acc +lossy ZFP, fixed accuracy: error at most 10\\^N, N in -128..127"
             "zfp_prec +lossy ZFP, fixed precision" "zfp_rate +lossy ZFP, fixed rate: N percent")
  if(NOT tool_out MATCHES "${says}")
    message(FATAL_ERROR "help create does not say '${says}':\n${tool_out}")
  endif()
endforeach()
