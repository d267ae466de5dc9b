# SPDX-License-Identifier: BSD-3-Clause
# Frames: contiguous (cframe) and sparse (sframe) Blosc2 frames over the storage interfaces.
tessera_core_sources(frame_format.cpp frame_state.cpp frame_index.cpp frame_reader.cpp frame_writer.cpp frame_space.cpp
  frame_sweep.cpp)
