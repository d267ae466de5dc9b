// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes the NDCELL filter (ndcell_forward, ndcell_backward; c-blosc2's registered filter 32): the input is a
// recipe of one block (fuzz_nd_cells.hpp): geometry, cell edge, typesize and bytes, the geometry sometimes
// invalid (no dimensions, more than 8, a zero or negative extent) or the block not its size.
// Invariants: no crash, no out-of-bounds access, no UB, no write outside the output; forward and backward
// accept the same blocks (none that is not the geometry's, nor a cell larger than the block, nor meta 0);
// forward writes the items in the model's cell order (fuzz::cells_model, written apart from the library's
// walk) and backward puts them back: the block again.
#include <cstring>
#include <vector>

#include "fuzz_nd_cells.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::recipe r(data, size);
  static const uint8_t kTypesizes[] = {1, 2, 4, 8, 3, 16, 1, 2};
  const fuzz::nd_block b = fuzz::nd_block_read(r, kTypesizes, sizeof kTypesizes);
  const size_t n = b.bytes.size();
  std::vector<uint8_t> src(b.bytes);
  fuzz::guarded_buffer fwd(n), back(n);
  const status f = detail::ndcell_forward(b.g, b.meta, b.typesize, src.data(), fwd.data(), n);
  const status k = detail::ndcell_backward(b.g, b.meta, b.typesize, src.data(), back.data(), n);
  FUZZ_CHECK(fwd.guards_intact() && back.guards_intact());
  FUZZ_CHECK(f.ok() == k.ok());
  if (!b.consistent || b.meta == 0) FUZZ_CHECK(!f.ok());
  if (!f.ok()) {
    FUZZ_CHECK(fwd.untouched_from(0) && back.untouched_from(0));  // a refusal writes nothing
    return 0;
  }
  // A cell of meta^ndim items fits the block.
  uint64_t cell = 1, items = 1;
  for (int d = 0; d < b.g.ndim; ++d) {
    cell *= b.meta;
    items *= static_cast<uint64_t>(b.g.blockshape[d]);
  }
  FUZZ_CHECK(cell <= items);
  std::vector<size_t> order, sizes;
  fuzz::cells_model(b, order, sizes);
  FUZZ_CHECK(order.size() * b.typesize == n);
  for (size_t i = 0; i < order.size(); ++i)
    FUZZ_CHECK(std::memcmp(fwd.data() + i * b.typesize, src.data() + order[i] * b.typesize, b.typesize) == 0);
  // Backward of forward: the block.
  fuzz::guarded_buffer again(n);
  FUZZ_CHECK(detail::ndcell_backward(b.g, b.meta, b.typesize, fwd.data(), again.data(), n).ok());
  FUZZ_CHECK(again.guards_intact());
  FUZZ_CHECK(n == 0 || std::memcmp(again.data(), src.data(), n) == 0);
  return 0;
}
