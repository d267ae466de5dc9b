// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/port/flash_frame.hpp"

#include <stddef.h>
#include <string.h>

#include "tessera/chunk.hpp"

namespace tessera {

namespace {

enum blob_tag : uint8_t { tag_chunk = 1, tag_tail = 2, tag_header = 3 };

constexpr uint32_t kHeaderSlots = 2;

uint32_t round_up(uint32_t v, uint32_t unit) noexcept { return (v + unit - 1) / unit * unit; }

// The header for a frame of nchunks chunks ending at frame_len, with a chunks section of cbytes.
detail::code_status header_encode(flash_frame& ff, int64_t nchunks, uint64_t frame_len, uint64_t cbytes) noexcept {
  frame_header_fields hf;
  hf.frame_len = frame_len;
  hf.nbytes = nchunks * int64_t{ff.chunksize};
  hf.cbytes = static_cast<int64_t>(cbytes);
  hf.chunksize = ff.chunksize;
  result<size_t> n = frame_header_encode(ff.params, hf, bytes_mut(ff.header.data(), ff.header.size()));
  if (!n.ok()) return n.err();
  return *n == ff.header_len ? ok_status() : make_error(errc::corrupt, TESSERA_MSG("flash frame: header length changed"));
}

// Keeps a copy of the params (and their metalayers) and encodes the empty array's header and the trailer.
detail::code_status templates_build(flash_frame& ff, const frame_create_params& params) noexcept {
  if (params.chunksize <= 0)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: params.chunksize must be set (every chunk the same nbytes)"));
  result<uint32_t> hl = frame_header_size(params);  // also checks the params
  if (!hl.ok()) return hl.err();
  size_t meta_total = 0;
  for (uint32_t i = 0; i < params.nmetalayers; ++i)
    meta_total += params.metalayers[i].name.size() + params.metalayers[i].content.size();
  TESSERA_TRY(ff.meta_bytes.allocate(ff.alloc, meta_total));
  ff.params = params;
  uint8_t* at = ff.meta_bytes.data();
  for (uint32_t i = 0; i < params.nmetalayers; ++i) {
    const frame_metalayer_init& m = params.metalayers[i];
    memcpy(at, m.name.data(), m.name.size());
    ff.metas[i].name = span<const char>(reinterpret_cast<const char*>(at), m.name.size());
    at += m.name.size();
    // Zeros first: the tag below must not depend on contents (flash_frame_meta_update changes them).
    if (!m.content.empty()) memset(at, 0, m.content.size());
    ff.metas[i].content = bytes_view(at, m.content.size());
    at += m.content.size();
  }
  ff.params.metalayers = params.nmetalayers > 0 ? ff.metas : nullptr;
  ff.chunksize = params.chunksize;
  ff.header_len = *hl;
  ff.trailer = frame_trailer_empty();
  ff.trailer_len = static_cast<uint32_t>(ff.trailer.size());
  TESSERA_TRY(ff.header.allocate(ff.alloc, ff.header_len));
  // The tag telling arrays of different params apart: the CRC of the empty array's header and trailer with the
  // metalayer contents zeroed (names, sizes and every other param still count).
  TESSERA_TRY(header_encode(ff, 0, uint64_t{ff.header_len} + ff.trailer_len, 0));
  ff.tag = flash_crc32_update(flash_crc32_update(0, bytes_view(ff.header.data(), ff.header.size())),
                              bytes_view(ff.trailer.data(), ff.trailer.size()));
  for (uint32_t i = 0; i < params.nmetalayers; ++i) {
    const bytes_view c = params.metalayers[i].content;
    uint8_t* dst = ff.meta_bytes.data() + (ff.metas[i].content.data() - ff.meta_bytes.data());
    if (!c.empty()) memcpy(dst, c.data(), c.size());
  }
  return header_encode(ff, 0, uint64_t{ff.header_len} + ff.trailer_len, 0);
}

detail::code_status open_prepare(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                    const frame_create_params& params) noexcept {
  flash_frame_close(ff);
  ff.alloc = alloc;
  TESSERA_TRY(flash_device_validate(config.device));
  TESSERA_TRY(templates_build(ff, params));
  // Each header slot can hold header + trailer: an empty array's frame is exactly that.
  ff.slot_stride = round_up(ff.header_len + ff.trailer_len, config.device.prog_size);
  return ok_status();
}

// Bytes of the index+trailer blob for n chunks (the stored index: its bound). 32 bits: append keeps n below
// INT32_MAX / 8.
uint32_t tail_size(const flash_frame& ff, uint32_t n) noexcept { return 8 * n + kChunkMaxOverhead + ff.trailer_len; }

// The header slot a finalize uses now: the first whose bytes are all still erased.
uint32_t next_header_slot(const flash_frame& ff) noexcept {
  return (ff.log.front_end + ff.slot_stride - 1) / ff.slot_stride;
}

status storage_read_cb(void* c, uint64_t offset, bytes_mut dst) noexcept {
  auto& ff = *static_cast<flash_frame*>(c);
  if (offset > ff.frame_len || dst.size() > ff.frame_len - offset)
    return make_error(errc::truncated, TESSERA_MSG("flash frame: read past the frame's end"));
  return flash_log_read(ff.log, static_cast<uint32_t>(ff.frame_start + offset), dst);
}

status storage_size_cb(void* c, uint64_t* out) noexcept {
  *out = static_cast<flash_frame*>(c)->frame_len;
  return ok_status();
}

// The stored index chunk's header for n entries (n >= 1): the header frame_index_encode_stored writes, taken
// from it for min(n, 4) entries (32 bytes of entries or fewer: the no-split flag as for n) with its three
// length words (nbytes, blocksize, cbytes) set for n.
detail::code_status index_head(uint32_t n, uint8_t* out) noexcept {
  uint8_t buf[kChunkMaxOverhead + 32] = {};
  const uint32_t m = n < 4 ? n : 4;
  result<size_t> got = frame_index_encode_stored(bytes_view(buf + kChunkMaxOverhead, 8 * m), bytes_mut(buf, sizeof buf));
  if (!got.ok()) return got.err();
  memcpy(out, buf, kChunkMaxOverhead);
  const uint32_t nbytes = 8 * n;
  const uint32_t words[3] = {nbytes, nbytes < static_cast<uint32_t>(kFrameIndexBlocksize) ? nbytes : kFrameIndexBlocksize,
                             nbytes + static_cast<uint32_t>(kChunkMaxOverhead)};
  for (int w = 0; w < 3; ++w) {
    for (int b = 0; b < 4; ++b) out[4 + 4 * w + b] = static_cast<uint8_t>(words[w] >> (8 * b));
  }
  return ok_status();
}

// The index+trailer blob as a log source: the stored index chunk (its header, then each chunk's offset relative
// to the chunks section, taken from the chunks' records in order) and the trailer. No RAM per chunk.
struct tail_source {
  flash_frame* ff = nullptr;
  uint32_t base = 0;       // region offset of the chunks section
  uint32_t n = 0;          // chunks
  uint8_t head[kChunkMaxOverhead] = {};
  flash_log_cursor cursor{};
  int64_t entry = -1;      // the entry in `bytes`
  uint8_t bytes[8] = {};
};

status tail_read(void* context, uint32_t offset, bytes_mut dst) noexcept {
  auto& ts = *static_cast<tail_source*>(context);
  if (offset == 0) {
    ts.cursor = flash_log_cursor{};
    ts.entry = -1;
  }
  const uint32_t head = static_cast<uint32_t>(kChunkMaxOverhead);
  const uint32_t index_end = head + 8 * ts.n;
  size_t w = 0;
  while (w < dst.size()) {
    const uint32_t pos = offset + static_cast<uint32_t>(w);
    const uint8_t* from;
    uint32_t avail;
    if (pos < head) {
      from = ts.head + pos;
      avail = head - pos;
    } else if (pos < index_end) {
      const int64_t e = (pos - head) / 8;
      if (e != ts.entry) {
        if (e != ts.entry + 1) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: index read out of order"));
        flash_blob b;
        do {
          result<bool> more = flash_log_next(ts.ff->log, ts.cursor, &b);
          if (!more.ok()) return more.err();
          if (!*more) return make_error(errc::corrupt, TESSERA_MSG("flash frame: chunk count changed under the index"));
        } while (b.tag != tag_chunk);
        if (b.aux != static_cast<uint32_t>(e) || b.offset < ts.base)
          return make_error(errc::corrupt, TESSERA_MSG("flash frame: chunk list changed under the index"));
        // A little-endian int64 whose high half is zero (the region is below 4 GiB).
        const uint32_t rel = b.offset - ts.base;
        for (int k = 0; k < 4; ++k) ts.bytes[k] = static_cast<uint8_t>(rel >> (8 * k));
        memset(ts.bytes + 4, 0, 4);
        ts.entry = e;
      }
      const uint32_t in = (pos - head) % 8;
      from = ts.bytes + in;
      avail = 8 - in;
    } else {
      const uint32_t t = pos - index_end;
      if (t >= ts.ff->trailer_len) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: read past the tail"));
      from = ts.ff->trailer.data() + t;
      avail = ts.ff->trailer_len - t;
    }
    const size_t n = avail < dst.size() - w ? avail : dst.size() - w;
    memcpy(dst.data() + w, from, n);
    w += n;
  }
  return ok_status();
}

// The room an append leaves for finalize to complete through one failure (a power cut or a device error at any
// point): a tail for header slot #0 and one for #1 (a torn header #0), and the records of tail, header, their
// aborts, the second tail and header, and the abort of a torn append.
flash_log_keep finalize_keep(const flash_frame& ff, uint32_t n) noexcept {
  flash_log_keep keep;
  keep.bytes = 2 * round_up(tail_size(ff, n), ff.log.device.prog_size);
  keep.records = 6;
  return keep;
}

// Keeps chunk c's record position for reads: every checkpoint_stride-th chunk; when the table is full, every
// other entry goes and the stride doubles (the memory stays kFlashFrameCheckpoints words).
void checkpoint_add(flash_frame& ff, int64_t c, uint32_t record) noexcept {
  if (c % ff.checkpoint_stride != 0) return;
  if (ff.checkpoint_count == kFlashFrameCheckpoints) {
    for (uint32_t k = 0; 2 * k < kFlashFrameCheckpoints; ++k) ff.checkpoints[k] = ff.checkpoints[2 * k];
    ff.checkpoint_count = kFlashFrameCheckpoints / 2;
    ff.checkpoint_stride *= 2;
    if (c % ff.checkpoint_stride != 0) return;
  }
  ff.checkpoints[ff.checkpoint_count++] = record;
}

detail::code_status fault_set(flash_frame& ff, flash_frame_fault f, int64_t chunk, errc code, const char* message) noexcept {
  ff.fault = f;
  ff.fault_chunk = chunk;
  return make_error(code, message);
}

}  // namespace

status flash_frame_create(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                          const frame_create_params& params) noexcept {
  TESSERA_TRY(open_prepare(ff, config, alloc, params));
  TESSERA_TRY(flash_log_format(ff.log, config, alloc, kHeaderSlots * ff.slot_stride, ff.tag));
  return ok_status();
}

status flash_frame_create_start(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                                const frame_create_params& params) noexcept {
  TESSERA_TRY(open_prepare(ff, config, alloc, params));
  return flash_log_format_start(ff.log, config, alloc, kHeaderSlots * ff.slot_stride, ff.tag);
}

result<bool> flash_frame_create_step(flash_frame& ff) noexcept { return flash_log_format_step(ff.log); }

result<size_t> flash_frame_estimate(const flash_log_config& config, const frame_create_params& params) noexcept {
  result<uint32_t> hl = frame_header_size(params);
  if (!hl.ok()) return hl.err();
  const flash_device& d = config.device;
  if (d.prog_size == 0) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: prog_size must be > 0"));
  size_t total = 0;
  if (config.cache_buffer == nullptr) {
    const uint32_t slot = round_up(kFlashLogRecordSize, d.prog_size);
    total += config.cache_size != 0 ? config.cache_size : round_up(slot < 64 ? 64 : slot, d.prog_size);
  }
  for (uint32_t i = 0; i < params.nmetalayers; ++i)
    total += params.metalayers[i].name.size() + params.metalayers[i].content.size();
  total += *hl;
  return total + 3 * (alignof(max_align_t) - 1);  // three allocations, each aligned
}

namespace {

// What mount finds in a mounted log: the chunks, the index+trailer and the header, finalized or not.
detail::code_status mount_walk(flash_frame& ff) noexcept {
  ff.damaged = ff.log.damaged;
  flash_log_cursor cursor;
  flash_blob b;
  flash_blob header{};
  bool last_is_header = false;
  for (;;) {
    result<bool> more = flash_log_next(ff.log, cursor, &b);
    if (!more.ok()) return more.err();
    if (!*more) break;
    last_is_header = false;
    switch (b.tag) {
      case tag_chunk:
        // Chunks are numbered in their records: a gap or a repeat is damage, never a renumbering.
        if (b.aux != static_cast<uint64_t>(ff.nchunks)) {
          ff.damaged = true;
          if (b.aux < ff.nchunks)
            return fault_set(ff, flash_frame_fault::chunk_duplicate, b.aux, errc::corrupt,
                             TESSERA_MSG("flash frame: a chunk is recorded twice (ff.fault_chunk)"));
          return fault_set(ff, flash_frame_fault::chunk_missing, ff.nchunks, errc::corrupt,
                           TESSERA_MSG("flash frame: a chunk's record is lost (ff.fault_chunk)"));
        }
        checkpoint_add(ff, ff.nchunks, b.record);
        ++ff.nchunks;
        ff.has_tail = false;
        break;
      case tag_tail:
        ff.tail = b;
        ff.has_tail = true;
        break;
      case tag_header:
        header = b;
        last_is_header = true;
        break;
      default:
        ff.damaged = true;
        return fault_set(ff, flash_frame_fault::unexplained, ff.nchunks, errc::corrupt,
                         TESSERA_MSG("flash frame: a blob of unknown kind"));
    }
  }
  if (ff.log.damaged)
    return fault_set(ff, flash_frame_fault::unexplained, ff.nchunks, errc::corrupt,
                     TESSERA_MSG("flash frame: bytes no record explains after the last chunk listed (ff.fault_chunk: "
                                 "a lost record of that chunk, of the index or of the header, or a decayed erase)"));
  if (last_is_header) {
    ff.frame_start = header.offset;
    if (ff.nchunks == 0) {
      ff.frame_len = header.size;  // header and trailer, one blob
    } else {
      if (!ff.has_tail || ff.tail.aux != header.aux) {
        ff.damaged = true;
        return fault_set(ff, flash_frame_fault::index_missing, -1, errc::corrupt,
                         TESSERA_MSG("flash frame: a header without its index and trailer"));
      }
      ff.frame_len = static_cast<uint64_t>(ff.tail.offset) + ff.tail.size - ff.frame_start;
    }
    ff.finalized = true;
  } else {
    // Not finalized: the header slot finalize would use is still erased, unless a header's record was lost.
    const uint32_t slot = next_header_slot(ff);
    if (slot < kHeaderSlots) {
      result<bool> blank = flash_log_is_erased(ff.log, slot * ff.slot_stride, ff.slot_stride);
      if (!blank.ok()) return blank.err();
      if (!*blank) {
        ff.damaged = true;
        return fault_set(ff, flash_frame_fault::unexplained, ff.nchunks, errc::corrupt,
                         TESSERA_MSG("flash frame: a header slot is written but no record says so (a lost header record)"));
      }
    }
  }
  return ok_status();
}

}  // namespace

status flash_frame_mount(flash_frame& ff, const flash_log_config& config, const allocator& alloc,
                         const frame_create_params& params) noexcept {
  TESSERA_TRY(open_prepare(ff, config, alloc, params));
  const status log_status = flash_log_mount(ff.log, config, alloc);
  // A damaged log (errc::corrupt) is mounted for reading: the walk names the chunk.
  if (!log_status.ok() && !ff.log.damaged) return log_status;
  if (ff.log.user_tag != ff.tag || ff.log.front_reserve != kHeaderSlots * ff.slot_stride)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: the array on flash was created with other params"));
  return mount_walk(ff);
}

status flash_frame_mount_read(flash_frame& ff, const flash_log_config& config, const allocator& alloc) noexcept {
  flash_frame_close(ff);
  ff.alloc = alloc;
  const status log_status = flash_log_mount(ff.log, config, alloc);
  if (!log_status.ok() && !ff.log.damaged) return log_status;
  // No params: the header slots' size comes from the log's front area (two slots), the frame's from its header.
  ff.slot_stride = ff.log.front_reserve / kHeaderSlots;
  if (ff.slot_stride == 0 || ff.log.front_reserve % kHeaderSlots != 0)
    return make_error(errc::malformed, TESSERA_MSG("flash frame: the log holds no array (its front area is not two header slots)"));
  return mount_walk(ff);
}

void flash_frame_close(flash_frame& ff) noexcept {
  flash_log_release(ff.log);
  ff.header.reset();
  ff.trailer = bytes_view();
  ff.meta_bytes.reset();
  ff.params = frame_create_params{};
  ff.tag = 0;
  ff.nchunks = 0;
  ff.has_tail = false;
  ff.finalized = false;
  ff.frame_start = 0;
  ff.frame_len = 0;
  ff.damaged = false;
  ff.fault = flash_frame_fault::none;
  ff.fault_chunk = -1;
  ff.fault_count = 0;
  ff.checkpoint_count = 0;
  ff.checkpoint_stride = 1;
  ff.read_next = -1;
}

status flash_frame_append(flash_frame& ff, bytes_view chunk) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  if (ff.finalized) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: finalized, no more chunks"));
  if (ff.damaged) return make_error(errc::corrupt, TESSERA_MSG("flash frame: damaged at mount: read only"));
  result<chunk_header> h = chunk_header_read(chunk);
  if (!h.ok()) return h.err();
  if (static_cast<size_t>(h->cbytes) != chunk.size())
    return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: chunk size differs from its header's cbytes"));
  if (h->nbytes != ff.chunksize)
    return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: chunk nbytes differs from the array's chunksize"));
  if (h->vlblocks || h->lazy) return make_error(errc::unsupported, TESSERA_MSG("flash frame: VL-block or lazy chunk"));
  if (ff.nchunks >= INT32_MAX / 8 - 64) return make_error(errc::overflow, TESSERA_MSG("flash frame: too many chunks"));
  result<flash_blob> b = flash_log_append(ff.log, tag_chunk, static_cast<uint32_t>(ff.nchunks),
                                          span<const bytes_view>(&chunk, 1),
                                          finalize_keep(ff, static_cast<uint32_t>(ff.nchunks) + 1));
  if (!b.ok()) return b.err();
  checkpoint_add(ff, ff.nchunks, b->record);
  ++ff.nchunks;
  ff.has_tail = false;
  return ok_status();
}

