# SPDX-License-Identifier: BSD-3-Clause
# B2ND arrays: creation and opening over frames, slice reads and writes that touch only the chunks and blocks
# they need, shape changes, copies; automatic chunk and block shapes.
tessera_core_sources(partition.cpp array_create.cpp array_read.cpp rows_read.cpp array_write.cpp array_shape.cpp array_copy.cpp
  array_orthogonal_write.cpp orthogonal_sort.cpp slice_buffer.cpp
  array_view.cpp b2nd_geometry.cpp touched_blocks.cpp touched_blocks_planes.cpp)
