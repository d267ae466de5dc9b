# Frames: contiguous (cframe) and sparse (sframe) Blosc2 frames over the storage interfaces.
target_sources(tessera_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/frame_format.cpp
  ${CMAKE_CURRENT_LIST_DIR}/frame_state.cpp
  ${CMAKE_CURRENT_LIST_DIR}/frame_index.cpp
  ${CMAKE_CURRENT_LIST_DIR}/frame_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/frame_writer.cpp)
