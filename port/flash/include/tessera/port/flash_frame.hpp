// Writing a Blosc2 contiguous frame (a B2ND array: the b2nd metalayer is one of the params' metalayers) to raw
// NOR flash during acquisition, safe against power loss, through the flash log (flash_log.hpp).
//
// Layout of the log's region (hA = header_len rounded up to prog_size):
//
//   0        hA        2hA
//   [hdr #0 ][hdr #1 ][chunk 0][pad][chunk 1]...[chunk n-1][index|trailer]  ...erased...  [log records]
//   `-- frame (slot 0) starts at 0: header, chunks section [header_len, index), index, trailer --'
//
// - Chunks are appended (programmed once, append-only) as log blobs; the frame's header area stays erased.
// - flash_frame_finalize appends one blob holding the index chunk and the trailer, then programs the header into
//   header slot #0: the header is the commit of the finalized frame. The region then holds a plain cframe from
//   offset 0: the reference opens it (its chunks section includes header slot #1 and pads, bytes the index does
//   not point at, which cframes may hold: the reference leaves such dead bytes itself after updates).
// - A power cut while the header is programmed tears slot #0 for good (NOR cannot rewrite it). Finalizing
//   again writes a new index and trailer and the header into slot #1: the frame then starts at hA (open it at
//   that offset; flash_frame_storage does). A cut in both header programs leaves the chunks readable through
//   this API but no cframe.
// - The records that make all this safe live at the region's end, outside the frame: frame_len says where
//   the frame ends, and the reference ignores bytes after it in a file.
// - Fixed metalayers (the b2nd one's shape) are written with the header, at finalize: flash_frame_meta_update
//   changes their content until then (same size), so an array can grow while it is logged and get its final
//   shape at the end. Mount takes the params of create (the content is not part of the array's identity on
//   flash); a mounted array finalizes with those contents unless updated again.
// - Room: an append fails with errc::no_space when the chunk would not leave room for the index and trailer of
//   one more finalize; what was appended stays, and finalize still fits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/flash_log.hpp"
#include "tessera/span.hpp"
#include "tessera/storage.hpp"

namespace tessera {

struct flash_frame {
  flash_frame() noexcept = default;
  flash_frame(const flash_frame&) = delete;
  flash_frame& operator=(const flash_frame&) = delete;

  flash_log log;
  allocator alloc{};
  /// A copy of the params; its metalayers point into metas and meta_bytes (so the caller's need not outlive
  /// create or mount).
  frame_create_params params{};
  frame_metalayer_init metas[kFrameMaxMetalayers] = {};
  owned_array<uint8_t> meta_bytes;
  owned_array<uint8_t> header;   ///< the header buffer: the empty array's header, encoded again at finalize
  bytes_view trailer;            ///< the trailer (frame_trailer_empty: no vlmetalayers, constant)
  uint32_t header_len = 0;
  uint32_t trailer_len = 0;
  uint32_t slot_stride = 0;      ///< header_len rounded up to prog_size: where header slot #1 starts
  uint32_t tag = 0;              ///< the log's user tag: the params' CRC with metalayer contents zeroed
  int32_t chunksize = 0;         ///< every chunk's nbytes

  int64_t nchunks = 0;
  bool has_tail = false;         ///< the last blob is an index+trailer (for header slot tail.aux)
  flash_blob tail{};
  bool finalized = false;
  uint32_t frame_start = 0;      ///< region offset of the finalized frame
  uint64_t frame_len = 0;
};

/// Erases the region and starts an empty array with these frame params (chunksize must be set: every chunk of a
/// B2ND array has the same nbytes). The params (and their metalayers) are needed again to mount.
[[nodiscard]] status flash_frame_create(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                                        const frame_create_params& params) noexcept;
/// Re-opens the array after a reset or a power cut (see flash_log.hpp's recovery): every chunk whose append had
/// returned is there; finalized or not, as the flash says. Errors: errc::malformed (no array in the region),
/// errc::invalid_argument (the array was created with other params or geometry), errc::io.
[[nodiscard]] status flash_frame_mount(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                                       const frame_create_params& params) noexcept;
void flash_frame_close(flash_frame& ff) noexcept;

/// Appends one complete Blosc2 chunk (its header's cbytes bytes, nbytes == chunksize, not VL-block) and syncs:
/// once it returns, a power cut does not lose it. errc::no_space when the region is full (see above),
/// errc::invalid_argument when finalized or for a chunk that does not fit the array.
[[nodiscard]] status flash_frame_append(flash_frame& ff, bytes_view chunk) noexcept;
/// Writes the index, the trailer and the header (last). Idempotent once it succeeded. The index chunk is the
/// stored form (frame_index_encode without an encoder: no codec memory on the device; the reference writes
/// that form itself when compression does not gain). Needs 16 bytes of allocator memory per chunk while it
/// runs (the index).
[[nodiscard]] status flash_frame_finalize(flash_frame& ff) noexcept;

/// Replaces the content of the fixed metalayer `name` (one of the params') with `content`, of the same size (the
/// header keeps its length; like the reference's blosc2_meta_update, which also refuses larger content; shorter
/// content is refused here too). Only what finalize writes changes: nothing goes to flash, so after a reset the
/// array mounts with the params of create and the update must be made again before finalize. Errors:
/// errc::invalid_argument (not open, already finalized, no metalayer of that name, another size).
[[nodiscard]] status flash_frame_meta_update(flash_frame& ff, span<const char> name, bytes_view content) noexcept;

/// Chunk nchunk's compressed bytes into out (at least its size); returns the size. Works finalized or not.
[[nodiscard]] result<size_t> flash_frame_chunk_read(flash_frame& ff, int64_t nchunk, bytes_mut out) noexcept;
/// Once finalized: a read-only storage of exactly the frame's bytes (frame_open it with base_offset 0), valid
/// while ff is open. Before: a storage with no callbacks.
[[nodiscard]] storage flash_frame_storage(flash_frame& ff) noexcept;
/// The finalized frame's bytes in place when the device is memory-mapped (flash_device::mapped): what
/// tessera::array_view_open reads with no copy and no RAM beyond the decoder's scratch. Empty when the frame is
/// not finalized or the device is not mapped (then read it through flash_frame_storage).
[[nodiscard]] bytes_view flash_frame_view(const flash_frame& ff) noexcept;

}  // namespace tessera
