// Hostile files: valid small arrays (written by Tessera here, and the reference's golden files read in place),
// each damaged in ONE field a reader takes as a claim (a frame header length or size, the index chunk's sizes and
// entries, metalayer and vlmetalayer counts, offsets and lengths, the b2nd shapes, a chunk's header), opened as
// arrays and read (one element, a slice, the whole array) and walked as `tessera verify` walks them, with the
// counting allocator. Each case asserts its exact outcome (an errc, or the right data when the damage is
// harmless) on four storages: with and without a view, under the default max_alloc and under a small one. Peak
// memory must stay under kPeakBudget (the caller's output buffers are not counted), and nothing may leak.
// Also: the reference's huge-sparse arrays (10^7 and 10^8 chunks in 221 bytes) open, read and walk in the same
// budget, and an array whose consistent geometry claims 512 MiB chunks is refused by a small max_alloc.
// Field offsets come from README_CFRAME_FORMAT.rst, README_CHUNK_FORMAT.rst and README_B2ND_METALAYER.rst.
// With TESSERA_HOSTILE_SEEDS=DIR set, every damaged contiguous frame of at most 8 KiB is written to DIR (the seeds
// of tests/fuzz/corpus/frame_read/).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/b2nd_meta.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/long_tests.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

using bytes = std::vector<uint8_t>;

constexpr size_t kPeakBudget = size_t{1} << 20;  // what the core may hold at once, whatever the file says
constexpr uint64_t kSmallMaxAlloc = 256 * 1024;  // the second configuration's max_alloc
constexpr size_t kWholeMax = 64 * 1024;          // arrays read whole when they are this small
constexpr size_t kSeedMax = 8 * 1024;

const std::string kShared = TESSERA_TEST_DATA_DIR;  // tests/data

// ---- Bytes ---------------------------------------------------------------------------------------------------

uint64_t be_get(const bytes& b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | b.at(at + i);
  return v;
}
void be_put(bytes& b, size_t at, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) {
    b.at(at + i) = static_cast<uint8_t>(v);
    v >>= 8;
  }
}
void le_put(bytes& b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}

bool file_read(const std::string& path, bytes& out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  out.clear();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  const bool ok = std::ferror(f) == 0;
  std::fclose(f);
  return ok;
}

// ---- Where the fields are (from the format documents) -----------------------------------------------------------

// The header's fixed fields (README_CFRAME_FORMAT.rst: the byte after each msgpack marker).
constexpr size_t kHeaderLen = 0x0b;     // int32 after d2 at 0x0a
constexpr size_t kFrameLen = 0x10;      // uint64 after cf at 0x0f
constexpr size_t kCodecFlags = 0x1b;
constexpr size_t kNbytes = 0x1e;        // int64 after d3 at 0x1d
constexpr size_t kCbytes = 0x27;        // int64 after d3 at 0x26
constexpr size_t kTypesize = 0x30;      // int32 after d2 at 0x2f
constexpr size_t kBlocksize = 0x35;     // int32 after d2 at 0x34
constexpr size_t kChunksize = 0x3a;     // int32 after d2 at 0x39
constexpr size_t kNthreads = 0x3f;      // int16 after d1 at 0x3e
constexpr size_t kFilterCount = 0x46;   // fixext16's type byte: the number of filters
constexpr size_t kMetaCount = 0x5c;     // 0x57: 93 cd idx(2) de n(2)
constexpr size_t kMetaEntries = 0x5e;
// The trailer, counted from the frame's end: ... ce trailer_len(4) d8 fpt fingerprint(16).
constexpr size_t kTrailerLenFromEnd = 22;
// In the trailer: 94 01 93 cd idx(2) de n(2), then the entries.
constexpr size_t kVlCount = 7;
constexpr size_t kVlEntries = 9;
// A chunk's header (README_CHUNK_FORMAT.rst).
constexpr size_t kChVersion = 0, kChFlags = 2, kChTypesize = 3, kChNbytes = 4, kChBlocksize = 8, kChCbytes = 12;
constexpr size_t kChBlosc2Flags = 31;
constexpr size_t kChExtended = 32;  // the extended header's size: bstarts follow it

struct meta_pos {
  std::string name;
  size_t entry = 0;      // the fixstr byte of its name
  size_t offset_at = 0;  // the int32 offset (after d2)
  size_t content = 0;    // the bin32 marker c6 (absolute)
  size_t len_at = 0;     // the bin32 length
  size_t data = 0;       // the content's first byte
  uint32_t len = 0;
};

struct frame_map {
  uint32_t header_len = 0;
  uint64_t frame_len = 0;
  int64_t cbytes = 0;
  size_t index = 0;        // the index chunk (contiguous: after the chunks section; sparse: after the header)
  size_t trailer = 0;
  uint32_t trailer_len = 0;
  std::vector<meta_pos> metas, vlmetas;
  // The b2nd metalayer's fields (absolute positions of the values, after their markers).
  int ndim = 0;
  size_t shape_at[8] = {}, chunkshape_at[8] = {}, blockshape_at[8] = {};
};

// Metalayer entries at `entries` (count n): fixstr name, d2 offset relative to `base`; the content c6 len bytes.
void metas_map(const bytes& b, size_t base, size_t entries, uint32_t n, std::vector<meta_pos>& out) {
  size_t pos = entries;
  for (uint32_t i = 0; i < n; ++i) {
    meta_pos m;
    m.entry = pos;
    const size_t nl = b.at(pos) & 0x1f;
    m.name.assign(reinterpret_cast<const char*>(b.data() + pos + 1), nl);
    pos += 1 + nl;
    m.offset_at = pos + 1;  // after d2
    m.content = base + static_cast<size_t>(be_get(b, m.offset_at, 4));
    m.len_at = m.content + 1;
    m.len = static_cast<uint32_t>(be_get(b, m.len_at, 4));
    m.data = m.content + 5;
    pos += 5;
    out.push_back(m);
  }
}

frame_map frame_map_of(const bytes& b, bool sparse) {
  frame_map m;
  m.header_len = static_cast<uint32_t>(be_get(b, kHeaderLen, 4));
  m.frame_len = be_get(b, kFrameLen, 8);
  m.cbytes = static_cast<int64_t>(be_get(b, kCbytes, 8));
  m.index = m.header_len + (sparse ? 0 : static_cast<size_t>(m.cbytes));
  m.trailer_len = static_cast<uint32_t>(be_get(b, m.frame_len - kTrailerLenFromEnd, 4));
  m.trailer = m.frame_len - m.trailer_len;
  metas_map(b, 0, kMetaEntries, static_cast<uint32_t>(be_get(b, kMetaCount, 2)), m.metas);
  metas_map(b, m.trailer, m.trailer + kVlEntries, static_cast<uint32_t>(be_get(b, m.trailer + kVlCount, 2)), m.vlmetas);
  for (const meta_pos& p : m.metas) {
    if (p.name != "b2nd") continue;
    // 97 version ndim, 9X (d3 int64)*nd, 9X (d2 int32)*nd, 9X (d2 int32)*nd, ...
    m.ndim = b.at(p.data + 2);
    size_t at = p.data + 3;
    for (int i = 0; i < m.ndim; ++i) m.shape_at[i] = at + 1 + 1 + 9 * static_cast<size_t>(i);
    at += 1 + 9 * static_cast<size_t>(m.ndim);
    for (int i = 0; i < m.ndim; ++i) m.chunkshape_at[i] = at + 1 + 1 + 5 * static_cast<size_t>(i);
    at += 1 + 5 * static_cast<size_t>(m.ndim);
    for (int i = 0; i < m.ndim; ++i) m.blockshape_at[i] = at + 1 + 1 + 5 * static_cast<size_t>(i);
  }
  return m;
}

const meta_pos& meta_named(const std::vector<meta_pos>& v, const char* name) {
  for (const meta_pos& m : v)
    if (m.name == name) return m;
  std::fprintf(stderr, "hostile: no metalayer %s in the base file\n", name);
  std::abort();
}

