// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes chunk_block_extent_get and chunk_decode_block: the input is one chunk (or, first byte
// fuzz::kStructuredTag, a recipe: fuzz_build.hpp builds a chunk and damages it), decoded block by block (the
// first and last few blocks, and indices past the end) with one decoder reused throughout, as a reader of slices
// does; then the blocks as the array layer reads them: chunk_decode_blocks with a byte range per block (serial
// and over workers), the fixed-block reader, and one block on a prepared worker (into its scratch, into a
// buffer, and as byte planes); and a lazy chunk's trailer.
// Invariants: no crash, no out-of-bounds access, no UB; a block decodes to exactly its extent's size, inside
// nbytes, without touching the guards; an index past the blocks is out_of_range; an output shorter than the block
// is refused; when the whole chunk decodes, every block decodes too and equals its slice of the whole, and every
// partial read equals the whole in the range it asked for (byte planes: element k's byte b at plane[b][k]);
// nothing leaks.
#include <cstring>
#include <vector>

#include "tessera/chunk.hpp"

#include "fuzz_build.hpp"
#include "fuzz_chunk_checks.hpp"

using namespace tessera;

namespace {

constexpr size_t kEdgeBlocks = 24;  // blocks tried at each end of the chunk

// Every check of one chunk, decoded with `base` (its plugins and geometry).
void chunk_check(const uint8_t* data, size_t size, fuzz::params& p, const chunk_decoder_options& base) {
  const bytes_view chunk(data, size);
  fuzz::checked_allocator mem;
  {
    chunk_decoder d;
    chunk_decoder_options o = base;
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
      return;
    }
    const chunk_header& h = *header;
    if (h.lazy) {  // a lazy chunk's trailer: where its blocks are in the frame
      const auto t = chunk_lazy_trailer_read(h, chunk);
      if (t.ok()) FUZZ_CHECK(t->block_csizes.size() == size_t{4} * h.nblocks && t->offset >= 0);
    } else {
      FUZZ_CHECK(!chunk_lazy_trailer_read(h, chunk).ok());
    }
    const size_t nbytes = static_cast<size_t>(h.nbytes);

    // The whole chunk, when it is small enough, as the reference for every block.
    bool whole_ok = false;
    fuzz::guarded_buffer whole(nbytes <= fuzz::kMaxOutput ? nbytes : 0);
    if (nbytes <= fuzz::kMaxOutput) {
      fuzz::checked_allocator mem2;
      {
        chunk_decoder d2;
        FUZZ_CHECK(chunk_decoder_init(d2, mem2.get(), base).ok());
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

    // The requests the array layer makes: serial with ranges, over workers, the fixed-block reader.
    const uint8_t* ref = whole_ok ? whole.data() : nullptr;
    fuzz::requests_check(d, h, chunk, ref, p.next() | 1, 1, false);
    fuzz::requests_check(d, h, chunk, ref, 0, 1, (p.next() & 1) != 0);
    {
      chunk_decoder_options po = base;
      po.max_blocksize = 0;
      fuzz::workers_check(po, h, chunk, ref, p, false);
    }
    fuzz::extras_check(h, chunk, base, whole_ok);
  }
  FUZZ_CHECK(mem.clean());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::params p(data, size);
  if (size == 0 || data[0] != fuzz::kStructuredTag) {
    chunk_check(data, size, p, chunk_decoder_options{});
    return 0;
  }
  fuzz::recipe rec(data + 1, size - 1);
  fuzz::built_chunk b;
  {
    fuzz::checked_allocator mem;
    b = fuzz::chunk_build(rec, mem.get());
    FUZZ_CHECK(mem.clean());
  }
  if (!b.built) return 0;
  chunk_decoder_options o;
  const uint8_t how = rec.u8();
  o.plugins = (how & 1) == 0 ? fuzz::user_plugins() : nullptr;
  o.geometry = (how & 6) != 0 ? b.geometry : chunk_nd_geometry{};
  std::vector<uint8_t> copy(b.bytes);  // exactly the chunk's size: ASan sees reads past it
  chunk_check(copy.data(), copy.size(), p, o);
  return 0;
}
