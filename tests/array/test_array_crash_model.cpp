// SPDX-License-Identifier: BSD-3-Clause
// Array writers through the page-cache crash model (issue 42; tests/support/crash_model.hpp and crash_sweep.hpp,
// the frame-level sweeps are tests/frame/test_frame_crash_model.cpp). Each workload (a rewrite loop of planes,
// random boxes, resize/insert/delete along an axis, a resize to a 0-length dimension with a vlmetalayer rewritten,
// compaction and close) runs on a contiguous array (durable) over a page cache, commits explicit (auto_commit
// off). The test keeps its own C-order model of the array (shape, items, vlmetalayers) and records it before each
// commit: every crash image taken at every storage call must open as an array that may be durable then, exactly,
// and every write is checked against the durable frame. Then the same workloads with failing calls (once, from N
// on, the Nth sync, pairs), as for frames. Reduced by default; TESSERA_LONG_TESTS=full runs every call.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tessera/array.hpp"

#include "../support/check.hpp"
#include "../support/crash_model.hpp"
#include "../support/crash_sweep.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;
using crash_model::bytes;

namespace {

constexpr int kDims = 3;
constexpr int64_t kShape[kDims] = {8, 12, 12};
constexpr int32_t kChunk[kDims] = {4, 4, 4};
constexpr int32_t kBlockShape[kDims] = {2, 2, 2};

span<const char> nm(const std::string& s) { return span<const char>(s.data(), s.size()); }

// ---- The logical model: a C-order array of float bits ------------------------------------------------------------

struct amodel {
  int64_t shape[kDims] = {};
  std::vector<uint32_t> items;
  std::vector<std::pair<std::string, bytes>> vlmetas;
  std::string broken;  // an image that opens but does not read whole

  [[nodiscard]] int64_t at(const int64_t* c) const { return (c[0] * shape[1] + c[1]) * shape[2] + c[2]; }
};

int64_t count_of(const int64_t* shape) { return shape[0] * shape[1] * shape[2]; }

// Calls fn(c) for every coordinate of a box of extent ext, in C order.
template <class Fn>
void for_each_coord(const int64_t* ext, Fn&& fn) {
  int64_t c[kDims];
  for (c[0] = 0; c[0] < ext[0]; ++c[0])
    for (c[1] = 0; c[1] < ext[1]; ++c[1])
      for (c[2] = 0; c[2] < ext[2]; ++c[2]) fn(c);
}

// The model after the array's operations, item by item.
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
void model_insert(amodel& m, int axis, int64_t pos, int64_t count, const std::vector<uint32_t>& src) {
  amodel n;
  for (int d = 0; d < kDims; ++d) n.shape[d] = m.shape[d];
  n.shape[axis] += count;
  int64_t sshape[kDims] = {m.shape[0], m.shape[1], m.shape[2]};
  sshape[axis] = count;
  n.items.assign(static_cast<size_t>(count_of(n.shape)), 0);
  for_each_coord(n.shape, [&](const int64_t* c) {
    int64_t o[kDims] = {c[0], c[1], c[2]};
    uint32_t v;
    if (c[axis] < pos) {
      v = m.items[static_cast<size_t>(m.at(o))];
    } else if (c[axis] < pos + count) {
      o[axis] -= pos;
      v = src[static_cast<size_t>((o[0] * sshape[1] + o[1]) * sshape[2] + o[2])];
    } else {
      o[axis] -= count;
      v = m.items[static_cast<size_t>(m.at(o))];
    }
    n.items[static_cast<size_t>(n.at(c))] = v;
  });
  for (int d = 0; d < kDims; ++d) m.shape[d] = n.shape[d];
  m.items = std::move(n.items);
}
void model_delete(amodel& m, int axis, int64_t pos, int64_t count) {
  amodel n;
  for (int d = 0; d < kDims; ++d) n.shape[d] = m.shape[d];
  n.shape[axis] -= count;
  n.items.assign(static_cast<size_t>(count_of(n.shape)), 0);
  for_each_coord(n.shape, [&](const int64_t* c) {
    int64_t o[kDims] = {c[0], c[1], c[2]};
    if (o[axis] >= pos) o[axis] += count;
    n.items[static_cast<size_t>(n.at(c))] = m.items[static_cast<size_t>(m.at(o))];
  });
  for (int d = 0; d < kDims; ++d) m.shape[d] = n.shape[d];
  m.items = std::move(n.items);
}

bytes canon_of(const amodel& m) {
  bytes out;
  if (!m.broken.empty()) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.broken.data()), m.broken.size());
    return out;
  }
  for (int64_t s : m.shape) crash_sweep::canon_u64(out, static_cast<uint64_t>(s));
  crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(m.items.data()), m.items.size() * 4);
  auto v = m.vlmetas;
  std::sort(v.begin(), v.end());
  crash_sweep::canon_u64(out, v.size());
  for (const auto& e : v) {
    crash_sweep::canon_bytes(out, reinterpret_cast<const uint8_t*>(e.first.data()), e.first.size());
    crash_sweep::canon_bytes(out, e.second.data(), e.second.size());
  }
  return out;
}

