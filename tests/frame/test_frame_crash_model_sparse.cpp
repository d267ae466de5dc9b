// SPDX-License-Identifier: BSD-3-Clause
// Sparse frames through the directory crash model (issue 42; tests/support/crash_directory.hpp, the contiguous
// frames' sweeps are test_frame_crash_model.cpp). Each workload (appends, rewrites, deletes and inserts,
// vlmetalayers, changes dropped at close, writable reopens that sweep, a frame created over an older one, and two
// arrays: planes rewritten, resizes) runs on an sframe in a crash_directory: entries that are page-cache files,
// a namespace whose creations, removals and renames are durable as storage_directory promises (see the model's
// header). The test keeps its own model of the content and records it before each commit; at every call the crash
// images of the directory (any subset of the pending namespace operations, each file's lost and torn writes per
// 512- and 4096-byte sector) must open read-only as a snapshot that may be durable then, exactly; and nothing is
// left behind: after a writable reopen of the image (which sweeps), the directory holds exactly chunks.b2frame, one
// entry per stored chunk its index references, and the names a sweep leaves alone (directory_holds_exactly). Every
// call is also checked against the durable frame (nothing it references is written, emptied, removed or renamed
// away; the rename that commits a chunks.b2frame commits only durable content) and every storage opened is closed.
//
// Then the same workloads with failures, as for contiguous frames: one failing call at every N (once; from N on:
// a crash), the Nth sync failing (file syncs, and the removes, renames and creating opens that sync the
// directory in posix_directory; the program reopens from the disk, or retries on its handle), pairs of failing
// calls. Reduced by default; TESSERA_LONG_TESTS=full runs every call, more images and more pairs.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/crash_directory.hpp"
#include "../support/crash_directory_sweep.hpp"
#include "../support/crash_sweep.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using crash_model::bytes;
using crash_model::entries;

namespace {

constexpr int32_t kBlock = 256;
constexpr size_t kMaxChunk = 8192;

span<const char> nm(const std::string& s) { return span<const char>(s.data(), s.size()); }

std::string hash_text(const bytes& b) {
  char h[24];
  std::snprintf(h, sizeof h, "%08llx", static_cast<unsigned long long>(crash_model::bytes_hash(b) & 0xffffffffu));
  return h;
}

chunk_decoder& decoder() {
  static chunk_decoder d;
  static bool ready = false;
  if (!ready) ready = chunk_decoder_init(d, test::system_allocator()).ok();
  return d;
}

// ---- Nothing left behind ------------------------------------------------------------------------------------------

// Whether a name is one a sweep leaves alone (neither a chunk entry's, nor the index's, nor its temporary's).
bool foreign_name(const std::string& n) {
  return !crash_model::is_chunk_name(n) && n != kSparseIndexName && n != kSparseIndexTempName;
}

// "" when a writable reopen of the frame the entries hold (its sweep) leaves exactly chunks.b2frame, one entry per
// stored chunk its index references and the foreign names; else what it leaves. Run over a memory_directory copy.
std::string left_behind(const entries& e) {
  memory_directory md;
  if (!memory_directory_init(md, test::system_allocator(), static_cast<uint32_t>(e.size()) + 8).ok()) return "no memory";
  const storage_directory dir = memory_directory_interface(md);
  uint32_t foreign = 0;
  for (const auto& kv : e) {
    storage st;
    if (!storage_directory_open(dir, kv.first.c_str(), storage_open::replace, &st).ok()) return "copy failed";
    const status w = storage_write(st, 0, bytes_view(kv.second.data(), kv.second.size()));
    if (!storage_directory_close(dir, &st).ok() || !w.ok()) return "copy failed";
    foreign += foreign_name(kv.first) ? 1 : 0;
  }
  frame f;
  frame_open_options o;
  o.writable = true;
  const status s = frame_open_sparse(f, dir, test::system_allocator(), o);
  if (!s.ok()) return std::string("a writable reopen fails: ") + s.message;
  if (frame_test::directory_holds_exactly(md, f, foreign)) {
    (void)frame_close(f);
    return "";
  }
  std::string held, referenced;
  for (uint32_t i = 0; i < memory_directory_slots(md); ++i)
    if (const char* n = memory_directory_name(md, i)) held += std::string(held.empty() ? "" : " ") + n;
  const frame_info* info = frame_info_get(f);
  for (int64_t i = 0; info != nullptr && i < info->nchunks; ++i) {
    auto r = frame_chunk_locate(f, i);
    char name[16];
    if (r.ok() && r->special == chunk_special::none && frame_sparse_chunk_name(r->offset, name, sizeof name).ok())
      referenced += std::string(referenced.empty() ? "" : " ") + name;
  }
  (void)frame_close(f);
  return "after a writable reopen (the sweep) the directory holds {" + held + "}, its index references {" + referenced +
         "} (and " + std::to_string(foreign) + " foreign names)";
}

// "" when the entries are exactly chunks.b2frame, the entries its index references and foreign names, as they
// are (no sweep); else what is more or missing.
std::string exactly_referenced(const entries& e) {
  const storage_directory dir = crash_model::entries_directory(&e);
  frame f;
  const status s = frame_open_sparse(f, dir, test::system_allocator());
  if (!s.ok()) return std::string("holds no frame: ") + s.message;
  std::vector<std::string> want{kSparseIndexName};
  const frame_info* info = frame_info_get(f);
  for (int64_t i = 0; info != nullptr && i < info->nchunks; ++i) {
    auto r = frame_chunk_locate(f, i);
    if (!r.ok()) return "holds a frame whose chunk " + std::to_string(i) + " is not located: " + r.err().message;
    char name[16];
    if (r->special == chunk_special::none && frame_sparse_chunk_name(r->offset, name, sizeof name).ok()) want.emplace_back(name);
  }
  std::string more, missing;
  for (const auto& kv : e)
    if (!foreign_name(kv.first) && std::find(want.begin(), want.end(), kv.first) == want.end()) more += " " + kv.first;
  for (const std::string& n : want)
    if (e.count(n) == 0) missing += " " + n;
  if (more.empty() && missing.empty()) return "";
  return "holds entries its frame does not reference {" + more + " } and misses {" + missing + " }";
}

// A decoded image: cached by what decoding depends on (the names, the index, the entries the index references),
// not by the bytes of entries nobody references (a half-written new chunk's).
template <class Model>
struct sparse_decoder {
  std::unordered_map<uint64_t, crash_sweep::decoded> cache;

