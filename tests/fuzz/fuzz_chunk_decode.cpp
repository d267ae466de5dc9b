// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes chunk_header_read and chunk_decode: the input is one chunk, or (first byte fuzz::kStructuredTag) a recipe
// from which the project's encoder builds a chunk that the recipe's edits then damage (fuzz_build.hpp), decoded
// with the recipe's choice of block geometry (the n-d plugins) and user codec and filter.
// Invariants: no crash, no out-of-bounds access (ASan), no UB (UBSan); a header error is also the decode's error;
// a success returns exactly nbytes and touches neither the guards nor the output past nbytes; an output shorter
// than nbytes is refused (with buffer_too_small when the chunk decodes); a decoder with several workers running
// the blocks in reverse order, and a decoder whose allocator fails one request, give the same bytes (or
// out_of_memory); nothing leaks. A built chunk that no edit changed decodes to its source when its pipeline is
// lossless. Then the blocks as the array layer requests them, against the whole (fuzz_chunk_checks.hpp).
#include <cstring>

#include "tessera/chunk.hpp"

#include "fuzz_build.hpp"
#include "fuzz_chunk_checks.hpp"

using namespace tessera;

namespace {

// An executor that runs the blocks last to first on rotating worker indices: decoding must not depend on order.
void run_reversed(void* context, size_t ntasks, executor_task task, void* task_context) noexcept {
  const uint32_t workers = *static_cast<const uint32_t*>(context);
  for (size_t i = ntasks; i-- > 0;) task(task_context, i, static_cast<uint32_t>(i % workers));
}

bool same_geometry(const chunk_nd_geometry& a, const chunk_nd_geometry& b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.blockshape[d] != b.blockshape[d]) return false;
  return true;
}