// ---- Files: a contiguous frame, or a sparse frame's entries ---------------------------------------------------

struct file_set {
  bool sparse = false;
  bytes frame;  // the contiguous frame, or chunks.b2frame
  std::vector<std::pair<std::string, bytes>> entries;  // sparse: the chunk entries
  bytes raw;    // the whole array's C-order items, when known
  std::vector<int64_t> offsets;  // index entries of the valid file (contiguous: chunk offsets; sparse: ids)
};

bytes& entry_named(file_set& f, const std::string& name) {
  for (auto& e : f.entries)
    if (e.first == name) return e.second;
  std::fprintf(stderr, "hostile: no entry %s\n", name.c_str());
  std::abort();
}

// A directory in memory holding the file set's entries.
struct memory_dir {
  memory_directory d;
  storage_directory iface{};
  bool hide_view = false;
  storage_directory wrapped{};
  static status open(void* c, const char* name, storage_open mode, storage* out) noexcept {
    auto* w = static_cast<memory_dir*>(c);
    status s = storage_directory_open(w->iface, name, mode, out);
    if (s.ok() && w->hide_view) out->view = nullptr;
    return s;
  }
  static status close(void* c, storage* s) noexcept {
    return storage_directory_close(static_cast<memory_dir*>(c)->iface, s);
  }
  bool init(const file_set& f, bool no_view) {
    if (!memory_directory_init(d, test::system_allocator(), 64).ok()) return false;
    iface = memory_directory_interface(d);
    hide_view = no_view;
    wrapped = iface;
    wrapped.open = open;
    wrapped.close = close;
    wrapped.context = this;
    auto put = [&](const char* name, const bytes& b) {
      storage st;
      if (!storage_directory_open(iface, name, storage_open::replace, &st).ok()) return false;
      const bool ok = b.empty() || storage_write(st, 0, bytes_view(b.data(), b.size())).ok();
      return storage_directory_close(iface, &st).ok() && ok;
    };
    if (!put(kSparseIndexName, f.frame)) return false;
    for (const auto& e : f.entries)
      if (!put(e.first.c_str(), e.second)) return false;
    return true;
  }
  ~memory_dir() { memory_directory_release(d); }
};

// The index entries of the valid frame (special entries as the index stores them).
bool index_entries_of(file_set& f) {
  memory_dir dir;
  frame fr;
  const_buffer in{f.frame.data(), f.frame.size()};
  if (f.sparse) {
    if (!dir.init(f, false) || !frame_open_sparse(fr, dir.wrapped, test::system_allocator()).ok()) return false;
  } else if (!frame_open(fr, const_buffer_storage(in), test::system_allocator()).ok()) {
    return false;
  }
  const int64_t n = frame_info_get(fr)->nchunks;
  f.offsets.clear();
  for (int64_t i = 0; i < n; ++i) {
    auto ref = frame_chunk_locate(fr, i);
    if (!ref.ok()) return false;
    f.offsets.push_back(ref->special != chunk_special::none ? frame_index_special(ref->special) : ref->offset);
  }
  return true;
}

// The same frame with its index chunk replaced by the stored (uncompressed) form a writer may use
// (frame_index_encode without an encoder): its entries are then bytes at fixed places, to damage one by one.
bool index_stored(file_set& f) {
  const frame_map m = frame_map_of(f.frame, f.sparse);
  bytes entries(f.offsets.size() * 8);
  for (size_t i = 0; i < f.offsets.size(); ++i) le_put(entries, 8 * i, static_cast<uint64_t>(f.offsets[i]), 8);
  auto bound = frame_index_bound(static_cast<int64_t>(f.offsets.size()));
  if (!bound.ok()) return false;
  bytes index(*bound);
  auto n = frame_index_encode(nullptr, bytes_view(entries.data(), entries.size()), bytes_mut(index.data(), index.size()));
  if (!n.ok()) return false;
  bytes out(f.frame.begin(), f.frame.begin() + static_cast<std::ptrdiff_t>(m.index));
  out.insert(out.end(), index.begin(), index.begin() + static_cast<std::ptrdiff_t>(*n));
  out.insert(out.end(), f.frame.begin() + static_cast<std::ptrdiff_t>(m.trailer),
             f.frame.begin() + static_cast<std::ptrdiff_t>(m.frame_len));
  be_put(out, kFrameLen, out.size(), 8);
  f.frame = std::move(out);
  return true;
}

// ---- The base files --------------------------------------------------------------------------------------------

// Tessera's: int32 20x30, chunks 8x16, blocks 4x8 (6 chunks of 512 bytes, blocks of 128), BloscLZ + shuffle, a
// fixed metalayer "extra" and a vlmetalayer "note", in the reference's layout (header, chunks, index, trailer).
bool base_tessera(file_set& f) {
  array_params p;
  p.ndim = 2;
  p.shape[0] = 20;
  p.shape[1] = 30;
  p.chunkshape[0] = 8;
  p.chunkshape[1] = 16;
  p.blockshape[0] = 4;
  p.blockshape[1] = 8;
  static const char kDtype[] = "<i4";
  p.dtype = span<const char>(kDtype, 3);
  static const uint8_t kExtra[] = {0x92, 0x01, 0x02};  // msgpack [1, 2]
  static const char kExtraName[] = "extra";
  frame_metalayer_init extra{span<const char>(kExtraName, 5), bytes_view(kExtra, sizeof kExtra)};
  p.metalayers = &extra;
  p.nmetalayers = 1;
  f.raw.resize(20 * 30 * 4);
  for (uint32_t i = 0; i < 600; ++i) le_put(f.raw, 4 * i, i * 3 + 1, 4);
  growable_buffer gb;
  growable_buffer_init(gb, test::system_allocator());
  const storage st = growable_buffer_storage(gb);
  array a;
  if (!array_create(a, array_target_contiguous(st, false), test::system_allocator(), p,
                    array_fill_buffer(bytes_view(f.raw.data(), f.raw.size()))).ok())
    return false;
  // A msgpack str8 of 200 bytes that compresses (a short one is stored: its nbytes is then tied to cbytes).
  uint8_t note[202];
  note[0] = 0xd9;
  note[1] = 200;
  for (int i = 0; i < 200; ++i) note[2 + i] = static_cast<uint8_t>('a' + i % 4);
  static const char kNoteName[] = "note";
  if (!array_vlmeta_write(a, span<const char>(kNoteName, 4), bytes_view(note, sizeof note)).ok()) return false;
  if (!array_close(a).ok()) return false;
  f.sparse = false;
  f.frame.assign(gb.bytes().data(), gb.bytes().data() + gb.bytes().size());
  return index_entries_of(f);
}

// A golden contiguous frame (and its .raw), read in place: a missing file fails. The huge ones have no raw, and
// their index entries (10^7 and more) are not listed.
bool base_golden(file_set& f, const std::string& name, bool huge) {
  f.sparse = false;
  if (!file_read(kShared + "/golden/" + name + ".b2nd", f.frame)) return false;
  if (huge) return true;
  if (!file_read(kShared + "/golden/" + name + ".raw", f.raw)) return false;
  return index_entries_of(f);
}

// The reference's sparse frame golden/b2nd/sparse-dir.b2nd (60x60 float32, chunks 30x30, 4 chunk entries).
bool base_golden_sparse(file_set& f) {
  f.sparse = true;
  const std::string dir = kShared + "/golden/b2nd/sparse-dir.b2nd/";
  if (!file_read(dir + kSparseIndexName, f.frame)) return false;
  f.entries.clear();
  for (const char* name : {"00000000.chunk", "00000001.chunk", "00000002.chunk", "00000003.chunk"}) {
    bytes b;
    if (!file_read(dir + name, b)) return false;
    f.entries.emplace_back(name, std::move(b));
  }
  if (!file_read(kShared + "/golden/b2nd/sparse-dir.raw", f.raw)) return false;
  return index_entries_of(f);
}