  template <class Open, class Read>
  crash_sweep::decoded decode(const bytes& image, Open&& open, Read&& read, std::string (*describe)(const Model&),
                              bytes (*canon_of)(const Model&), Model (*broken)(const std::string&)) {
    crash_sweep::decoded d;
    const entries e = crash_model::image_entries(image);
    const storage_directory dir = crash_model::entries_directory(&e);
    auto h = open(dir);
    if (!h.ok) {
      d.desc = h.error;
      return d;
    }
    // The key: every name, the index, and each referenced entry's content.
    bytes key;
    for (const auto& kv : e) crash_sweep::canon_bytes(key, reinterpret_cast<const uint8_t*>(kv.first.data()), kv.first.size());
    auto idx = e.find(kSparseIndexName);
    if (idx != e.end()) crash_sweep::canon_bytes(key, idx->second.data(), idx->second.size());
    bool keyed = true;
    const frame_info* info = frame_info_get(h.own);
    for (int64_t i = 0; info != nullptr && i < info->nchunks && keyed; ++i) {
      auto r = frame_chunk_locate(h.own, i);
      if (!r.ok()) {
        keyed = false;
        break;
      }
      if (r->special != chunk_special::none) continue;
      char name[16];
      if (!frame_sparse_chunk_name(r->offset, name, sizeof name).ok()) {
        keyed = false;
        break;
      }
      auto it = e.find(name);
      if (it == e.end()) keyed = false;
      else crash_sweep::canon_bytes(key, it->second.data(), it->second.size());
    }
    const uint64_t k = crash_model::bytes_hash(key, 7) ^ (crash_model::bytes_hash(key, 8) << 1);
    if (keyed) {
      auto c = cache.find(k);
      if (c != cache.end()) return c->second;
    }
    Model m = read(h);
    h.close();
    if (!h.read_error.empty()) {
      // Opens as a frame, not as what the test writes (an array's frame before its first commit with chunks).
      d.desc = h.read_error;
      if (keyed) cache.emplace(k, d);
      return d;
    }
    if (m.broken.empty()) {  // reads whole: what a writable reopen leaves
      const std::string left = left_behind(e);
      if (!left.empty()) m = broken("it reads as " + describe(m) + ", but " + left);
    }
    d.ok = true;
    d.canon = canon_of(m);
    d.desc = describe(m);
    if (keyed) {
      if (cache.size() > 100000) cache.clear();
      cache.emplace(k, d);
    }
    return d;
  }
};

// ---- The frame's model ------------------------------------------------------------------------------------------------

struct fmodel {
  std::vector<bytes> chunks;                          // decoded
  std::vector<std::pair<std::string, bytes>> vlmetas;  // decoded, any order
  std::vector<std::pair<std::string, bytes>> metas;    // fixed metalayers, header order
  std::string broken;                                  // an image that opens but does not read whole, or leaves entries
};

bytes canon_of(const fmodel& m) {
  bytes out;
  if (!m.broken.empty()) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.broken.data()), m.broken.size());
    return out;
  }
  crash_sweep::canon_u64(out, m.chunks.size());
  for (const bytes& c : m.chunks) crash_sweep::canon_bytes(out, c.data(), c.size());
  auto v = m.vlmetas;
  std::sort(v.begin(), v.end());
  crash_sweep::canon_u64(out, v.size());
  for (const auto& e : v) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(e.first.data()), e.first.size());
    crash_sweep::canon_bytes(out, e.second.data(), e.second.size());
  }
  crash_sweep::canon_u64(out, m.metas.size());
  for (const auto& e : m.metas) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(e.first.data()), e.first.size());
    crash_sweep::canon_bytes(out, e.second.data(), e.second.size());
  }
  return out;
}

