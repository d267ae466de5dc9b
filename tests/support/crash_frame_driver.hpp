// SPDX-License-Identifier: BSD-3-Clause
// The frame writer's side of the crash sweeps (crash_sweep.hpp), shared by the contiguous frames over a page cache
// (tests/frame/test_frame_crash_model.cpp) and the sparse frames over a crash directory
// (test_frame_crash_model_sparse.cpp): the test's model of a frame's content (every chunk's decoded bytes, the
// vlmetalayers, the fixed metalayers), how an open frame reads as that model, the chunks the workloads write, and
// the driver of a frame's operations over either medium. The tests supply how a crash image decodes. Hosted
// targets only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/frame.hpp"
#include "tessera/storage_directory.hpp"

#include "../frame/frame_testing.hpp"
#include "crash_model.hpp"
#include "crash_sweep.hpp"
#include "test_allocators.hpp"

namespace crash_frame {

using crash_model::bytes;

constexpr int32_t kBlock = 256;
constexpr size_t kMaxChunk = 8192;

inline tessera::span<const char> nm(const std::string& s) { return tessera::span<const char>(s.data(), s.size()); }

// A short text of a content's canonical bytes.
inline std::string hash_text(const bytes& b) {
  char h[24];
  std::snprintf(h, sizeof h, "%08llx", static_cast<unsigned long long>(crash_model::bytes_hash(b) & 0xffffffffu));
  return h;
}

// Appends named byte strings (name, content) to canonical bytes, count first.
inline void canon_named(bytes& out, const std::vector<std::pair<std::string, bytes>>& v) {
  crash_sweep::canon_u64(out, v.size());
  for (const auto& e : v) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(e.first.data()), e.first.size());
    crash_sweep::canon_bytes(out, e.second.data(), e.second.size());
  }
}

// "name:size,..." of named byte strings in name order.
inline std::string sizes_text(std::vector<std::pair<std::string, bytes>> v) {
  std::sort(v.begin(), v.end());
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i].first + ":" + std::to_string(v[i].second.size());
  return s;
}

// A vlmetalayer set (replaced when it is there) in a model's list.
inline void named_set(std::vector<std::pair<std::string, bytes>>& v, const std::string& name, const bytes& content) {
  for (auto& e : v)
    if (e.first == name) {
      e.second = content;
      return;
    }
  v.emplace_back(name, content);
}

inline tessera::chunk_decoder& decoder() {
  static tessera::chunk_decoder d;
  static bool ready = false;
  if (!ready) ready = tessera::chunk_decoder_init(d, tessera::test::system_allocator()).ok();
  return d;
}

// ---- The model ------------------------------------------------------------------------------------------------

struct fmodel {
  std::vector<bytes> chunks;  // decoded
  std::vector<std::pair<std::string, bytes>> vlmetas;  // decoded, any order
  std::vector<std::pair<std::string, bytes>> metas;  // fixed metalayers, header order
  std::string broken;  // an image that opens but does not read whole (or, sparse, leaves entries behind)
};

inline bytes canon_of(const fmodel& m) {
  bytes out;
  if (!m.broken.empty()) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.broken.data()), m.broken.size());
    return out;
  }
  crash_sweep::canon_u64(out, m.chunks.size());
  for (const bytes& c : m.chunks) crash_sweep::canon_bytes(out, c.data(), c.size());
  auto v = m.vlmetas;
  std::sort(v.begin(), v.end());
  canon_named(out, v);
  canon_named(out, m.metas);
  return out;
}

inline std::string describe(const fmodel& m) {
  if (!m.broken.empty()) return "a frame that does not read right: " + m.broken;
  return std::to_string(m.chunks.size()) + " chunks, vlmetas {" + sizes_text(m.vlmetas) + "}, content " +
         hash_text(canon_of(m));
}

inline fmodel broken(const std::string& why) {
  fmodel m;
  m.broken = why.empty() ? "?" : why;
  return m;
}