// A consistent claim of huge chunks: float32, shape 2^27, one chunk of 2^27 items (512 MiB), blocks of 1024
// items, all zeros (a special index entry: the file is a few hundred bytes).
bool base_huge_chunk(file_set& f) {
  array_params p;
  p.ndim = 1;
  // 512 MiB chunks on 64-bit hosts; 32 MiB on 32-bit ones, whose default max_alloc is 64 MiB (kBaseInfo too).
  const int shift = sizeof(void*) >= 8 ? 27 : 23;
  p.shape[0] = int64_t{1} << shift;
  p.chunkshape[0] = 1 << shift;
  p.blockshape[0] = 1024;
  static const char kDtype[] = "<f4";
  p.dtype = span<const char>(kDtype, 3);
  growable_buffer gb;
  growable_buffer_init(gb, test::system_allocator());
  const storage st = growable_buffer_storage(gb);
  array a;
  if (!array_create(a, array_target_contiguous(st, false), test::system_allocator(), p, array_fill_zeros()).ok())
    return false;
  if (!array_close(a).ok()) return false;
  f.sparse = false;
  f.frame.assign(gb.bytes().data(), gb.bytes().data() + gb.bytes().size());
  return index_entries_of(f);
}

// Tessera's: int32, 65536 items in one chunk of 256 KiB (= kSmallMaxAlloc), blocks of 1024 items (4 KiB).
bool base_big_chunk(file_set& f) {
  array_params p;
  p.ndim = 1;
  p.shape[0] = 65536;
  p.chunkshape[0] = 65536;
  p.blockshape[0] = 1024;
  static const char kDtype[] = "<i4";
  p.dtype = span<const char>(kDtype, 3);
  f.raw.resize(65536 * 4);
  for (uint32_t i = 0; i < 65536; ++i) le_put(f.raw, 4 * i, i, 4);
  growable_buffer gb;
  growable_buffer_init(gb, test::system_allocator());
  const storage st = growable_buffer_storage(gb);
  array a;
  if (!array_create(a, array_target_contiguous(st, false), test::system_allocator(), p,
                    array_fill_buffer(bytes_view(f.raw.data(), f.raw.size()))).ok())
    return false;
  if (!array_close(a).ok()) return false;
  f.sparse = false;
  f.frame.assign(gb.bytes().data(), gb.bytes().data() + gb.bytes().size());
  return index_entries_of(f);
}

enum base_id {
  kTess, kTessStored, kGolden, kGoldenStored, kSparse, kSparseStored, kHuge7, kHuge8, kHugeChunk, kBigChunk, kBases
};

struct base_info {
  const char* name;
  int64_t element[2];  // coordinates read as one element (in the last chunk)
  int64_t start[2], stop[2];  // a slice over every chunk (or, 1-D and huge, a few)
};
const base_info kBaseInfo[kBases] = {
    {"tessera", {19, 29}, {2, 5}, {18, 25}},
    {"tessera-stored-index", {19, 29}, {2, 5}, {18, 25}},
    {"golden-with-metalayers", {49, 59}, {10, 10}, {45, 50}},
    {"golden-with-metalayers-stored-index", {49, 59}, {10, 10}, {45, 50}},
    {"golden-sparse-dir", {59, 59}, {5, 5}, {55, 55}},
    {"golden-sparse-dir-stored-index", {59, 59}, {5, 5}, {55, 55}},
    {"huge-sparse-1e7", {9999999999, 0}, {9999997500, 0}, {9999999900, 0}},
    {"huge-sparse-1e8", {99999999999, 0}, {99999997500, 0}, {99999999900, 0}},
    {"huge-chunk", {(int64_t{1} << (sizeof(void*) >= 8 ? 27 : 23)) - 1, 0}, {1000, 0}, {3000, 0}},
    {"big-chunk", {65535, 0}, {1000, 0}, {3000, 0}},
};

// Built once; a missing golden file leaves its base empty and every case on it fails.
struct bases {
  file_set f[kBases];
  bool ok[kBases] = {};
  bases() {
    ok[kTess] = base_tessera(f[kTess]);
    f[kTessStored] = f[kTess];
    ok[kTessStored] = ok[kTess] && index_stored(f[kTessStored]);
    ok[kGolden] = base_golden(f[kGolden], "b2nd/with-metalayers", false);
    f[kGoldenStored] = f[kGolden];
    ok[kGoldenStored] = ok[kGolden] && index_stored(f[kGoldenStored]);
    ok[kSparse] = base_golden_sparse(f[kSparse]);
    f[kSparseStored] = f[kSparse];
    ok[kSparseStored] = ok[kSparse] && index_stored(f[kSparseStored]);
    ok[kHuge7] = base_golden(f[kHuge7], "huge-sparse/zeros-1e7-chunks", true);
    ok[kHuge8] = base_golden(f[kHuge8], "huge-sparse/zeros-1e8-chunks", true);
    ok[kHugeChunk] = base_huge_chunk(f[kHugeChunk]);
    ok[kBigChunk] = base_big_chunk(f[kBigChunk]);
  }
};
const bases& the_bases() {
  static const bases b;
  return b;
}

// ---- Running one file ------------------------------------------------------------------------------------------

// What each step gives: ok (with the right data) or an error code.
struct outcome {
  errc open = errc::ok;
  errc element = errc::ok;
  errc slice = errc::ok;
  errc whole = errc::ok;
  errc verify = errc::ok;
};
constexpr outcome harmless() { return outcome{}; }
constexpr outcome at_open(errc e) { return outcome{e, errc::ok, errc::ok, errc::ok, errc::ok}; }
// Damage that every read reaches (all of them touch the last chunk) and the walk finds.
constexpr outcome on_read(errc e) { return outcome{errc::ok, e, e, e, e}; }
// The same in an array too large to read whole.
constexpr outcome on_read_not_whole(errc e) { return outcome{errc::ok, e, e, errc::ok, e}; }
// Damage only the walk finds (a vlmetalayer).
constexpr outcome on_verify(errc e) { return outcome{errc::ok, errc::ok, errc::ok, errc::ok, e}; }

// `tessera verify`'s walk (tools/verify.cpp) with the caller's allocator: every chunk located (up to
// `max_chunks`), its size checked against the geometry, stored chunks read and decoded; every vlmetalayer decoded.
// Stops at the first error (the tool goes on to report every one; the first is this test's outcome).
status verify_walk(array& a, const allocator& alloc, int64_t max_chunks) {
  const array_layout& l = array_layout_get(a);
  frame& f = array_frame(a);
  const frame_info* fi = frame_info_get(f);
  const int32_t itemsize = array_itemsize(a);
  const uint64_t chunk_nbytes = static_cast<uint64_t>(l.extchunk_nitems) * static_cast<uint64_t>(itemsize);
  chunk_decoder dec;
  chunk_decoder_options o;
  o.max_blocksize = static_cast<size_t>(l.block_nitems) * static_cast<size_t>(itemsize);
  TESSERA_TRY(chunk_decoder_init(dec, alloc, o));
  bytes out;  // the caller's buffer: one chunk (bounded by max_alloc at open), allocated when first needed
  status first = ok_status();
  auto note = [&](const status& s) {
    if (first.ok() && !s.ok()) first = s;
  };
  const int64_t nchunks = fi->nchunks < max_chunks ? fi->nchunks : max_chunks;
  for (int64_t n = 0; n < nchunks && first.ok(); ++n) {
    auto ref = frame_chunk_locate(f, n);
    if (!ref.ok()) {
      note(ref.err());
      continue;
    }
    if (static_cast<uint64_t>(ref->nbytes) != chunk_nbytes) {
      note(make_error(errc::corrupt, "walk: a chunk's nbytes is not the array's"));
      continue;
    }
    if (ref->special != chunk_special::none) continue;
    owned_array<uint8_t> readbuf;
    auto chunk = frame_chunk_read(f, n, readbuf);
    if (!chunk.ok()) {
      note(chunk.err());
      continue;
    }
    if (out.empty()) out.resize(static_cast<size_t>(chunk_nbytes) + 1);
    // Decoded through the frame (the tool calls chunk_decode on what it read): the frame holds the decoder's
    // growth for the chunk's own block size to max_alloc.
    auto whole = frame_chunk_decode(f, dec, n, bytes_mut(out.data(), out.size()));
    if (!whole.ok()) note(whole.err());
    else if (*whole != chunk_nbytes) note(make_error(errc::corrupt, "walk: a chunk decodes to another size"));
  }
  for (uint32_t i = 0; i < fi->nvlmetalayers && first.ok(); ++i) {
    auto name = frame_vlmeta_name(f, i);
    if (!name.ok()) {
      note(name.err());
      continue;
    }
    auto size = frame_vlmeta_nbytes(f, *name);
    if (!size.ok()) {
      note(size.err());
      continue;
    }
    // The caller's buffer for what the chunk claims, within the walk's own budget: a larger claim is left to
    // the decoder to refuse (buffer_too_small).
    bytes buf((*size < kPeakBudget ? *size : kPeakBudget) + 1);
    auto r = frame_vlmeta_decode(f, dec, *name, bytes_mut(buf.data(), buf.size()));
    if (!r.ok()) note(r.err());
  }
  return first;
}