std::string describe(const amodel& m) {
  if (!m.broken.empty()) return "an array that does not read: " + m.broken;
  char h[24];
  const bytes c = canon_of(m);
  std::snprintf(h, sizeof h, "%08llx", static_cast<unsigned long long>(crash_model::bytes_hash(c) & 0xffffffffu));
  std::string s = "shape " + std::to_string(m.shape[0]) + "x" + std::to_string(m.shape[1]) + "x" +
                  std::to_string(m.shape[2]) + ", vlmetas {";
  auto v = m.vlmetas;
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i].first + ":" + std::to_string(v[i].second.size());
  return s + "}, content " + h;
}

// The content of an open array, read with tessera's reader.
amodel read_array(array& a) {
  amodel m;
  const array_layout& l = array_layout_get(a);
  if (l.ndim != kDims) {
    m.broken = "ndim " + std::to_string(l.ndim);
    return m;
  }
  for (int d = 0; d < kDims; ++d) m.shape[d] = l.shape[d];
  m.items.assign(static_cast<size_t>(count_of(m.shape)), 0);
  if (!m.items.empty()) {
    const status s = array_read(a, bytes_mut(reinterpret_cast<uint8_t*>(m.items.data()), m.items.size() * 4));
    if (!s.ok()) {
      m.broken = std::string("items: ") + s.message;
      return m;
    }
  }
  for (uint32_t i = 0; i < array_vlmeta_count(a); ++i) {
    auto name = array_vlmeta_name(a, i);
    if (!name.ok()) {
      m.broken = std::string("vlmetalayer name: ") + name.err().message;
      return m;
    }
    const std::string n(name->data(), name->size());
    auto nb = array_vlmeta_nbytes(a, nm(n));
    if (!nb.ok()) {
      m.broken = std::string("vlmetalayer size: ") + nb.err().message;
      return m;
    }
    bytes out(*nb);
    auto r = array_vlmeta_read(a, nm(n), bytes_mut(out.data(), out.size()));
    if (!r.ok()) {
      m.broken = std::string("vlmetalayer: ") + r.err().message;
      return m;
    }
    m.vlmetas.emplace_back(n, std::move(out));
  }
  return m;
}

crash_sweep::decoded decode_image(const bytes& image, uint64_t base) {
  crash_sweep::decoded d;
  const storage st = crash_model::image_storage(&image);
  array a;
  array_open_options o;
  o.frame.base_offset = base;
  const status s = array_open(a, st, test::system_allocator(), o);
  if (!s.ok()) {
    d.desc = s.message;
    return d;
  }
  const amodel m = read_array(a);
  (void)array_close(a);
  d.ok = true;
  d.canon = canon_of(m);
  d.desc = describe(m);
  return d;
}

// Deterministic items: exact floats (hundredths), as bits.
std::vector<uint32_t> values(test::rng& r, int64_t n) {
  std::vector<uint32_t> v(static_cast<size_t>(n));
  for (uint32_t& x : v) {
    const float f = static_cast<float>(r.next() % 100000) / 100.0f;
    std::memcpy(&x, &f, 4);
  }
  return v;
}

bytes content_of(uint64_t seed, size_t n) {
  bytes b(n);
  test::rng r(seed);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i % 7 == 0 ? r.next() : i / 5);
  return b;
}

// ---- The array's driver ------------------------------------------------------------------------------------------

class driver : public crash_sweep::driver<amodel> {
 public:
  driver(uint64_t base, const crash_sweep::run_plan& plan)
      : crash_sweep::driver<amodel>(base, plan, [base](const bytes& image) { return decode_image(image, base); },
                                    canon_of, describe) {}

  [[nodiscard]] const int64_t* shape() const { return m_.shape; }