// The content of an open frame, read with tessera's reader.
inline fmodel read_frame(tessera::frame& f) {
  using namespace tessera;
  fmodel m;
  const frame_info* info = frame_info_get(f);
  if (info == nullptr) return broken("not open");
  for (int64_t i = 0; i < info->nchunks; ++i) {
    auto r = frame_chunk_locate(f, i);
    if (!r.ok()) return broken("chunk " + std::to_string(i) + " not located: " + r.err().message);
    bytes out(static_cast<size_t>(r->nbytes));
    auto n = frame_chunk_decode(f, decoder(), i, bytes_mut(out.data(), out.size()));
    if (!n.ok()) return broken("chunk " + std::to_string(i) + " does not decode: " + n.err().message);
    out.resize(*n);
    m.chunks.push_back(std::move(out));
  }
  for (uint32_t i = 0; i < info->nvlmetalayers; ++i) {
    auto name = frame_vlmeta_name(f, i);
    if (!name.ok()) return broken(std::string("vlmetalayer name: ") + name.err().message);
    auto nb = frame_vlmeta_nbytes(f, *name);
    if (!nb.ok()) return broken(std::string("vlmetalayer size: ") + nb.err().message);
    bytes out(*nb);
    auto n = frame_vlmeta_decode(f, decoder(), *name, bytes_mut(out.data(), out.size()));
    if (!n.ok()) return broken(std::string("vlmetalayer does not decode: ") + n.err().message);
    m.vlmetas.emplace_back(std::string(name->data(), name->size()), std::move(out));
  }
  for (uint32_t i = 0; i < info->nmetalayers; ++i) {
    auto name = frame_meta_name(f, i);
    if (!name.ok()) return broken(std::string("metalayer name: ") + name.err().message);
    auto c = frame_meta_find(f, *name);
    if (!c.ok()) return broken(std::string("metalayer: ") + c.err().message);
    m.metas.emplace_back(std::string(name->data(), name->size()), bytes(c->data(), c->data() + c->size()));
  }
  return m;
}

// An image that opens as m.
inline crash_sweep::decoded decoded_of(const fmodel& m) {
  crash_sweep::decoded d;
  d.ok = true;
  d.canon = canon_of(m);
  d.desc = describe(m);
  return d;
}

// ---- Chunks and contents --------------------------------------------------------------------------------------

inline bytes content_of(uint64_t seed, size_t n) {
  bytes b(n);
  if (seed != 0) frame_test::content_fill(seed, b.data(), n);
  return b;
}

// The chunk of content seed (n bytes, typesize 4; seed 0: a special chunk of zeros).
inline bytes chunk_of(uint64_t seed, size_t n) {
  static uint8_t src[kMaxChunk], out[2 * kMaxChunk + 64], work[3 * kBlock];
  if (seed == 0) {
    frame_test::special_make(1, static_cast<int32_t>(n), out);
    return bytes(out, out + 32);
  }
  const size_t len = frame_test::chunk_make(seed, n, kBlock, src, out, sizeof out, work);
  return bytes(out, out + len);
}

// ---- The driver -----------------------------------------------------------------------------------------------

// A frame (typesize 4, blocks of kBlock, one fixed metalayer "m") written at the base offset of a page cache's
// storage (frame_create), or as a sparse frame in a crash directory (frame_create_sparse).
inline tessera::status create_on(tessera::frame& f, const tessera::storage& st, const tessera::frame_create_params& p,
                                 const tessera::frame_open_options& o) {
  return tessera::frame_create(f, st, tessera::test::system_allocator(), p, o);
}
inline tessera::status create_on(tessera::frame& f, const tessera::storage_directory& dir,
                                 const tessera::frame_create_params& p, const tessera::frame_open_options& o) {
  return tessera::frame_create_sparse(f, dir, tessera::test::system_allocator(), p, o);
}
inline tessera::status open_on(tessera::frame& f, const tessera::storage& st, const tessera::frame_open_options& o) {
  return tessera::frame_open(f, st, tessera::test::system_allocator(), o);
}
inline tessera::status open_on(tessera::frame& f, const tessera::storage_directory& dir,
                               const tessera::frame_open_options& o) {
  return tessera::frame_open_sparse(f, dir, tessera::test::system_allocator(), o);
}

template <class Medium>
class frame_driver : public crash_sweep::driver<fmodel, Medium> {
  using driver_base = crash_sweep::driver<fmodel, Medium>;

 public:
  frame_driver(uint64_t offset, const crash_sweep::run_plan& plan,
               std::function<crash_sweep::decoded(const bytes&)> decode, uint64_t tag)
      : driver_base(offset, plan, std::move(decode), canon_of, describe, tag) {}

