# Codecs: BloscLZ, written in-house (the wrappers of the codec libraries live in libraries.cmake).
# CMAKE_CURRENT_LIST_DIR is this file's folder (src/codecs) even though src/CMakeLists.txt includes it.
target_sources(tessera_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/blosclz.cpp)
