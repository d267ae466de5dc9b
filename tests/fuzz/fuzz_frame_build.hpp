// SPDX-License-Identifier: BSD-3-Clause
// Structure-aware frames for the frame fuzzers (fuzz_build.hpp's idea, one level up): the recipe chooses the
// frame's parameters, metalayers, chunks (encoded ones, special values, runs of many special chunks) and
// vlmetalayers; the project's frame writer builds the frame in memory (contiguous, or sparse in a memory
// directory), and the recipe's edits then damage it where the reader looks: a header field set near its value,
// the index chunk's or a data chunk's fields (fuzz_build.hpp's chunk_edit), the trailer, a cut.
#pragma once

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "fuzz_build.hpp"

namespace tessera::fuzz {

struct built_frame {
  bool built = false;
  bool sparse = false;
  std::vector<uint8_t> bytes;  // contiguous: the frame; sparse: chunks.b2frame
  std::vector<std::pair<std::string, std::vector<uint8_t>>> entries;  // sparse: the chunk entries, by name
  bool edited = false;
};

namespace detail_build {

inline void be_store(std::vector<uint8_t>& b, size_t at, uint64_t v, size_t width) {
  if (at + width > b.size()) return;
  for (size_t i = 0; i < width; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * (width - 1 - i)));
}
inline uint64_t be_load(const std::vector<uint8_t>& b, size_t at, size_t width) {
  uint64_t v = 0;
  if (at + width > b.size()) return 0;
  for (size_t i = 0; i < width; ++i) v = v << 8 | b[at + i];
  return v;
}
inline uint64_t near_u64(recipe& r, uint64_t v, uint64_t size) {
  switch (r.u8() % 10) {
    case 0: return 0;
    case 1: return v + 1;
    case 2: return v - 1;
    case 3: return ~uint64_t{0};
    case 4: return uint64_t{INT32_MAX};
    case 5: return size;
    case 6: return v * 2;
    case 7: return v / 2;
    case 8: return uint64_t{1} << (r.u8() % 64);
    default: return uint64_t{r.u32()} << 32 | r.u32();
  }
}

// The header's big-endian fields (offset of the value, width): header_len, frame_len, nbytes, cbytes, typesize,
// blocksize, chunksize, the two thread counts, the metalayers' index size.
inline const uint8_t kHeaderFields[][2] = {{11, 4}, {16, 8}, {30, 8}, {39, 8}, {48, 4},
                                           {53, 4}, {58, 4}, {63, 2}, {66, 2}, {89, 2}};

}  // namespace detail_build

// Edits a frame's bytes; `index_at` and `chunks` say where its index chunk and some data chunks start.
inline bool frame_edit(recipe& r, std::vector<uint8_t>& b, size_t index_at, const std::vector<size_t>& chunks) {
  using namespace detail_build;
  bool edited = false;
  const size_t nedits = r.u8() % 5;
  for (size_t k = 0; k < nedits && !b.empty(); ++k) {
    const std::vector<uint8_t> before = b;
    switch (r.u8() % 8) {
      case 0: {  // a header field
        const auto& f = kHeaderFields[r.pick(sizeof kHeaderFields / sizeof kHeaderFields[0])];
        be_store(b, f[0], near_u64(r, be_load(b, f[0], f[1]), b.size()), f[1]);
        break;
      }
      case 1:  // a header byte (flags, codecs, filters, metalayers)
        b[(25 + r.u8()) % b.size()] = r.u8();
        break;
      case 2:    // the index chunk
      case 3: {  // a data chunk
        const size_t at = (r.u8() & 1) != 0 || chunks.empty() ? index_at : chunks[r.u8() % chunks.size()];
        if (at >= b.size()) break;
        std::vector<uint8_t> c(b.begin() + static_cast<std::ptrdiff_t>(at), b.end());
        if (chunk_edit(r, c)) std::memcpy(b.data() + at, c.data(), c.size() < b.size() - at ? c.size() : b.size() - at);
        break;
      }
      case 4: {  // the trailer: a byte of its last 64, or its length
        const size_t back = 1 + r.u8() % (b.size() < 64 ? b.size() : 64);
        if (r.flag()) b[b.size() - back] = r.u8();
        else if (b.size() >= 22) be_store(b, b.size() - 22, near_u64(r, be_load(b, b.size() - 22, 4), b.size()), 4);
        break;
      }
      case 5:  // a bit anywhere
        b[r.u16() % b.size()] ^= static_cast<uint8_t>(1u << (r.u8() % 8));
        break;
      case 6:  // cut
        b.resize(r.u16() % b.size());
        break;
      default: {  // a big-endian int64 anywhere (an index entry, a vlmetalayer offset)
        const size_t at = r.u16() % b.size();
        be_store(b, at, near_u64(r, be_load(b, at, 8), b.size()), 8);
        break;
      }
    }
    edited = edited || b != before;
  }
  return edited;
}

