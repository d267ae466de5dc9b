# SPDX-License-Identifier: BSD-3-Clause
# Layout: chunk and block geometry, slice planning, N-d strided copies.
# CMAKE_CURRENT_LIST_DIR is this file's folder (src/layout), wherever the fragment is included from.
target_sources(tessera_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/slice_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nd_copy.cpp)