std::string describe(const fmodel& m) {
  if (!m.broken.empty()) return "a frame that does not read right: " + m.broken;
  std::string s = std::to_string(m.chunks.size()) + " chunks, vlmetas {";
  auto v = m.vlmetas;
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i].first + ":" + std::to_string(v[i].second.size());
  return s + "}, content " + hash_text(canon_of(m));
}

fmodel fbroken(const std::string& why) {
  fmodel m;
  m.broken = why.empty() ? "?" : why;
  return m;
}

// The content of an open frame, read with tessera's reader.
fmodel read_frame(frame& f) {
  fmodel m;
  const frame_info* info = frame_info_get(f);
  if (info == nullptr) return fbroken("not open");
  for (int64_t i = 0; i < info->nchunks; ++i) {
    auto r = frame_chunk_locate(f, i);
    if (!r.ok()) return fbroken("chunk " + std::to_string(i) + " not located: " + r.err().message);
    bytes out(static_cast<size_t>(r->nbytes));
    auto n = frame_chunk_decode(f, decoder(), i, bytes_mut(out.data(), out.size()));
    if (!n.ok()) return fbroken("chunk " + std::to_string(i) + " does not decode: " + n.err().message);
    out.resize(*n);
    m.chunks.push_back(std::move(out));
  }
  for (uint32_t i = 0; i < info->nvlmetalayers; ++i) {
    auto name = frame_vlmeta_name(f, i);
    if (!name.ok()) return fbroken(std::string("vlmetalayer name: ") + name.err().message);
    auto nb = frame_vlmeta_nbytes(f, *name);
    if (!nb.ok()) return fbroken(std::string("vlmetalayer size: ") + nb.err().message);
    bytes out(*nb);
    auto n = frame_vlmeta_decode(f, decoder(), *name, bytes_mut(out.data(), out.size()));
    if (!n.ok()) return fbroken(std::string("vlmetalayer does not decode: ") + n.err().message);
    m.vlmetas.emplace_back(std::string(name->data(), name->size()), std::move(out));
  }
  for (uint32_t i = 0; i < info->nmetalayers; ++i) {
    auto name = frame_meta_name(f, i);
    if (!name.ok()) return fbroken(std::string("metalayer name: ") + name.err().message);
    auto c = frame_meta_find(f, *name);
    if (!c.ok()) return fbroken(std::string("metalayer: ") + c.err().message);
    m.metas.emplace_back(std::string(name->data(), name->size()), bytes(c->data(), c->data() + c->size()));
  }
  return m;
}

struct opened_frame {
  bool ok = false;
  std::string error;
  std::string read_error;
  frame own;
  void close() { (void)frame_close(own); }
};

crash_sweep::decoded decode_frame_image(const bytes& image) {
  static sparse_decoder<fmodel> dec;
  return dec.decode(
      image,
      [](const storage_directory& dir) {
        opened_frame h;
        const status s = frame_open_sparse(h.own, dir, test::system_allocator());
        h.ok = s.ok();
        if (!s.ok()) h.error = s.message;
        return h;
      },
      [](opened_frame& h) { return read_frame(h.own); }, describe, canon_of, fbroken);
}

// ---- Chunks and contents ----------------------------------------------------------------------------------------------

