// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A power-loss-safe, append-only log of blobs in a region of raw NOR flash: the layer under the B2ND flash
/// writer. Blobs (chunks, later the frame's index, trailer and header) are programmed into the region where the
/// caller's final format wants them; what makes them safe lives apart, in fixed-size commit records that grow
/// down from the region's end, so the blobs' bytes stay exactly what the final format needs.
///
/// Layout of a region of S bytes (offsets relative to its first sector):
/// \verbatim
///   0               front_reserve    data_start                 data_end                         S
///   [ front area: erased until the  ][ blob ][pad][ blob ] ... ][ erased ... ][ rec n ]...[ rec 1 ][ rec 0 ]
///     caller writes it (headers)  ]                                              records grow downward
/// \endverbatim
/// - Records 0 and 1 are two copies of the log's begin record (geometry, front_reserve, the caller's tag): either
///   one valid is enough. Then one record per blob. (Logs of the first format have one begin record and blobs
///   from record 1: they still mount.)
/// - Blobs in the data area start at prog_size multiples (the pad, < prog_size bytes, stays erased) and follow
///   each other: each starts where the one before ended. Every prog_size unit is programmed once, so a torn
///   program never hits bytes that were already committed.
/// - Appending a blob: program its record first (where, how long, CRC-32 of the bytes), then the bytes, then
///   sync. The record before the bytes tells recovery how far a torn write may reach.
/// - flash_log_format erases every sector of the region (the sector holding the records first, so a cut there
///   leaves the old log whole or no log at all), even one that reads blank: after a cut erase a sector can read
///   blank and still be weak. Nothing is erased later.
///
/// Recovery (flash_log_mount): read records from the top until the first erased slot. A record that is neither
/// erased nor valid (CRC) is a torn record: skipped (no blob bytes were programmed after it). Blobs whose record
/// is followed by another blob's record were complete when that record was written. Only the last blob can be
/// torn: unless committed, its bytes are checked against the record's CRC; a mismatch makes it dead, and before the next record
/// the log writes an abort record for it, so later mounts skip it without reading it. The next blob starts
/// after the dead blob's extent (its bytes may be partly programmed).
/// So after any cut, every blob whose append returned success is there, and a blob whose append failed is there
/// whole or not at all.
///
/// Other faults:
/// - A device error (errc::io from read, prog, erase or sync) during an append fails that append and the blob is
///   not there: the next write first reads back the record slot it was writing (still erased: it is reused and
///   the blob's room with it; else it stays spent and an abort record is written for the blob), so an append
///   retried after an error adds the blob once. (A reset before that next write leaves the blob whole or not at
///   all, as a power cut.)
/// - A record lost at rest (a flipped bit makes it fail its CRC): its blob's bytes are then bytes no record
///   explains, before the next blob or past the last one. Mount finds them and returns errc::corrupt; the log is
///   still mounted then, for reading what is left (flash_log_next, flash_log_read), and refuses appends.
/// - A flipped bit in a blob's bytes: flash_log_verify (the blob against its record's CRC).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/port/flash.hpp"
#include "tessera/span.hpp"

namespace tessera {

inline constexpr uint32_t kFlashLogRecordSize = 32;  ///< bytes of a record before padding to prog_size
/// The records are read through a buffer of this size inside flash_log (so that reading them never disturbs the
/// cache): the device's read_size must not be larger.
inline constexpr uint32_t kFlashLogRecordBuffer = 64;

/// Where a log lives and its cache.
struct flash_log_config {
  flash_device device{};         ///< the device (copied into the log)
  uint32_t first_sector = 0;     ///< the region's first sector
  uint32_t sector_count = 0;     ///< 0: to the end of the device
  /// The read/program cache (littlefs's read and prog buffers in one): a multiple of prog_size, at least one
  /// record slot. 0: the record slot size, at least 64 bytes. The buffer is the caller's when cache_buffer is set,
  /// else it comes from the allocator.
  uint32_t cache_size = 0;
  void* cache_buffer = nullptr;  ///< the caller's cache of cache_size bytes (outliving the log); null: allocated
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

/// A mounted (or formatting) log: its geometry and recovery state. Read its fields; change none. Not copyable.
struct flash_log {
  flash_log() noexcept = default;  ///< not mounted: call flash_log_format or flash_log_mount
  flash_log(const flash_log&) = delete;
  flash_log& operator=(const flash_log&) = delete;

