// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes the NDMEAN filter (ndmean_forward, ndmean_backward; c-blosc2's registered filter 33): the input is a
// recipe of one block (fuzz_nd_cells.hpp) of float32 or float64 items (sometimes another typesize), its
// geometry sometimes invalid or the block not its size, the cell edge any byte (the filter takes 1..127).
// Invariants: no crash, no out-of-bounds access, no UB, no write outside the output; a refusal writes nothing;
// forward refuses other typesizes, meta 0 and above 127, and the geometries whose cells the reference misplaces
// (a first dimension shorter than the edge and another longer); forward writes, cell by cell in the model's
// order (fuzz::cells_model), the cell's mean repeated, bit for bit the sum of its items in that order (in float
// for float32, double for float64) divided by their count (a NaN mean: some NaN); backward puts the cells back.
#include <cstring>
#include <vector>

#include "fuzz_nd_cells.hpp"

using namespace tessera;

namespace {

template <typename T, typename U>
void means_check(const fuzz::nd_block& b, const std::vector<size_t>& order, const std::vector<size_t>& sizes,
                 const uint8_t* src, const uint8_t* fwd) {
  size_t i = 0;
  for (size_t cell : sizes) {
    T sum = 0;
    for (size_t k = 0; k < cell; ++k) {
      U bits = 0;
      for (size_t j = 0; j < sizeof(T); ++j) bits |= static_cast<U>(src[order[i + k] * sizeof(T) + j]) << (8 * j);
      T v;
      std::memcpy(&v, &bits, sizeof v);
      sum += v;
    }
    const T mean = sum / static_cast<T>(static_cast<uint32_t>(cell));
    U want;
    std::memcpy(&want, &mean, sizeof want);
    for (size_t k = 0; k < cell; ++k, ++i) {
      U got = 0;
      for (size_t j = 0; j < sizeof(T); ++j) got |= static_cast<U>(fwd[i * sizeof(T) + j]) << (8 * j);
      T g;
      std::memcpy(&g, &got, sizeof g);
      // A NaN's payload depends on the order the compiler gives an addition's operands: any NaN will do.
      if (mean != mean) FUZZ_CHECK(g != g);
      else FUZZ_CHECK(got == want);
    }
  }
  (void)b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::recipe r(data, size);
  static const uint8_t kTypesizes[] = {4, 8, 4, 8, 4, 8, 2, 1};
  const fuzz::nd_block b = fuzz::nd_block_read(r, kTypesizes, sizeof kTypesizes);
  const size_t n = b.bytes.size();
  std::vector<uint8_t> src(b.bytes);
  fuzz::guarded_buffer fwd(n), back(n);
  const status f = detail::ndmean_forward(b.g, b.meta, b.typesize, src.data(), fwd.data(), n);
  const status k = detail::ndmean_backward(b.g, b.meta, b.typesize, src.data(), back.data(), n);
  FUZZ_CHECK(fwd.guards_intact() && back.guards_intact());
  if (!f.ok()) FUZZ_CHECK(fwd.untouched_from(0));
  if (!k.ok()) FUZZ_CHECK(back.untouched_from(0));
  const bool float_items = b.typesize == 4 || b.typesize == 8;
  const bool edge_ok = b.meta >= 1 && b.meta <= 127;
  bool placement_ok = true;
  if (b.consistent && b.g.blockshape[0] < b.meta)
    for (int d = 1; d < b.g.ndim; ++d) placement_ok = placement_ok && b.g.blockshape[d] <= b.meta;
  // Forward accepts exactly the float blocks of a valid geometry, edge and placement; backward the same but any
  // typesize.
  FUZZ_CHECK(f.ok() == (b.consistent && float_items && edge_ok && placement_ok));
  FUZZ_CHECK(k.ok() == (b.consistent && edge_ok && placement_ok));
  if (!k.ok()) return 0;
  std::vector<size_t> order, sizes;
  fuzz::cells_model(b, order, sizes);
  FUZZ_CHECK(order.size() * b.typesize == n);
  // Backward scatters the cells in the model's order.
  for (size_t i = 0; i < order.size(); ++i)
    FUZZ_CHECK(std::memcmp(back.data() + order[i] * b.typesize, src.data() + i * b.typesize, b.typesize) == 0);
  if (!f.ok()) return 0;
  if (b.typesize == 4) means_check<float, uint32_t>(b, order, sizes, src.data(), fwd.data());
  else means_check<double, uint64_t>(b, order, sizes, src.data(), fwd.data());
  return 0;
}