  void append(uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    this->op(
        "append", [&] { return frame_chunk_append(f_, tessera::bytes_view(c.data(), c.size())); },
        [&] { this->m_.chunks.push_back(content_of(seed, n)); });
  }
  void insert(int64_t at, uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    this->op(
        "insert", [&] { return frame_chunk_insert(f_, at, tessera::bytes_view(c.data(), c.size())); },
        [&] { this->m_.chunks.insert(this->m_.chunks.begin() + at, content_of(seed, n)); });
  }
  void update(int64_t at, uint64_t seed, size_t n) {
    const bytes c = chunk_of(seed, n);
    this->op(
        "update", [&] { return frame_chunk_update(f_, at, tessera::bytes_view(c.data(), c.size())); },
        [&] { this->m_.chunks[static_cast<size_t>(at)] = content_of(seed, n); });
  }
  void erase(int64_t at) {
    this->op(
        "delete", [&] { return frame_chunk_delete(f_, at); },
        [&] { this->m_.chunks.erase(this->m_.chunks.begin() + at); });
  }
  void vlmeta_set(const std::string& name, uint64_t seed, size_t n) {
    const bytes content = content_of(seed, n);
    this->op(
        "vlmeta set",
        [&] { return frame_vlmeta_set(f_, nm(name), tessera::bytes_view(content.data(), content.size())); },
        [&] { named_set(this->m_.vlmetas, name, content); });
  }
  void vlmeta_delete(const std::string& name) {
    this->op(
        "vlmeta delete", [&] { return frame_vlmeta_delete(f_, nm(name)); },
        [&] {
          auto& v = this->m_.vlmetas;
          const auto it = std::find_if(v.begin(), v.end(), [&](const auto& e) { return e.first == name; });
          if (it != v.end()) v.erase(it);
        });
  }
  void meta_update(uint8_t v) {
    const bytes content{v, static_cast<uint8_t>(v + 1), 3, 4, 5, 6, 7, static_cast<uint8_t>(~v)};
    this->op(
        "meta update",
        [&] { return frame_meta_update(f_, nm("m"), tessera::bytes_view(content.data(), content.size())); },
        [&] { this->m_.metas[0].second = content; });
  }
  // frame_meta_add: commits what is pending, then (contiguous) moves what lies where the longer header goes and
  // commits, then commits the longer header. A failure leaves the metalayer pending or not: the model follows
  // the live frame then.
  void meta_add(const std::string& name, uint64_t seed, size_t n) {
    const bytes content = content_of(seed, n);
    this->commit();  // what frame_meta_add does first: a commit of its own in the model
    meta_adding_ = true;
    this->committing(
        "meta add", [&] { return frame_meta_add(f_, nm(name), tessera::bytes_view(content.data(), content.size())); },
        [&] { this->m_.metas.emplace_back(name, content); });
    meta_adding_ = false;
  }
  [[nodiscard]] int64_t nchunks() const { return static_cast<int64_t>(this->m_.chunks.size()); }
  // A workload's usual setup: created, n chunks appended (contents seed, seed + 1, ...; `size` bytes each),
  // committed.
  void create_with(int n, uint64_t seed, size_t size) {
    this->create();
    for (int i = 0; i < n; ++i) append(seed + static_cast<uint64_t>(i), size);
    this->commit();
  }

 protected:
  tessera::status handle_create() override {
    const fmodel m0 = initial_model();
    const tessera::frame_metalayer_init ml{nm(m0.metas[0].first),
                                           tessera::bytes_view(m0.metas[0].second.data(), m0.metas[0].second.size())};
    tessera::frame_create_params p;
    p.typesize = 4;
    p.blocksize = kBlock;
    p.metalayers = &ml;
    p.nmetalayers = 1;
    return create_on(f_, this->target_, p, options());
  }
  tessera::status handle_open() override { return open_on(f_, this->target_, options()); }
  void handle_release() override { (void)tessera::detail::frame_release(f_); }
  bool handle_dirty() override { return frame_dirty(f_); }
  tessera::status handle_close() override { return frame_close(f_); }
  tessera::status handle_commit() override { return frame_commit(f_); }
  tessera::status handle_compact() override { return frame_compact(f_); }
  fmodel handle_read() override { return read_frame(f_); }
  bool failed_ops_may_change() override { return meta_adding_; }
  fmodel initial_model() override {
    fmodel m0;
    m0.metas.emplace_back("m", bytes{1, 2, 3, 4, 5, 6, 7, 8});
    return m0;
  }

 private:
  // The frame's default options (durable), at the workload's base offset, writable.
  tessera::frame_open_options options() const {
    tessera::frame_open_options o;
    o.base_offset = this->base_;
    o.writable = true;
    return o;
  }

  tessera::frame f_;
  bool meta_adding_ = false;
};

// ---- Workloads both kinds of frames run ------------------------------------------------------------------------

// n appends of 1 KiB (the sixth a special chunk of zeros: in a sparse frame, no entry), a commit every four.
template <class D>
void wl_appends(D& d, int n) {
  d.create();
  d.focus();
  for (int i = 0; i < n; ++i) {
    d.append(i == 5 ? 0 : 1000 + static_cast<uint64_t>(i), 1024);
    if (i % 4 == 3) d.commit();
  }
  d.close();
}

// Six chunks rewritten round after round, two a round, each round committed (space reuse, relocation and the tidy
// after commits; in a sparse frame, each commit removes the entries it replaced), the fixed metalayer every
// meta_every rounds.
template <class D>
void wl_rewrite(D& d, int rounds, int meta_every) {
  d.create_with(6, 3000, 1024);
  d.focus();
  for (int round = 0; round < rounds; ++round) {
    d.update(round % 6, 4000 + 2 * static_cast<uint64_t>(round), 1024);
    d.update((round + 3) % 6, 4001 + 2 * static_cast<uint64_t>(round), 1024);
    if (round % meta_every == 0) d.meta_update(static_cast<uint8_t>(round));
    d.commit();
  }
  d.close();
}

}  // namespace crash_frame