// The items of [start, stop) of a C-order array of `shape` (ndim 1 or 2), from raw.
bytes expected_slice(const bytes& raw, int ndim, const int64_t* shape, const int64_t* start, const int64_t* stop,
                     size_t itemsize) {
  bytes out;
  const int64_t rows = ndim == 2 ? stop[0] - start[0] : 1;
  const int d = ndim - 1;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t row = ndim == 2 ? start[0] + r : 0;
    const int64_t first = row * (ndim == 2 ? shape[1] : 0) + start[d];
    const auto* p = raw.data() + static_cast<size_t>(first) * itemsize;
    out.insert(out.end(), p, p + static_cast<size_t>(stop[d] - start[d]) * itemsize);
  }
  return out;
}

struct config {
  bool view;
  bool small_budget;
  const char* name() const {
    return view ? (small_budget ? "view, max_alloc 256 KiB" : "view, default max_alloc")
                : (small_budget ? "no view, max_alloc 256 KiB" : "no view, default max_alloc");
  }
};
constexpr config kConfigs[] = {{true, false}, {false, false}, {true, true}, {false, true}};

struct run_result {
  outcome got;
  status first_error[5];  // per step, for the messages
  bool data_ok = true;    // every step that succeeded returned the right items
  size_t peak = 0;
  bool leaked = false;
  double seconds = 0;
};

// Opens and reads `f` under `c`. `raw_ok`: whether the damaged file still holds the base's items (checked on
// every step that succeeds); `zeros`: every item is zero.
run_result file_run(const file_set& f, const base_info& bi, const config& c, bool raw_ok, bool zeros,
                    int64_t walk_chunks = INT64_MAX) {
  run_result rr;
  const auto t0 = std::chrono::steady_clock::now();
  test::counting_allocator ca;
  array_open_options opt;
  if (c.small_budget) opt.frame.max_alloc = kSmallMaxAlloc;
  {
    memory_dir dir;
    const_buffer in{f.frame.data(), f.frame.size()};
    storage st = const_buffer_storage(in);
    if (!c.view) st.view = nullptr;
    array a;
    status s = ok_status();
    if (f.sparse) {
      if (!dir.init(f, !c.view)) std::abort();
      s = array_open_sparse(a, dir.wrapped, ca.get(), opt);
    } else {
      s = array_open(a, st, ca.get(), opt);
    }
    rr.got.open = s.code;
    rr.first_error[0] = s;
    if (s.ok()) {
      const array_layout& l = array_layout_get(a);
      const size_t itemsize = static_cast<size_t>(array_itemsize(a));
      auto check_data = [&](const bytes& got, const bytes& want) {
        if (zeros) {
          for (uint8_t b : got) rr.data_ok &= b == 0;
        } else if (raw_ok) {
          rr.data_ok &= !want.empty() && got == want;
        }
      };
      const bool in_shape = l.ndim >= 1 && l.ndim <= 2;
      // One element.
      {
        bytes item(itemsize);
        s = in_shape ? array_element_read(a, bi.element, bytes_mut(item.data(), item.size()))
                     : make_error(errc::malformed, "test: the damaged array has another ndim");
        rr.got.element = s.code;
        rr.first_error[1] = s;
        if (s.ok()) {
          const int64_t one[2] = {bi.element[0] + 1, bi.element[1] + 1};
          check_data(item, f.raw.empty() ? bytes() : expected_slice(f.raw, l.ndim, l.shape, bi.element, one, itemsize));
        }
      }
      // A slice.
      if (in_shape) {
        size_t n = itemsize;
        for (int d = 0; d < l.ndim; ++d) n *= static_cast<size_t>(bi.stop[d] - bi.start[d]);
        bytes got(n);
        s = array_slice_read(a, bi.start, bi.stop, bytes_mut(got.data(), got.size()));
        rr.got.slice = s.code;
        rr.first_error[2] = s;
        if (s.ok()) check_data(got, f.raw.empty() ? bytes() : expected_slice(f.raw, l.ndim, l.shape, bi.start, bi.stop, itemsize));
      }
      // The whole array, when small.
      if (static_cast<uint64_t>(array_nbytes(a)) <= kWholeMax) {
        bytes got(static_cast<size_t>(array_nbytes(a)));
        s = array_read(a, bytes_mut(got.data(), got.size()));
        rr.got.whole = s.code;
        rr.first_error[3] = s;
        if (s.ok()) check_data(got, f.raw);
      }
      s = verify_walk(a, ca.get(), walk_chunks);
      rr.got.verify = s.code;
      rr.first_error[4] = s;
    }
    (void)array_close(a);
  }
  rr.peak = ca.high_water_bytes;
  rr.leaked = ca.leaked();
  rr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rr;
}

// ---- The cases -------------------------------------------------------------------------------------------------

struct hostile_case {
  const char* name;
  base_id base;
  std::function<void(file_set&, const frame_map&)> damage;
  outcome expect;               // under every configuration
  bool data_kept = true;        // a harmless case: the items are the base's
  bool small_only = false;      // run under max_alloc 256 KiB only (the default budget lets it use more)
};

const char* kStepName[5] = {"open", "element", "slice", "whole", "verify"};

void seed_write(const hostile_case& hc, const file_set& f) {
  const char* dir = std::getenv("TESSERA_HOSTILE_SEEDS");
  if (dir == nullptr || f.sparse || f.frame.size() > kSeedMax) return;
  const std::string path = std::string(dir) + "/hostile-" + hc.name + ".b2nd";
  if (FILE* out = std::fopen(path.c_str(), "wb")) {
    std::fwrite(f.frame.data(), 1, f.frame.size(), out);
    std::fclose(out);
  }
}

