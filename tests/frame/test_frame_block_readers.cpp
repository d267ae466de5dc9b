// SPDX-License-Identifier: BSD-3-Clause
// The frame's two block readers for the array's slice reads (frame_internal.hpp): a few consecutive blocks of a
// chunk read on their own (frame_blocks_reader_init, chunk_blocks_size, chunk_blocks_read) and a block request's
// bytes copied without decoding (frame_blocks_copy). What they refuse and what they leave to other readers, then,
// over a frame without a view, contiguous and sparse, each storage or directory call and each allocation failing
// in turn: the blocks read decode to the stored ones, or the injected error comes back, and nothing leaks.
#include <cstring>

#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../../src/frame/frame_internal.hpp"  // the block readers (internal: the core keeps src/ private)
#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "frame_testing.hpp"

using namespace tessera;
using namespace frame_test;

namespace {

constexpr int32_t kChunk = 4096;
constexpr int32_t kBlock = 512;
constexpr uint32_t kBlocks = kChunk / kBlock;
constexpr int kChunks = 3;

struct scratch {
  uint8_t src[kChunk];
  uint8_t chunk[2 * kChunk + 64];
  uint8_t work[3 * kBlock];
  uint8_t out[kChunk];
  uint8_t expect[kChunk];
  uint8_t prefix[detail::frame_blocks_prefix_size(kBlocks)];
  uint8_t part[2 * kChunk + 64];
};
scratch g;

// Chunk 0: compressed; 1: zeros; 2: memcpyed (clevel 0).
void frame_build(tessera::test::context& t, const storage* st, const storage_directory* dir) {
  chunk_encoder_options eo;
  eo.max_blocksize = kBlock;
  chunk_encoder e;
  REQUIRE_OK(chunk_encoder_init(e, tessera::test::system_allocator(), eo));
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = kBlock;
  frame f;
  REQUIRE_OK(st != nullptr ? frame_create(f, *st, tessera::test::system_allocator(), p)
                           : frame_create_sparse(f, *dir, tessera::test::system_allocator(), p));
  for (int c = 0; c < kChunks; ++c) {
    if (c == 1) {
      special_make(1, kChunk, g.chunk);
      REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, 32)));
      continue;
    }
    content_fill(70 + static_cast<uint64_t>(c), g.src, kChunk);
    chunk_encode_params ep;
    ep.typesize = 4;
    ep.blocksize = kBlock;
    ep.compressor = codec::blosclz;
    ep.clevel = c == 2 ? 0 : 5;
    auto n = chunk_encode(e, ep, bytes_view(g.src, kChunk), bytes_mut(g.chunk, sizeof g.chunk));
    REQUIRE_OK(n);
    REQUIRE_OK(frame_chunk_append(f, bytes_view(g.chunk, *n)));
  }
  REQUIRE_OK(frame_commit(f));
  REQUIRE_OK(frame_close(f));
}

struct first_blocks {
  static size_t block(void*, size_t i) noexcept { return i + 2; }
  static status consume(void*, size_t, bytes_view, uint32_t) noexcept { return ok_status(); }
};