// A contiguous frame laid out by hand with the public encoders of a frame's parts (the way an append-only
// writer lays one out): header, the recipe's chunks, an index whose entries the recipe picks (the chunks'
// offsets in any order, special values, values near them), vlmetalayers, trailer; then edited.
inline built_frame frame_assemble(recipe& r, const allocator& alloc) {
  using namespace detail_build;
  built_frame out;
  frame_create_params p;
  p.typesize = kTypesizes[r.pick(6)];
  p.compcode = static_cast<uint8_t>(r.u8() % 3);
  p.clevel = static_cast<uint8_t>(r.u8() % 10);
  const int32_t items = 1 + r.u8() % 64;
  const uint8_t kind = r.u8();
  p.chunksize = items * p.typesize;
  static const char name[] = "b2nd";
  frame_metalayer_init meta;
  meta.name = span<const char>(name, 4);
  meta.content = r.take(r.u8() % 16);
  p.metalayers = &meta;
  p.nmetalayers = (kind & 1) != 0 ? 1 : 0;

  chunk_encoder e;
  if (!chunk_encoder_init(e, alloc, frame_encoder_options()).ok()) return out;
  chunk_encode_params cp;
  cp.typesize = static_cast<uint8_t>(p.typesize);
  cp.clevel = p.clevel;
  cp.compressor = static_cast<codec>(p.compcode);
  std::vector<uint8_t> section, src(static_cast<size_t>(p.chunksize));
  std::vector<int64_t> offsets;
  const size_t nchunks = r.u8() % 6;
  for (size_t i = 0; i < nchunks; ++i) {
    data_fill(r, src, cp.typesize);
    std::vector<uint8_t> enc(chunk_encode_bound(src.size()));
    const auto c = chunk_encode(e, cp, bytes_view(src.data(), src.size()), bytes_mut(enc.data(), enc.size()));
    if (!c.ok()) continue;
    offsets.push_back(static_cast<int64_t>(section.size()));
    section.insert(section.end(), enc.begin(), enc.begin() + static_cast<std::ptrdiff_t>(*c));
  }
  // The index: one entry per chunk the frame claims.
  const size_t nentries = (kind & 2) != 0 ? offsets.size() : r.u8() % 8;
  std::vector<uint8_t> entries(nentries * 8);
  for (size_t i = 0; i < nentries; ++i) {
    int64_t v;
    const uint8_t pick = r.u8() % 8;
    if (pick < 4 && !offsets.empty()) v = offsets[(i + pick) % offsets.size()];
    else if (pick == 4) v = frame_index_special(chunk_special::zeros);
    else if (pick == 5) v = frame_index_special(static_cast<chunk_special>(2 + r.u8() % 3));
    else v = static_cast<int64_t>(near_u64(r, offsets.empty() ? 0 : static_cast<uint64_t>(offsets[0]), section.size()));
    for (int k = 0; k < 8; ++k) entries[i * 8 + k] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * k));
  }
  std::vector<uint8_t> index;
  if (nentries > 0) {
    const auto bound = frame_index_bound(static_cast<int64_t>(nentries));
    if (!bound.ok()) return out;
    index.resize(*bound);
    const uint8_t how = r.u8() % 3;
    const bytes_view ev(entries.data(), entries.size());
    const auto n = how == 0 ? frame_index_encode(&e, ev, bytes_mut(index.data(), index.size()))
                   : how == 1 ? frame_index_encode(nullptr, ev, bytes_mut(index.data(), index.size()))
                              : frame_index_encode_stored(ev, bytes_mut(index.data(), index.size()));
    if (!n.ok()) return out;
    index.resize(*n);
  }
  // Vlmetalayers.
  std::vector<uint8_t> trailer;
  const size_t nvl = r.u8() % 3;
  std::vector<std::vector<uint8_t>> vlchunks(nvl);
  std::vector<frame_vlmetalayer> vls(nvl);
  static const char* const vlnames[] = {"a", "bb", "ccc"};
  for (size_t i = 0; i < nvl; ++i) {
    const bytes_view content = r.take(r.u8() % 40);
    vlchunks[i].resize(chunk_encode_bound(content.size()));
    const auto n = frame_vlmeta_encode(e, content, bytes_mut(vlchunks[i].data(), vlchunks[i].size()));
    if (!n.ok()) return out;
    vlchunks[i].resize(*n);
    vls[i].name = span<const char>(vlnames[i], i + 1);
    vls[i].chunk = bytes_view(vlchunks[i].data(), vlchunks[i].size());
  }
  chunk_encoder_release(e);
  if (nvl == 0 && r.flag()) {
    const bytes_view t = frame_trailer_empty();
    trailer.assign(t.begin(), t.end());
  } else {
    const auto tsize = frame_trailer_size(span<const frame_vlmetalayer>(vls.data(), vls.size()));
    if (!tsize.ok()) return out;
    trailer.resize(*tsize);
    if (!frame_trailer_encode(span<const frame_vlmetalayer>(vls.data(), vls.size()),
                              bytes_mut(trailer.data(), trailer.size())).ok())
      return out;
  }
  const auto hsize = frame_header_size(p);
  if (!hsize.ok()) return out;
  frame_header_fields fields;
  fields.frame_len = *hsize + section.size() + index.size() + trailer.size();
  fields.nbytes = static_cast<int64_t>(nentries) * p.chunksize;
  fields.cbytes = static_cast<int64_t>(section.size());
  fields.chunksize = (kind & 4) != 0 ? 0 : p.chunksize;
  fields.has_vlmetalayers = nvl > 0;
  out.bytes.resize(*hsize);
  if (!frame_header_encode(p, fields, bytes_mut(out.bytes.data(), out.bytes.size())).ok()) return out;
  const size_t index_at = out.bytes.size() + section.size();
  std::vector<size_t> chunks;
  for (int64_t o : offsets) chunks.push_back(out.bytes.size() + static_cast<size_t>(o));
  out.bytes.insert(out.bytes.end(), section.begin(), section.end());
  out.bytes.insert(out.bytes.end(), index.begin(), index.end());
  out.bytes.insert(out.bytes.end(), trailer.begin(), trailer.end());
  out.built = true;
  out.edited = frame_edit(r, out.bytes, index_at, chunks);
  return out;
}

