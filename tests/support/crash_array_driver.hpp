// SPDX-License-Identifier: BSD-3-Clause
// The array writer's side of the crash sweeps (crash_sweep.hpp), shared by the contiguous arrays over a page cache
// (tests/array/test_array_crash_model.cpp) and the sparse arrays over a crash directory
// (tests/frame/test_frame_crash_model_sparse.cpp): the test's C-order model of a 3-d array of float bits (shape,
// items, vlmetalayers), the model after each operation, how an open array reads as that model, and the driver of
// an array's operations (commits explicit: auto_commit off) over either medium. The tests supply how a crash image
// decodes. Hosted targets only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/array.hpp"
#include "tessera/storage_directory.hpp"

#include "crash_frame_driver.hpp"
#include "crash_model.hpp"
#include "crash_sweep.hpp"
#include "random.hpp"
#include "test_allocators.hpp"

namespace crash_array {

using crash_model::bytes;

constexpr int kDims = 3;
constexpr int32_t kChunkShape[kDims] = {4, 4, 4};
constexpr int32_t kBlockShape[kDims] = {2, 2, 2};
using box = std::array<int64_t, kDims>;  // a shape, or a corner of a box

// ---- The model: a C-order array of float bits -------------------------------------------------------------------

struct amodel {
  int64_t shape[kDims] = {};
  std::vector<uint32_t> items;
  std::vector<std::pair<std::string, bytes>> vlmetas;
  std::string broken;  // an image that opens but does not read whole (or, sparse, leaves entries behind)

  [[nodiscard]] int64_t at(const int64_t* c) const { return (c[0] * shape[1] + c[1]) * shape[2] + c[2]; }
};

inline int64_t count_of(const int64_t* shape) { return shape[0] * shape[1] * shape[2]; }

// Calls fn(c) for every coordinate of a box of extent ext, in C order.
template <class Fn>
void for_each_coord(const int64_t* ext, Fn&& fn) {
  int64_t c[kDims];
  for (c[0] = 0; c[0] < ext[0]; ++c[0])
    for (c[1] = 0; c[1] < ext[1]; ++c[1])
      for (c[2] = 0; c[2] < ext[2]; ++c[2]) fn(c);
}

// An array of shape ns whose items fn(c) gives, made the model's.
template <class Fn>
void model_reshape(amodel& m, const int64_t* ns, Fn&& fn) {
  amodel n;
  for (int d = 0; d < kDims; ++d) n.shape[d] = ns[d];
  n.items.assign(static_cast<size_t>(count_of(n.shape)), 0);
  for_each_coord(n.shape, [&](const int64_t* c) { n.items[static_cast<size_t>(n.at(c))] = fn(c); });
  for (int d = 0; d < kDims; ++d) m.shape[d] = n.shape[d];
  m.items = std::move(n.items);
}

// The model after the array's operations, item by item.
inline void model_write(amodel& m, const int64_t* start, const int64_t* stop, const std::vector<uint32_t>& v) {
  int64_t ext[kDims];
  for (int d = 0; d < kDims; ++d) ext[d] = stop[d] - start[d];
  size_t k = 0;
  for_each_coord(ext, [&](const int64_t* c) {
    const int64_t p[kDims] = {start[0] + c[0], start[1] + c[1], start[2] + c[2]};
    m.items[static_cast<size_t>(m.at(p))] = v[k++];
  });
}
inline void model_resize(amodel& m, const int64_t* ns) {
  const amodel old = m;
  model_reshape(m, ns, [&](const int64_t* c) {
    for (int d = 0; d < kDims; ++d)
      if (c[d] >= old.shape[d]) return uint32_t{0};
    return old.items[static_cast<size_t>(old.at(c))];
  });
}
inline void model_insert(amodel& m, int axis, int64_t pos, int64_t count, const std::vector<uint32_t>& src) {
  const amodel old = m;
  int64_t ns[kDims] = {m.shape[0], m.shape[1], m.shape[2]};
  ns[axis] += count;
  int64_t sshape[kDims] = {m.shape[0], m.shape[1], m.shape[2]};
  sshape[axis] = count;
  model_reshape(m, ns, [&](const int64_t* c) {
    int64_t o[kDims] = {c[0], c[1], c[2]};
    if (c[axis] < pos) return old.items[static_cast<size_t>(old.at(o))];
    if (c[axis] < pos + count) {
      o[axis] -= pos;
      return src[static_cast<size_t>((o[0] * sshape[1] + o[1]) * sshape[2] + o[2])];
    }
    o[axis] -= count;
    return old.items[static_cast<size_t>(old.at(o))];
  });
}
inline void model_delete(amodel& m, int axis, int64_t pos, int64_t count) {
  const amodel old = m;
  int64_t ns[kDims] = {m.shape[0], m.shape[1], m.shape[2]};
  ns[axis] -= count;
  model_reshape(m, ns, [&](const int64_t* c) {
    int64_t o[kDims] = {c[0], c[1], c[2]};
    if (o[axis] >= pos) o[axis] += count;
    return old.items[static_cast<size_t>(old.at(o))];
  });
}

inline bytes canon_of(const amodel& m) {
  bytes out;
  if (!m.broken.empty()) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.broken.data()), m.broken.size());
    return out;
  }
  for (int64_t s : m.shape) crash_sweep::canon_u64(out, static_cast<uint64_t>(s));
  crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.items.data()), m.items.size() * 4);
  auto v = m.vlmetas;
  std::sort(v.begin(), v.end());
  crash_frame::canon_named(out, v);
  return out;
}

