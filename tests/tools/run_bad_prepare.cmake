# SPDX-License-Identifier: BSD-3-Clause
# The files the bad-input tests use (in WORK/bad): a 16-byte raw input, a truncated and a half cframe, a file of
# garbage, an empty file, an empty directory.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(dir ${WORK}/bad)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir} ${dir}/emptydir)
file(WRITE ${dir}/16.raw "0123456789abcdef")
file(WRITE ${dir}/16.npy "0123456789abcdef")  # named .npy, not one
file(WRITE ${dir}/garbage.b2nd "this is not a frame, only a line of text that is long enough to look like one ..")
file(WRITE ${dir}/empty.b2nd "")
set(src ${GOLDEN}/codec-lz4-f4-3d.b2nd)
file(SIZE ${src} size)
math(EXPR cut "${size} - 10")
math(EXPR half "${size} / 2")
aid(truncate ${src} ${dir}/truncated.b2nd ${cut})
aid(truncate ${src} ${dir}/half.b2nd ${half})
