# SPDX-License-Identifier: BSD-3-Clause
# Chunks: header, decoder (and encoder), and the executor that runs blocks in parallel.
tessera_core_sources(executor.cpp header.cpp decoder.cpp blocksize.cpp blocksize_auto.cpp encoder.cpp
                     encoder_parallel_link.cpp encoder_dict_link.cpp encoder_plugins_link.cpp)
