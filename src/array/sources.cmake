# B2ND arrays: creation and opening over frames, slice reads and writes that touch only the chunks and blocks
# they need, shape changes, copies; automatic chunk and block shapes.
target_sources(tessera_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/partition.cpp
  ${CMAKE_CURRENT_LIST_DIR}/array_create.cpp
  ${CMAKE_CURRENT_LIST_DIR}/array_read.cpp
  ${CMAKE_CURRENT_LIST_DIR}/array_write.cpp
  ${CMAKE_CURRENT_LIST_DIR}/array_shape.cpp
  ${CMAKE_CURRENT_LIST_DIR}/array_copy.cpp)
