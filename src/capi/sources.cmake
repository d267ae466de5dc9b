# The C API (include/tessera/tessera.h): a thin extern "C" layer over the array API, freestanding like the rest
# of the core (C firmware links tessera_core and includes tessera.h). capi_bridge.cpp: the C faces of C++
# storages and directories that the ports' C APIs share (include/tessera/capi_bridge.hpp).
target_sources(tessera_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tessera_c.cpp ${CMAKE_CURRENT_LIST_DIR}/tessera_c_ops.cpp
  ${CMAKE_CURRENT_LIST_DIR}/capi_bridge.cpp)