status flash_frame_finalize(flash_frame& ff) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  if (ff.finalized) return ok_status();
  if (ff.damaged) return make_error(errc::corrupt, TESSERA_MSG("flash frame: damaged at mount: read only"));
  const uint32_t slot = next_header_slot(ff);
  if (slot >= kHeaderSlots)
    return make_error(errc::no_space, TESSERA_MSG("flash frame: both header slots were torn by power cuts; no cframe possible"));
  const uint32_t start = slot * ff.slot_stride;
  const uint32_t base = start + ff.header_len;  // the chunks section
  // The slot must read erased (programming over anything else would leave a header no one wrote).
  result<bool> blank = flash_log_is_erased(ff.log, start, ff.slot_stride);
  if (!blank.ok()) return blank.err();
  if (!*blank) return make_error(errc::corrupt, TESSERA_MSG("flash frame: the header slot is not erased"));
  // The empty frame: header and trailer back to back, in the slot. Else the index and trailer go after the
  // chunks (once per slot) and the header into the slot.
  uint64_t frame_len = uint64_t{ff.header_len} + ff.trailer_len;
  uint64_t cbytes = 0;
  size_t npieces = 2;
  if (ff.nchunks != 0) {
    if (!ff.has_tail || ff.tail.aux != slot) {
      tail_source ts;
      ts.ff = &ff;
      ts.base = base;
      ts.n = static_cast<uint32_t>(ff.nchunks);
      TESSERA_TRY(index_head(ts.n, ts.head));
      flash_log_source src;
      src.read = tail_read;
      src.context = &ts;
      src.size = static_cast<uint32_t>(kChunkMaxOverhead) + 8 * ts.n + ff.trailer_len;
      flash_log_keep keep;
      keep.records = 1;  // the header
      result<flash_blob> tb = flash_log_append_source(ff.log, tag_tail, slot, src, keep);
      if (!tb.ok()) return tb.err();
      ff.tail = *tb;
      ff.has_tail = true;
    }
    frame_len = static_cast<uint64_t>(ff.tail.offset) + ff.tail.size - start;
    cbytes = static_cast<uint64_t>(ff.tail.offset - base);
    npieces = 1;
  }
  // The header, with the lengths of this frame.
  TESSERA_TRY(header_encode(ff, ff.nchunks, frame_len, cbytes));
  const bytes_view pieces[2] = {bytes_view(ff.header.data(), ff.header_len), bytes_view(ff.trailer.data(), ff.trailer_len)};
  result<flash_blob> hb = flash_log_write_front(ff.log, tag_header, slot, start, span<const bytes_view>(pieces, npieces));
  if (!hb.ok()) return hb.err();
  ff.frame_start = start;
  ff.frame_len = frame_len;
  ff.finalized = true;
  return ok_status();
}

