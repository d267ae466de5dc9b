// SPDX-License-Identifier: BSD-3-Clause
// The array flash_reader reads, generated at build time from a golden file (examples/embed_golden.cmake): the
// frame's bytes as a const array (flash), the reads to make and what the reference says they return.
#pragma once

#include <cstddef>
#include <cstdint>

struct flash_golden {
  const char* name;                 ///< the golden case (tests/data/golden/b2nd/MANIFEST.tsv)
  const uint8_t* frame;             ///< the .b2nd file's bytes, in flash
  size_t frame_size;
  int ndim;
  const int64_t* element_coords;    ///< ndim coordinates
  const uint8_t* element_expected;  ///< the item there (itemsize bytes), from the reference's decode
  size_t element_size;
  const int64_t* slice_start;       ///< a 2-D slice [start, stop) (leading axes one item wide)
  const int64_t* slice_stop;
  const uint8_t* slice_expected;    ///< its items, C order
  size_t slice_size;
};

extern const flash_golden kFlashGolden;