bytes content_of(uint64_t seed, size_t n) {
  bytes b(n);
  if (seed != 0) frame_test::content_fill(seed, b.data(), n);
  return b;
}

// The chunk of content seed (n bytes, typesize 4; seed 0: a special chunk of zeros).
bytes chunk_of(uint64_t seed, size_t n) {
  static uint8_t src[kMaxChunk], out[2 * kMaxChunk + 64], work[3 * kBlock];
  if (seed == 0) {
    frame_test::special_make(1, static_cast<int32_t>(n), out);
    return bytes(out, out + 32);
  }
  const size_t len = frame_test::chunk_make(seed, n, kBlock, src, out, sizeof out, work);
  return bytes(out, out + len);
}

// ---- The frame's driver -------------------------------------------------------------------------------------------------

class fdriver : public crash_sweep::dir_driver<fmodel> {
 public:
  fdriver(uint64_t, const crash_sweep::run_plan& plan)
      : crash_sweep::dir_driver<fmodel>(plan, decode_frame_image, canon_of, describe, 0x53465241ull) {}

  void append(uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    op("append", [&] { return frame_chunk_append(f_, bytes_view(c.data(), c.size())); },
       [&] { m_.chunks.push_back(content_of(seed, n)); });
  }
  void insert(int64_t at, uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    op("insert", [&] { return frame_chunk_insert(f_, at, bytes_view(c.data(), c.size())); },
       [&] { m_.chunks.insert(m_.chunks.begin() + at, content_of(seed, n)); });
  }
  void update(int64_t at, uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    op("update", [&] { return frame_chunk_update(f_, at, bytes_view(c.data(), c.size())); },
       [&] { m_.chunks[static_cast<size_t>(at)] = content_of(seed, n); });
  }
  void erase(int64_t at) {
    op("delete", [&] { return frame_chunk_delete(f_, at); }, [&] { m_.chunks.erase(m_.chunks.begin() + at); });
  }
  void vlmeta_set(const std::string& name, uint64_t seed, size_t n) {
    const bytes content = content_of(seed, n);
    op("vlmeta set", [&] { return frame_vlmeta_set(f_, nm(name), bytes_view(content.data(), content.size())); },
       [&] {
         for (auto& e : m_.vlmetas)
           if (e.first == name) {
             e.second = content;
             return;
           }
         m_.vlmetas.emplace_back(name, content);
       });
  }
  void vlmeta_delete(const std::string& name) {
    op("vlmeta delete", [&] { return frame_vlmeta_delete(f_, nm(name)); },
       [&] {
         for (auto it = m_.vlmetas.begin(); it != m_.vlmetas.end(); ++it)
           if (it->first == name) {
             m_.vlmetas.erase(it);
             return;
           }
       });
  }
  void meta_update(uint8_t v) {
    const bytes content{v, static_cast<uint8_t>(v + 1), 3, 4, 5, 6, 7, static_cast<uint8_t>(~v)};
    op("meta update", [&] { return frame_meta_update(f_, nm("m"), bytes_view(content.data(), content.size())); },
       [&] { m_.metas[0].second = content; });
  }
  // frame_meta_add: commits what is pending, then commits the longer header. A failure leaves the metalayer
  // pending or not: the model follows the live frame then.
  void meta_add(const std::string& name, uint64_t seed, size_t n) {
    const bytes content = content_of(seed, n);
    commit();  // what frame_meta_add does first: a commit of its own in the model
    meta_adding_ = true;
    committing("meta add", [&] { return frame_meta_add(f_, nm(name), bytes_view(content.data(), content.size())); },
               [&] { m_.metas.emplace_back(name, content); });
    meta_adding_ = false;
  }
  [[nodiscard]] int64_t nchunks() const { return static_cast<int64_t>(m_.chunks.size()); }

 protected:
  bool failed_ops_may_change() override { return meta_adding_; }
  bool meta_adding_ = false;
  status handle_create() override {
    const fmodel m0 = initial_model();
    const frame_metalayer_init ml{nm(m0.metas[0].first), bytes_view(m0.metas[0].second.data(), m0.metas[0].second.size())};
    frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    p.metalayers = &ml;
    p.nmetalayers = 1;
    return frame_create_sparse(f_, dir_, test::system_allocator(), p, options());
  }
  status handle_open() override { return frame_open_sparse(f_, dir_, test::system_allocator(), options()); }
  void handle_release() override { (void)detail::frame_release(f_); }
  bool handle_dirty() override { return frame_dirty(f_); }
  status handle_close() override { return frame_close(f_); }
  status handle_commit() override { return frame_commit(f_); }
  fmodel handle_read() override { return read_frame(f_); }
  std::string tidy_check(const entries& e) override { return exactly_referenced(e); }
  fmodel initial_model() override {
    fmodel m0;
    m0.metas.emplace_back("m", bytes{1, 2, 3, 4, 5, 6, 7, 8});
    return m0;
  }