  void write(const int64_t* start, const int64_t* stop, const std::vector<uint32_t>& v) {
    op("slice write",
       [&] { return array_slice_write(a_, start, stop, bytes_view(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4)); },
       [&] { model_write(m_, start, stop, v); });
  }
  void resize(const int64_t* ns) {
    op("resize", [&] { return array_resize(a_, ns); }, [&] { model_resize(m_, ns); });
  }
  void insert(int axis, int64_t pos, int64_t count, const std::vector<uint32_t>& v) {
    op("insert",
       [&] { return array_insert(a_, axis, pos, count, bytes_view(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4)); },
       [&] { model_insert(m_, axis, pos, count, v); });
  }
  void erase(int axis, int64_t pos, int64_t count) {
    op("delete", [&] { return array_delete(a_, axis, pos, count); }, [&] { model_delete(m_, axis, pos, count); });
  }
  void vlmeta_write(const std::string& name, uint64_t seed, size_t n) {
    const bytes content = content_of(seed, n);
    op("vlmeta write", [&] { return array_vlmeta_write(a_, nm(name), bytes_view(content.data(), content.size())); },
       [&] {
         for (auto& e : m_.vlmetas)
           if (e.first == name) {
             e.second = content;
             return;
           }
         m_.vlmetas.emplace_back(name, content);
       });
  }

 protected:
  status handle_create() override {
    array_params p;
    p.ndim = kDims;
    for (int d = 0; d < kDims; ++d) {
      p.shape[d] = kShape[d];
      p.chunkshape[d] = kChunk[d];
      p.blockshape[d] = kBlockShape[d];
    }
    p.dtype = span<const char>("<f4", 3);
    p.compressor = codec_available(codec::lz4) ? codec::lz4 : codec::blosclz;
    array_target target = array_target_contiguous(st_);
    target.options.base_offset = base_;
    const status s = array_create(a_, target, test::system_allocator(), p, array_fill_zeros());
    a_.auto_commit = false;
    return s;
  }
  status handle_open() override {
    array_open_options o;
    o.frame.base_offset = base_;
    o.frame.writable = true;
    const status s = array_open(a_, st_, test::system_allocator(), o);
    a_.auto_commit = false;
    return s;
  }
  void handle_release() override { a_ = array{}; }
  bool handle_dirty() override { return array_dirty(a_); }
  status handle_close() override { return array_close(a_); }
  status handle_commit() override { return array_commit(a_); }
  status handle_compact() override { return array_compact(a_); }
  amodel handle_read() override { return read_array(a_); }
  // A failed writing call may have left changes (array_dirty): what the array holds is what commits next.
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

using workload = crash_sweep::workload<driver>;

// A rewrite loop of planes along the first axis, each slice write committed (the same chunks rewritten).
void wl_planes(driver& d, int rounds) {
  d.create();
  d.focus();
  test::rng r(1);
  for (int round = 0; round < rounds; ++round) {
    const int64_t* sh = d.shape();
    if (sh[0] == 0) break;  // the creation failed: no array, nothing to write
    const int64_t z = round % sh[0];
    const int64_t start[kDims] = {z, 0, 0}, stop[kDims] = {z + 1, sh[1], sh[2]};
    d.write(start, stop, values(r, sh[1] * sh[2]));
    d.commit();
  }
  d.close();
}

// Random boxes, each committed; a compaction at the end.
void wl_boxes(driver& d) {
  d.create();
  d.focus();
  test::rng r(2);
  for (int round = 0; round < 10; ++round) {
    const int64_t* sh = d.shape();
    if (count_of(sh) == 0) break;  // the creation failed: no array, nothing to write
    int64_t start[kDims], stop[kDims], n = 1;
    for (int k = 0; k < kDims; ++k) {
      const int64_t e = r.range(1, std::min<int64_t>(sh[k], 6));
      start[k] = r.range(0, sh[k] - e);
      stop[k] = start[k] + e;
      n *= e;
    }
    d.write(start, stop, values(r, n));
    d.commit();
  }
  d.compact();
  d.close();
}

// The shape changed along axes: whole chunks inserted and deleted in the middle, a resize at the ends.
void wl_shapes(driver& d) {
  d.create();
  test::rng r(3);
  {
    const int64_t start[kDims] = {0, 0, 0}, stop[kDims] = {8, 12, 12};
    d.write(start, stop, values(r, 8 * 12 * 12));
    d.commit();
  }
  d.focus();
  d.insert(0, 4, 4, values(r, 4 * d.shape()[1] * d.shape()[2]));
  d.commit();
  d.erase(1, 4, 4);
  d.commit();
  {
    const int64_t ns[kDims] = {d.shape()[0] - 3, d.shape()[1] + 5, d.shape()[2]};
    d.resize(ns);
  }
  d.commit();
  d.insert(2, d.shape()[2], 3, values(r, d.shape()[0] * d.shape()[1] * 3));  // at the end: any count
  d.commit();
  d.close();
}

// Resized to a 0-length first dimension with a vlmetalayer rewritten (a commit that leaves no chunks), grown again,
// written, closed.
void wl_cleared(driver& d) {
  d.create();
  test::rng r(4);
  {
    const int64_t start[kDims] = {0, 0, 0}, stop[kDims] = {8, 12, 12};
    d.write(start, stop, values(r, 8 * 12 * 12));
  }
  d.vlmeta_write("meta", 40, 30);
  d.commit();
  d.focus();
  {
    const int64_t ns[kDims] = {0, 12, 12};
    d.resize(ns);
  }
  d.vlmeta_write("meta", 41, 50);
  d.commit();
  d.vlmeta_write("meta", 42, 20);
  d.commit();
  {
    const int64_t ns[kDims] = {6, 12, 12};
    d.resize(ns);
    const int64_t start[kDims] = {1, 2, 3}, stop[kDims] = {5, 9, 8};
    d.write(start, stop, values(r, 4 * 7 * 5));
  }
  d.commit();
  d.close();
}

// An array of zeros (special index entries only: no chunk bytes, a small frame), closed and opened again,
// resized to a 0-length dimension with a vlmetalayer added: the cleared frame's trailer, right after the header,
// is longer than what followed the header before.
void wl_zeros_cleared(driver& d) {
  d.create();
  d.close();
  d.open_again();
  d.focus();
  d.vlmeta_write("meta", 43, 50);
  {
    const int64_t ns[kDims] = {0, 12, 12};
    d.resize(ns);
  }
  d.commit();
  d.close();
}

// A few rewrites leave the frame loose: the close tidies it; opened again, written, closed.
void wl_close(driver& d) {
  d.create();
  test::rng r(5);
  {
    const int64_t start[kDims] = {0, 0, 0}, stop[kDims] = {8, 12, 12};
    d.write(start, stop, values(r, 8 * 12 * 12));
    d.commit();
  }
  d.focus();
  for (int round = 0; round < 3; ++round) {
    const int64_t start[kDims] = {0, 4 * round, 0}, stop[kDims] = {4, 4 * round + 4, 12};
    d.write(start, stop, values(r, 4 * 4 * 12));
    d.commit();
  }
  d.close();
  d.open_again();
  const int64_t start[kDims] = {5, 5, 5}, stop[kDims] = {7, 7, 7};
  d.write(start, stop, values(r, 8));
  d.commit();
  d.close();
}

const workload kPlanes{"array_planes", 0, [](driver& d) { wl_planes(d, 12); }};
const workload kBoxes{"array_boxes", 0, wl_boxes};
const workload kShapes{"array_shapes", 0, wl_shapes};
const workload kCleared{"array_cleared", 0, wl_cleared};
const workload kClose{"array_close", 0, wl_close};
const workload kZerosCleared{"array_zeros_cleared", 0, wl_zeros_cleared};
const workload kPlanesAt{"array_planes_at_97", 97, [](driver& d) { wl_planes(d, 6); }};

}  // namespace

