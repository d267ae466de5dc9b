# format/: msgpack, the B2ND metalayer, NumPy dtype strings.
# CMAKE_CURRENT_LIST_DIR is this file's own folder (src/format), also when included from src/.
target_sources(tessera_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/msgpack.cpp
  ${CMAKE_CURRENT_LIST_DIR}/b2nd_meta.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dtype.cpp)
