# SPDX-License-Identifier: BSD-3-Clause
# One bad command line or bad input: the tool exits non-zero (not by a signal) with exactly one line on stderr
# that matches EXPECT. ARGS: the arguments, separated by '|'.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
string(REPLACE "|" ";" args "${ARGS}")
tool(r ${args})
expect_one_line_failure(r "${EXPECT}" "tessera ${ARGS}")
