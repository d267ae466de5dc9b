// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Writing a Blosc2 contiguous frame (a B2ND array: the b2nd metalayer is one of the params' metalayers) to raw
/// NOR flash during acquisition, safe against power loss, through the flash log (flash_log.hpp).
///
/// Layout of the log's region (hA = header_len rounded up to prog_size):
/// \verbatim
///   0        hA        2hA
///   [hdr #0 ][hdr #1 ][chunk 0][pad][chunk 1]...[chunk n-1][index|trailer]  ...erased...  [log records]
///   `-- frame (slot 0) starts at 0: header, chunks section [header_len, index), index, trailer --'
/// \endverbatim
/// - Chunks are appended (programmed once, append-only) as log blobs; the frame's header area stays erased.
/// - flash_frame_finalize appends one blob holding the index chunk and the trailer, then programs the header into
///   header slot #0: the header is the commit of the finalized frame. The region then holds a plain cframe from
///   offset 0: the reference opens it (its chunks section includes header slot #1 and pads, bytes the index does
///   not point at, which cframes may hold: the reference leaves such dead bytes itself after updates).
/// - A power cut while the header is programmed tears slot #0 for good (NOR cannot rewrite it). Finalizing
///   again writes a new index and trailer and the header into slot #1: the frame then starts at hA (open it at
///   that offset; flash_frame_storage does). A cut in both header programs leaves the chunks readable through
///   this API but no cframe.
/// - The records that make all this safe live at the region's end, outside the frame: frame_len says where
///   the frame ends, and the reference ignores bytes after it in a file.
/// - Fixed metalayers (the b2nd one's shape) are written with the header, at finalize: flash_frame_meta_update
///   changes their content until then (same size), so an array can grow while it is logged and get its final
///   shape at the end. Mount takes the params of create (the content is not part of the array's identity on
///   flash); a mounted array finalizes with those contents unless updated again.
/// - Room: an append fails with errc::no_space when the chunk would not leave room for finalize to complete
///   through one failure (a power cut or a device error at any point of it): two index+trailer blobs and six
///   records. What was appended stays, and finalize still fits.
///
/// Faults other than a power cut (see flash_log.hpp):
/// - A device error in append or finalize fails the call and writes nothing that counts: calling it again
///   appends the chunk once / finalizes.
/// - Each chunk's record holds its chunk number: mount checks them in order. A chunk whose record was lost at
///   rest (a flipped bit), a chunk recorded twice, or bytes no record explains make mount return errc::corrupt
///   with ff.fault and ff.fault_chunk saying what: never a renumbered array. The frame then stays open, read
///   only: chunks [0, ff.nchunks) (those before the damage) can be read; append and finalize refuse.
/// - Chunk bytes are checked against their record's CRC when read (verify_reads, on by default);
///   flash_frame_scrub checks every chunk, the index and the header. A finalized frame read through
///   flash_frame_storage / flash_frame_view is not checked: scrub once after mount.
/// - A format cut by a power cut is redone in full: create erases every sector, blank or not.
///
/// RAM (flash_frame_estimate): the log's cache, a copy of the params' metalayers and the header; nothing per
/// chunk (finalize streams the index through the cache). Reads: chunk n after chunk n-1 costs O(1) (a cursor
/// is kept); any other chunk O(nchunks / kFlashFrameCheckpoints) (a table of record positions, in the struct).
///
/// One flash_frame is one user's: its calls share a cache and a cursor, so they must not run concurrently (nor
/// one from an interrupt while another runs); see docs/firmware.md.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/flash_log.hpp"
#include "tessera/span.hpp"
#include "tessera/storage.hpp"

namespace tessera {

/// What the last errc::corrupt of mount, chunk_read or scrub found.
enum class flash_frame_fault : uint8_t {
  none = 0,             ///< no fault
  chunk_missing = 1,    ///< chunk fault_chunk has no valid record (lost at rest): later chunks are not listed
  chunk_duplicate = 2,  ///< chunk fault_chunk is recorded twice (an abort record lost at rest)
  chunk_crc = 3,        ///< chunk fault_chunk's bytes fail their CRC (fault_count: how many chunks, scrub)
  index_crc = 4,        ///< an index+trailer blob fails its CRC
  header_crc = 5,       ///< the header fails its CRC
  index_missing = 6,    ///< a header whose index and trailer are not listed (their record lost)
  unexplained = 7,      ///< bytes no record explains after chunk fault_chunk - 1: the record of the next chunk,
                        ///< of the index or of the header was lost at rest, or an erase decayed
};

/// Positions of chunks kept for reads (flash_frame_chunk_read): 4 bytes each, in the struct.
inline constexpr uint32_t kFlashFrameCheckpoints = 32;

/// A B2ND array's frame being written to (or read from) a flash region. Read its fields; change none (but
/// verify_reads). Not copyable.
struct flash_frame {
  flash_frame() noexcept = default;  ///< not open: call flash_frame_create or flash_frame_mount
  flash_frame(const flash_frame&) = delete;
  flash_frame& operator=(const flash_frame&) = delete;