 private:
  static frame_open_options options() {
    frame_open_options o;
    o.writable = true;
    return o;
  }
  frame f_;
};

// ---- Frame workloads -------------------------------------------------------------------------------------------------

using fworkload = crash_sweep::workload<fdriver>;

// Appends (one of them a special chunk of zeros: no entry), a commit every four.
void wl_appends(fdriver& d) {
  d.create();
  d.focus();
  for (int i = 0; i < 12; ++i) {
    d.append(i == 5 ? 0 : 1000 + static_cast<uint64_t>(i), 1024);
    if (i % 4 == 3) d.commit();
  }
  d.close();
}

// The same chunks rewritten round after round (each commit removes the entries it replaced), the fixed metalayer
// now and then.
void wl_rewrite(fdriver& d) {
  d.create();
  for (int i = 0; i < 6; ++i) d.append(3000 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.focus();
  for (int round = 0; round < 8; ++round) {
    d.update(round % 6, 4000 + 2 * static_cast<uint64_t>(round), 1024);
    d.update((round + 3) % 6, 4001 + 2 * static_cast<uint64_t>(round), 1024);
    if (round % 3 == 0) d.meta_update(static_cast<uint8_t>(round));
    d.commit();
  }
  d.close();
}

// Deletes in the middle, inserts at the front, middle and end, every chunk deleted (with a vlmetalayer set), then
// chunks again.
void wl_delete_insert(fdriver& d) {
  d.create();
  for (int i = 0; i < 10; ++i) d.append(5000 + static_cast<uint64_t>(i), 512);
  d.commit();
  d.focus();
  for (int k = 0; k < 3; ++k) d.erase(4);
  d.commit();
  d.insert(0, 5100, 512);
  d.insert(3, 5101, 512);
  d.insert(d.nchunks(), 5102, 512);
  d.update(1, 5103, 512);
  d.commit();
  for (int64_t i = 0, n = d.nchunks(); i < n; ++i) d.erase(0);  // a stopped run changes nothing: bounded
  d.vlmeta_set("a", 5104, 24);
  d.commit();
  d.append(5105, 512);
  d.append(5106, 512);
  d.commit();
  d.close();
}

// Vlmetalayers set, replaced and deleted, one of them about 6 KB (an index file over several sectors), and a
// fixed metalayer added (frame_meta_add: its own commits).
void wl_vlmetas(fdriver& d) {
  d.create();
  for (int i = 0; i < 3; ++i) d.append(7000 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.focus();
  d.vlmeta_set("a", 7100, 24);
  d.commit();
  d.vlmeta_set("big", 7101, 6000);
  d.update(1, 7102, 1024);
  d.commit();
  d.vlmeta_set("a", 7103, 40);
  d.vlmeta_delete("big");
  d.commit();
  d.update(2, 7104, 1024);
  d.meta_add("added", 7105, 12);
  d.close();
}

// Someone else's files in the directory; changes dropped at close (their new entries removed at once); writable
// reopens (the sweep) with changes after them.
void wl_reopen(fdriver& d) {
  d.put_foreign("notes.txt", bytes{'h', 'i'});
  d.put_foreign("0000000a.chunk", bytes{1, 2, 3});  // lower-case hex: not a chunk entry's name
  d.create();
  for (int i = 0; i < 6; ++i) d.append(8000 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.focus();
  d.update(1, 8100, 1024);
  d.append(8101, 1024);
  d.close(true);
  d.open_again();
  d.update(2, 8102, 1024);
  d.erase(0);
  d.commit();
  d.close();
  d.open_again();
  d.append(8103, 1024);
  d.erase(d.nchunks() - 2);
  d.commit();
  d.close();
}

// A frame created over an older one (whose entries the new chunks replace by number, the rest left to the next
// writable open), then reopened and changed.
void wl_create_over(fdriver& d) {
  d.create();
  for (int i = 0; i < 6; ++i) d.append(i == 2 ? 0 : 9000 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.close();
  d.focus();
  d.create();
  for (int i = 0; i < 3; ++i) d.append(9100 + static_cast<uint64_t>(i), 1024);
  d.commit();
  d.close();
  d.open_again();
  d.update(0, 9103, 1024);
  d.commit();
  d.close();
}

const fworkload kAppends{"sparse_appends", 0, wl_appends};
const fworkload kRewrite{"sparse_rewrite", 0, wl_rewrite};
const fworkload kDeleteInsert{"sparse_delete_insert", 0, wl_delete_insert};
const fworkload kVlmetas{"sparse_vlmetas", 0, wl_vlmetas};
const fworkload kReopen{"sparse_reopen", 0, wl_reopen};
const fworkload kCreateOver{"sparse_create_over", 0, wl_create_over};

// ---- The array's model -------------------------------------------------------------------------------------------------

constexpr int kDims = 3;
constexpr int64_t kShape[kDims] = {8, 8, 8};
constexpr int32_t kChunkShape[kDims] = {4, 4, 4};
constexpr int32_t kBlockShape[kDims] = {2, 2, 2};

struct amodel {
  int64_t shape[kDims] = {};
  std::vector<uint32_t> items;
  std::string broken;
  [[nodiscard]] int64_t at(const int64_t* c) const { return (c[0] * shape[1] + c[1]) * shape[2] + c[2]; }
};

int64_t count_of(const int64_t* shape) { return shape[0] * shape[1] * shape[2]; }

template <class Fn>
void for_each_coord(const int64_t* ext, Fn&& fn) {
  int64_t c[kDims];
  for (c[0] = 0; c[0] < ext[0]; ++c[0])
    for (c[1] = 0; c[1] < ext[1]; ++c[1])
      for (c[2] = 0; c[2] < ext[2]; ++c[2]) fn(c);
}

void model_write(amodel& m, const int64_t* start, const int64_t* stop, const std::vector<uint32_t>& v) {
  int64_t ext[kDims];
  for (int d = 0; d < kDims; ++d) ext[d] = stop[d] - start[d];
  size_t k = 0;
  for_each_coord(ext, [&](const int64_t* c) {
    const int64_t p[kDims] = {start[0] + c[0], start[1] + c[1], start[2] + c[2]};
    m.items[static_cast<size_t>(m.at(p))] = v[k++];
  });
}

void model_resize(amodel& m, const int64_t* ns) {
  amodel n;
  for (int d = 0; d < kDims; ++d) n.shape[d] = ns[d];
  n.items.assign(static_cast<size_t>(count_of(ns)), 0);
  int64_t ext[kDims];
  for (int d = 0; d < kDims; ++d) ext[d] = std::min(ns[d], m.shape[d]);
  for_each_coord(ext, [&](const int64_t* c) { n.items[static_cast<size_t>(n.at(c))] = m.items[static_cast<size_t>(m.at(c))]; });
  for (int d = 0; d < kDims; ++d) m.shape[d] = ns[d];
  m.items = std::move(n.items);
}

bytes acanon_of(const amodel& m) {
  bytes out;
  if (!m.broken.empty()) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.broken.data()), m.broken.size());
    return out;
  }
  for (int64_t s : m.shape) crash_sweep::canon_u64(out, static_cast<uint64_t>(s));
  crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.items.data()), m.items.size() * 4);
  return out;
}

