// SPDX-License-Identifier: BSD-3-Clause
// tessera verify FILE [--threads N] [--quiet]: decodes every chunk (and, for a chunk that fails, every block, to say which one) and every
// variable-length metalayer. Damage goes to stderr, one line per damaged chunk ("chunk N block B: why"); the
// exit status is non-zero when anything is damaged. Chunks are checked on the thread pool (each worker with its
// own read handle), the lines printed in chunk order whatever the thread count.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <new>

#include "cli.hpp"
#include "options.hpp"
#include "progress.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kCmd = "verify";
constexpr size_t kMsgSize = 512;

// One worker's own read handle, decoder and buffers (chunks are checked in parallel, messages printed in order).
struct verify_worker {
  frame f;
  bool open = false;
  chunk_decoder dec;
  owned_array<uint8_t> out;
  owned_array<uint8_t> readbuf;
};

struct verify_job {
  const char* path = "";
  uint64_t chunk_nbytes = 0;
  verify_worker* workers = nullptr;
  int64_t first = 0;
  char (*msgs)[kMsgSize] = nullptr;  // per task: empty when the chunk is sound
  uint32_t* blocks = nullptr;        // per task: blocks checked
};

// Checks chunk n; on damage writes one line (without "tessera: verify: ") into msg.
void chunk_check(const verify_job& j, verify_worker& w, int64_t n, char* msg, uint32_t& blocks) {
  msg[0] = '\0';
  blocks = 0;
  const char* path = j.path;
  auto ref = frame_chunk_locate(w.f, n);
  if (!ref.ok()) {
    std::snprintf(msg, kMsgSize, "%s: chunk %" PRId64 ": %s (%s)", path, n, ref.err().message, errc_name(ref.err().code));
    return;
  }
  if (static_cast<uint64_t>(ref->nbytes) != j.chunk_nbytes) {
    std::snprintf(msg, kMsgSize, "%s: chunk %" PRId64 ": holds %d bytes, the array's chunks hold %" PRIu64, path, n,
                  ref->nbytes, j.chunk_nbytes);
    return;
  }
  if (ref->special != chunk_special::none) return;  // the index alone holds it: nothing stored to damage
  auto chunk = frame_chunk_read(w.f, n, w.readbuf);
  if (!chunk.ok()) {
    std::snprintf(msg, kMsgSize, "%s: chunk %" PRId64 ": %s (%s)", path, n, chunk.err().message,
                  errc_name(chunk.err().code));
    return;
  }
  auto header = chunk_header_read(*chunk);
  if (!header.ok()) {
    std::snprintf(msg, kMsgSize, "%s: chunk %" PRId64 ": header: %s (%s)", path, n, header.err().message,
                  errc_name(header.err().code));
    return;
  }
  const uint32_t nblocks = header->special != chunk_special::none ? 0 : header->nblocks;
  auto whole = chunk_decode(w.dec, *chunk, bytes_mut(w.out.data(), w.out.size()));
  if (whole.ok() && *whole == j.chunk_nbytes) {
    blocks = nblocks;
    return;
  }
  // Which block: decode them one by one.
  for (uint32_t b = 0; b < nblocks; ++b) {
    auto r = chunk_decode_block(w.dec, *chunk, b, bytes_mut(w.out.data(), w.out.size()));
    if (!r.ok()) {
      std::snprintf(msg, kMsgSize, "%s: chunk %" PRId64 " block %u: %s (%s)", path, n, b, r.err().message,
                    errc_name(r.err().code));
      return;
    }
  }
  if (!whole.ok())
    std::snprintf(msg, kMsgSize, "%s: chunk %" PRId64 ": %s (%s)", path, n, whole.err().message,
                  errc_name(whole.err().code));
  else
    std::snprintf(msg, kMsgSize, "%s: chunk %" PRId64 ": decodes to %zu bytes, expected %" PRIu64, path, n, *whole,
                  j.chunk_nbytes);
}

void verify_task(void* context, size_t i, uint32_t worker) noexcept {
  auto& j = *static_cast<verify_job*>(context);
  chunk_check(j, j.workers[worker], j.first + static_cast<int64_t>(i), j.msgs[i], j.blocks[i]);
}

}  // namespace