  flash_device device{};        ///< the device, from the config
  uint32_t first_sector = 0;    ///< the region's first sector
  uint32_t sector_count = 0;    ///< the region's sectors
  uint32_t region_size = 0;     ///< the region's bytes
  uint32_t slot_size = 0;       ///< a record slot: the record padded to prog_size, then a commit unit
  uint32_t record_part = 0;     ///< the record padded to prog_size
  bool commits = true;          ///< slots have a commit unit (false in logs of the first format)
  uint32_t front_reserve = 0;   ///< bytes of the front area (from the begin record)
  uint32_t data_start = 0;      ///< front_reserve rounded up to prog_size
  uint32_t user_tag = 0;        ///< from the begin record

  uint32_t next_record = 0;     ///< the slot the next record goes to
  uint32_t data_end = 0;        ///< the data area is erased from here (a prog_size multiple)
  uint32_t front_end = 0;       ///< the front area is erased from here
  uint32_t dead_record = 0;     ///< the torn last blob found at mount (0: none)
  bool abort_pending = false;   ///< an abort record for dead_record must precede the next record
  uint32_t torn_records = 0;    ///< records found torn at mount (statistics)
  uint32_t first_record = 2;    ///< the first blob record (1 in logs of the first format)
  bool unsettled = false;       ///< a record program failed: slot next_record's state is read back first
  uint32_t settle_data_end = 0; ///< data_end and front_end before the failed record (restored if it is erased)
  uint32_t settle_front_end = 0;  ///< (see settle_data_end)
  uint32_t format_erased = 0;   ///< sectors erased so far by an incremental format
  bool formatting = false;      ///< flash_log_format_start was called and the begin records are not written
  bool damaged = false;         ///< mount found bytes no record explains (errc::corrupt): appends refused
  uint32_t damage_offset = 0;   ///< region offset of the first such byte