std::string adescribe(const amodel& m) {
  if (!m.broken.empty()) return "an array that does not read right: " + m.broken;
  return "shape " + std::to_string(m.shape[0]) + "x" + std::to_string(m.shape[1]) + "x" + std::to_string(m.shape[2]) +
         ", content " + hash_text(acanon_of(m));
}

amodel abroken(const std::string& why) {
  amodel m;
  m.broken = why.empty() ? "?" : why;
  return m;
}

amodel read_array(array& a) {
  amodel m;
  const array_layout& l = array_layout_get(a);
  if (l.ndim != kDims) return abroken("ndim " + std::to_string(l.ndim));
  for (int d = 0; d < kDims; ++d) m.shape[d] = l.shape[d];
  m.items.assign(static_cast<size_t>(count_of(m.shape)), 0);
  if (!m.items.empty()) {
    const status s = array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(m.items.data()), m.items.size() * 4));
    if (!s.ok()) return abroken(std::string("items: ") + s.message);
  }
  return m;
}

// The image opened as a frame (the decoder's key), then as the array over that frame.
struct opened_array {
  bool ok = false;
  std::string error;
  std::string read_error;  // the frame opens, the array does not
  frame own;
  storage_directory dir{};
  void close() { (void)frame_close(own); }
};

crash_sweep::decoded decode_array_image(const bytes& image) {
  static sparse_decoder<amodel> dec;
  return dec.decode(
      image,
      [](const storage_directory& dir) {
        opened_array h;
        const status s = frame_open_sparse(h.own, dir, test::system_allocator());
        h.ok = s.ok();
        if (!s.ok()) h.error = s.message;
        h.dir = dir;
        return h;
      },
      [](opened_array& h) {
        array a;
        const status s = array_open_sparse(a, h.dir, test::system_allocator());
        if (!s.ok()) {
          h.read_error = std::string("the array does not open: ") + s.message;
          return abroken(h.read_error);
        }
        amodel m = read_array(a);
        (void)array_close(a);
        return m;
      },
      adescribe, acanon_of, abroken);
}

