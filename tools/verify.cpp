// tessera verify FILE: decodes every chunk (and, for a chunk that fails, every block, to say which one) and every
// variable-length metalayer. Damage goes to stderr, one line per damaged chunk ("chunk N block B: why"); the
// exit status is non-zero when anything is damaged.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "cli.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kCmd = "verify";

}  // namespace

int cmd_verify(int argc, char** argv) noexcept {
  if (argc != 1) return fail(kExitUsage, kCmd, "expects one FILE, got %d arguments", argc);
  const char* path = argv[0];
  opened_array o;
  if (int rc = array_open_path(kCmd, path, o, executor_serial()); rc != 0) return rc;
  const array_layout& l = array_layout_get(o.a);
  frame& f = array_frame(o.a);
  const frame_info* fi = frame_info_get(f);
  if (fi == nullptr) return fail(kExitFailure, kCmd, "%s: the frame is not open", path);
  const int32_t itemsize = array_itemsize(o.a);
  const uint64_t chunk_nbytes = static_cast<uint64_t>(l.extchunk_nitems) * static_cast<uint64_t>(itemsize);

  chunk_decoder_options dopt;
  dopt.max_blocksize = static_cast<size_t>(l.block_nitems) * static_cast<size_t>(itemsize);
  chunk_decoder dec;
  if (auto e = chunk_decoder_init(dec, tool_allocator(), dopt); !e.ok()) return fail_error(kCmd, "decoder", e);
  owned_array<uint8_t> out;
  owned_array<uint8_t> readbuf;
  if (auto e = out.allocate(tool_allocator(), static_cast<size_t>(chunk_nbytes) + 1); !e.ok())
    return fail_error(kCmd, "the chunk buffer", e);

  int64_t damaged = 0;
  int64_t blocks_checked = 0;
  for (int64_t n = 0; n < fi->nchunks; ++n) {
    auto ref = frame_chunk_locate(f, n);
    if (!ref.ok()) {
      ++damaged;
      fail(kExitFailure, kCmd, "%s: chunk %" PRId64 ": %s (%s)", path, n, ref.err().message, errc_name(ref.err().code));
      continue;
    }
    if (static_cast<uint64_t>(ref->nbytes) != chunk_nbytes) {
      ++damaged;
      fail(kExitFailure, kCmd, "%s: chunk %" PRId64 ": holds %d bytes, the array's chunks hold %" PRIu64, path, n,
           ref->nbytes, chunk_nbytes);
      continue;
    }
    if (ref->special != chunk_special::none) continue;  // the index alone holds it: nothing stored to damage
    auto chunk = frame_chunk_read(f, n, readbuf);
    if (!chunk.ok()) {
      ++damaged;
      fail(kExitFailure, kCmd, "%s: chunk %" PRId64 ": %s (%s)", path, n, chunk.err().message,
           errc_name(chunk.err().code));
      continue;
    }
    auto header = chunk_header_read(*chunk);
    if (!header.ok()) {
      ++damaged;
      fail(kExitFailure, kCmd, "%s: chunk %" PRId64 ": header: %s (%s)", path, n, header.err().message,
           errc_name(header.err().code));
      continue;
    }
    const uint32_t nblocks = header->special != chunk_special::none ? 0 : header->nblocks;
    auto whole = chunk_decode(dec, *chunk, bytes_mut(out.data(), out.size()));
    if (whole.ok() && *whole == chunk_nbytes) {
      blocks_checked += nblocks;
      continue;
    }
    // Which block: decode them one by one.
    ++damaged;
    bool found = false;
    for (uint32_t b = 0; b < nblocks; ++b) {
      auto r = chunk_decode_block(dec, *chunk, b, bytes_mut(out.data(), out.size()));
      if (!r.ok()) {
        fail(kExitFailure, kCmd, "%s: chunk %" PRId64 " block %u: %s (%s)", path, n, b, r.err().message,
             errc_name(r.err().code));
        found = true;
        break;
      }
    }
    if (!found) {
      if (!whole.ok())
        fail(kExitFailure, kCmd, "%s: chunk %" PRId64 ": %s (%s)", path, n, whole.err().message,
             errc_name(whole.err().code));
      else
        fail(kExitFailure, kCmd, "%s: chunk %" PRId64 ": decodes to %zu bytes, expected %" PRIu64, path, n, *whole,
             chunk_nbytes);
    }
  }
  if (fi->nchunks != l.nchunks) {
    ++damaged;
    fail(kExitFailure, kCmd, "%s: the frame holds %" PRId64 " chunks, the array's shape needs %" PRId64, path,
         fi->nchunks, l.nchunks);
  }
  for (uint32_t i = 0; i < fi->nvlmetalayers; ++i) {
    auto name = frame_vlmeta_name(f, i);
    if (!name.ok()) {
      ++damaged;
      fail_error(kCmd, "vlmetalayer", name.err());
      continue;
    }
    auto size = frame_vlmeta_nbytes(f, *name);
    owned_array<uint8_t> buf;
    status e = size.ok() ? ok_status() : size.err();
    // The size is what the vlmetalayer's chunk header claims: the frame's budget bounds it.
    if (e.ok() && *size >= frame_max_alloc(f))
      e = make_error(errc::resource_limit, "the vlmetalayer's claimed size exceeds max_alloc");
    if (e.ok()) e = buf.allocate(tool_allocator(), *size + 1);
    if (e.ok()) {
      auto r = frame_vlmeta_decode(f, dec, *name, bytes_mut(buf.data(), buf.size()));
      if (!r.ok()) e = r.err();
    }
    if (!e.ok()) {
      ++damaged;
      fail(kExitFailure, kCmd, "%s: vlmetalayer '%.*s': %s (%s)", path, static_cast<int>(name->size()), name->data(),
           e.message, errc_name(e.code));
    }
  }
  if (damaged > 0) {
    fail(kExitFailure, kCmd, "%s: %" PRId64 " damaged part(s) in %" PRId64 " chunks", path, damaged, fi->nchunks);
    return kExitFailure;
  }
  std::printf("%s: ok (%" PRId64 " chunks, %" PRId64 " blocks, %u vlmetalayers decoded)\n", path, fi->nchunks,
              blocks_checked, fi->nvlmetalayers);
  return 0;
}

}  // namespace tessera::cli