#define TESSERA_ARRAY_CRASH_TESTS(id, wl)                                                                    \
  TESSERA_TEST(array_crash_images, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::images); }     \
  TESSERA_TEST(array_crash_fail_once, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::once); }    \
  TESSERA_TEST(array_crash_fail_from, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::from); }    \
  TESSERA_TEST(array_crash_sync_fails_reopen, id) {                                                        \
    crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::syncs_reopen);                                      \
  }                                                                                                        \
  TESSERA_TEST(array_crash_sync_fails_retry, id) {                                                         \
    crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::syncs_retry);                                       \
  }                                                                                                        \
  TESSERA_TEST(array_crash_fail_pairs, id) { crash_sweep::sweep(t, wl, crash_sweep::sweep_kind::pairs); }

TESSERA_ARRAY_CRASH_TESTS(planes, kPlanes)
TESSERA_ARRAY_CRASH_TESTS(boxes, kBoxes)
TESSERA_ARRAY_CRASH_TESTS(shapes, kShapes)
TESSERA_ARRAY_CRASH_TESTS(cleared, kCleared)
TESSERA_ARRAY_CRASH_TESTS(close, kClose)
TESSERA_ARRAY_CRASH_TESTS(zeros_cleared, kZerosCleared)
TESSERA_ARRAY_CRASH_TESTS(planes_at_97, kPlanesAt)