void cases_run(test::context& t, const std::vector<hostile_case>& cases) {
  const bases& b = the_bases();
  for (const hostile_case& hc : cases) {
    if (!b.ok[hc.base]) {
      char text[256];
      std::snprintf(text, sizeof text, "%s: the base file %s could not be built or read", hc.name,
                    kBaseInfo[hc.base].name);
      test::report_failure(t, __FILE__, __LINE__, text);
      continue;
    }
    file_set f = b.f[hc.base];
    const frame_map m = frame_map_of(f.frame, f.sparse);
    hc.damage(f, m);
    seed_write(hc, f);
    for (const config& c : kConfigs) {
      if (hc.small_only && !c.small_budget) continue;
      const outcome& want = hc.expect;
      const run_result rr = file_run(f, kBaseInfo[hc.base], c, hc.data_kept, false);
      const errc got[5] = {rr.got.open, rr.got.element, rr.got.slice, rr.got.whole, rr.got.verify};
      const errc exp[5] = {want.open, want.element, want.slice, want.whole, want.verify};
      for (int k = 0; k < 5; ++k) {
        if (got[k] == exp[k]) continue;
        char text[512];
        std::snprintf(text, sizeof text, "%s (%s, %s): %s gave %s (%s), expected %s", hc.name,
                      kBaseInfo[hc.base].name, c.name(), kStepName[k], errc_name(got[k]),
                      rr.first_error[k].message, errc_name(exp[k]));
        test::report_failure(t, __FILE__, __LINE__, text);
      }
      if (!rr.data_ok || rr.peak > kPeakBudget || rr.leaked) {
        char text[320];
        std::snprintf(text, sizeof text, "%s (%s): data %s, peak %zu bytes (budget %zu)%s", hc.name, c.name(),
                      rr.data_ok ? "right" : "WRONG", rr.peak, kPeakBudget, rr.leaked ? ", LEAKED" : "");
        test::report_failure(t, __FILE__, __LINE__, text);
      }
    }
  }
}

// Damage helpers.
auto be_set(size_t at, uint64_t v, int n) {
  return [=](file_set& f, const frame_map&) { be_put(f.frame, at, v, n); };
}
// The chunk header of the last chunk (contiguous: in the frame; sparse: its entry) gets `v` at `field`.
auto last_chunk_le(size_t field, uint64_t v, int n) {
  return [=](file_set& f, const frame_map& m) {
    const int64_t off = f.offsets.back();
    if (f.sparse) {
      char name[16];
      if (!frame_sparse_chunk_name(off, name, sizeof name).ok()) std::abort();
      le_put(entry_named(f, name), field, v, n);
    } else {
      le_put(f.frame, m.header_len + static_cast<size_t>(off) + field, v, n);
    }
  };
}
auto last_chunk_byte(size_t field, uint8_t v) { return last_chunk_le(field, v, 1); }
// Entry i of a stored index (after its 32-byte header).
auto index_entry_set(size_t i, uint64_t v) {
  return [=](file_set& f, const frame_map& m) { le_put(f.frame, m.index + kChExtended + 8 * i, v, 8); };
}
auto index_header_le(size_t field, uint64_t v, int n) {
  return [=](file_set& f, const frame_map& m) { le_put(f.frame, m.index + field, v, n); };
}

constexpr uint64_t kSpecialUnknown = uint64_t{0x80} << 56;  // bit 7 with no kind: reserved

}  // namespace

// ---- The undamaged files read back whole (what the harmless cases compare with) ---------------------------------

TESSERA_TEST(hostile, undamaged_files_read_right) {
  auto none = [](file_set&, const frame_map&) {};
  std::vector<hostile_case> cases = {
      {"undamaged-tessera", kTess, none, harmless()},
      {"undamaged-tessera-stored-index", kTessStored, none, harmless()},
      {"undamaged-golden", kGolden, none, harmless()},
      {"undamaged-golden-stored-index", kGoldenStored, none, harmless()},
      {"undamaged-sparse", kSparse, none, harmless()},
      {"undamaged-sparse-stored-index", kSparseStored, none, harmless()},
      {"undamaged-big-chunk", kBigChunk, none, harmless()},
  };
  cases_run(t, cases);
}

// ---- Frame header ----------------------------------------------------------------------------------------------

TESSERA_TEST(hostile, frame_header_fields) {
  std::vector<hostile_case> cases = {
      {"header_len-int32-max", kTess, be_set(kHeaderLen, 0x7fffffff, 4), at_open(errc::malformed)},
      {"header_len-negative", kTess, be_set(kHeaderLen, 0xffffff00, 4), at_open(errc::malformed)},
      {"header_len-below-fixed-part", kTess, be_set(kHeaderLen, 86, 4), at_open(errc::malformed)},
      {"header_len-one-short", kTess,
       [](file_set& f, const frame_map& m) { be_put(f.frame, kHeaderLen, m.header_len - 1, 4); },
       at_open(errc::truncated)},
      {"header_len-whole-frame", kTess,
       [](file_set& f, const frame_map& m) { be_put(f.frame, kHeaderLen, m.frame_len, 4); },
       at_open(errc::malformed)},
      {"frame_len-huge", kTess, be_set(kFrameLen, uint64_t{1} << 62, 8), at_open(errc::truncated)},
      {"frame_len-uint64-max", kTess, be_set(kFrameLen, UINT64_MAX, 8), at_open(errc::malformed)},
      {"frame_len-one-more", kTess,
       [](file_set& f, const frame_map& m) { be_put(f.frame, kFrameLen, m.frame_len + 1, 8); },
       at_open(errc::truncated)},
      {"frame_len-one-less", kTess,
       [](file_set& f, const frame_map& m) { be_put(f.frame, kFrameLen, m.frame_len - 1, 8); },
       at_open(errc::malformed)},
      {"frame_len-below-header", kTess, be_set(kFrameLen, 100, 8), at_open(errc::malformed)},
      {"nbytes-huge", kTess, be_set(kNbytes, uint64_t{1} << 60, 8), at_open(errc::corrupt)},
      {"nbytes-negative", kTess, be_set(kNbytes, UINT64_MAX, 8), at_open(errc::malformed)},
      {"nbytes-zero", kTess, be_set(kNbytes, 0, 8), at_open(errc::malformed)},
      {"cbytes-huge", kTess, be_set(kCbytes, uint64_t{1} << 60, 8), at_open(errc::malformed)},
      {"cbytes-past-the-trailer", kTess,
       [](file_set& f, const frame_map& m) { be_put(f.frame, kCbytes, m.frame_len - m.header_len, 8); },
       at_open(errc::malformed)},
      {"typesize-zero", kTess, be_set(kTypesize, 0, 4), at_open(errc::malformed)},
      {"typesize-huge", kTess, be_set(kTypesize, 1u << 30, 4), at_open(errc::malformed)},
      {"typesize-disagrees-with-chunksize", kTess, be_set(kTypesize, 8, 4), at_open(errc::malformed)},
      // The header's blocksize, thread counts and codec are what a writer would use: reading ignores them.
      {"blocksize-int32-max", kTess, be_set(kBlocksize, 0x7fffffff, 4), harmless()},
      {"blocksize-negative", kTess, be_set(kBlocksize, 0xffffffff, 4), harmless()},
      {"nthreads-huge", kTess, be_set(kNthreads, 0x7fff, 2), harmless()},
      {"codec-flags-unknown", kTess, be_set(kCodecFlags, 0xff, 1), harmless()},
      {"filter-count-above-6", kTess, be_set(kFilterCount, 7, 1), at_open(errc::malformed)},
      {"chunksize-int32-max", kTess, be_set(kChunksize, 0x7fffffff, 4), at_open(errc::corrupt)},
      {"chunksize-half", kTess, be_set(kChunksize, 256, 4), at_open(errc::corrupt)},
      {"chunksize-negative", kTess, be_set(kChunksize, 0xffffffff, 4), at_open(errc::malformed)},
      // 0 says "chunks of different sizes": every chunk's header then tells its size, and they are right.
      {"chunksize-zero", kTess, be_set(kChunksize, 0, 4), harmless()},
      {"frame-type-sparse", kTess, be_set(0x1a, 1, 1), at_open(errc::malformed)},
      {"format-version-15", kTess, be_set(0x19, 0x1f, 1), at_open(errc::unsupported)},
      {"offsets-32-bit", kTess, be_set(0x19, 0x02, 1), at_open(errc::unsupported)},
      {"header-golden-header_len-int32-max", kGolden, be_set(kHeaderLen, 0x7fffffff, 4), at_open(errc::malformed)},
      {"header-golden-nbytes-huge", kGolden, be_set(kNbytes, uint64_t{1} << 60, 8), at_open(errc::corrupt)},
      {"header-golden-chunksize-zero", kGolden, be_set(kChunksize, 0, 4), harmless()},
  };
  cases_run(t, cases);
}

