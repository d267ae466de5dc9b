// SPDX-License-Identifier: BSD-3-Clause
// A chunk_block_request over a test's consumer type: its static block and consume (and range, when it has one)
// with the consumer as context. The chunk tests' consumers differ in what they record, not in how they are asked.
#pragma once

#include <cstddef>

#include "tessera/chunk.hpp"

namespace chunk_test {

namespace request_detail {
template <class Consumer>
auto range_set(tessera::chunk_block_request& r, int) -> decltype(Consumer::range, void()) {
  r.range = Consumer::range;
}
template <class Consumer>
void range_set(tessera::chunk_block_request&, long) {}
}  // namespace request_detail

// The first `count` blocks that c.block names, each handed to c.consume.
template <class Consumer>
tessera::chunk_block_request block_request_of(Consumer& c, size_t count) {
  tessera::chunk_block_request r;
  r.count = count;
  r.block = Consumer::block;
  r.consume = Consumer::consume;
  request_detail::range_set<Consumer>(r, 0);
  r.context = &c;
  return r;
}

}  // namespace chunk_test