status flash_frame_meta_update(flash_frame& ff, span<const char> name, bytes_view content) noexcept {
  if (ff.header.data() == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  if (ff.finalized) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: finalized, metalayers are written"));
  for (uint32_t i = 0; i < ff.params.nmetalayers; ++i) {
    frame_metalayer_init& m = ff.metas[i];
    if (m.name.size() != name.size() || (!name.empty() && memcmp(m.name.data(), name.data(), name.size()) != 0))
      continue;
    if (content.size() != m.content.size())
      return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: a metalayer update must keep the content's size"));
    // The content lives in meta_bytes (templates_build): write it there.
    uint8_t* dst = ff.meta_bytes.data() + (m.content.data() - ff.meta_bytes.data());
    if (!content.empty()) memmove(dst, content.data(), content.size());
    return ok_status();
  }
  return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: no metalayer of that name"));
}

namespace {

// Finds chunk nchunk's blob: from the read cursor when it is at or before it within a stride, else from the
// checkpoint before it. Leaves the cursor after it.
result<flash_blob> chunk_find(flash_frame& ff, int64_t nchunk) noexcept {
  const int64_t stride = ff.checkpoint_stride;
  int64_t next = ff.read_next;
  if (next < 0 || next > nchunk || nchunk - next >= stride) {
    const int64_t k = nchunk / stride;
    if (k >= ff.checkpoint_count) return make_error(errc::corrupt, TESSERA_MSG("flash frame: chunk positions lost"));
    ff.read_cursor.record = ff.checkpoints[k];
    next = k * stride;
  }
  ff.read_next = -1;  // until the walk below succeeds
  flash_blob b;
  for (;;) {
    result<bool> more = flash_log_next(ff.log, ff.read_cursor, &b);
    if (!more.ok()) return more.err();
    if (!*more) return make_error(errc::corrupt, TESSERA_MSG("flash frame: chunk missing from the log"));
    if (b.tag != tag_chunk) continue;
    if (b.aux != static_cast<uint64_t>(next)) return make_error(errc::corrupt, TESSERA_MSG("flash frame: chunk list changed"));
    if (next++ == nchunk) break;
  }
  ff.read_next = next;
  return b;
}

}  // namespace

result<size_t> flash_frame_chunk_read(flash_frame& ff, int64_t nchunk, bytes_mut out) noexcept {
  if (ff.log.cache == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  if (nchunk < 0 || nchunk >= ff.nchunks) return make_error(errc::out_of_range, TESSERA_MSG("flash frame: no such chunk"));
  result<flash_blob> b = chunk_find(ff, nchunk);
  if (!b.ok()) return b.err();
  if (out.size() < b->size) return make_error(errc::buffer_too_small, TESSERA_MSG("flash frame: buffer smaller than the chunk"));
  TESSERA_TRY(flash_log_read(ff.log, b->offset, out.subspan(0, b->size)));
  if (ff.verify_reads && flash_crc32_update(0, bytes_view(out.data(), b->size)) != b->crc)
    return fault_set(ff, flash_frame_fault::chunk_crc, nchunk, errc::corrupt,
                     TESSERA_MSG("flash frame: the chunk's bytes fail their CRC (ff.fault_chunk)"));
  return static_cast<size_t>(b->size);
}

status flash_frame_scrub(flash_frame& ff) noexcept {
  if (ff.log.cache == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("flash frame: not open"));
  flash_log_cursor cursor;
  flash_blob b;
  flash_frame_fault first = flash_frame_fault::none;
  int64_t first_chunk = -1;
  int64_t bad = 0;
  bool any = false;
  for (;;) {
    result<bool> more = flash_log_next(ff.log, cursor, &b);
    if (!more.ok()) return more.err();
    if (!*more) break;
    if (b.tag == tag_chunk && b.aux >= ff.nchunks) continue;  // past the damage mount found
    const status v = flash_log_verify(ff.log, b);
    if (v.code == errc::corrupt) {
      if (b.tag == tag_chunk) {
        ++bad;
        if (first_chunk < 0) first_chunk = b.aux;
      }
      if (!any) first = b.tag == tag_chunk ? flash_frame_fault::chunk_crc
                      : b.tag == tag_tail  ? flash_frame_fault::index_crc
                                           : flash_frame_fault::header_crc;
      any = true;
    } else if (!v.ok()) {
      return v;
    }
  }
  ff.fault_count = bad;
  if (!any) return ok_status();
  return fault_set(ff, first, first_chunk, errc::corrupt,
                   TESSERA_MSG("flash frame: scrub found blobs that fail their CRC (ff.fault, ff.fault_chunk, ff.fault_count)"));
}

storage flash_frame_storage(flash_frame& ff) noexcept {
  storage st;
  if (!ff.finalized) return st;
  st.read = storage_read_cb;
  st.size = storage_size_cb;
  st.context = &ff;
  return st;
}

bytes_view flash_frame_view(const flash_frame& ff) noexcept {
  const flash_device& d = ff.log.device;
  if (!ff.finalized || d.mapped == nullptr) return bytes_view();
  const uint8_t* region = d.mapped + static_cast<size_t>(ff.log.first_sector) * d.sector_size;
  return bytes_view(region + ff.frame_start, static_cast<size_t>(ff.frame_len));
}

}  // namespace tessera
