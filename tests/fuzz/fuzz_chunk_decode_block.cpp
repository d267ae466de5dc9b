// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes chunk_block_extent_get and chunk_decode_block: the input is one chunk, decoded block by block (the first
// and last few blocks, and indices past the end) with one decoder reused throughout, as a reader of slices does.
// Invariants: no crash, no out-of-bounds access, no UB; a block decodes to exactly its extent's size, inside
// nbytes, without touching the guards; an index past the blocks is out_of_range; an output shorter than the block
// is refused; when the whole chunk decodes, every block decodes too and equals its slice of the whole; nothing
// leaks.
#include <cstring>

#include "tessera/chunk.hpp"

#include "fuzz_common.hpp"

using namespace tessera;

namespace {

constexpr size_t kEdgeBlocks = 24;  // blocks tried at each end of the chunk

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bytes_view chunk(data, size);
  fuzz::params p(data, size);

  fuzz::checked_allocator mem;
  {
    chunk_decoder d;
    chunk_decoder_options o;
    o.max_blocksize = p.range(0, 2) * 4096;  // grown on demand
    FUZZ_CHECK(chunk_decoder_init(d, mem.get(), o).ok());

    const auto header = chunk_header_read(chunk);
    if (!header.ok()) {
      fuzz::guarded_buffer out(p.range(0, 256));
      const auto r = chunk_decode_block(d, chunk, p.range(0, 3), bytes_mut(out.data(), out.size()));
      FUZZ_CHECK(!r.ok());
      FUZZ_CHECK(r.err().code == header.err().code);
      FUZZ_CHECK(out.guards_intact());
      chunk_decoder_release(d);
      FUZZ_CHECK(mem.clean());
      return 0;
    }
    const chunk_header& h = *header;
    const size_t nbytes = static_cast<size_t>(h.nbytes);

    // The whole chunk, when it is small enough, as the reference for every block.
    bool whole_ok = false;
    fuzz::guarded_buffer whole(nbytes <= fuzz::kMaxOutput ? nbytes : 0);
    if (nbytes <= fuzz::kMaxOutput) {
      fuzz::checked_allocator mem2;
      {
        chunk_decoder d2;
        FUZZ_CHECK(chunk_decoder_init(d2, mem2.get()).ok());
        whole_ok = chunk_decode(d2, chunk, bytes_mut(whole.data(), whole.size())).ok();
        FUZZ_CHECK(whole.guards_intact());
      }
      FUZZ_CHECK(mem2.clean());
    }

    const size_t nblocks = h.nblocks;
    for (size_t k = 0; k < 2 * kEdgeBlocks + 3; ++k) {
      size_t nblock;
      if (k < kEdgeBlocks) {
        nblock = k;
        if (nblock >= nblocks) continue;
      } else if (k < 2 * kEdgeBlocks) {
        const size_t back = k - kEdgeBlocks + 1;  // 1 .. kEdgeBlocks from the end
        if (back > nblocks || nblocks - back < kEdgeBlocks) continue;  // already tried from the front
        nblock = nblocks - back;
      } else if (k == 2 * kEdgeBlocks) {
        nblock = nblocks;  // one past the end
      } else if (k == 2 * kEdgeBlocks + 1) {
        nblock = nblocks + p.range(1, 1000);
      } else {
        nblock = SIZE_MAX;
      }
      const bool past_end = nblock >= nblocks;

      const auto extent = chunk_block_extent_get(h, chunk, nblock);
      if (past_end) {
        FUZZ_CHECK(!extent.ok());
        FUZZ_CHECK(extent.err().code == errc::out_of_range);
      }
      if (!extent.ok()) {
        fuzz::guarded_buffer out(p.range(0, 4096));
        const auto r = chunk_decode_block(d, chunk, nblock, bytes_mut(out.data(), out.size()));
        FUZZ_CHECK(!r.ok());
        FUZZ_CHECK(out.guards_intact());
        if (past_end && whole_ok) FUZZ_CHECK(r.err().code == errc::out_of_range);
        FUZZ_CHECK(!whole_ok || past_end);
        continue;
      }
      const chunk_block_extent e = *extent;
      FUZZ_CHECK(e.offset <= nbytes && e.size <= nbytes - e.offset);
      if (e.size > fuzz::kMaxOutput) continue;

      // Too short an output first: refused, or (a bad chunk) some other error, never a success.
      if (e.size > 0) {
        fuzz::guarded_buffer out(e.size - 1);
        const auto r = chunk_decode_block(d, chunk, nblock, bytes_mut(out.data(), out.size()));
        FUZZ_CHECK(!r.ok());
        if (whole_ok) FUZZ_CHECK(r.err().code == errc::buffer_too_small);
        FUZZ_CHECK(out.guards_intact());
      }

      fuzz::guarded_buffer out(e.size + p.range(0, 40));
      const auto r = chunk_decode_block(d, chunk, nblock, bytes_mut(out.data(), out.size()));
      FUZZ_CHECK(out.guards_intact());
      if (r.ok()) FUZZ_CHECK(*r == e.size);
      if (whole_ok) {
        FUZZ_CHECK(r.ok());
        FUZZ_CHECK(std::memcmp(out.data(), whole.data() + e.offset, e.size) == 0);
      }
    }
  }
  FUZZ_CHECK(mem.clean());
  return 0;
}