// Blocks 2..4 of every stored chunk through both readers; decoded and compared where they decode.
status reads(frame& f, chunk_decoder& d, bool sparse) {
  for (int c = 0; c < kChunks; ++c) {
    if (c == 1) continue;
    content_fill(70 + static_cast<uint64_t>(c), g.expect, kChunk);
    detail::sparse_entry entry;
    detail::chunk_blocks_reader r;
    auto ok = detail::frame_blocks_reader_init(f, c, kBlocks, g.prefix, &r, sparse ? &entry : nullptr);
    if (!ok.ok()) return ok.err();
    if (!*ok) return make_error(errc::corrupt, "test: a plain chunk was not set up for block reads");
    auto need = detail::chunk_blocks_size(r, 2, 3);
    if (!need.ok()) return need.err();
    if (*need > sizeof g.part) return make_error(errc::corrupt, "test: blocks larger than their chunk");
    auto part = detail::chunk_blocks_read(r, 2, 3, bytes_mut(g.part, *need));
    if (!part.ok()) return part.err();
    if (r.memcpyed) {
      if (part->size() != 3u * kBlock || std::memcmp(part->data(), g.expect + 2 * kBlock, 3 * kBlock) != 0)
        return make_error(errc::corrupt, "test: wrong memcpyed blocks");
    } else {
      for (size_t b = 2; b < 5; ++b) {
        auto n = chunk_decode_block(d, *part, b, bytes_mut(g.out, kBlock));
        if (!n.ok()) return n.err();
        if (std::memcmp(g.out, g.expect + b * kBlock, kBlock) != 0) return make_error(errc::corrupt, "test: wrong block");
      }
    }
    TESSERA_TRY(entry.close());
    chunk_block_request q;
    q.count = 3;
    q.block = first_blocks::block;
    q.consume = first_blocks::consume;
    bytes_view copy;
    TESSERA_TRY(detail::frame_blocks_copy(f, d, c, q, &copy));
    if (!copy.empty()) {
      for (size_t b = 2; b < 5; ++b) {
        auto n = chunk_decode_block(d, copy, b, bytes_mut(g.out, kBlock));
        if (!n.ok()) return n.err();
        if (std::memcmp(g.out, g.expect + b * kBlock, kBlock) != 0) return make_error(errc::corrupt, "test: wrong copied block");
      }
    }
  }
  return ok_status();
}

enum class fault { storage_once, storage_crash, allocation_once, allocation_from };

void sweep(tessera::test::context& t, fault kind, bool sparse) {
  growable_buffer buf;
  growable_buffer_init(buf, tessera::test::system_allocator());
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, tessera::test::system_allocator(), 8));
  const storage plain = growable_buffer_storage(buf);
  const storage_directory plain_dir = memory_directory_interface(md);
  frame_build(t, sparse ? nullptr : &plain, sparse ? &plain_dir : nullptr);
  if (t.failures > 0) return;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, tessera::test::system_allocator()));
  const bool allocating = kind == fault::allocation_once || kind == fault::allocation_from;
  bool completed = false;
  int failed_runs = 0;
  for (uint64_t n = 1; n < 500 && !completed; ++n) {
    tessera::test::counting_allocator ca;
    wrapped_storage ws;
    ws.inner = plain;
    wrapped_directory wd;
    wd.inner = plain_dir;
    fault_plan& plan = sparse ? wd.plan : *ws.plan;
    if (allocating) {
      ca.fail_at = n;
      ca.fail_after = kind == fault::allocation_from;
    } else {
      plan.fail_at = n;
      plan.fail_after = kind == fault::storage_crash;
    }
    status s;
    {
      frame f;
      s = sparse ? frame_open_sparse(f, wd.get(), ca.get()) : frame_open(f, ws.get(), ca.get());
      if (s.ok()) s = reads(f, d, sparse);
    }
    const bool injected = allocating ? ca.requests >= ca.fail_at : plan.failed;
    if (s.ok()) {
      completed = !injected;
    } else {
      ++failed_runs;
      CHECK(injected);
      CHECK_EQ(s.code, allocating ? errc::out_of_memory : errc::io);
    }
    CHECK_EQ(wd.open_count(), 0);
    CHECK(!ca.leaked());
    if (t.failures > 0) return;
  }
  CHECK(completed);
  CHECK(failed_runs >= (allocating ? 1 : 6));
}

}  // namespace

