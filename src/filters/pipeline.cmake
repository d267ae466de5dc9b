# The non-shuffle filters of the pipeline (the shuffle kernels are listed in sources.cmake).
target_sources(tessera_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/delta.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trunc_prec.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bytedelta.cpp
  ${CMAKE_CURRENT_LIST_DIR}/int_trunc.cpp)