// Builds the frame the recipe describes with the project's frame writer (or, one time in four, lays it out by
// hand: frame_assemble), then edits it.
inline built_frame frame_build(recipe& r, const allocator& alloc) {
  using namespace detail_build;
  if (r.u8() % 4 == 3) return frame_assemble(r, alloc);
  built_frame out;
  const uint8_t kind = r.u8();
  out.sparse = (kind & 1) != 0;
  frame_create_params p;
  p.typesize = kTypesizes[r.pick(6)];
  static const uint8_t kCompcodes[] = {0, 1, 2, 4, 5, 0};
  p.compcode = kCompcodes[r.pick(sizeof kCompcodes)];
  p.clevel = static_cast<uint8_t>(r.u8() % 10);
  p.splitmode = static_cast<uint8_t>(1 + r.u8() % 4);
  p.use_dict = (kind & 0x10) != 0 && (p.compcode == 1 || p.compcode == 2 || p.compcode == 5);
  for (uint8_t& f : p.filters) f = 0;
  if ((kind & 0x20) != 0) p.filters[5] = 1;
  if ((kind & 0x40) != 0) p.filters[4] = static_cast<uint8_t>(r.flag() ? 3 : 2);
  const int32_t items = 1 + r.u8() % 128;
  p.chunksize = (kind & 0x80) != 0 ? -1 : items * p.typesize * (1 + r.u8() % 8);
  p.blocksize = r.flag() ? 0 : items * p.typesize;
  // Fixed metalayers.
  char names[3][8] = {"b2nd", "m1", "caterva"};
  frame_metalayer_init metas[3];
  const uint32_t nmetas = r.u8() % 4;
  for (uint32_t i = 0; i < nmetas; ++i) {
    metas[i].name = span<const char>(names[i], std::strlen(names[i]));
    metas[i].content = r.take(r.u8() % 24);
  }
  p.metalayers = metas;
  p.nmetalayers = nmetas;

  growable_buffer gb;
  growable_buffer_init(gb, alloc);
  memory_directory md;
  if (!memory_directory_init(md, alloc, 64).ok()) return out;
  {
    frame f;
    frame_open_options o;
    o.durable = (kind & 2) != 0;
    o.max_alloc = uint64_t{16} << 20;
    const status created = out.sparse ? frame_create_sparse(f, memory_directory_interface(md), alloc, p, o)
                                      : frame_create(f, growable_buffer_storage(gb), alloc, p, o);
    if (created.ok()) {
      chunk_encoder e;
      chunk_encoder_options eo;
      eo.max_blocksize = 0;
      const bool encoder_ok = chunk_encoder_init(e, alloc, eo).ok();
      chunk_encode_params cp;
      cp.typesize = static_cast<uint8_t>(p.typesize);
      cp.clevel = p.clevel;
      cp.compressor = static_cast<codec>(p.compcode);
      cp.split = static_cast<split_mode>(p.splitmode);
      cp.use_dict = p.use_dict;
      cp.blocksize = p.blocksize;
      std::memcpy(cp.filters, p.filters, sizeof cp.filters);
      const size_t nchunks = r.u8() % 10;
      const size_t chunk_bytes = p.chunksize > 0 ? static_cast<size_t>(p.chunksize) : items * p.typesize * 4u;
      std::vector<uint8_t> src(chunk_bytes), enc(chunk_encode_bound(chunk_bytes) + 8);
      for (size_t i = 0; i < nchunks && encoder_ok; ++i) {
        const uint8_t what = r.u8();
        // The last chunk may be shorter (as an array's last is not); variable chunks any size.
        size_t n = chunk_bytes;
        if (p.chunksize < 0 || (i + 1 == nchunks && (what & 0x80) != 0))
          n = (1 + r.u8() % (chunk_bytes / p.typesize)) * p.typesize;
        src.resize(n);
        data_fill(r, src, cp.typesize);
        const uint8_t special = what % 8;
        const auto c = special >= 1 && special <= 4
                           ? chunk_encode_special(cp, static_cast<chunk_special>(special), n,
                                                  bytes_view(src.data(), p.typesize), bytes_mut(enc.data(), enc.size()))
                           : chunk_encode(e, cp, bytes_view(src.data(), n), bytes_mut(enc.data(), enc.size()));
        if (!c.ok()) continue;
        const bytes_view chunk(enc.data(), *c);
        const uint8_t op = r.u8() % 8;
        const int64_t have = frame_info_get(f)->nchunks;
        status s;
        if (op == 0 && have > 0) s = frame_chunk_update(f, r.u8() % have, chunk);
        else if (op == 1 && have > 0) s = frame_chunk_insert(f, r.u8() % (have + 1), chunk);
        else s = frame_chunk_append(f, chunk);
        if (op == 2 && have > 1) (void)frame_chunk_delete(f, r.u8() % have);
        (void)s;
        if (op == 3) (void)frame_commit(f);  // an intermediate commit: the next one reuses space
      }
      // Many special chunks: an index of several blocks, or one that is itself a special value.
      if ((kind & 0x0c) == 0x0c && p.chunksize > 0) {
        const size_t many = 200 + r.u16() % 2200;
        const int32_t n = p.chunksize;
        uint8_t zeros[kChunkHeaderExtendedSize + 16];
        const auto c = chunk_encode_special(cp, chunk_special::zeros, static_cast<size_t>(n), bytes_view(),
                                            bytes_mut(zeros, sizeof zeros));
        for (size_t i = 0; i < many && c.ok(); ++i)
          if (!frame_chunk_append(f, bytes_view(zeros, *c)).ok()) break;
      }
      // Variable-length metalayers.
      const size_t nvl = r.u8() % 4;
      for (size_t i = 0; i < nvl; ++i) {
        char name[8] = {'v', 'l', static_cast<char>('0' + i), 0};
        const bytes_view content = r.take(r.u8() % 48);
        (void)frame_vlmeta_set(f, span<const char>(name, 3), content);
      }
      if (r.flag() && nvl > 0) (void)frame_vlmeta_delete(f, span<const char>("vl0", 3));
      if (encoder_ok) chunk_encoder_release(e);
      out.built = frame_commit(f).ok();
      // Where the index and some chunks are, for the edits.
      std::vector<size_t> chunks;
      const frame_info* info = frame_info_get(f);
      const size_t index_at = info != nullptr ? info->header_len + static_cast<size_t>(info->cbytes) : 0;
      for (int64_t i = 0; info != nullptr && !out.sparse && i < info->nchunks && i < 8; ++i) {
        const auto ref = frame_chunk_locate(f, i);
        if (ref.ok() && ref->special == chunk_special::none)
          chunks.push_back(info->header_len + static_cast<size_t>(ref->offset));
      }
      (void)detail::frame_release(f);
      if (out.built && !out.sparse) {
        out.bytes.assign(gb.bytes().begin(), gb.bytes().end());
        out.edited = frame_edit(r, out.bytes, index_at, chunks);
      } else if (out.built) {
        const bytes_view idx = memory_directory_find(md, kSparseIndexName);
        out.bytes.assign(idx.begin(), idx.end());
        out.edited = frame_edit(r, out.bytes, out.bytes.size() > 0 ? index_at : 0, chunks);
        for (uint32_t slot = 0; slot < memory_directory_slots(md); ++slot) {
          const char* name = memory_directory_name(md, slot);
          if (name == nullptr || std::strcmp(name, kSparseIndexName) == 0) continue;
          const bytes_view c = memory_directory_find(md, name);
          out.entries.emplace_back(name, std::vector<uint8_t>(c.begin(), c.end()));
        }
        if (!out.entries.empty() && r.flag()) {
          auto& c = out.entries[r.u8() % out.entries.size()].second;
          out.edited = chunk_edit(r, c) || out.edited;
        }
      }
    }
  }
  memory_directory_release(md);
  growable_buffer_release(gb);
  return out;
}

// A memory directory holding a built sparse frame's entries (chunks.b2frame, and the chunk entries).
inline bool sparse_fill(memory_directory& md, const built_frame& b) {
  const storage_directory dir = memory_directory_interface(md);
  auto put = [&](const char* name, const std::vector<uint8_t>& bytes) {
    storage st;
    if (!storage_directory_open(dir, name, storage_open::replace, &st).ok()) return false;
    const bool ok = bytes.empty() || storage_write(st, 0, bytes_view(bytes.data(), bytes.size())).ok();
    return storage_directory_close(dir, &st).ok() && ok;
  };
  if (!put(kSparseIndexName, b.bytes)) return false;
  for (const auto& e : b.entries)
    if (!put(e.first.c_str(), e.second)) return false;
  return true;
}

}  // namespace tessera::fuzz
