# Chunks: header, decoder (and encoder), and the executor that runs blocks in parallel.
target_sources(tessera_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/executor.cpp
  ${CMAKE_CURRENT_LIST_DIR}/header.cpp
  ${CMAKE_CURRENT_LIST_DIR}/decoder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/blocksize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/encoder.cpp)