// ---- Trailer and vlmetalayers ----------------------------------------------------------------------------------

TESSERA_TEST(hostile, trailer_and_vlmetalayers) {
  auto trailer_len_set = [](uint64_t v) {
    return [=](file_set& f, const frame_map& m) { be_put(f.frame, m.frame_len - kTrailerLenFromEnd, v, 4); };
  };
  auto vl_count = [](uint64_t v) {
    return [=](file_set& f, const frame_map& m) { be_put(f.frame, m.trailer + kVlCount, v, 2); };
  };
  auto vl_field = [](const char* name, int which, uint64_t v) {  // 0: offset, 1: length
    return [=](file_set& f, const frame_map& m) {
      const meta_pos& p = meta_named(m.vlmetas, name);
      be_put(f.frame, which == 0 ? p.offset_at : p.len_at, v, 4);
    };
  };
  auto vl_chunk_le = [](const char* name, size_t field, uint64_t v) {
    return [=](file_set& f, const frame_map& m) { le_put(f.frame, meta_named(m.vlmetas, name).data + field, v, 4); };
  };
  std::vector<hostile_case> cases = {
      {"trailer_len-int32-max", kTess, trailer_len_set(0x7fffffff), at_open(errc::malformed)},
      {"trailer_len-uint32-max", kTess, trailer_len_set(0xffffffff), at_open(errc::malformed)},
      {"trailer_len-below-minimum", kTess, trailer_len_set(24), at_open(errc::malformed)},
      {"trailer_len-whole-frame", kTess,
       [](file_set& f, const frame_map& m) { be_put(f.frame, m.frame_len - kTrailerLenFromEnd, m.frame_len, 4); },
       at_open(errc::malformed)},
      {"trailer_len-into-the-index", kTess,
       [](file_set& f, const frame_map& m) {
         be_put(f.frame, m.frame_len - kTrailerLenFromEnd, m.trailer_len + 8, 4);
       },
       at_open(errc::malformed)},
      {"vlmeta-count-uint16-max", kTess, vl_count(0xffff), at_open(errc::malformed)},
      {"vlmeta-index-size-garbage", kTess,
       [](file_set& f, const frame_map& m) { be_put(f.frame, m.trailer + 4, 0xffff, 2); }, harmless()},
      {"fingerprint-type-set", kTess,
       [](file_set& f, const frame_map& m) { f.frame.at(m.frame_len - 17) = 3; }, harmless()},
      {"vlmeta-count-8000", kTess, vl_count(8000), at_open(errc::malformed)},
      {"vlmeta-count-one-more", kTess, vl_count(2), at_open(errc::malformed)},
      {"vlmeta-offset-int32-max", kTess, vl_field("note", 0, 0x7fffffff), at_open(errc::malformed)},
      {"vlmeta-offset-negative", kTess, vl_field("note", 0, 0x80000000), at_open(errc::malformed)},
      {"vlmeta-length-int32-max", kTess, vl_field("note", 1, 0x7fffffff), at_open(errc::truncated)},
      {"vlmeta-length-uint32-max", kTess, vl_field("note", 1, 0xffffffff), at_open(errc::truncated)},
      // The vlmetalayer's own chunk: only the walk decodes it.
      {"vlmeta-chunk-nbytes-huge", kTess, vl_chunk_le("note", kChNbytes, 0x7fff0000),
       on_verify(errc::truncated)},
      {"vlmeta-chunk-cbytes-mismatch", kTess, vl_chunk_le("note", kChCbytes, 0x7fff0000), on_verify(errc::corrupt)},
      {"vlmeta-golden-length-int32-max", kGolden, vl_field("note", 1, 0x7fffffff), at_open(errc::truncated)},
      {"vlmeta-golden-count-uint16-max", kGolden, vl_count(0xffff), at_open(errc::malformed)},
      // The reference stores its short "note" uncompressed: nbytes must then be cbytes minus the header.
      {"vlmeta-golden-chunk-nbytes-huge", kGolden, vl_chunk_le("note", kChNbytes, 0x7fff0000),
       on_verify(errc::malformed)},
  };
  cases_run(t, cases);
}

// ---- Fixed metalayers and the b2nd metalayer ---------------------------------------------------------------------

TESSERA_TEST(hostile, metalayers_and_b2nd) {
  auto meta_field = [](const char* name, int which, uint64_t v) {  // 0: offset, 1: length
    return [=](file_set& f, const frame_map& m) {
      const meta_pos& p = meta_named(m.metas, name);
      be_put(f.frame, which == 0 ? p.offset_at : p.len_at, v, 4);
    };
  };
  auto b2nd = [](int what, int dim, uint64_t v) {  // 0: shape, 1: chunkshape, 2: blockshape
    return [=](file_set& f, const frame_map& m) {
      const size_t at = what == 0 ? m.shape_at[dim] : what == 1 ? m.chunkshape_at[dim] : m.blockshape_at[dim];
      be_put(f.frame, at, v, what == 0 ? 8 : 4);
    };
  };
  std::vector<hostile_case> cases = {
      {"meta-count-17", kTess, be_set(kMetaCount, 17, 2), at_open(errc::malformed)},
      {"meta-count-uint16-max", kTess, be_set(kMetaCount, 0xffff, 2), at_open(errc::malformed)},
      {"meta-count-one-more", kTess, be_set(kMetaCount, 3, 2), at_open(errc::malformed)},
      {"meta-count-zero", kTess, be_set(kMetaCount, 0, 2), at_open(errc::malformed)},
      {"meta-name-length-31", kTess, [](file_set& f, const frame_map&) { f.frame.at(kMetaEntries) = 0xbf; },
       at_open(errc::malformed)},
      {"meta-offset-int32-max", kTess, meta_field("b2nd", 0, 0x7fffffff), at_open(errc::malformed)},
      {"meta-offset-negative", kTess, meta_field("b2nd", 0, 0xfffffff0), at_open(errc::malformed)},
      {"meta-offset-not-bin32", kTess, meta_field("b2nd", 0, kMetaEntries), at_open(errc::malformed)},
      {"meta-length-int32-max", kTess, meta_field("b2nd", 1, 0x7fffffff), at_open(errc::truncated)},
      {"meta-length-uint32-max", kTess, meta_field("b2nd", 1, 0xffffffff), at_open(errc::truncated)},
      {"meta-extra-length-huge", kTess, meta_field("extra", 1, 0x10000000), at_open(errc::truncated)},
      {"meta-length-short", kTess, meta_field("b2nd", 1, 3), at_open(errc::truncated)},
      {"b2nd-shape-1e15", kTess, b2nd(0, 0, 1000000000000000), at_open(errc::malformed)},
      {"b2nd-shape-int64-max", kTess, b2nd(0, 1, INT64_MAX), at_open(errc::overflow)},
      {"b2nd-shape-negative", kTess, b2nd(0, 0, UINT64_MAX), at_open(errc::malformed)},
      {"b2nd-chunkshape-2e30", kTess, b2nd(1, 1, 1u << 30), at_open(errc::overflow)},
      {"b2nd-chunkshape-int32-max", kTess, b2nd(1, 0, 0x7fffffff), at_open(errc::overflow)},
      {"b2nd-chunkshape-fewer-chunks", kTess, b2nd(1, 0, 16), at_open(errc::malformed)},
      // Nine rows: the same 3x2 chunk grid, chunks padded to 12x16 (768 bytes) where the frame says 512.
      {"b2nd-chunkshape-same-grid", kTess, b2nd(1, 0, 9), at_open(errc::malformed)},
      {"b2nd-chunkshape-zero", kTess, b2nd(1, 0, 0), at_open(errc::malformed)},
      {"b2nd-blockshape-2e30", kTess, b2nd(2, 1, 1u << 30), at_open(errc::overflow)},
      // Blocks wider than the chunk pad it to 2^20 columns (32 MiB chunks): the frame's chunksize says 512.
      {"b2nd-blockshape-pads-chunk", kTess, b2nd(2, 1, 1u << 20), at_open(errc::malformed)},
      {"b2nd-blockshape-zero", kTess, b2nd(2, 1, 0), at_open(errc::malformed)},
      {"b2nd-ndim-127", kTess,
       [](file_set& f, const frame_map& m) { f.frame.at(meta_named(m.metas, "b2nd").data + 2) = 127; },
       at_open(errc::unsupported)},
      // The sizes of the metalayer index (header and trailer) are not needed to read it.
      {"meta-index-size-garbage", kTess, be_set(0x59, 0xffff, 2), harmless()},
      {"b2nd-dtype-length-int32-max", kTess,
       [](file_set& f, const frame_map& m) { be_put(f.frame, m.blockshape_at[m.ndim - 1] + 4 + 2, 0x7fffffff, 4); },
       at_open(errc::truncated)},
      {"meta-golden-count-17", kGolden, be_set(kMetaCount, 17, 2), at_open(errc::malformed)},
      {"meta-golden-length-int32-max", kGolden, meta_field("b2nd", 1, 0x7fffffff), at_open(errc::truncated)},
      {"meta-golden-units-offset-int32-max", kGolden, meta_field("units", 0, 0x7fffffff), at_open(errc::malformed)},
      {"b2nd-golden-shape-1e15", kGolden, b2nd(0, 1, 1000000000000000), at_open(errc::malformed)},
      {"b2nd-golden-chunkshape-2e30", kGolden, b2nd(1, 0, 1u << 30), at_open(errc::overflow)},
  };
  cases_run(t, cases);
}

