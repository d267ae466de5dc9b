# SPDX-License-Identifier: BSD-3-Clause
# The C API (include/tessera/tessera.h): a thin extern "C" layer over the array API, freestanding like the rest
# of the core (C firmware links tessera_core and includes tessera.h). capi_bridge.cpp: the C faces of C++
# storages and directories that the ports' C APIs share (include/tessera/capi_bridge.hpp); capi_executor.cpp:
# the C face of a C++ executor, the same way (its own object: linked only where a port hands one out).
tessera_core_sources(tessera_c.cpp tessera_c_ops.cpp tessera_c_view.cpp capi_bridge.cpp capi_executor.cpp)
