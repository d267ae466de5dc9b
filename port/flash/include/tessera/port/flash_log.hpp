// A power-loss-safe, append-only log of blobs in a region of raw NOR flash: the layer under the B2ND flash
// writer. Blobs (chunks, later the frame's index, trailer and header) are programmed into the region where the
// caller's final format wants them; what makes them safe lives apart, in fixed-size commit records that grow
// down from the region's end, so the blobs' bytes stay exactly what the final format needs.
//
// Layout of a region of S bytes (offsets relative to its first sector):
//
//   0               front_reserve    data_start                 data_end                         S
//   [ front area: erased until the  ][ blob ][pad][ blob ] ... ][ erased ... ][ rec n ]...[ rec 1 ][ rec 0 ]
//     caller writes it (headers)  ]                                              records grow downward
//
// - Record 0 is the log's begin record (geometry, front_reserve, the caller's tag); then one record per blob.
// - Blobs in the data area start at prog_size multiples (the pad, < prog_size bytes, stays erased): every
//   prog_size unit is programmed once, so a torn program never hits bytes that were already committed.
// - Appending a blob: program its record first (where, how long, CRC-32 of the bytes), then the bytes, then
//   sync. The record before the bytes tells recovery how far a torn write may reach.
// - Every sector is erased at most once per log: flash_log_format erases the region (the sector holding the
//   records first, so a cut there leaves the old log whole or no log at all) and nothing is erased later.
//
// Recovery (flash_log_mount): read records from the top until the first erased slot. A record that is neither
// erased nor valid (CRC) is a torn record: skipped (no blob bytes were programmed after it). Blobs whose record
// is followed by another blob's record were complete when that record was written. Only the last blob can be
// torn: its bytes are checked against the record's CRC; a mismatch makes it dead, and before the next record
// the log writes an abort record for it, so later mounts skip it without reading it. The next blob starts
// after the dead blob's extent (its bytes may be partly programmed).
// So after any cut, every blob whose append returned success is there, and a blob whose append failed is there
// whole or not at all.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/port/flash.hpp"
#include "tessera/span.hpp"

namespace tessera {

inline constexpr uint32_t kFlashLogRecordSize = 32;  ///< bytes of a record before padding to prog_size

struct flash_log_config {
  flash_device device{};
  uint32_t first_sector = 0;
  uint32_t sector_count = 0;     ///< 0: to the end of the device
  /// The read/program cache (littlefs's read and prog buffers in one): a multiple of prog_size, at least one
  /// record slot. 0: the record slot size, at least 64 bytes. The buffer is the caller's when cache_buffer is set,
  /// else it comes from the allocator.
  uint32_t cache_size = 0;
  void* cache_buffer = nullptr;
};

/// One committed blob.
struct flash_blob {
  uint32_t record = 0;  ///< its record's index (1, 2, ...)
  uint32_t offset = 0;  ///< region offset of its first byte
  uint32_t size = 0;    ///< bytes
  uint32_t crc = 0;     ///< CRC-32 of its bytes
  uint8_t tag = 0;      ///< the caller's kind of blob
  uint32_t aux = 0;     ///< the caller's word
};

/// Room an append must leave behind (for what the caller still has to write, e.g. a frame's index and header).
struct flash_log_keep {
  uint32_t bytes = 0;    ///< data-area bytes
  uint32_t records = 0;  ///< records
};

struct flash_log {
  flash_log() noexcept = default;
  flash_log(const flash_log&) = delete;
  flash_log& operator=(const flash_log&) = delete;

  flash_device device{};
  uint32_t first_sector = 0;
  uint32_t sector_count = 0;
  uint32_t region_size = 0;
  uint32_t slot_size = 0;       ///< a record padded to prog_size
  uint32_t front_reserve = 0;
  uint32_t data_start = 0;      ///< front_reserve rounded up to prog_size
  uint32_t user_tag = 0;        ///< from the begin record

  uint32_t next_record = 0;     ///< the slot the next record goes to
  uint32_t data_end = 0;        ///< the data area is erased from here (a prog_size multiple)
  uint32_t front_end = 0;       ///< the front area is erased from here
  uint32_t dead_record = 0;     ///< the torn last blob found at mount (0: none)
  bool abort_pending = false;   ///< an abort record for dead_record must precede the next record
  uint32_t torn_records = 0;    ///< records found torn at mount (statistics)

  uint8_t* cache = nullptr;
  uint32_t cache_size = 0;
  owned_array<uint8_t> cache_owned;
};

/// Erases the region (sectors already blank are not erased again) and writes the begin record. front_reserve bytes
/// at the start stay erased for flash_log_write_front. user_tag is kept in the begin record (e.g. a hash of the
/// caller's parameters, so a later mount can tell whether it is the same kind of log).
[[nodiscard]] status flash_log_format(flash_log& log, const flash_log_config& config, const allocator& alloc,
                                      uint32_t front_reserve, uint32_t user_tag) noexcept;
/// Opens the log a format left, recovering from a power cut as described above. Errors: errc::malformed when the
/// region holds no log (never formatted, or the cut fell inside flash_log_format), errc::invalid_argument when
/// it was formatted with another geometry, errc::io from the device.
[[nodiscard]] status flash_log_mount(flash_log& log, const flash_log_config& config, const allocator& alloc) noexcept;
void flash_log_release(flash_log& log) noexcept;

/// Appends one blob (the concatenation of `pieces`) at data_end and syncs. errc::no_space when it and `keep`
/// do not fit (nothing is written then; the log stays usable for smaller blobs and for what `keep` saved room for).
[[nodiscard]] result<flash_blob> flash_log_append(flash_log& log, uint8_t tag, uint32_t aux,
                                                  span<const bytes_view> pieces, flash_log_keep keep = {}) noexcept;
/// Programs one blob into the front area at `offset` (a prog_size multiple, at or past front_end: each front byte
/// is written once) and syncs. Its record is kept like any other; keep_records as flash_log_keep::records.
[[nodiscard]] result<flash_blob> flash_log_write_front(flash_log& log, uint8_t tag, uint32_t aux, uint32_t offset,
                                                       span<const bytes_view> pieces,
                                                       uint32_t keep_records = 0) noexcept;

/// Data-area bytes an append of one blob could still use, leaving `keep` (0 when none).
[[nodiscard]] uint32_t flash_log_free_bytes(const flash_log& log, flash_log_keep keep = {}) noexcept;

/// Walks the committed blobs in append order: start with a zero cursor; returns false at the end.
struct flash_log_cursor {
  uint32_t record = 1;
};
[[nodiscard]] result<bool> flash_log_next(flash_log& log, flash_log_cursor& cursor, flash_blob* out) noexcept;

/// Reads region bytes at any offset and length (unaligned parts go through the cache).
[[nodiscard]] status flash_log_read(flash_log& log, uint32_t offset, bytes_mut dst) noexcept;
/// Reads a blob's bytes back and compares their CRC-32 with its record: errc::corrupt when they differ.
[[nodiscard]] status flash_log_verify(flash_log& log, const flash_blob& blob) noexcept;

}  // namespace tessera