// ---- The index chunk -------------------------------------------------------------------------------------------

TESSERA_TEST(hostile, index_chunk) {
  const size_t last_tess = 5;    // 3x2 chunks
  const size_t last_golden = 8;  // 3x3 chunks
  std::vector<hostile_case> cases = {
      // The index as written (Tessera's and the reference's: a few entries are stored uncompressed, so its nbytes
      // is tied to its cbytes; the compressed and special-value forms are in huge_sparse_golden).
      {"index-nbytes-huge", kTess, index_header_le(kChNbytes, 0x7ffffff8, 4), at_open(errc::malformed)},
      {"index-nbytes-not-entries", kTess, index_header_le(kChNbytes, 6 * 8 + 1, 4), at_open(errc::malformed)},
      {"index-cbytes-huge", kTess, index_header_le(kChCbytes, 0x7fffffff, 4), at_open(errc::malformed)},
      {"index-cbytes-below-header", kTess, index_header_le(kChCbytes, 20, 4), at_open(errc::malformed)},
      {"index-blocksize-zero", kTess, index_header_le(kChBlocksize, 0, 4), at_open(errc::malformed)},
      {"index-golden-nbytes-huge", kGolden, index_header_le(kChNbytes, 0x7ffffff8, 4), at_open(errc::malformed)},
      {"index-golden-cbytes-huge", kGolden, index_header_le(kChCbytes, 0x7fffffff, 4), at_open(errc::malformed)},
      // The stored index: entries one by one.
      {"index-entry-past-the-end", kTessStored, index_entry_set(last_tess, uint64_t{1} << 40), on_read(errc::corrupt)},
      {"index-entry-int64-max", kTessStored, index_entry_set(last_tess, INT64_MAX), on_read(errc::corrupt)},
      {"index-entry-into-the-index", kTessStored,
       [=](file_set& f, const frame_map& m) {
         le_put(f.frame, m.index + kChExtended + 8 * last_tess, m.index - m.header_len, 8);
       },
       on_read(errc::corrupt)},
      {"index-entry-last-byte", kTessStored,
       [=](file_set& f, const frame_map& m) {
         le_put(f.frame, m.index + kChExtended + 8 * last_tess, static_cast<uint64_t>(m.cbytes) - 1, 8);
       },
       on_read(errc::corrupt)},
      {"index-entry-special-unknown", kTessStored, index_entry_set(last_tess, kSpecialUnknown),
       on_read(errc::malformed)},
      {"index-stored-nbytes-huge", kTessStored, index_header_le(kChNbytes, 0x7ffffff8, 4), at_open(errc::malformed)},
      {"index-stored-claims-more-entries", kTessStored,
       [](file_set& f, const frame_map& m) {
         le_put(f.frame, m.index + kChNbytes, 7 * 8, 4);
         le_put(f.frame, m.index + kChCbytes, 7 * 8 + kChExtended, 4);
       },
       at_open(errc::malformed)},
      {"index-golden-entry-past-the-end", kGoldenStored, index_entry_set(last_golden, uint64_t{1} << 40),
       on_read(errc::corrupt)},
      {"index-golden-entry-special-unknown", kGoldenStored, index_entry_set(last_golden, kSpecialUnknown),
       on_read(errc::malformed)},
  };
  cases_run(t, cases);
}

// ---- A chunk's header ------------------------------------------------------------------------------------------

TESSERA_TEST(hostile, chunk_header) {
  std::vector<hostile_case> cases = {
      {"chunk-nbytes-double", kTess, last_chunk_le(kChNbytes, 1024, 4), on_read(errc::corrupt)},
      {"chunk-nbytes-int32-max", kTess, last_chunk_le(kChNbytes, 0x7fffffff, 4), on_read(errc::corrupt)},
      {"chunk-nbytes-negative", kTess, last_chunk_le(kChNbytes, 0xffffffff, 4), on_read(errc::malformed)},
      {"chunk-blocksize-int32-max", kTess, last_chunk_le(kChBlocksize, 0x7fffffff, 4), on_read(errc::malformed)},
      {"chunk-blocksize-zero", kTess, last_chunk_le(kChBlocksize, 0, 4), on_read(errc::malformed)},
      {"chunk-cbytes-int32-max", kTess, last_chunk_le(kChCbytes, 0x7fffffff, 4), on_read(errc::corrupt)},
      {"chunk-cbytes-below-header", kTess, last_chunk_le(kChCbytes, 15, 4), on_read(errc::malformed)},
      {"chunk-cbytes-cuts-bstarts", kTess, last_chunk_le(kChCbytes, 40, 4), on_read(errc::truncated)},
      {"chunk-typesize-zero", kTess, last_chunk_byte(kChTypesize, 0), on_read(errc::malformed)},
      {"chunk-version-zero", kTess, last_chunk_byte(kChVersion, 0), on_read(errc::malformed)},
      {"chunk-special-unknown", kTess, last_chunk_byte(kChBlosc2Flags, 0x70), on_read(errc::malformed)},
      {"chunk-memcpyed-flag", kTess,
       [](file_set& f, const frame_map& m) {
         f.frame.at(m.header_len + static_cast<size_t>(f.offsets.back()) + kChFlags) |= kChunkFlagMemcpyed;
       },
       on_read(errc::malformed)},
      {"chunk-lazy-flag", kTess, last_chunk_byte(kChBlosc2Flags, kChunkBlosc2Lazy), on_read(errc::unsupported)},
      // Block 0's start: the element (block 1 of the chunk) still reads; whatever needs block 0 fails.
      {"chunk-bstart-int32-max", kTess, last_chunk_le(kChExtended, 0x7fffffff, 4),
       outcome{errc::ok, errc::ok, errc::corrupt, errc::corrupt, errc::corrupt}},
      {"chunk-golden-nbytes-int32-max", kGolden, last_chunk_le(kChNbytes, 0x7fffffff, 4), on_read(errc::corrupt)},
      {"chunk-golden-cbytes-int32-max", kGolden, last_chunk_le(kChCbytes, 0x7fffffff, 4), on_read(errc::corrupt)},
      {"chunk-golden-blocksize-int32-max", kGolden, last_chunk_le(kChBlocksize, 0x7fffffff, 4),
       on_read(errc::malformed)},
      // One block of the whole chunk (256 KiB, as a writer may choose): decoding it would grow the decoder's
      // scratch to 4 blocks, over max_alloc. Under the default budget that is allowed (and above this test's).
      {"chunk-blocksize-whole-chunk", kBigChunk, last_chunk_le(kChBlocksize, 65536 * 4, 4),
       on_read_not_whole(errc::resource_limit), true, true},
  };
  cases_run(t, cases);
}