inline std::string describe(const amodel& m) {
  if (!m.broken.empty()) return "an array that does not read right: " + m.broken;
  return "shape " + std::to_string(m.shape[0]) + "x" + std::to_string(m.shape[1]) + "x" + std::to_string(m.shape[2]) +
         ", vlmetas {" + crash_frame::sizes_text(m.vlmetas) + "}, content " + crash_frame::hash_text(canon_of(m));
}

inline amodel broken(const std::string& why) {
  amodel m;
  m.broken = why.empty() ? "?" : why;
  return m;
}

// The content of an open array, read with tessera's reader.
inline amodel read_array(tessera::array& a) {
  using namespace tessera;
  amodel m;
  const array_layout& l = array_layout_get(a);
  if (l.ndim != kDims) return broken("ndim " + std::to_string(l.ndim));
  for (int d = 0; d < kDims; ++d) m.shape[d] = l.shape[d];
  m.items.assign(static_cast<size_t>(count_of(m.shape)), 0);
  if (!m.items.empty()) {
    const status s = array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(m.items.data()), m.items.size() * 4));
    if (!s.ok()) return broken(std::string("items: ") + s.message);
  }
  for (uint32_t i = 0; i < array_vlmeta_count(a); ++i) {
    auto name = array_vlmeta_name(a, i);
    if (!name.ok()) return broken(std::string("vlmetalayer name: ") + name.err().message);
    const std::string n(name->data(), name->size());
    auto nb = array_vlmeta_nbytes(a, crash_frame::nm(n));
    if (!nb.ok()) return broken(std::string("vlmetalayer size: ") + nb.err().message);
    bytes out(*nb);
    auto r = array_vlmeta_read(a, crash_frame::nm(n), bytes_mut(out.data(), out.size()));
    if (!r.ok()) return broken(std::string("vlmetalayer: ") + r.err().message);
    m.vlmetas.emplace_back(n, std::move(out));
  }
  return m;
}

// An image that opens as m.
inline crash_sweep::decoded decoded_of(const amodel& m) {
  crash_sweep::decoded d;
  d.ok = true;
  d.canon = canon_of(m);
  d.desc = describe(m);
  return d;
}

// Deterministic items: exact floats (hundredths), as bits.
inline std::vector<uint32_t> values(tessera::test::rng& r, int64_t n) {
  std::vector<uint32_t> v(static_cast<size_t>(n));
  for (uint32_t& x : v) {
    const float f = static_cast<float>(r.next() % 100000) / 100.0f;
    std::memcpy(&x, &f, 4);
  }
  return v;
}

inline bytes vlmeta_content(uint64_t seed, size_t n) {
  bytes b(n);
  tessera::test::rng r(seed);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i % 7 == 0 ? r.next() : i / 5);
  return b;
}

// ---- The driver -----------------------------------------------------------------------------------------------

// An array (float32, chunks 4^3, blocks 2^3, lz4 where available) created at the base offset of a page cache's
// storage (contiguous, durable), or as a sparse array in a crash directory.
inline tessera::array_target target_on(const tessera::storage& st, uint64_t base) {
  tessera::array_target t = tessera::array_target_contiguous(st);
  t.options.base_offset = base;
  return t;
}
inline tessera::array_target target_on(const tessera::storage_directory& dir, uint64_t) {
  return tessera::array_target_sparse(dir);
}
inline tessera::status open_on(tessera::array& a, const tessera::storage& st, const tessera::array_open_options& o) {
  return tessera::array_open(a, st, tessera::test::system_allocator(), o);
}
inline tessera::status open_on(tessera::array& a, const tessera::storage_directory& dir,
                               const tessera::array_open_options& o) {
  return tessera::array_open_sparse(a, dir, tessera::test::system_allocator(), o);
}

