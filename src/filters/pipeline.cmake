# SPDX-License-Identifier: BSD-3-Clause
# The non-shuffle filters of the pipeline (the shuffle kernels are listed in sources.cmake).
tessera_core_sources(delta.cpp trunc_prec.cpp bytedelta.cpp int_trunc.cpp bitshuffle_scalar.cpp filter_link.cpp
                     filter_link_all.cpp ndcell.cpp ndmean.cpp)
# Small firmware can compile filters out (config.hpp): a chunk that needs one is then unsupported, and the code
# of the filter is not linked. PUBLIC: chunk_filter_available (chunk.hpp) reports the setting to every user.
option(TESSERA_WITH_DELTA "Build the delta filter" ON)
option(TESSERA_WITH_BYTEDELTA "Build the bytedelta filter" ON)
option(TESSERA_WITH_TRUNC "Build the trunc_prec and int_trunc filters (encode only)" ON)
foreach(_filter DELTA BYTEDELTA TRUNC)
  if(NOT TESSERA_WITH_${_filter})
    target_compile_definitions(tessera_core PUBLIC TESSERA_WITH_${_filter}=0)
  endif()
endforeach()
