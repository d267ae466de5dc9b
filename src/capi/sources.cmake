# The C API (include/tessera/tessera.h): a thin extern "C" layer over the array API, freestanding like the rest
# of the core (C firmware links tessera_core and includes tessera.h).
target_sources(tessera_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tessera_c.cpp ${CMAKE_CURRENT_LIST_DIR}/tessera_c_ops.cpp)