  flash_log log;       ///< the log under the frame
  allocator alloc{};   ///< the allocator of create or mount
  /// A copy of the params; its metalayers point into metas and meta_bytes (so the caller's need not outlive
  /// create or mount).
  frame_create_params params{};
  frame_metalayer_init metas[kFrameMaxMetalayers] = {};  ///< the params' metalayers (copied)
  owned_array<uint8_t> meta_bytes;                       ///< their names and contents
  owned_array<uint8_t> header;   ///< the header buffer: the empty array's header, encoded again at finalize
  bytes_view trailer;            ///< the trailer (frame_trailer_empty: no vlmetalayers, constant)
  uint32_t header_len = 0;       ///< bytes of the frame's header
  uint32_t trailer_len = 0;      ///< bytes of its trailer
  uint32_t slot_stride = 0;      ///< header_len rounded up to prog_size: where header slot #1 starts
  uint32_t tag = 0;              ///< the log's user tag: the params' CRC with metalayer contents zeroed
  int32_t chunksize = 0;         ///< every chunk's nbytes

  int64_t nchunks = 0;           ///< chunks appended (after a damaged mount: those before the damage)
  bool has_tail = false;         ///< the last blob is an index+trailer (for header slot tail.aux)
  flash_blob tail{};             ///< the last index+trailer blob (when has_tail)
  bool finalized = false;        ///< the header is written: the region holds a cframe
  uint32_t frame_start = 0;      ///< region offset of the finalized frame
  uint64_t frame_len = 0;        ///< bytes of the finalized frame

  /// Check each chunk read by flash_frame_chunk_read against its record's CRC (costs a CRC-32 of the chunk).
  bool verify_reads = true;
  bool damaged = false;          ///< mount found damage: read only
  flash_frame_fault fault = flash_frame_fault::none;  ///< what the last errc::corrupt found
  int64_t fault_chunk = -1;      ///< the chunk the fault names (-1: none)
  int64_t fault_count = 0;       ///< chunks found damaged by the last scrub