TESSERA_TEST(frame_block_readers, what_they_refuse_and_leave_to_other_readers) {
  growable_buffer buf;
  growable_buffer_init(buf, test::system_allocator());
  const storage st = growable_buffer_storage(buf);
  frame_build(t, &st, nullptr);
  if (t.failures > 0) return;
  chunk_decoder d;
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  chunk_block_request q;
  q.count = 3;
  q.block = first_blocks::block;
  q.consume = first_blocks::consume;
  detail::chunk_blocks_reader r;
  bytes_view copy;
  {
    frame closed;
    CHECK_ERR(detail::frame_blocks_reader_init(closed, 0, kBlocks, g.prefix, &r), errc::invalid_argument);
    CHECK_ERR(detail::frame_blocks_copy(closed, d, 0, q, &copy), errc::invalid_argument);
    CHECK(!detail::frame_chunks_in_place(closed));
    CHECK(!detail::frame_blocks_readable_by_tasks(closed, false));
  }
  {
    // Written to, a frame's chunks are not handed out in place.
    frame_open_options o;
    o.writable = true;
    frame w;
    REQUIRE_OK(frame_open(w, st, test::system_allocator(), o));
    CHECK(!detail::frame_chunks_in_place(w));
  }
  frame f;
  REQUIRE_OK(frame_open(f, st, test::system_allocator()));
  CHECK(detail::frame_chunks_in_place(f));
  CHECK(detail::frame_blocks_readable_by_tasks(f, false));
  CHECK(!detail::frame_blocks_readable_by_tasks(f, true));  // a growable buffer does not claim concurrent reads
  // A request for no blocks reads nothing.
  chunk_block_request none = q;
  none.count = 0;
  none.block = nullptr;
  CHECK_OK(detail::frame_blocks_copy(f, d, 0, none, &copy));
  none.consume = nullptr;
  CHECK_OK(frame_blocks_decode(f, d, 0, none));
  CHECK_ERR(detail::frame_blocks_reader_init(f, kChunks, kBlocks, g.prefix, &r), errc::out_of_range);
  CHECK_ERR(detail::frame_blocks_copy(f, d, kChunks, q, &copy), errc::out_of_range);
  // A special-value chunk has no blocks to read; a chunk of more blocks than asked for is read another way.
  auto special = detail::frame_blocks_reader_init(f, 1, kBlocks, g.prefix, &r);
  REQUIRE_OK(special);
  CHECK(!*special);
  auto many = detail::frame_blocks_reader_init(f, 0, kBlocks - 1, g.prefix, &r);
  REQUIRE_OK(many);
  CHECK(!*many);
  CHECK_OK(detail::frame_blocks_copy(f, d, 1, q, &copy));
  CHECK(copy.empty());
  chunk_block_request no_block = q;
  no_block.block = nullptr;
  CHECK_ERR(detail::frame_blocks_copy(f, d, 0, no_block, &copy), errc::invalid_argument);
  // A sparse frame's chunks are read through an entry the caller keeps open: without one, not at all.
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, test::system_allocator(), 8));
  const storage_directory dir = memory_directory_interface(md);
  frame_build(t, nullptr, &dir);
  frame sf;
  REQUIRE_OK(frame_open_sparse(sf, dir, test::system_allocator()));
  auto no_entry = detail::frame_blocks_reader_init(sf, 0, kBlocks, g.prefix, &r);
  REQUIRE_OK(no_entry);
  CHECK(!*no_entry);
  CHECK(!detail::frame_chunks_in_place(sf));
  CHECK(detail::frame_blocks_readable_by_tasks(sf, true));  // each entry says so for itself
}

TESSERA_TEST(frame_block_readers, contiguous_with_each_storage_call_failing) {
  sweep(t, fault::storage_once, false);
  sweep(t, fault::storage_crash, false);
}

TESSERA_TEST(frame_block_readers, sparse_with_each_directory_call_failing) {
  sweep(t, fault::storage_once, true);
  sweep(t, fault::storage_crash, true);
}

TESSERA_TEST(frame_block_readers, with_each_allocation_failing) {
  sweep(t, fault::allocation_once, false);
  sweep(t, fault::allocation_from, false);
  sweep(t, fault::allocation_from, true);
}
