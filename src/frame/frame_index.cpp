// SPDX-License-Identifier: BSD-3-Clause
// The frame's index: a table in memory for frames that change, or the committed index chunk read a block at a
// time. A file's index may claim 10^8 chunks in 221 bytes (a special-value index chunk): what a reader holds
// must not follow that claim, so only one decoded index block (16 KiB as the reference writes them) is kept.
#include <string.h>

#include "frame/frame_internal.hpp"

namespace tessera::detail {
namespace {

// A window of a memcpyed index read at once: about one reference index block.
constexpr size_t kIndexWindow = 16 * 1024;
// The largest index block read. The reference writes 16 KiB blocks; older versions compressed the index with
// default parameters, where the tuner chooses 512 KiB (typesize 8, clevel 5, split). A larger claim is refused:
// the cached block and the decoder's scratch for it (five blocks in all) are what an open may cost.
constexpr uint64_t kIndexBlockMax = 512 * 1024;

// frame_blocks_decode's consumer for one index block: copied into the cache.
struct index_block_copy {
  size_t nblock = 0;
  uint8_t* out = nullptr;
  size_t cap = 0;
  size_t size = 0;
  static size_t block(void* context, size_t) noexcept { return static_cast<index_block_copy*>(context)->nblock; }
  static status consume(void* context, size_t, bytes_view decoded, uint32_t) noexcept {
    auto& c = *static_cast<index_block_copy*>(context);
    if (decoded.size() > c.cap) return make_error(errc::corrupt, TESSERA_MSG("frame: index block larger than its blocksize"));
    memcpy(c.out, decoded.data(), decoded.size());
    c.size = decoded.size();
    return ok_status();
  }
};

status cache_reserve(frame_state& s, size_t need) noexcept {
  lazy_index& z = s.lazy;
  if (need <= z.block_cap) return ok_status();
  TESSERA_TRY(state_budget_check(s, need, TESSERA_MSG("frame: the index chunk's blocksize exceeds max_alloc")));
  auto* p = static_cast<uint8_t*>(allocator_allocate(s.alloc, need, 16));
  if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused an index block"));
  if (z.block != nullptr) allocator_deallocate(s.alloc, z.block, z.block_cap, 16);
  z.block = p;
  z.block_cap = need;
  z.cached_count = 0;
  return ok_status();
}

// The index's own decoder, for blocks of up to bsize bytes. Its own function: its options are not on the stack
// under the index block's decode.
__attribute__((noinline)) status index_decoder_init(frame_state& s, size_t bsize) noexcept {
  chunk_decoder_options o;
  o.max_blocksize = bsize;
  TESSERA_TRY(chunk_decoder_init(s.lazy.decoder, s.alloc, o));
  s.lazy.decoder_ready = true;
  return ok_status();
}

// Reads the index entries around entry i into the cache: a decoded block, or a window of a memcpyed index.
status cache_fill(frame_state& s, int64_t i) noexcept {
  lazy_index& z = s.lazy;
  const chunk_header& h = z.h;
  sparse_entry entry;
  chunk_source src;
  if (s.sparse) {
    TESSERA_TRY(entry.open_name(s, kSparseIndexName, storage_open::read));
    src.st = &entry.st;
    src.pos = z.pos;
  } else {
    src.st = &s.st;
    src.pos = s.base + z.pos;
  }
  src.limit = z.cbytes;
  const uint64_t byte = static_cast<uint64_t>(i) * 8;
  if (h.memcpyed) {
    const uint64_t first = byte / kIndexWindow * kIndexWindow;
    const uint64_t total = static_cast<uint64_t>(h.nbytes);
    const size_t n = static_cast<size_t>(total - first < kIndexWindow ? total - first : kIndexWindow);
    // A small index (a firmware's table of a few chunks) costs its own size, not a whole window.
    TESSERA_TRY(cache_reserve(s, static_cast<size_t>(total < kIndexWindow ? total : kIndexWindow)));
    TESSERA_TRY(storage_read(*src.st, src.pos + h.header_size + first, bytes_mut(z.block, n)));
    z.cached_first = static_cast<int64_t>(first / 8);
    z.cached_count = static_cast<int64_t>(n / 8);
    return entry.close();
  }
  // Blocks of whole entries (the reference's are 16 KiB); a block size that splits entries is not an index.
  const uint64_t bsize = static_cast<uint64_t>(h.blocksize);
  if (bsize == 0 || bsize % 8 != 0) return make_error(errc::corrupt, TESSERA_MSG("frame: index blocks do not hold whole entries"));
  if (bsize > kIndexBlockMax) return make_error(errc::resource_limit, TESSERA_MSG("frame: the index chunk's blocks exceed 512 KiB"));
  TESSERA_TRY(cache_reserve(s, static_cast<size_t>(bsize)));
  if (!z.decoder_ready) TESSERA_TRY(index_decoder_init(s, static_cast<size_t>(bsize)));
  index_block_copy c;
  c.nblock = static_cast<size_t>(byte / bsize);
  c.out = z.block;
  c.cap = z.block_cap;
  chunk_block_request r;
  r.count = 1;
  r.block = index_block_copy::block;
  r.consume = index_block_copy::consume;
  r.context = &c;
  z.cached_count = 0;
  TESSERA_TRY(blocks_decode_lazy(s, z.decoder, src, r));
  if (c.size % 8 != 0) return make_error(errc::corrupt, TESSERA_MSG("frame: index block of partial entries"));
  z.cached_first = static_cast<int64_t>(c.nblock * bsize / 8);
  z.cached_count = static_cast<int64_t>(c.size / 8);
  return entry.close();
}

result<int64_t> lazy_offset(frame_state& s, int64_t i) noexcept {
  lazy_index& z = s.lazy;
  if (z.h.special != chunk_special::none) return z.special_value;
  if (i < z.cached_first || i >= z.cached_first + z.cached_count) {
    TESSERA_TRY(cache_fill(s, i));
    if (i < z.cached_first || i >= z.cached_first + z.cached_count)
      return make_error(errc::corrupt, TESSERA_MSG("frame: index block shorter than its entries"));
  }
  return as_signed(le_load64(z.block + 8 * (i - z.cached_first)));
}

// Sizes the header tells for every chunk of a frame with a fixed chunksize (-1: read the chunk's header).
int32_t nbytes_of(const frame_state& s, int64_t i) noexcept {
  const int32_t cs = s.info.chunksize;
  if (cs <= 0) return -1;
  if (i + 1 < s.nchunks) return cs;
  return static_cast<int32_t>(s.info.nbytes - (s.nchunks - 1) * int64_t{cs});
}

}  // namespace

status index_lazy_open(frame_state& s, uint64_t pos, const chunk_header& h, int64_t n) noexcept {
  lazy_index& z = s.lazy;
  z.active = true;
  z.pos = pos;
  z.cbytes = static_cast<uint32_t>(h.cbytes);
  z.h = h;
  z.cached_first = 0;
  z.cached_count = 0;
  for (int64_t& k : z.recent_n) k = -1;
  if (h.lazy || h.vlblocks) return make_error(errc::malformed, TESSERA_MSG("frame: the index chunk is lazy or has variable blocks"));
  if (h.special == chunk_special::zeros) {
    z.special_value = 0;
  } else if (h.special == chunk_special::value) {
    // One repeated int64, right after the header.
    if (h.value_size != 8) return make_error(errc::corrupt, TESSERA_MSG("frame: the index chunk repeats a value that is not an int64"));
    uint8_t v[8];
    if (s.sparse) {
      sparse_entry entry;
      TESSERA_TRY(entry.open_name(s, kSparseIndexName, storage_open::read));
      TESSERA_TRY(storage_read(entry.st, pos + kChunkHeaderExtendedSize, bytes_mut(v, 8)));
      TESSERA_TRY(entry.close());
    } else {
      TESSERA_TRY(frame_read_into(s, pos + kChunkHeaderExtendedSize, bytes_mut(v, 8)));
    }
    z.special_value = as_signed(le_load64(v));
  } else if (h.special != chunk_special::none) {
    return make_error(errc::corrupt, TESSERA_MSG("frame: the index chunk is NaNs or uninitialized"));
  } else if (h.memcpyed && uint64_t{h.header_size} + static_cast<uint64_t>(n) * 8 > z.cbytes) {
    return make_error(errc::truncated, TESSERA_MSG("frame: the stored index is shorter than its entries"));
  }
  // A chunksize tells every chunk's nbytes: the last one must fit it.
  if (s.info.chunksize > 0 && n > 0) {
    const int64_t last = s.info.nbytes - (n - 1) * int64_t{s.info.chunksize};
    if (last <= 0 || last > s.info.chunksize)
      return make_error(errc::corrupt, TESSERA_MSG("frame: nbytes, chunksize and the number of chunks disagree"));
  }
  return ok_status();
}

void index_lazy_release(frame_state& s) noexcept {
  lazy_index& z = s.lazy;
  if (z.block != nullptr) allocator_deallocate(s.alloc, z.block, z.block_cap, 16);
  z.block = nullptr;
  z.block_cap = 0;
  z.cached_count = 0;
  if (z.decoder_ready) chunk_decoder_release(z.decoder);
  z.decoder_ready = false;
  z.active = false;
  for (int64_t& k : z.recent_n) k = -1;
}

status index_entry_get(frame_state& s, int64_t i, frame_chunk_entry* out) noexcept {
  if (!s.lazy.active) {
    *out = s.chunks[i];
    return ok_status();
  }
  const int slot = static_cast<int>(i % lazy_index::kRecent);
  if (s.lazy.recent_n[slot] == i) {
    *out = s.lazy.recent[slot];
    return ok_status();
  }
  auto off = lazy_offset(s, i);
  if (!off.ok()) return off.err();
  frame_chunk_entry e;
  e.offset = *off;
  e.nbytes = nbytes_of(s, i);
  e.cbytes = e.offset < 0 ? 0 : -1;
  e.blocksize = e.offset < 0 ? 0 : -1;
  *out = e;
  return ok_status();
}

result<int64_t> index_special_run(frame_state& s, int64_t i, int64_t limit) noexcept {
  frame_chunk_entry first;
  TESSERA_TRY(index_entry_get(s, i, &first));
  if (first.offset >= 0) return int64_t{0};
  // Only chunks of the first one's size: a shorter last chunk ends the run.
  const int64_t sized_end = s.info.chunksize > 0 && nbytes_of(s, limit - 1) != s.info.chunksize ? limit - 1 : limit;
  if (!s.lazy.active) {
    int64_t j = i + 1;
    while (j < limit && s.chunks[j].offset == first.offset && s.chunks[j].nbytes == first.nbytes) ++j;
    return j - i;
  }
  lazy_index& z = s.lazy;
  if (z.h.special != chunk_special::none) return (sized_end > i ? sized_end : i + 1) - i;  // one value for all
  // Entries compared a cached block (or window) at a time: memory order, no call per entry.
  int64_t j = i + 1;
  while (j < sized_end) {
    if (j < z.cached_first || j >= z.cached_first + z.cached_count) {
      TESSERA_TRY(cache_fill(s, j));
      if (j < z.cached_first || j >= z.cached_first + z.cached_count)
        return make_error(errc::corrupt, TESSERA_MSG("frame: index block shorter than its entries"));
    }
    const int64_t end = z.cached_first + z.cached_count < sized_end ? z.cached_first + z.cached_count : sized_end;
    const uint8_t* p = z.block + 8 * (j - z.cached_first);
    while (j < end && as_signed(le_load64(p)) == first.offset) {
      ++j;
      p += 8;
    }
    if (j < end) break;
  }
  return j - i;
}

void index_entry_learn(frame_state& s, int64_t i, const frame_chunk_entry& e) noexcept {
  if (!s.lazy.active) {
    s.chunks[i] = e;
    return;
  }
  const int slot = static_cast<int>(i % lazy_index::kRecent);
  s.lazy.recent_n[slot] = i;
  s.lazy.recent[slot] = e;
}

status state_index_materialize(frame_state& s) noexcept {
  if (!s.lazy.active) return ok_status();
  const int64_t n = s.nchunks;
  TESSERA_TRY(state_chunks_reserve(s, n));
  int64_t nspecial = 0;
  int64_t next_id = s.next_id;
  for (int64_t i = 0; i < n; ++i) {
    frame_chunk_entry e;
    TESSERA_TRY(index_entry_get(s, i, &e));
    TESSERA_TRY(index_special(e.offset).err());
    if (e.offset < 0) {
      ++nspecial;
      if (s.info.chunksize <= 0)
        return make_error(errc::unsupported, TESSERA_MSG("frame: special index entry in a frame of variable chunk sizes"));
    } else if (s.sparse && e.offset >= next_id) {
      next_id = e.offset + 1;
    }
    s.chunks[i] = e;
  }
  s.nspecial = nspecial;
  s.next_id = next_id;
  index_lazy_release(s);
  return ok_status();
}

}  // namespace tessera::detail