  /// Read positions: record of chunk k * checkpoint_stride in checkpoints[k]; a cursor after the last read.
  uint32_t checkpoints[kFlashFrameCheckpoints] = {};
  uint32_t checkpoint_count = 0;   ///< entries of checkpoints in use
  uint32_t checkpoint_stride = 1;  ///< chunks between two checkpoints
  int64_t read_next = -1;        ///< the chunk read_cursor yields next (-1: none)
  flash_log_cursor read_cursor{};  ///< the log cursor after the last chunk read
};

/// Erases the region and starts an empty array with these frame params (chunksize must be set: every chunk of a
/// B2ND array has the same nbytes). The params (and their metalayers) are needed again to mount.
[[nodiscard]] status flash_frame_create(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                                        const frame_create_params& params) noexcept;
/// The incremental create: start erases nothing, each step erases one sector and returns false; the step after
/// the last erase writes the log's begin records and returns true (then append). A reset before that leaves no
/// array (mount: errc::malformed): start again.
[[nodiscard]] status flash_frame_create_start(flash_frame& ff, const flash_log_config& config,
                                              const allocator& alloc, const frame_create_params& params) noexcept;
/// One step of the incremental create (see flash_frame_create_start): true once the array is created.
[[nodiscard]] result<bool> flash_frame_create_step(flash_frame& ff) noexcept;
/// Bytes of allocator memory create or mount take with this config and these params (the cache unless
/// config.cache_buffer is set, the metalayers' copy, the header), alignment padding of an arena included; the
/// flash_frame struct itself is sizeof(flash_frame). Independent of the chunk count. Errors: the params'.
[[nodiscard]] result<size_t> flash_frame_estimate(const flash_log_config& config,
                                                  const frame_create_params& params) noexcept;
/// Re-opens the array after a reset or a power cut (see flash_log.hpp's recovery): every chunk whose append had
/// returned is there; finalized or not, as the flash says. Errors: errc::malformed (no array in the region),
/// errc::invalid_argument (the array was created with other params or geometry), errc::io, errc::corrupt
/// (damage: ff.fault, ff.fault_chunk; the frame stays open read only, see above). A firmware must not create
/// over a region whose mount said corrupt or io without deciding to lose it.
[[nodiscard]] status flash_frame_mount(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                                       const frame_create_params& params) noexcept;
/// Mounts the array for reading without its params (a host reading a dump of the region, which knows the
/// geometry but not how the firmware created the array): the same recovery as flash_frame_mount, and no call of
/// it programs or erases, so a device whose prog and erase fail (a read-only image) mounts. Then nchunks,
/// finalized, frame_start and frame_len are set, and flash_frame_chunk_read, flash_frame_scrub,
/// flash_frame_storage and flash_frame_view work; append, finalize and meta_update refuse it (not open), and
/// params, header and tag stay empty (a finalized frame's header says them). Errors as flash_frame_mount's,
/// without the params' check.
[[nodiscard]] status flash_frame_mount_read(flash_frame& ff, const flash_log_config& config,
                                            const allocator& alloc) noexcept;
/// Frees what create or mount allocated; nothing is written (an array not finalized stays on flash, to mount).
void flash_frame_close(flash_frame& ff) noexcept;

/// Appends one complete Blosc2 chunk (its header's cbytes bytes, nbytes == chunksize, not VL-block) and syncs:
/// once it returns, a power cut does not lose it. errc::no_space when the region is full (see above),
/// errc::invalid_argument when finalized or for a chunk that does not fit the array.
[[nodiscard]] status flash_frame_append(flash_frame& ff, bytes_view chunk) noexcept;
/// Writes the index, the trailer and the header (last). Idempotent once it succeeded. The index chunk is the
/// stored form (frame_index_encode without an encoder: no codec memory on the device; the reference writes
/// that form itself when compression does not gain). No allocation: the index is streamed through the cache
/// (it reads the chunks' records twice). After a power cut or a device error at any point of it, mount (after a
/// cut) and finalize again complete it, on a full region too.
[[nodiscard]] status flash_frame_finalize(flash_frame& ff) noexcept;

/// Replaces the content of the fixed metalayer `name` (one of the params') with `content`, of the same size (the
/// header keeps its length; like the reference's blosc2_meta_update, which also refuses larger content; shorter
/// content is refused here too). Only what finalize writes changes: nothing goes to flash, so after a reset the
/// array mounts with the params of create and the update must be made again before finalize. Errors:
/// errc::invalid_argument (not open, already finalized, no metalayer of that name, another size).
[[nodiscard]] status flash_frame_meta_update(flash_frame& ff, span<const char> name, bytes_view content) noexcept;

/// Chunk nchunk's compressed bytes into out (at least its size); returns the size. Works finalized or not.
/// With verify_reads, bytes that fail their CRC are errc::corrupt (fault chunk_crc).
[[nodiscard]] result<size_t> flash_frame_chunk_read(flash_frame& ff, int64_t nchunk, bytes_mut out) noexcept;
/// Reads every blob back (chunks, index+trailer, header) and checks it against its record's CRC: ok, or
/// errc::corrupt with fault (the first found), fault_chunk (the first damaged chunk) and fault_count (damaged
/// chunks). Reads the whole array once; no allocation.
[[nodiscard]] status flash_frame_scrub(flash_frame& ff) noexcept;
/// Once finalized: a read-only storage of exactly the frame's bytes (frame_open it with base_offset 0), valid
/// while ff is open. Before: a storage with no callbacks.
[[nodiscard]] storage flash_frame_storage(flash_frame& ff) noexcept;
/// The finalized frame's bytes in place when the device is memory-mapped (flash_device::mapped): what
/// tessera::array_view_open reads with no copy and no RAM beyond the decoder's scratch. Empty when the frame is
/// not finalized or the device is not mapped (then read it through flash_frame_storage).
[[nodiscard]] bytes_view flash_frame_view(const flash_frame& ff) noexcept;

}  // namespace tessera