int cmd_verify(int argc, char** argv) noexcept {
  const char* path = nullptr;
  run_options ro;
  for (int i = 0; i < argc; ++i) {
    if (int rc = run_option_take(kCmd, argc, argv, i, ro); rc >= 0) {
      if (rc != 0) return rc;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return fail(kExitUsage, kCmd, "unknown option '%s'", argv[i]);
    } else if (path == nullptr) {
      path = argv[i];
    } else {
      return fail(kExitUsage, kCmd, "expects one FILE, got %d arguments", argc);
    }
  }
  if (path == nullptr) return fail(kExitUsage, kCmd, "expects one FILE, got %d arguments", 0);
  opened_array o;
  if (int rc = array_open_path(kCmd, path, o, executor_serial()); rc != 0) return rc;
  const array_layout& l = array_layout_get(o.a);
  frame& f = array_frame(o.a);
  const frame_info* fi = frame_info_get(f);
  if (fi == nullptr) return fail(kExitFailure, kCmd, "%s: the frame is not open", path);
  const int32_t itemsize = array_itemsize(o.a);
  const uint64_t chunk_nbytes = static_cast<uint64_t>(l.extchunk_nitems) * static_cast<uint64_t>(itemsize);

  uint32_t threads = run_threads(ro);
  if (fi->nchunks < static_cast<int64_t>(threads)) threads = fi->nchunks < 1 ? 1 : static_cast<uint32_t>(fi->nchunks);
  thread_pool pool;
  executor exec;
  if (int rc = run_executor(kCmd, threads, pool, exec); rc != 0) return rc;
  const uint32_t nworkers = exec.workers;
  verify_worker* workers = new (std::nothrow) verify_worker[nworkers];
  const size_t group = static_cast<size_t>(nworkers) * 4;
  char(*msgs)[kMsgSize] = new (std::nothrow) char[group][kMsgSize];
  uint32_t* blocks = new (std::nothrow) uint32_t[group];
  struct freer {
    verify_worker* w;
    uint32_t n;
    char (*m)[kMsgSize];
    uint32_t* b;
    ~freer() {
      if (w != nullptr)
        for (uint32_t i = 0; i < n; ++i)
          if (w[i].open) (void)frame_close(w[i].f);
      delete[] w;
      delete[] m;
      delete[] b;
    }
  } free_all{workers, nworkers, msgs, blocks};
  if (workers == nullptr || msgs == nullptr || blocks == nullptr) return fail(kExitFailure, kCmd, "out of memory");
  chunk_decoder_options dopt;
  dopt.max_blocksize = static_cast<size_t>(l.block_nitems) * static_cast<size_t>(itemsize);
  dopt.geometry = array_chunk_geometry(l);  // NDCELL and NDMEAN chunks need the block shape
  for (uint32_t w = 0; w < nworkers; ++w) {
    if (auto e = frame_open_again(workers[w].f, f, tool_allocator()); !e.ok()) return fail_error(kCmd, path, e);
    workers[w].open = true;
    if (auto e = chunk_decoder_init(workers[w].dec, tool_allocator(), dopt); !e.ok()) return fail_error(kCmd, "decoder", e);
    if (auto e = workers[w].out.allocate(tool_allocator(), static_cast<size_t>(chunk_nbytes) + 1); !e.ok())
      return fail_error(kCmd, "the chunk buffer", e);
  }
  verify_job job;
  job.path = path;
  job.chunk_nbytes = chunk_nbytes;
  job.workers = workers;
  job.msgs = msgs;
  job.blocks = blocks;

  progress pr;
  progress_start(pr, kCmd, static_cast<uint64_t>(fi->nchunks) * chunk_nbytes, ro.quiet);
  int64_t damaged = 0;
  int64_t blocks_checked = 0;
  for (int64_t g = 0; g < fi->nchunks;) {
    // A run of chunks the index alone holds (zeros, NaN, uninitialized) of the array's chunk size is sound as
    // a whole: skipped at once, so the walk costs the runs, not the entries (10^8 zero chunks in one step).
    auto ref = frame_chunk_locate(f, g);
    auto run = ref.ok() && ref->special != chunk_special::none && static_cast<uint64_t>(ref->nbytes) == chunk_nbytes
                   ? frame_chunk_special_run(f, g)
                   : result<int64_t>(int64_t{0});
    if (run.ok() && *run > 0) {
      g += *run;
      progress_update(pr, static_cast<uint64_t>(g) * chunk_nbytes);
      continue;
    }
    const int64_t n = fi->nchunks - g < static_cast<int64_t>(group) ? fi->nchunks - g : static_cast<int64_t>(group);
    job.first = g;
    executor_run(exec, static_cast<size_t>(n), verify_task, &job);
    for (int64_t i = 0; i < n; ++i) {
      blocks_checked += blocks[i];
      if (msgs[i][0] == '\0') continue;
      ++damaged;
      progress_end(pr);
      fail(kExitFailure, kCmd, "%s", msgs[i]);
    }
    g += n;
    progress_update(pr, static_cast<uint64_t>(g) * chunk_nbytes);
  }
  progress_end(pr);
  if (fi->nchunks != l.nchunks) {
    ++damaged;
    fail(kExitFailure, kCmd, "%s: the frame holds %" PRId64 " chunks, the array's shape needs %" PRId64, path,
         fi->nchunks, l.nchunks);
  }
  chunk_decoder& dec = workers[0].dec;
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