  uint8_t* cache = nullptr;             ///< the read/program cache (the caller's or cache_owned)
  uint32_t cache_size = 0;              ///< its bytes
  owned_array<uint8_t> cache_owned;     ///< the cache when the log allocated it
  alignas(8) uint8_t record_buffer[kFlashLogRecordBuffer] = {};  ///< reads of records (see kFlashLogRecordBuffer)
};

/// A blob's bytes produced on demand (instead of pieces in memory): read(context, offset, dst) fills dst with the
/// blob's bytes [offset, offset + dst.size()). An append calls it twice over the blob, each time with offsets
/// going up from 0 (the CRC for the record first, then the bytes to program); it may read the log's records
/// (flash_log_next) but not the log's cache (flash_log_read).
struct flash_log_source {
  /// Fills dst with the blob's bytes [offset, offset + dst.size()).
  status (*read)(void* context, uint32_t offset, bytes_mut dst) noexcept = nullptr;
  void* context = nullptr;  ///< passed to read
  uint32_t size = 0;        ///< the blob's size in bytes
};

/// Erases every sector of the region and writes the begin records. front_reserve bytes at the start stay erased
/// for flash_log_write_front. user_tag is kept in the begin record (e.g. a hash of the caller's parameters, so a
/// later mount can tell whether it is the same kind of log). The same as flash_log_format_start and then
/// flash_log_format_step until it returns true.
[[nodiscard]] status flash_log_format(flash_log& log, const flash_log_config& config, const allocator& alloc,
                                      uint32_t front_reserve, uint32_t user_tag) noexcept;
/// The incremental form, for a scheduler (a sector erase takes tens of milliseconds; a whole part, minutes):
/// start checks the arguments and erases nothing; each step erases one sector (the records' sector first) and
/// returns false, the step after the last erase writes the begin records and returns true. Until then the log
/// refuses appends, and a reset leaves no log (a mount says errc::malformed; start again).
[[nodiscard]] status flash_log_format_start(flash_log& log, const flash_log_config& config, const allocator& alloc,
                                            uint32_t front_reserve, uint32_t user_tag) noexcept;
/// One step of an incremental format (see flash_log_format_start): true once the log is formatted.
/// Errors: invalid_argument (no format in progress), and the device's.
[[nodiscard]] result<bool> flash_log_format_step(flash_log& log) noexcept;
/// Opens the log a format left, recovering from a power cut as described above. Errors: errc::malformed when the
/// region holds no log (never formatted, or the cut fell inside flash_log_format), errc::invalid_argument when
/// it was formatted with another geometry, errc::io from the device, errc::corrupt when bytes are found that no
/// record explains (a record lost at rest, or a decayed erase): the log is then mounted for reading
/// (log.damaged, log.damage_offset) and refuses appends.
[[nodiscard]] status flash_log_mount(flash_log& log, const flash_log_config& config, const allocator& alloc) noexcept;
/// Frees the cache the log allocated; the log is unmounted. Nothing is written.
void flash_log_release(flash_log& log) noexcept;

/// Appends one blob (the concatenation of `pieces`) at data_end and syncs. errc::no_space when it and `keep`
/// do not fit (nothing is written then; the log stays usable for smaller blobs and for what `keep` saved room for).
[[nodiscard]] result<flash_blob> flash_log_append(flash_log& log, uint8_t tag, uint32_t aux,
                                                  span<const bytes_view> pieces, flash_log_keep keep = {}) noexcept;
/// The same with the blob's bytes from `source` (read twice; no RAM for the blob).
[[nodiscard]] result<flash_blob> flash_log_append_source(flash_log& log, uint8_t tag, uint32_t aux,
                                                         const flash_log_source& source,
                                                         flash_log_keep keep = {}) noexcept;
/// Programs one blob into the front area at `offset` (a prog_size multiple, at or past front_end: each front byte
/// is written once) and syncs. Its record is kept like any other; keep_records as flash_log_keep::records.
[[nodiscard]] result<flash_blob> flash_log_write_front(flash_log& log, uint8_t tag, uint32_t aux, uint32_t offset,
                                                       span<const bytes_view> pieces,
                                                       uint32_t keep_records = 0) noexcept;

/// Data-area bytes an append of one blob could still use, leaving `keep` (0 when none).
[[nodiscard]] uint32_t flash_log_free_bytes(const flash_log& log, flash_log_keep keep = {}) noexcept;

/// Walks the committed blobs in append order: start with a zero cursor; returns false at the end.
struct flash_log_cursor {
  uint32_t record = 1;  ///< the next record to look at
};
/// The next committed blob after `cursor` into *out (aborted and torn ones skipped); false at the end.
/// Errors: the device's.
[[nodiscard]] result<bool> flash_log_next(flash_log& log, flash_log_cursor& cursor, flash_blob* out) noexcept;

/// Reads region bytes at any offset and length (unaligned parts go through the cache).
[[nodiscard]] status flash_log_read(flash_log& log, uint32_t offset, bytes_mut dst) noexcept;
/// Reads a blob's bytes back and compares their CRC-32 with its record: errc::corrupt when they differ.
[[nodiscard]] status flash_log_verify(flash_log& log, const flash_blob& blob) noexcept;
/// Whether region bytes [offset, offset + size) all read as the erased value (offset a read_size multiple).
[[nodiscard]] result<bool> flash_log_is_erased(flash_log& log, uint32_t offset, uint32_t size) noexcept;

}  // namespace tessera