// Every check of one chunk, decoded with `base` (its plugins and geometry); `built`: what it was built from.
void chunk_check(const uint8_t* data, size_t size, fuzz::params& p, const chunk_decoder_options& base,
                 const fuzz::built_chunk* built) {
  const bytes_view chunk(data, size);
  const auto header = chunk_header_read(chunk);
  fuzz::checked_allocator mem;
  {
    chunk_decoder d;
    FUZZ_CHECK(chunk_decoder_init(d, mem.get(), base).ok());

    if (!header.ok()) {
      // The decoder reads the same header first: the same error.
      fuzz::guarded_buffer out(p.range(0, 256));
      const auto r = chunk_decode(d, chunk, bytes_mut(out.data(), out.size()));
      FUZZ_CHECK(!r.ok());
      FUZZ_CHECK(r.err().code == header.err().code);
      FUZZ_CHECK(out.guards_intact());
      chunk_decoder_release(d);
      FUZZ_CHECK(mem.clean());
      return;
    }
    const chunk_header& h = *header;
    FUZZ_CHECK(h.header_size == kChunkHeaderMinSize || h.header_size == kChunkHeaderExtendedSize);
    FUZZ_CHECK(h.header_size <= size);
    FUZZ_CHECK(h.nbytes >= 0);
    const size_t nbytes = static_cast<size_t>(h.nbytes);

    if (nbytes > fuzz::kMaxOutput) {
      // Too large to decode here: a short output must not succeed.
      fuzz::guarded_buffer out(p.range(0, 4096));
      const auto r = chunk_decode(d, chunk, bytes_mut(out.data(), out.size()));
      FUZZ_CHECK(!r.ok());
      FUZZ_CHECK(out.guards_intact());
      chunk_decoder_release(d);
      FUZZ_CHECK(mem.clean());
      return;
    }

    // The plain decode, into an output with slack that must stay untouched.
    const size_t slack = p.range(0, 40);
    fuzz::guarded_buffer out(nbytes + slack);
    const auto r = chunk_decode(d, chunk, bytes_mut(out.data(), out.size()));
    FUZZ_CHECK(out.guards_intact());
    FUZZ_CHECK(out.untouched_from(nbytes));
    if (r.ok()) FUZZ_CHECK(*r == nbytes);
    // The round trip: an intact chunk of a lossless pipeline, with what it needs, gives its source back.
    if (built != nullptr && built->built && !built->edited && built->lossless &&
        (!built->plugins || base.plugins != nullptr) &&
        same_geometry(base.geometry, built->geometry)) {
      FUZZ_CHECK(r.ok());
      FUZZ_CHECK(nbytes == built->source.size());
      FUZZ_CHECK(nbytes == 0 || std::memcmp(out.data(), built->source.data(), nbytes) == 0);
    }

    // One byte short: refused (buffer_too_small when the chunk is good; a bad chunk may say why it is bad first).
    if (nbytes > 0) {
      fuzz::guarded_buffer short_out(nbytes - 1);
      const auto rs = chunk_decode(d, chunk, bytes_mut(short_out.data(), short_out.size()));
      FUZZ_CHECK(!rs.ok());
      if (r.ok()) FUZZ_CHECK(rs.err().code == errc::buffer_too_small);
      FUZZ_CHECK(short_out.guards_intact());
    }

    // Again with the same decoder (its scratch has grown): the same outcome.
    {
      fuzz::guarded_buffer again(nbytes);
      const auto r2 = chunk_decode(d, chunk, bytes_mut(again.data(), again.size()));
      FUZZ_CHECK(again.guards_intact());
      FUZZ_CHECK(r2.ok() == r.ok());
      if (r.ok()) FUZZ_CHECK(std::memcmp(again.data(), out.data(), nbytes) == 0);
      else FUZZ_CHECK(r2.err().code == r.err().code);
    }

    // Several workers, blocks in reverse order, scratch grown on demand.
    {
      uint32_t workers = static_cast<uint32_t>(p.range(2, 4));
      chunk_decoder_options o = base;
      o.max_blocksize = 0;
      o.exec.run = run_reversed;
      o.exec.context = &workers;
      o.exec.workers = workers;
      fuzz::checked_allocator mem2;
      {
        chunk_decoder d2;
        FUZZ_CHECK(chunk_decoder_init(d2, mem2.get(), o).ok());
        fuzz::guarded_buffer out2(nbytes);
        const auto r2 = chunk_decode(d2, chunk, bytes_mut(out2.data(), out2.size()));
        FUZZ_CHECK(out2.guards_intact());
        FUZZ_CHECK(r2.ok() == r.ok());
        if (r.ok()) FUZZ_CHECK(std::memcmp(out2.data(), out.data(), nbytes) == 0);
      }
      FUZZ_CHECK(mem2.clean());
    }

    // An allocator that refuses one request: the same bytes, or out_of_memory; nothing leaks either way.
    {
      fuzz::checked_allocator failing;
      failing.counter.fail_at = p.range(1, 6);
      failing.counter.fail_after = (p.next() & 1) != 0;
      {
        chunk_decoder d3;
        chunk_decoder_options o = base;
        o.fixed_scratch = (p.next() & 3) == 0;
        o.max_blocksize = p.range(0, 3) * 1024;
        if (chunk_decoder_init(d3, failing.get(), o).ok()) {
          fuzz::guarded_buffer out3(nbytes);
          const auto r3 = chunk_decode(d3, chunk, bytes_mut(out3.data(), out3.size()));
          FUZZ_CHECK(out3.guards_intact());
          if (r3.ok()) {
            FUZZ_CHECK(r.ok());
            FUZZ_CHECK(std::memcmp(out3.data(), out.data(), nbytes) == 0);
          } else if (r.ok()) {
            // A fixed scratch holds blocks up to max_blocksize only.
            FUZZ_CHECK(r3.err().code == errc::out_of_memory ||
                       (o.fixed_scratch && r3.err().code == errc::buffer_too_small));
          }
        }
      }
      FUZZ_CHECK(failing.clean());
    }

    // The blocks requested one by one (as the array layer reads them) give the whole; the other entry points.
    const uint8_t* ref = r.ok() ? out.data() : nullptr;
    fuzz::requests_check(d, h, chunk, ref, 0, 1, false);
    fuzz::workers_check(base, h, chunk, ref, p, (p.next() & 1) != 0);
    fuzz::extras_check(h, chunk, base, r.ok());
    chunk_decoder_release(d);
    // A released decoder can be released again (the destructor does) and holds nothing.
  }
  FUZZ_CHECK(mem.clean());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::params p(data, size);
  if (size == 0 || data[0] != fuzz::kStructuredTag) {
    chunk_check(data, size, p, chunk_decoder_options{}, nullptr);
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
  if ((how & 6) == 6 && o.geometry.ndim > 0) o.geometry.blockshape[0] += 1;  // the wrong shape
  o.max_blocksize = (how & 8) != 0 ? 0 : o.max_blocksize;
  // An exact-size heap copy: ASan sees any read past the chunk.
  std::vector<uint8_t> copy(b.bytes);
  copy.shrink_to_fit();
  chunk_check(copy.data(), copy.size(), p, o, &b);
  return 0;
}