std::vector<uint32_t> values(test::rng& r, int64_t n) {
  std::vector<uint32_t> v(static_cast<size_t>(n));
  for (uint32_t& x : v) {
    const float f = static_cast<float>(r.next() % 100000) / 100.0f;
    std::memcpy(&x, &f, 4);
  }
  return v;
}

class adriver : public crash_sweep::dir_driver<amodel> {
 public:
  adriver(uint64_t, const crash_sweep::run_plan& plan)
      : crash_sweep::dir_driver<amodel>(plan, decode_array_image, acanon_of, adescribe, 0x53415252ull) {}

  [[nodiscard]] const int64_t* shape() const { return m_.shape; }
  void write(const int64_t* start, const int64_t* stop, const std::vector<uint32_t>& v) {
    op("slice write",
       [&] { return array_slice_write(a_, start, stop, bytes_view(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4)); },
       [&] { model_write(m_, start, stop, v); });
  }
  void resize(const int64_t* ns) {
    op("resize", [&] { return array_resize(a_, ns); }, [&] { model_resize(m_, ns); });
  }

 protected:
  status handle_create() override {
    array_params p;
    p.ndim = kDims;
    for (int d = 0; d < kDims; ++d) {
      p.shape[d] = kShape[d];
      p.chunkshape[d] = kChunkShape[d];
      p.blockshape[d] = kBlockShape[d];
    }
    p.dtype = span<const char>("<f4", 3);
    p.compressor = codec_available(codec::lz4) ? codec::lz4 : codec::blosclz;
    const status s = array_create(a_, array_target_sparse(dir_), test::system_allocator(), p, array_fill_zeros());
    a_.auto_commit = false;
    return s;
  }
  status handle_open() override {
    array_open_options o;
    o.frame.writable = true;
    const status s = array_open_sparse(a_, dir_, test::system_allocator(), o);
    a_.auto_commit = false;
    return s;
  }
  void handle_release() override { a_ = array{}; }
  bool handle_dirty() override { return array_dirty(a_); }
  status handle_close() override { return array_close(a_); }
  status handle_commit() override { return array_commit(a_); }
  amodel handle_read() override { return read_array(a_); }
  std::string tidy_check(const entries& e) override { return exactly_referenced(e); }
  bool failed_ops_may_change() override { return true; }
  amodel initial_model() override {
    amodel m0;
    for (int d = 0; d < kDims; ++d) m0.shape[d] = kShape[d];
    m0.items.assign(static_cast<size_t>(count_of(m0.shape)), 0);
    return m0;
  }

 private:
  array a_;
};

using aworkload = crash_sweep::workload<adriver>;

// Planes along the first axis rewritten, each committed (the same chunk entries replaced by new ones).
void wl_array_planes(adriver& d) {
  d.create();
  d.focus();
  test::rng r(11);
  for (int round = 0; round < 5; ++round) {
    const int64_t* sh = d.shape();
    if (sh[0] == 0) break;  // never created (a crash from the first call on)
    const int64_t z = (3 * round) % sh[0];
    const int64_t start[kDims] = {z, 0, 0}, stop[kDims] = {z + 1, sh[1], sh[2]};
    d.write(start, stop, values(r, sh[1] * sh[2]));
    d.commit();
  }
  d.close();
}

