// SPDX-License-Identifier: BSD-3-Clause
// --flash-log GEOMETRY (info, dump, verify, convert): FILE is a raw image of NOR flash (a dump of the part) and
// the array is the one the flash port's log holds in the region GEOMETRY names, finalized or not. The image is
// mapped read only and the log mounted through a device whose program and erase fail: nothing is written to it.
#pragma once

#include <cstdint>

#include "tessera/executor.hpp"

namespace tessera::cli {

struct opened_array;

// The region and the part's geometry, from "offset=O,size=S,sector=E,unit=U[,read=R][,erased=V][,dtype=DT]".
struct flash_geometry {
  bool set = false;
  uint64_t offset = 0;       // the region's first byte in the image
  uint64_t size = 0;         // the region's bytes (whole sectors)
  uint64_t sector = 0;       // erase unit
  uint64_t unit = 1;         // program unit (prog_size)
  uint64_t read = 1;         // read unit (read_size)
  uint64_t erased = 0xFF;    // a byte's erased value
  char dtype[64] = {};       // the items' dtype of an array not finalized (empty: bytes of the chunks' typesize)
};
extern flash_geometry g_flash;

// Parses GEOMETRY into g. Reports failures itself (returns the exit status, 0 on success).
[[nodiscard]] int flash_geometry_parse(const char* cmd, const char* text, flash_geometry& g) noexcept;

// The flash image's state an opened array keeps (the mapping, the mounted log, the rebuilt frame).
struct flash_image;
void flash_image_free(flash_image* fi) noexcept;

// What info says of the log.
struct flash_image_summary {
  bool finalized = false;  // the region holds a finalized cframe (read as it is)
  bool damaged = false;    // the mount found damage: the chunks before it are read
  int64_t chunks = 0;      // chunks committed (for an array not finalized: read as one dimension of items)
  uint32_t free_bytes = 0; // bytes an append could still take (the room finalize needs not counted out)
};
[[nodiscard]] flash_image_summary flash_image_summarize(const flash_image& fi) noexcept;

// Opens the array of the log in `path`'s region g_flash (see above). Reports failures itself.
[[nodiscard]] int flash_array_open(const char* cmd, const char* path, opened_array& o, const executor& exec) noexcept;

}  // namespace tessera::cli
