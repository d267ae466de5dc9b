# Codecs: BloscLZ, written in-house (the wrappers of the codec libraries live in libraries.cmake).
tessera_core_sources(blosclz.cpp)