// Written whole, shrunk (the chunks past the new shape deleted), grown and written, closed, reopened (the sweep)
// and written again.
void wl_array_resize(adriver& d) {
  d.create();
  test::rng r(12);
  {
    const int64_t start[kDims] = {0, 0, 0}, stop[kDims] = {8, 8, 8};
    d.write(start, stop, values(r, 8 * 8 * 8));
  }
  d.commit();
  d.focus();
  {
    const int64_t ns[kDims] = {4, 8, 5};
    d.resize(ns);
  }
  d.commit();
  {
    const int64_t ns[kDims] = {8, 8, 8};
    d.resize(ns);
    const int64_t start[kDims] = {3, 2, 4}, stop[kDims] = {6, 7, 8};
    d.write(start, stop, values(r, 3 * 5 * 4));
  }
  d.commit();
  d.close();
  d.open_again();
  const int64_t start[kDims] = {0, 5, 5}, stop[kDims] = {2, 7, 7};
  d.write(start, stop, values(r, 8));
  d.commit();
  d.close();
}

const aworkload kArrayPlanes{"sparse_array_planes", 0, wl_array_planes};
const aworkload kArrayResize{"sparse_array_resize", 0, wl_array_resize};

}  // namespace

// The smallest case of what the sweeps with a failed sync retried on the same handle find: an append whose new
// entry's creation fails as posix_directory fails it (the entry made, the directory's fsync failed: it is seen and
// may never be durable), retried on the same handle, then committed. The retry must not commit an entry whose name
// is not durable (it reused the number: open(replace) found the entry and created nothing, so nothing made its
// name durable), and the disk must hold the committed frame.
TESSERA_TEST(sparse_crash_cases, a_retried_append_after_a_failed_creation_commits_only_durable_entries) {
  crash_model::crash_directory cd;
  cd.checks_on();
  const storage_directory dir = cd.directory();
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  frame_open_options o;
  o.writable = true;
  frame f;
  REQUIRE_OK(frame_create_sparse(f, dir, test::system_allocator(), p, o));
  const bytes c = chunk_of(77, 1024);
  if (cd.syncs() % 2 == 1) {
    // Someone else's file, so that the failing sync below has an odd number (the model then drops the creation).
    storage st;
    REQUIRE_OK(storage_directory_open(dir, "notes.txt", storage_open::replace, &st));
    REQUIRE_OK(storage_directory_close(dir, &st));
  }
  cd.faults.fail_syncs = {cd.syncs() + 1};  // the next sync is the new entry's creation (its directory's fsync)
  CHECK_ERR(frame_chunk_append(f, bytes_view(c.data(), c.size())), errc::io);
  cd.faults.clear();
  REQUIRE_OK(frame_chunk_append(f, bytes_view(c.data(), c.size())));
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
  for (const std::string& v : cd.violations()) test::report_failure(t, __FILE__, __LINE__, v.c_str());
  cd.restart();
  const crash_sweep::decoded d = decode_frame_image(cd.durable_image());
  fmodel want;
  want.chunks.push_back(content_of(77, 1024));
  if (!d.ok || d.canon != canon_of(want)) {
    const std::string text = "after a restart, the disk " + (d.ok ? "holds " + d.desc : "does not open: " + d.desc) +
                             ", not the committed " + describe(want);
    test::report_failure(t, __FILE__, __LINE__, text.c_str());
  }
}

// One test per workload and sweep: crash images without faults, one failing call at every N (once; from N on),
// the Nth sync failing (reopen; retry), pairs of failing calls.
#define TESSERA_SPARSE_CRASH_TESTS(id, wl)                                                                    \
  TESSERA_TEST(sparse_crash_images, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::images); }     \
  TESSERA_TEST(sparse_crash_fail_once, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::once); }    \
  TESSERA_TEST(sparse_crash_fail_from, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::from); }    \
  TESSERA_TEST(sparse_crash_sync_fails_reopen, id) {                                                        \
    crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::syncs_reopen);                                       \
  }                                                                                                         \
  TESSERA_TEST(sparse_crash_sync_fails_retry, id) {                                                         \
    crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::syncs_retry);                                        \
  }                                                                                                         \
  TESSERA_TEST(sparse_crash_fail_pairs, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::pairs); }

TESSERA_SPARSE_CRASH_TESTS(appends, kAppends)
TESSERA_SPARSE_CRASH_TESTS(rewrite, kRewrite)
TESSERA_SPARSE_CRASH_TESTS(delete_insert, kDeleteInsert)
TESSERA_SPARSE_CRASH_TESTS(vlmetas, kVlmetas)
TESSERA_SPARSE_CRASH_TESTS(reopen, kReopen)
TESSERA_SPARSE_CRASH_TESTS(create_over, kCreateOver)
TESSERA_SPARSE_CRASH_TESTS(array_planes, kArrayPlanes)
TESSERA_SPARSE_CRASH_TESTS(array_resize, kArrayResize)