// ---- Sparse frames (the reference's sparse-dir golden) ---------------------------------------------------------

TESSERA_TEST(hostile, sparse_frames) {
  auto chunk_entry_cut = [](size_t n) {
    return [=](file_set& f, const frame_map&) { entry_named(f, "00000003.chunk").resize(n); };
  };
  std::vector<hostile_case> cases = {
      {"sframe-header_len-int32-max", kSparse, be_set(kHeaderLen, 0x7fffffff, 4), at_open(errc::malformed)},
      {"sframe-frame_len-huge", kSparse, be_set(kFrameLen, uint64_t{1} << 62, 8), at_open(errc::truncated)},
      {"sframe-nbytes-huge", kSparse, be_set(kNbytes, uint64_t{1} << 60, 8), at_open(errc::corrupt)},
      {"sframe-contiguous-type", kSparse, be_set(0x1a, 0, 1), at_open(errc::malformed)},
      {"sframe-meta-length-int32-max", kSparse,
       [](file_set& f, const frame_map& m) { be_put(f.frame, meta_named(m.metas, "b2nd").len_at, 0x7fffffff, 4); },
       at_open(errc::truncated)},
      {"sframe-index-nbytes-huge", kSparse, index_header_le(kChNbytes, 0x7ffffff8, 4), at_open(errc::malformed)},
      {"sframe-entry-id-past-names", kSparseStored, index_entry_set(3, uint64_t{1} << 40), on_read(errc::out_of_range)},
      {"sframe-entry-id-missing", kSparseStored, index_entry_set(3, 0xffffffff), on_read(errc::io)},
      {"sframe-entry-special-unknown", kSparseStored, index_entry_set(3, kSpecialUnknown), on_read(errc::malformed)},
      {"sframe-chunk-cut-in-header", kSparse, chunk_entry_cut(20), on_read(errc::truncated)},
      {"sframe-chunk-cut-in-streams", kSparse, chunk_entry_cut(400), on_read(errc::corrupt)},
      {"sframe-chunk-empty", kSparse, chunk_entry_cut(0), on_read(errc::corrupt)},
      {"sframe-chunk-cbytes-int32-max", kSparse, last_chunk_le(kChCbytes, 0x7fffffff, 4), on_read(errc::corrupt)},
      {"sframe-chunk-nbytes-int32-max", kSparse, last_chunk_le(kChNbytes, 0x7fffffff, 4), on_read(errc::corrupt)},
      {"sframe-chunk-missing", kSparse,
       [](file_set& f, const frame_map&) {
         for (size_t i = 0; i < f.entries.size(); ++i)
           if (f.entries[i].first == "00000003.chunk") f.entries.erase(f.entries.begin() + static_cast<std::ptrdiff_t>(i));
       },
       on_read(errc::io)},
  };
  cases_run(t, cases);
}

// ---- Legitimate huge claims ------------------------------------------------------------------------------------

// The reference's 221-byte arrays of 10^7 and 10^8 chunks: open, one element, a slice and the verify walk over
// every chunk, in the same budget under both max_alloc settings (the walk of all 10^8 chunks once: it takes tens
// of seconds under the sanitizers). Damaged variants (the index's repeated entry, its count, the b2nd shape)
// fail cleanly in the same budget. Reduced (long_tests.hpp): every walk stops after 10^6 chunks.
void huge_run(test::context& t, base_id id, bool walk_all_once) {
  const bases& b = the_bases();
  REQUIRE(b.ok[id]);
  const bool reduced = test::long_tests_reduced();
  bool walked = false;
  for (const config& c : kConfigs) {
    const bool walk_all = !reduced && (!walk_all_once || (c.small_budget && !c.view && !walked));
    const int64_t walk = walk_all ? INT64_MAX : 1000000;
    walked |= walk == INT64_MAX;
    const run_result rr = file_run(b.f[id], kBaseInfo[id], c, false, true, walk);
    std::printf("%s (%s): open, element, slice and a walk of %s chunks: peak %zu bytes, %.2f s\n", kBaseInfo[id].name,
                c.name(), walk == INT64_MAX ? "all" : "10^6", rr.peak, rr.seconds);
    CHECK_OK(rr.first_error[0]);
    CHECK_OK(rr.first_error[1]);
    CHECK_OK(rr.first_error[2]);
    CHECK_OK(rr.first_error[4]);
    CHECK(rr.data_ok);
    CHECK_LE(rr.peak, kPeakBudget);
    CHECK(!rr.leaked);
  }
}

TESSERA_TEST(hostile, huge_sparse_golden_1e8) { huge_run(t, kHuge8, true); }

TESSERA_TEST(hostile, huge_sparse_golden) {
  huge_run(t, kHuge7, false);
  // The index chunk of these files is one repeated int64 (a special-value chunk): its value and its count.
  auto repeated_set = [](uint64_t v) {
    return [=](file_set& f, const frame_map& m) { le_put(f.frame, m.index + kChExtended, v, 8); };
  };
  std::vector<hostile_case> cases = {
      // Every chunk at offset 0 of an empty chunks section.
      {"huge-index-repeats-offset-0", kHuge7, repeated_set(0), on_read_not_whole(errc::corrupt)},
      {"huge-index-repeats-unknown-special", kHuge7, repeated_set(kSpecialUnknown),
       on_read_not_whole(errc::malformed)},
      {"huge-index-one-entry-more", kHuge7, index_header_le(kChNbytes, (10000000 + 1) * 8, 4), at_open(errc::corrupt)},
      {"huge-index-nbytes-int32-max", kHuge8, index_header_le(kChNbytes, 0x7ffffff8, 4), at_open(errc::corrupt)},
      {"huge-nbytes-one-chunk-more", kHuge8,
       [](file_set& f, const frame_map&) { be_put(f.frame, kNbytes, be_get(f.frame, kNbytes, 8) + 4000, 8); },
       at_open(errc::corrupt)},
      {"huge-b2nd-shape-1e18", kHuge8,
       [](file_set& f, const frame_map& m) { be_put(f.frame, m.shape_at[0], 1000000000000000000, 8); },
       at_open(errc::malformed)},
      {"huge-b2nd-chunkshape-int32-max", kHuge8,
       [](file_set& f, const frame_map& m) { be_put(f.frame, m.chunkshape_at[0], 0x7fffffff, 4); },
       at_open(errc::overflow)},
  };
  cases_run(t, cases);
}

// A geometry that is consistent throughout but claims chunks of 512 MiB (32 MiB on 32-bit targets; all zeros, a
// few hundred bytes): a
// max_alloc below the chunk refuses it at open; the default one opens it and reads without a chunk buffer.
TESSERA_TEST(hostile, consistent_huge_chunk_claim) {
  const bases& b = the_bases();
  REQUIRE(b.ok[kHugeChunk]);
  seed_write(hostile_case{"huge-chunk-consistent", kHugeChunk, nullptr, {}}, b.f[kHugeChunk]);
  for (const config& c : kConfigs) {
    const run_result rr = file_run(b.f[kHugeChunk], kBaseInfo[kHugeChunk], c, false, true);
    CHECK_EQ(rr.got.open, c.small_budget ? errc::resource_limit : errc::ok);
    if (!c.small_budget) {
      CHECK_OK(rr.first_error[1]);
      CHECK_OK(rr.first_error[2]);
      CHECK_OK(rr.first_error[4]);
    }
    CHECK(rr.data_ok);
    CHECK_LE(rr.peak, kPeakBudget);
    CHECK(!rr.leaked);
  }
}
