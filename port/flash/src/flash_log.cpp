// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/port/flash_log.hpp"

#include <string.h>

#include "flash_internal.hpp"

namespace tessera {

namespace {

constexpr uint32_t kMagic = 0x4C465354u;  // "TSFL" little-endian
constexpr uint16_t kVersion = 1;

enum record_kind : uint8_t { kind_begin = 1, kind_blob = 2, kind_abort = 3 };

struct record {
  uint8_t kind = 0;
  uint8_t tag = 0;
  uint32_t seq = 0;     // the slot index: a record copied to another slot is not valid there
  uint32_t aux = 0;     // blob: the caller's word; begin: user tag; abort: the aborted record
  uint32_t offset = 0;  // blob: region offset; begin: front_reserve
  uint32_t size = 0;    // blob: bytes; begin: slot size
  uint32_t crc = 0;     // blob: CRC-32 of the bytes; begin: geometry fingerprint
};

// Little-endian words: one (unaligned) store or load where the host is little-endian, swapped where not.
inline uint32_t le32(uint32_t v) noexcept {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return __builtin_bswap32(v);
#else
  return v;
#endif
}
inline void put32(uint8_t* p, uint32_t v) noexcept {
  v = le32(v);
  memcpy(p, &v, 4);
}
inline uint32_t get32(const uint8_t* p) noexcept {
  uint32_t v;
  memcpy(&v, p, 4);
  return le32(v);
}

void record_encode(const record& r, uint8_t* out) noexcept {
  put32(out, kMagic);
  out[4] = r.kind;
  out[5] = r.tag;
  out[6] = static_cast<uint8_t>(kVersion);
  out[7] = static_cast<uint8_t>(kVersion >> 8);
  put32(out + 8, r.seq);
  put32(out + 12, r.aux);
  put32(out + 16, r.offset);
  put32(out + 20, r.size);
  put32(out + 24, r.crc);
  put32(out + 28, flash_crc32_update(0, bytes_view(out, 28)));
}

bool record_decode(const uint8_t* in, uint32_t seq, record* r) noexcept {
  if (get32(in) != kMagic || get32(in + 28) != flash_crc32_update(0, bytes_view(in, 28))) return false;
  if ((in[6] | in[7] << 8) != kVersion || get32(in + 8) != seq) return false;
  r->kind = in[4];
  r->tag = in[5];
  r->seq = seq;
  r->aux = get32(in + 12);
  r->offset = get32(in + 16);
  r->size = get32(in + 20);
  r->crc = get32(in + 24);
  return r->kind == kind_begin || r->kind == kind_blob || r->kind == kind_abort;
}

uint32_t round_up(uint32_t v, uint32_t unit) noexcept { return (v + unit - 1) / unit * unit; }

uint32_t geometry_fingerprint(const flash_log& log) noexcept {
  uint8_t g[17];
  put32(g, log.device.read_size);
  put32(g + 4, log.device.prog_size);
  put32(g + 8, log.device.sector_size);
  put32(g + 12, log.sector_count);
  g[16] = log.device.erased_value;
  return flash_crc32_update(0, bytes_view(g, sizeof g));
}

// Slot `i`'s region offset, or UINT32_MAX when it does not fit above `floor`.
uint32_t slot_offset(const flash_log& log, uint32_t i, uint32_t floor) noexcept {
  // i + 1 slots fit below the region's end while i < region_size / slot_size: 32-bit arithmetic from there.
  if (i >= log.region_size / log.slot_size) return UINT32_MAX;
  const uint32_t below = (i + 1) * log.slot_size;
  if (log.region_size - below < floor) return UINT32_MAX;
  return log.region_size - below;
}

// ---- Region I/O ---------------------------------------------------------------------------------------------

detail::code_status region_read_aligned(const flash_log& log, uint32_t offset, bytes_mut dst) noexcept {
  const uint32_t ss = log.device.sector_size;
  while (!dst.empty()) {
    const uint32_t in_sector = offset % ss;
    const size_t n = dst.size() < ss - in_sector ? dst.size() : ss - in_sector;
    TESSERA_TRY(detail::flash_read_checked(log.device, log.first_sector + offset / ss, in_sector, dst.subspan(0, n)));
    offset += static_cast<uint32_t>(n);
    dst = dst.subspan(n);
  }
  return ok_status();
}

detail::code_status region_read(flash_log& log, uint32_t offset, bytes_mut dst) noexcept {
  if (offset > log.region_size || dst.size() > log.region_size - offset)
    return make_error(errc::out_of_range, TESSERA_MSG("flash log: read past the region"));
  const uint32_t rs = log.device.read_size;
  if (offset % rs == 0 && dst.size() % rs == 0) return region_read_aligned(log, offset, dst);
  while (!dst.empty()) {
    const uint32_t base = offset / rs * rs;
    const uint32_t skip = offset - base;
    uint32_t span_bytes = round_up(skip + static_cast<uint32_t>(dst.size() < log.cache_size ? dst.size()
                                                                                            : log.cache_size),
                                   rs);
    if (span_bytes > log.cache_size) span_bytes = log.cache_size;
    if (span_bytes > log.region_size - base) span_bytes = log.region_size - base;
    TESSERA_TRY(region_read_aligned(log, base, bytes_mut(log.cache, span_bytes)));
    const size_t n = dst.size() < span_bytes - skip ? dst.size() : span_bytes - skip;
    memcpy(dst.data(), log.cache + skip, n);
    offset += static_cast<uint32_t>(n);
    dst = dst.subspan(n);
  }
  return ok_status();
}

// Programs prog_size-aligned bytes, one call per page.
detail::code_status region_prog(const flash_log& log, uint32_t offset, bytes_view src) noexcept {
  const uint32_t ss = log.device.sector_size;
  const uint32_t page = flash_page_size(log.device);
  while (!src.empty()) {
    const uint32_t in_page = offset % page;
    const size_t n = src.size() < page - in_page ? src.size() : page - in_page;
    TESSERA_TRY(detail::flash_prog_checked(log.device, log.first_sector + offset / ss, offset % ss, src.subspan(0, n)));
    offset += static_cast<uint32_t>(n);
    src = src.subspan(n);
  }
  return ok_status();
}

uint64_t pieces_size(span<const bytes_view> pieces) noexcept {
  uint64_t total = 0;
  for (bytes_view p : pieces) total += p.size();
  return total;
}

uint32_t pieces_crc(span<const bytes_view> pieces) noexcept {
  uint32_t crc = 0;
  for (bytes_view p : pieces) crc = flash_crc32_update(crc, p);
  return crc;
}

// Programs record r into slot r.seq (which must be log.next_record). On success the slot is spent
// (next_record moves on). On a device error the slot's state is unknown: the log is unsettled, and the next
// write reads the slot back first (settle).
detail::code_status put_record(flash_log& log, const record& r, uint32_t floor) noexcept {
  const uint32_t at = slot_offset(log, r.seq, floor);
  if (at == UINT32_MAX) return make_error(errc::no_space, TESSERA_MSG("flash log: no room for a record"));
  memset(log.cache, log.device.erased_value, log.record_part);
  record_encode(r, log.cache);
  const detail::code_status s = region_prog(log, at, bytes_view(log.cache, log.record_part));
  if (!s.ok()) {
    log.unsettled = true;
    return s;
  }
  ++log.next_record;
  return ok_status();
}

// Reads slot `i`: 1 valid (in *r), 0 erased, -1 torn. Through the log's record buffer, never the cache.
result<int> read_record(flash_log& log, uint32_t i, uint32_t floor, record* r) noexcept {
  const uint32_t at = slot_offset(log, i, floor);
  if (at == UINT32_MAX) return 0;  // past the records' room: nothing more
  const uint32_t piece = kFlashLogRecordBuffer / log.device.read_size * log.device.read_size;  // >= 32
  uint8_t* buf = log.record_buffer;
  for (uint32_t k = 0; k < log.slot_size;) {
    const uint32_t n = log.slot_size - k < piece ? log.slot_size - k : piece;
    TESSERA_TRY(region_read_aligned(log, at + k, bytes_mut(buf, n)));
    bool erased = true;
    for (uint32_t j = 0; j < n; ++j) erased = erased && buf[j] == log.device.erased_value;
    if (!erased) return k == 0 && record_decode(buf, i, r) ? 1 : -1;
    k += n;
  }
  return 0;
}

detail::code_status crc_of_range(flash_log& log, uint32_t offset, uint32_t size, uint32_t* out) noexcept {
  if (offset > log.region_size || size > log.region_size - offset || offset % log.device.read_size != 0)
    return make_error(errc::corrupt, TESSERA_MSG("flash log: blob misaligned or past the region"));
  uint32_t crc = 0;
  while (size != 0) {
    const uint32_t n = size < log.cache_size ? size : log.cache_size;
    // Whole read units (the cache is a multiple of them, the region ends on one): only n bytes count.
    const uint32_t whole = round_up(n, log.device.read_size);
    TESSERA_TRY(region_read_aligned(log, offset, bytes_mut(log.cache, whole)));
    crc = flash_crc32_update(crc, bytes_view(log.cache, n));
    offset += n;
    size -= n;
  }
  *out = crc;
  return ok_status();
}

detail::code_status open_common(flash_log& log, const flash_log_config& config, const allocator& alloc) noexcept {
  flash_log_release(log);
  TESSERA_TRY(flash_device_validate(config.device));
  const flash_device& d = config.device;
  if (config.first_sector >= d.sector_count)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: first_sector past the device"));
  const uint32_t count = config.sector_count == 0 ? d.sector_count - config.first_sector : config.sector_count;
  if (count > d.sector_count - config.first_sector)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: region past the end of the device"));
  if (static_cast<uint64_t>(count) * d.sector_size > UINT32_MAX)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: region larger than 4 GiB"));
  log.device = d;
  log.first_sector = config.first_sector;
  log.sector_count = count;
  log.region_size = count * d.sector_size;
  if (d.read_size > kFlashLogRecordBuffer)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: read_size above 64 bytes is not supported"));
  // A slot: the record, then one program unit for the blob's commit mark.
  log.record_part = round_up(kFlashLogRecordSize, d.prog_size);
  log.slot_size = log.record_part + d.prog_size;
  log.commits = true;
  if (log.slot_size > d.sector_size)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: a record does not fit in a sector"));
  uint32_t cache = config.cache_size;
  if (cache == 0) cache = round_up(log.slot_size < 64 ? 64 : log.slot_size, d.prog_size);
  if (cache % d.prog_size != 0 || cache < log.record_part)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: cache_size must be a prog_size multiple >= a record slot"));
  log.cache_size = cache;
  if (config.cache_buffer != nullptr) {
    log.cache = static_cast<uint8_t*>(config.cache_buffer);
  } else {
    TESSERA_TRY(log.cache_owned.allocate(alloc, cache));
    log.cache = log.cache_owned.data();
  }
  return ok_status();
}

// Programs the commit mark of slot `seq` (every bit of its unit away from the erased value): the blob's bytes
// are complete and synced, its append returns.
detail::code_status write_commit(flash_log& log, uint32_t seq) noexcept {
  const uint32_t at = slot_offset(log, seq, 0);
  if (at == UINT32_MAX) return make_error(errc::no_space, TESSERA_MSG("flash log: no room for a record"));
  memset(log.cache, static_cast<uint8_t>(~log.device.erased_value), log.device.prog_size);
  return region_prog(log, at + log.record_part, bytes_view(log.cache, log.device.prog_size));
}

// Whether slot i's commit mark is programmed: more than half of its bits (one flipped bit either way does not
// change the answer).
result<bool> read_commit(flash_log& log, uint32_t i) noexcept {
  const uint32_t at = slot_offset(log, i, 0);
  if (at == UINT32_MAX) return false;
  const uint32_t piece = kFlashLogRecordBuffer / log.device.read_size * log.device.read_size;
  uint32_t programmed = 0;
  for (uint32_t k = 0; k < log.device.prog_size;) {
    const uint32_t n = log.device.prog_size - k < piece ? log.device.prog_size - k : piece;
    TESSERA_TRY(region_read_aligned(log, at + log.record_part + k, bytes_mut(log.record_buffer, n)));
    for (uint32_t j = 0; j < n; ++j) {
      uint32_t x = static_cast<uint8_t>(log.record_buffer[j] ^ log.device.erased_value);
      for (; x != 0; x &= x - 1) ++programmed;
    }
    k += n;
  }
  return programmed * 2 > log.device.prog_size * 8;
}

// Brings the in-memory state back to what the flash says after a record program that failed (errc::io): the
// slot still erased is reused (and the room of the blob it announced, whose bytes were never programmed); a
// slot with anything in it is spent, and a complete blob record there is aborted.
detail::code_status settle(flash_log& log) noexcept {
  if (!log.unsettled) return ok_status();
  record r;
  result<int> got = read_record(log, log.next_record, 0, &r);
  if (!got.ok()) return got.err();  // still unsettled: the next write tries again
  log.unsettled = false;
  if (*got == 0 || (*got < 0)) {
    log.data_end = log.settle_data_end;
    log.front_end = log.settle_front_end;
    if (*got == 0) return ok_status();
    ++log.torn_records;
  } else if (r.kind == kind_blob) {
    log.dead_record = log.next_record;  // its bytes were never programmed: it must not count
    log.abort_pending = true;
  } else if (r.kind == kind_abort) {
    log.abort_pending = false;  // the abort did get written
  }
  ++log.next_record;
  return ok_status();
}

detail::code_status write_pending_abort(flash_log& log) noexcept {
  if (!log.abort_pending) return ok_status();
  record r;
  r.kind = kind_abort;
  r.seq = log.next_record;
  r.aux = log.dead_record;
  log.settle_data_end = log.data_end;
  log.settle_front_end = log.front_end;
  // A torn abort (power cut) is skipped as torn, and the next mount aborts again.
  TESSERA_TRY(put_record(log, r, log.data_end));
  log.abort_pending = false;
  return ok_status();
}

// The pieces of a blob as a source.
struct pieces_reader {
  span<const bytes_view> pieces;
  size_t k = 0;
  size_t at = 0;
};

status pieces_read(void* context, uint32_t offset, bytes_mut dst) noexcept {
  auto& p = *static_cast<pieces_reader*>(context);
  if (offset == 0) p.k = p.at = 0;
  size_t w = 0;
  while (w < dst.size()) {
    if (p.k >= p.pieces.size()) return make_error(errc::invalid_argument, TESSERA_MSG("flash log: blob shorter than announced"));
    const bytes_view piece = p.pieces[p.k];
    const size_t n = piece.size() - p.at < dst.size() - w ? piece.size() - p.at : dst.size() - w;
    if (n != 0) memcpy(dst.data() + w, piece.data() + p.at, n);
    w += n;
    p.at += n;
    if (p.at == piece.size()) {
      ++p.k;
      p.at = 0;
    }
  }
  return ok_status();
}

// The CRC-32 of a source's bytes, through the cache.
detail::code_status source_crc(flash_log& log, const flash_log_source& src, uint32_t* out) noexcept {
  uint32_t crc = 0;
  for (uint32_t pos = 0; pos < src.size;) {
    const uint32_t n = src.size - pos < log.cache_size ? src.size - pos : log.cache_size;
    TESSERA_TRY(src.read(src.context, pos, bytes_mut(log.cache, n)));
    crc = flash_crc32_update(crc, bytes_view(log.cache, n));
    pos += n;
  }
  *out = crc;
  return ok_status();
}

// Programs a source's bytes at `offset` through the cache, padding the last unit with the erased value (so the
// pad can never be mistaken for a programmed byte, and costs no extra program).
detail::code_status program_source(flash_log& log, uint32_t offset, const flash_log_source& src) noexcept {
  for (uint32_t pos = 0; pos < src.size;) {
    const uint32_t n = src.size - pos < log.cache_size ? src.size - pos : log.cache_size;
    TESSERA_TRY(src.read(src.context, pos, bytes_mut(log.cache, n)));
    const uint32_t len = round_up(n, log.device.prog_size);  // the cache is a prog_size multiple
    memset(log.cache + n, log.device.erased_value, len - n);
    TESSERA_TRY(region_prog(log, offset + pos, bytes_view(log.cache, len)));
    pos += n;
  }
  return ok_status();
}

detail::code_status writable(const flash_log& log) noexcept {
  if (log.cache == nullptr || log.formatting)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: not mounted (or its format is not finished)"));
  if (log.damaged) return make_error(errc::corrupt, TESSERA_MSG("flash log: damaged (a record is lost): read only"));
  return ok_status();
}

// Writes one blob's record then its bytes at `offset`, and syncs. crc: the bytes' CRC-32.
result<flash_blob> write_blob(flash_log& log, uint8_t tag, uint32_t aux, uint32_t offset,
                              const flash_log_source& src, uint32_t crc, uint32_t floor) noexcept {
  record r;
  r.kind = kind_blob;
  r.tag = tag;
  r.seq = log.next_record;
  r.aux = aux;
  r.offset = offset;
  r.size = src.size;
  r.crc = crc;
  // The blob's extent is spent once its record may be on flash (settle gives it back if the record is not).
  log.settle_data_end = log.data_end;
  log.settle_front_end = log.front_end;
  const uint32_t end = round_up(offset + src.size, log.device.prog_size);
  if (offset >= log.data_start) log.data_end = end;
  else log.front_end = end;
  const detail::code_status rs = put_record(log, r, floor);
  if (!rs.ok()) {
    if (!log.unsettled) {  // nothing was written
      log.data_end = log.settle_data_end;
      log.front_end = log.settle_front_end;
    }
    return rs;
  }
  // From here on the record is on flash: a failure makes the blob dead, aborted before the next record.
  detail::code_status s = program_source(log, offset, src);
  if (s.ok()) s = detail::flash_sync_checked(log.device);
  if (s.ok() && log.commits) s = write_commit(log, r.seq);
  if (s.ok() && log.commits) s = detail::flash_sync_checked(log.device);
  if (!s.ok()) {
    log.dead_record = r.seq;
    log.abort_pending = true;
    return s;
  }
  flash_blob b;
  b.record = r.seq;
  b.offset = offset;
  b.size = src.size;
  b.crc = r.crc;
  b.tag = tag;
  b.aux = aux;
  return b;
}

// Records an append still needs besides its own: the pending abort, and what settling may add.
uint64_t records_owed(const flash_log& log) noexcept {
  return (log.abort_pending ? 1u : 0u) + (log.unsettled ? 2u : 0u);
}

}  // namespace

status flash_log_format_start(flash_log& log, const flash_log_config& config, const allocator& alloc,
                              uint32_t front_reserve, uint32_t user_tag) noexcept {
  TESSERA_TRY(open_common(log, config, alloc));
  log.front_reserve = front_reserve;
  log.data_start = round_up(front_reserve, log.device.prog_size);
  if (log.data_start < front_reserve || slot_offset(log, 1, log.data_start) == UINT32_MAX)
    return make_error(errc::no_space, TESSERA_MSG("flash log: front_reserve leaves no room in the region"));
  log.user_tag = user_tag;
  log.format_erased = 0;
  log.formatting = true;
  return ok_status();
}

result<bool> flash_log_format_step(flash_log& log) noexcept {
  if (log.cache == nullptr || !log.formatting)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: no format in progress"));
  // Every sector is erased, even one that reads blank (a cut erase can read blank and be weak). The records'
  // top sector first: a cut in these steps leaves either the old log (its records and its data untouched) or
  // no begin record at all, never a new begin record over old bytes.
  if (log.format_erased < log.sector_count) {
    const uint32_t s = log.format_erased == 0 ? log.sector_count - 1 : log.format_erased - 1;
    TESSERA_TRY(detail::flash_erase_checked(log.device, log.first_sector + s));
    ++log.format_erased;
    return false;
  }
  TESSERA_TRY(detail::flash_sync_checked(log.device));
  record r;
  r.kind = kind_begin;
  r.tag = 2;  // the format with two begin records
  r.aux = log.user_tag;
  r.offset = log.front_reserve;
  r.size = log.slot_size;
  r.crc = geometry_fingerprint(log);
  log.data_end = log.data_start;
  log.front_end = 0;
  log.first_record = 2;
  log.next_record = 0;
  log.unsettled = false;
  for (uint32_t copy = 0; copy < 2; ++copy) {
    r.seq = copy;
    const detail::code_status s = put_record(log, r, log.data_start);
    if (!s.ok()) {
      log.unsettled = false;  // the format is redone from its first step: nothing to settle
      log.next_record = 0;
      log.format_erased = 0;
      return s;
    }
  }
  TESSERA_TRY(detail::flash_sync_checked(log.device));
  log.formatting = false;
  return true;
}

status flash_log_format(flash_log& log, const flash_log_config& config, const allocator& alloc,
                        uint32_t front_reserve, uint32_t user_tag) noexcept {
  TESSERA_TRY(flash_log_format_start(log, config, alloc, front_reserve, user_tag));
  for (;;) {
    result<bool> done = flash_log_format_step(log);
    if (!done.ok()) return done.err();
    if (*done) return ok_status();
  }
}

status flash_log_mount(flash_log& log, const flash_log_config& config, const allocator& alloc) noexcept {
  TESSERA_TRY(open_common(log, config, alloc));
  // The begin record: copy 0, else copy 1. A log of the first format (slots without a commit mark, one begin
  // record, blobs from record 1) has none at these places: its slots are tried next.
  record r;
  bool found = false;
  for (int format = 2; format >= 1 && !found; --format) {
    if (format == 1) {
      log.slot_size = log.record_part;
      log.commits = false;
    }
    result<int> first = read_record(log, 0, 0, &r);
    if (!first.ok()) return first.err();
    found = *first == 1 && r.kind == kind_begin && (format == 2) == (r.tag >= 2);
    if (!found && format == 2) {
      result<int> second = read_record(log, 1, 0, &r);
      if (!second.ok()) return second.err();
      found = *second == 1 && r.kind == kind_begin && r.tag >= 2;
    }
    log.first_record = static_cast<uint32_t>(format);
  }
  if (!found)
    return make_error(errc::malformed, TESSERA_MSG("flash log: no log in the region (not formatted, or format was cut)"));
  if (r.crc != geometry_fingerprint(log) || r.size != log.slot_size)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: the region was formatted with another geometry"));
  log.front_reserve = r.offset;
  log.data_start = round_up(r.offset, log.device.prog_size);
  log.user_tag = r.aux;
  log.data_end = log.data_start;
  log.front_end = 0;
  if (log.data_start < r.offset || log.data_start > log.region_size)
    return make_error(errc::corrupt, TESSERA_MSG("flash log: begin record's front_reserve past the region"));

  uint32_t last_blob = 0;
  uint32_t last_offset = 0;
  uint32_t last_size = 0;
  uint32_t last_crc = 0;
  uint32_t i = log.first_record;
  for (;; ++i) {
    result<int> got = read_record(log, i, log.data_end, &r);
    if (!got.ok()) return got.err();
    if (*got == 0) break;
    if (*got < 0 || r.kind == kind_begin) {
      ++log.torn_records;
      continue;
    }
    if (r.kind == kind_abort) {
      if (r.aux == last_blob) last_blob = 0;
      continue;
    }
    // A blob: its extent must lie in the front area past what is written there, or in the data area.
    const uint64_t end64 = static_cast<uint64_t>(r.offset) + r.size;
    const bool in_front = r.offset >= log.front_end && end64 <= log.front_reserve;
    const bool in_data = r.offset >= log.data_start && end64 <= slot_offset(log, i, 0);
    const uint32_t end = round_up(static_cast<uint32_t>(end64), log.device.prog_size);
    if (in_data) {
      if (r.offset < log.data_end) return make_error(errc::corrupt, TESSERA_MSG("flash log: blob records overlap"));
      // Data blobs follow each other: bytes before this one that no record covers are a lost blob.
      if (r.offset > log.data_end && !log.damaged) {
        log.damaged = true;
        log.damage_offset = log.data_end;
      }
      log.data_end = end;
    } else if (in_front) {
      log.front_end = end;
    } else {
      return make_error(errc::corrupt, TESSERA_MSG("flash log: a blob record points outside its area"));
    }
    last_blob = i;
    last_offset = r.offset;
    last_size = r.size;
    last_crc = r.crc;
  }
  log.next_record = i;
  // The last blob: committed (its append returned), it stays whatever its bytes say (a flipped bit is found when
  // it is read or verified, as in any other blob); else it may be torn: its CRC decides.
  bool committed = false;
  if (last_blob != 0 && log.commits) {
    result<bool> c = read_commit(log, last_blob);
    if (!c.ok()) return c.err();
    committed = *c;
  }
  if (last_blob != 0 && !committed) {
    uint32_t crc = 0;
    TESSERA_TRY(crc_of_range(log, last_offset, last_size, &crc));
    if (crc != last_crc) {
      log.dead_record = last_blob;
      log.abort_pending = true;
    }
  }
  // Past the last blob the data area is erased (a blob's bytes are programmed only after its record): bytes
  // there belong to a blob whose record is lost, or an erase decayed.
  if (!log.damaged) {
    const uint32_t floor = slot_offset(log, log.next_record, 0);
    uint32_t n = floor == UINT32_MAX || floor < log.data_end ? 0 : floor - log.data_end;
    if (n > kFlashLogRecordBuffer) n = kFlashLogRecordBuffer;
    n = n / log.device.read_size * log.device.read_size;
    if (n != 0) {
      TESSERA_TRY(region_read_aligned(log, log.data_end, bytes_mut(log.record_buffer, n)));
      for (uint32_t k = 0; k < n && !log.damaged; ++k) {
        if (log.record_buffer[k] != log.device.erased_value) {
          log.damaged = true;
          log.damage_offset = log.data_end;
        }
      }
    }
  }
  if (log.damaged)
    return make_error(errc::corrupt, TESSERA_MSG("flash log: bytes no record explains (a record lost at rest, or a decayed erase)"));
  return ok_status();
}

void flash_log_release(flash_log& log) noexcept {
  log.cache_owned.reset();
  log.cache = nullptr;
  log.cache_size = 0;
  log.next_record = 0;
  log.dead_record = 0;
  log.abort_pending = false;
  log.torn_records = 0;
  log.first_record = 2;
  log.unsettled = false;
  log.formatting = false;
  log.format_erased = 0;
  log.damaged = false;
  log.damage_offset = 0;
}

uint32_t flash_log_free_bytes(const flash_log& log, flash_log_keep keep) noexcept {
  if (log.cache == nullptr) return 0;
  const uint64_t records = static_cast<uint64_t>(log.next_record) + 1 + keep.records + records_owed(log);
  if (records * log.slot_size > log.region_size) return 0;
  const uint64_t floor = log.region_size - records * log.slot_size;
  const uint64_t need = static_cast<uint64_t>(log.data_end) + keep.bytes;
  if (floor < need) return 0;
  // A blob of n bytes takes round_up(n, prog_size) bytes; any n up to the room rounded down fits. The room is
  // below region_size: 32-bit arithmetic.
  const uint32_t room = static_cast<uint32_t>(floor - need);
  return room / log.device.prog_size * log.device.prog_size;
}

result<flash_blob> flash_log_append_source(flash_log& log, uint8_t tag, uint32_t aux, const flash_log_source& source,
                                           flash_log_keep keep) noexcept {
  TESSERA_TRY(writable(log));
  if (source.read == nullptr && source.size != 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: a source without a read callback"));
  TESSERA_TRY(settle(log));
  if (source.size > flash_log_free_bytes(log, keep))
    return make_error(errc::no_space, TESSERA_MSG("flash log: the region is full"));
  uint32_t crc = 0;
  TESSERA_TRY(source_crc(log, source, &crc));
  TESSERA_TRY(write_pending_abort(log));
  const uint32_t n = source.size;
  return write_blob(log, tag, aux, log.data_end, source, crc, log.data_end + round_up(n, log.device.prog_size));
}

result<flash_blob> flash_log_append(flash_log& log, uint8_t tag, uint32_t aux, span<const bytes_view> pieces,
                                    flash_log_keep keep) noexcept {
  // The pieces as a source: one write path (its CRC read through the cache, as a source's). A size past 32 bits
  // is past any region: clamped, it fails the free-space check as it is.
  const uint64_t size = pieces_size(pieces);
  pieces_reader reader;
  reader.pieces = pieces;
  flash_log_source src;
  src.read = pieces_read;
  src.context = &reader;
  src.size = size > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(size);
  return flash_log_append_source(log, tag, aux, src, keep);
}

result<flash_blob> flash_log_write_front(flash_log& log, uint8_t tag, uint32_t aux, uint32_t offset,
                                         span<const bytes_view> pieces, uint32_t keep_records) noexcept {
  TESSERA_TRY(writable(log));
  TESSERA_TRY(settle(log));
  const uint64_t size = pieces_size(pieces);
  if (offset % log.device.prog_size != 0 || offset < log.front_end || offset > log.front_reserve ||
      size > log.front_reserve - offset)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash log: front write misaligned, rewritten or past the front area"));
  const uint64_t records = static_cast<uint64_t>(log.next_record) + 1 + keep_records + records_owed(log);
  if (records * log.slot_size > log.region_size - log.data_end)
    return make_error(errc::no_space, TESSERA_MSG("flash log: no room for the record"));
  pieces_reader reader;
  reader.pieces = pieces;
  flash_log_source src;
  src.read = pieces_read;
  src.context = &reader;
  src.size = static_cast<uint32_t>(size);
  TESSERA_TRY(write_pending_abort(log));
  return write_blob(log, tag, aux, offset, src, pieces_crc(pieces), log.data_end);
}

result<bool> flash_log_next(flash_log& log, flash_log_cursor& cursor, flash_blob* out) noexcept {
  record r;
  if (cursor.record < log.first_record) cursor.record = log.first_record;
  while (cursor.record < log.next_record) {
    const uint32_t i = cursor.record++;
    result<int> got = read_record(log, i, 0, &r);
    if (!got.ok()) return got.err();
    if (*got != 1 || r.kind != kind_blob || (i == log.dead_record && log.abort_pending)) continue;
    // An abort for it can only follow directly (torn records aside).
    bool aborted = false;
    record a;
    for (uint32_t j = i + 1; j < log.next_record; ++j) {
      result<int> next = read_record(log, j, 0, &a);
      if (!next.ok()) return next.err();
      if (*next == 1 && a.kind == kind_abort && a.aux == i) aborted = true;
      if (*next == 1) break;
    }
    if (aborted) continue;
    out->record = i;
    out->offset = r.offset;
    out->size = r.size;
    out->crc = r.crc;
    out->tag = r.tag;
    out->aux = r.aux;
    return true;
  }
  return false;
}

status flash_log_read(flash_log& log, uint32_t offset, bytes_mut dst) noexcept {
  if (log.cache == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash log: not mounted"));
  return region_read(log, offset, dst);
}

status flash_log_verify(flash_log& log, const flash_blob& blob) noexcept {
  if (log.cache == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash log: not mounted"));
  uint32_t crc = 0;
  TESSERA_TRY(crc_of_range(log, blob.offset, blob.size, &crc));
  if (crc != blob.crc) return make_error(errc::corrupt, TESSERA_MSG("flash log: blob bytes do not match their record's CRC"));
  return ok_status();
}

result<bool> flash_log_is_erased(flash_log& log, uint32_t offset, uint32_t size) noexcept {
  if (log.cache == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash log: not mounted"));
  if (offset > log.region_size || size > log.region_size - offset || offset % log.device.read_size != 0)
    return make_error(errc::out_of_range, TESSERA_MSG("flash log: range misaligned or past the region"));
  while (size != 0) {
    const uint32_t n = size < log.cache_size ? size : log.cache_size;
    const uint32_t whole = round_up(n, log.device.read_size);  // the region ends on a read unit
    TESSERA_TRY(region_read_aligned(log, offset, bytes_mut(log.cache, whole)));
    for (uint32_t k = 0; k < n; ++k) {
      if (log.cache[k] != log.device.erased_value) return false;
    }
    offset += n;
    size -= n;
  }
  return true;
}

}  // namespace tessera