template <class Medium>
class array_driver : public crash_sweep::driver<amodel, Medium> {
  using driver_base = crash_sweep::driver<amodel, Medium>;

 public:
  // shape: the array's when created.
  array_driver(uint64_t offset, const crash_sweep::run_plan& plan,
               std::function<crash_sweep::decoded(const bytes&)> decode, uint64_t tag, const box& shape)
      : driver_base(offset, plan, std::move(decode), canon_of, describe, tag), shape0_(shape) {}

  [[nodiscard]] const int64_t* shape() const { return this->m_.shape; }

  // The box [start, stop) written with the next values of r (drawn whether the write happens or not).
  void write(const box& start, const box& stop, tessera::test::rng& r) {
    const std::vector<uint32_t> v = values(r, (stop[0] - start[0]) * (stop[1] - start[1]) * (stop[2] - start[2]));
    this->op(
        "slice write",
        [&] {
          return array_slice_write(a_, start.data(), stop.data(),
                                   tessera::bytes_view(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4));
        },
        [&] { model_write(this->m_, start.data(), stop.data(), v); });
  }
  void resize(const box& ns) {
    this->op(
        "resize", [&] { return array_resize(a_, ns.data()); }, [&] { model_resize(this->m_, ns.data()); });
  }
  void insert(int axis, int64_t pos, int64_t count, const std::vector<uint32_t>& v) {
    this->op(
        "insert",
        [&] {
          return array_insert(a_, axis, pos, count,
                              tessera::bytes_view(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4));
        },
        [&] { model_insert(this->m_, axis, pos, count, v); });
  }
  void erase(int axis, int64_t pos, int64_t count) {
    this->op(
        "delete", [&] { return array_delete(a_, axis, pos, count); },
        [&] { model_delete(this->m_, axis, pos, count); });
  }
  void vlmeta_write(const std::string& name, uint64_t seed, size_t n) {
    const bytes content = vlmeta_content(seed, n);
    this->op(
        "vlmeta write",
        [&] {
          return array_vlmeta_write(a_, crash_frame::nm(name), tessera::bytes_view(content.data(), content.size()));
        },
        [&] { crash_frame::named_set(this->m_.vlmetas, name, content); });
  }

 protected:
  tessera::status handle_create() override {
    tessera::array_params p;
    p.ndim = kDims;
    for (int d = 0; d < kDims; ++d) {
      p.shape[d] = shape0_[static_cast<size_t>(d)];
      p.chunkshape[d] = kChunkShape[d];
      p.blockshape[d] = kBlockShape[d];
    }
    p.dtype = tessera::span<const char>("<f4", 3);
    p.compressor = tessera::codec_available(tessera::codec::lz4) ? tessera::codec::lz4 : tessera::codec::blosclz;
    const tessera::status s = array_create(a_, target_on(this->target_, this->base_), tessera::test::system_allocator(),
                                           p, tessera::array_fill_zeros());
    a_.auto_commit = false;
    return s;
  }
  tessera::status handle_open() override {
    tessera::array_open_options o;
    o.frame.base_offset = this->base_;
    o.frame.writable = true;
    const tessera::status s = open_on(a_, this->target_, o);
    a_.auto_commit = false;
    return s;
  }
  void handle_release() override { a_ = tessera::array{}; }
  bool handle_dirty() override { return array_dirty(a_); }
  tessera::status handle_close() override { return array_close(a_); }
  tessera::status handle_commit() override { return array_commit(a_); }
  tessera::status handle_compact() override { return array_compact(a_); }
  amodel handle_read() override { return read_array(a_); }
  // A failed writing call may have left changes (array_dirty): what the array holds is what commits next.
  bool failed_ops_may_change() override { return true; }
  amodel initial_model() override {
    amodel m0;
    for (int d = 0; d < kDims; ++d) m0.shape[d] = shape0_[static_cast<size_t>(d)];
    m0.items.assign(static_cast<size_t>(count_of(m0.shape)), 0);
    return m0;
  }

 private:
  box shape0_;
  tessera::array a_;
};

}  // namespace crash_array
