// SPDX-License-Identifier: BSD-3-Clause
// Helper of the `tessera` tool's tests (not the tool itself): makes inputs and expected outputs independently of
// the tool's code paths, and damages files on purpose.
//   testaid gen OUT DTYPE NITEMS SEED           deterministic items (smooth plus noise; floats hold small
//                                               integers, so trunc:20 keeps them exact)
//   testaid slice RAW ITEMSIZE SHAPE SLICE OUT  the C-order slice (start:stop per dimension) of a C-order file
//   testaid corrupt FILE                        in a cframe file, flips a bit of the high byte of the length of
//                                               a block's first stream (so it points far past the chunk: any
//                                               decoder must notice); prints "chunk C block B", or "none"
//                                               when no chunk has block streams (all special or verbatim)
//   testaid truncate SRC DST NBYTES             the first NBYTES bytes of SRC into DST
//   testaid writehex DST HEX                    a file holding the bytes spelled in HEX (two digits a byte)
//   testaid prepend SRC DST NBYTES              NBYTES bytes of 0xA5, then SRC, into DST (a frame inside an image)
//   testaid blockdiff GOT RAW ITEMSIZE SHAPE CHUNKS BLOCKS
//                                               succeeds when GOT and RAW differ in exactly one block, not a
//                                               block 0 (the reference's delta quirk; see test_array_golden.cpp)
//   testaid arraycreate OUT RAW DTYPE SHAPE CHUNKS BLOCKS CODEC CLEVEL FILTER,...
//                                               the array the library's array_create writes from the whole
//                                               buffer at once (what `tessera create` wrote before it streamed):
//                                               a cframe file; filters by number, in the last slots
//   testaid rewrite FILE ROUNDS                 rewrites the whole array ROUNDS times with its own items,
//                                               keeping every old frame (dead bytes for `tessera compact`)
//   testaid flashimage OUT RAW NCHUNKS MODE     a raw image of simulated NOR flash (64 sectors of 4 KiB, program
//                                               unit 4, random bytes outside the region) whose region (sectors
//                                               4 to 35: offset=16K,size=128K) holds a logger's int16 array of
//                                               shape (N, 3), chunks of 64 rows, appended through the flash
//                                               port: NCHUNKS chunks, then MODE open (not finalized), torn
//                                               (not finalized, and a power cut in one more append: the record
//                                               programmed, none of its bytes) or final (finalized, shape set).
//                                               RAW: the committed chunks' items, C order
//   testaid rss LIMIT_KIB PROGRAM ARG...        runs PROGRAM and fails unless it exits 0 with a peak resident
//                                               set (getrusage of the child) below LIMIT_KIB; prints the peak
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tessera/array.hpp"
#include "tessera/chunk.hpp"
#include "tessera/frame.hpp"
#include "tessera/b2nd_meta.hpp"
#include "tessera/port/flash_frame.hpp"
#include "tessera/port/flash_sim.hpp"
#include "tessera/port/posix_allocator.hpp"
#include "tessera/port/posix_file.hpp"

namespace {

int die(const std::string& msg) {
  std::fprintf(stderr, "testaid: %s\n", msg.c_str());
  return 1;
}

bool read_file(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}
bool write_file(const std::string& path, const uint8_t* p, size_t n) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n));
  return static_cast<bool>(o);
}

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> v;
  if (s.empty()) return v;
  size_t pos = 0;
  for (;;) {
    size_t c = s.find(',', pos);
    v.push_back(std::strtoll(s.substr(pos, c - pos).c_str(), nullptr, 10));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return v;
}

void store_le(uint8_t* p, uint64_t v, int size, bool big_endian) {
  for (int i = 0; i < size; ++i) p[big_endian ? size - 1 - i : i] = static_cast<uint8_t>(v >> (8 * i));
}

int gen(const std::string& out, const std::string& dtype, int64_t nitems, uint64_t seed) {
  const bool be = dtype[0] == '>';
  const char kind = dtype[1];
  const int size = std::atoi(dtype.c_str() + 2);
  std::vector<uint8_t> buf(static_cast<size_t>(nitems) * static_cast<size_t>(size));
  uint64_t s = seed;
  for (int64_t i = 0; i < nitems; ++i) {
    s += 0x9E3779B97F4A7C15ull;  // splitmix64
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const int64_t smooth = (i % 1000) * 7 + (i / 1000) % 13;
    const int64_t v = smooth + static_cast<int64_t>(z % 5) - 2;  // small integers, a little noise
    uint8_t* p = buf.data() + i * size;
    if (kind == 'f' && size == 4) {
      float f = static_cast<float>(v) * 0.5f;
      uint32_t b;
      std::memcpy(&b, &f, 4);
      store_le(p, b, 4, be);
    } else if (kind == 'f' && size == 8) {
      double f = static_cast<double>(v) * 0.25;
      uint64_t b;
      std::memcpy(&b, &f, 8);
      store_le(p, b, 8, be);
    } else if (kind == 'c') {  // complex: (v, -v/2) as two floats or doubles
      const int half = size / 2;
      for (int part = 0; part < 2; ++part) {
        const double x = part == 0 ? static_cast<double>(v) : -static_cast<double>(v) / 2;
        if (half == 4) {
          float f = static_cast<float>(x);
          uint32_t b;
          std::memcpy(&b, &f, 4);
          store_le(p + part * 4, b, 4, be);
        } else {
          uint64_t b;
          std::memcpy(&b, &x, 8);
          store_le(p + part * 8, b, 8, be);
        }
      }
    } else if (kind == 'b') {
      p[0] = static_cast<uint8_t>((v / 3) & 1);
    } else {
      store_le(p, static_cast<uint64_t>(v), size, be);
    }
  }
  return write_file(out, buf.data(), buf.size()) ? 0 : die("cannot write " + out);
}

int slice(const std::string& raw_path, int64_t itemsize, const std::string& shape_s, const std::string& slice_s,
          const std::string& out) {
  std::vector<uint8_t> raw;
  if (!read_file(raw_path, raw)) return die("cannot read " + raw_path);
  std::vector<int64_t> shape = parse_list(shape_s);
  const size_t nd = shape.size();
  std::vector<int64_t> start(nd, 0), stop(shape);
  size_t pos = 0;
  for (size_t d = 0; d < nd && !slice_s.empty(); ++d) {
    size_t c = slice_s.find(',', pos);
    std::string part = slice_s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    size_t colon = part.find(':');
    if (colon == std::string::npos) return die("bad slice part " + part);
    if (colon > 0) start[d] = std::strtoll(part.substr(0, colon).c_str(), nullptr, 10);
    if (colon + 1 < part.size()) stop[d] = std::strtoll(part.substr(colon + 1).c_str(), nullptr, 10);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  int64_t total = 1;
  for (size_t d = 0; d < nd; ++d) total *= shape[d];
  if (static_cast<int64_t>(raw.size()) != total * itemsize) return die("raw size disagrees with the shape");
  std::vector<uint8_t> res;
  int64_t count = 1;
  for (size_t d = 0; d < nd; ++d) count *= stop[d] - start[d];
  std::vector<int64_t> idx(nd, 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = k, off = 0, stride = 1;
    for (size_t d = nd; d-- > 0;) {
      const int64_t ext = stop[d] - start[d];
      const int64_t c = rest % ext;
      rest /= ext;
      off += (start[d] + c) * stride;
      stride *= shape[d];
    }
    res.insert(res.end(), raw.begin() + off * itemsize, raw.begin() + (off + 1) * itemsize);
  }
  return write_file(out, res.data(), res.size()) ? 0 : die("cannot write " + out);
}

int corrupt(const std::string& path) {
  using namespace tessera;
  std::vector<uint8_t> all;
  if (!read_file(path, all)) return die("cannot read " + path);
  auto f = posix_file_open(path.c_str(), posix_open::read);
  if (!f.ok()) return die("cannot open " + path);
  const storage st = posix_file_storage(*f);
  frame fr;
  if (!frame_open(fr, st, posix_allocator()).ok()) return die("not a frame: " + path);
  const frame_info info = *frame_info_get(fr);
  // Chunks 1, 2, ... then 0; in each, block 2 (or the last when fewer): the first with a block stream.
  for (int64_t k = 1; k <= info.nchunks; ++k) {
    const int64_t nchunk = k % info.nchunks;
    auto ref = frame_chunk_locate(fr, nchunk);
    if (!ref.ok() || ref->special != chunk_special::none) continue;
    const uint64_t chunk_at = info.header_len + static_cast<uint64_t>(ref->offset);
    if (chunk_at + 32 > all.size()) continue;
    auto h = chunk_header_read(bytes_view(all.data() + chunk_at, all.size() - chunk_at));
    if (!h.ok() || h->memcpyed || h->special != chunk_special::none || h->nblocks == 0) continue;
    const uint32_t nblock = h->nblocks > 2 ? 2 : h->nblocks - 1;
    const uint64_t bs_at = chunk_at + h->header_size + 4ull * nblock;
    const uint32_t bstart = all[bs_at] | (all[bs_at + 1] << 8) | (all[bs_at + 2] << 16) |
                            (static_cast<uint32_t>(all[bs_at + 3]) << 24);
    const uint64_t pos = chunk_at + bstart + 3;  // high byte of the stream's int32 length
    if (pos >= all.size()) return die("stream start past the file");
    all[pos] ^= 0x40;
    (void)frame_close(fr);
    (void)posix_file_close(*f);
    if (!write_file(path, all.data(), all.size())) return die("cannot write " + path);
    std::printf("chunk %lld block %u\n", static_cast<long long>(nchunk), nblock);
    return 0;
  }
  (void)frame_close(fr);
  (void)posix_file_close(*f);
  std::printf("none\n");  // every chunk is special or stored verbatim: no stream to damage
  return 0;
}

int blockdiff(const std::string& got_p, const std::string& raw_p, int64_t itemsize, const std::string& shape_s,
              const std::string& chunks_s, const std::string& blocks_s) {
  std::vector<uint8_t> got, raw;
  if (!read_file(got_p, got) || !read_file(raw_p, raw)) return die("cannot read the inputs");
  if (got.size() != raw.size()) return die("sizes differ");
  auto shape = parse_list(shape_s), cs = parse_list(chunks_s), bs = parse_list(blocks_s);
  const size_t nd = shape.size();
  int64_t qc = -1, qb = -1, ndiff = 0;
  const int64_t n = static_cast<int64_t>(got.size()) / itemsize;
  for (int64_t i = 0; i < n; ++i) {
    if (std::memcmp(got.data() + i * itemsize, raw.data() + i * itemsize, static_cast<size_t>(itemsize)) == 0) continue;
    ++ndiff;
    int64_t rest = i, nchunk = 0, nblock = 0, cstride = 1, bstride = 1;
    for (size_t d = nd; d-- > 0;) {
      const int64_t c = rest % shape[d];
      rest /= shape[d];
      const int64_t chunk_grid = (shape[d] + cs[d] - 1) / cs[d];
      const int64_t block_grid = (cs[d] + bs[d] - 1) / bs[d];
      nchunk += (c / cs[d]) * cstride;
      nblock += ((c % cs[d]) / bs[d]) * bstride;
      cstride *= chunk_grid;
      bstride *= block_grid;
    }
    if (qc < 0) {
      qc = nchunk;
      qb = nblock;
    }
    if (nchunk != qc || nblock != qb) return die("differences in more than one block");
  }
  if (ndiff == 0) return die("no difference: the known quirk is gone from the .raw?");
  if (qb == 0) return die("the difference is in a block 0");
  std::printf("%lld items differ, all in chunk %lld block %lld (the reference's delta quirk)\n",
              static_cast<long long>(ndiff), static_cast<long long>(qc), static_cast<long long>(qb));
  return 0;
}

int arraycreate(char** a) {
  std::vector<uint8_t> raw;
  if (!read_file(a[1], raw)) return die("cannot read the input");
  tessera::array_params p;
  const std::string dtype = a[2];
  p.dtype = tessera::span<const char>(dtype.data(), dtype.size());
  const std::vector<int64_t> shape = parse_list(a[3]), chunks = parse_list(a[4]), blocks = parse_list(a[5]);
  p.ndim = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    p.shape[d] = shape[d];
    p.chunkshape[d] = static_cast<int32_t>(chunks[d]);
    p.blockshape[d] = static_cast<int32_t>(blocks[d]);
  }
  const tessera::codec all[] = {tessera::codec::blosclz, tessera::codec::lz4, tessera::codec::lz4hc,
                                tessera::codec::zlib, tessera::codec::zstd};
  for (tessera::codec c : all)
    if (std::strcmp(a[6], tessera::codec_name(c)) == 0) p.compressor = c;
  p.clevel = std::atoi(a[7]);
  const std::vector<int64_t> f = parse_list(a[8]);
  for (int i = 0; i < tessera::kChunkMaxFilters; ++i) p.filters[i] = 0;
  for (size_t i = 0; i < f.size(); ++i) p.filters[tessera::kChunkMaxFilters - f.size() + i] = static_cast<uint8_t>(f[i]);
  auto file = tessera::posix_file_open(a[0], tessera::posix_open::replace);
  if (!file.ok()) return die("cannot create the output");
  tessera::posix_file pf = *file;
  const tessera::storage st = tessera::posix_file_storage(pf);
  tessera::array arr;
  const tessera::status s = tessera::array_create(arr, tessera::array_target_contiguous(st, false),
                                                  tessera::posix_allocator(), p,
                                                  tessera::array_fill_buffer(tessera::bytes_view(raw.data(), raw.size())));
  (void)tessera::array_close(arr);
  (void)tessera::posix_file_close(pf);
  return s.ok() ? 0 : die(std::string("array_create: ") + s.message);
}

// Rewrites every item of the array in FILE with its own value, `rounds` times, each a committed change, keeping
// every old frame (keep_old_frames): a file full of dead chunk versions, the same array, for `tessera compact`.
int rewrite(const char* path, int rounds) {
  auto file = tessera::posix_file_open(path, tessera::posix_open::read_write);
  if (!file.ok()) return die("cannot open the file");
  tessera::posix_file pf = *file;
  tessera::array_open_options o;
  o.frame.writable = true;
  o.frame.keep_old_frames = true;
  tessera::array arr;
  tessera::status s = tessera::array_open(arr, tessera::posix_file_storage(pf), tessera::posix_allocator(), o);
  std::vector<uint8_t> all;
  if (s.ok()) all.resize(static_cast<size_t>(tessera::array_nbytes(arr)));
  if (s.ok()) s = tessera::array_read(arr, tessera::bytes_mut(all.data(), all.size()));
  const tessera::array_layout& l = tessera::array_layout_get(arr);
  int64_t start[tessera::kMaxDims] = {}, stop[tessera::kMaxDims] = {};
  for (int d = 0; s.ok() && d < l.ndim; ++d) stop[d] = l.shape[d];
  for (int r = 0; s.ok() && r < rounds; ++r)
    s = tessera::array_slice_write(arr, start, stop, tessera::bytes_view(all.data(), all.size()));
  const tessera::status c = tessera::array_close(arr);
  (void)tessera::posix_file_close(pf);
  if (!s.ok()) return die(std::string("rewrite: ") + s.message);
  return c.ok() ? 0 : die(std::string("close: ") + c.message);
}

int rss(long limit_kib, char** program) {
  const pid_t pid = fork();
  if (pid < 0) return die("fork failed");
  if (pid == 0) {
    execv(program[0], program);
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid) return die("wait4 failed");
  std::printf("peak RSS %ld KiB (limit %ld KiB)\n", ru.ru_maxrss, limit_kib);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return die("the program failed");
  if (ru.ru_maxrss >= limit_kib) return die("peak RSS " + std::to_string(ru.ru_maxrss) + " KiB, limit " + std::to_string(limit_kib));
  return 0;
}

}  // namespace

// A logger's array on simulated flash, left as MODE says (see the usage above).
int flashimage(const std::string& out, const std::string& raw, int nchunks, const std::string& mode) {
  using namespace tessera;
  constexpr int kRows = 64, kAxes = 3;
  const allocator alloc = posix_allocator();
  flash_sim_config sc;
  sc.prog_size = 4;
  sc.sector_count = 64;
  flash_sim sim;
  if (!flash_sim_init(sim, sc, alloc).ok()) return die("flash_sim_init");
  flash_sim_fill_random(sim, 11);  // a used part: outside the region and in it before create
  flash_log_config lc;
  lc.device = flash_sim_device(sim);
  lc.first_sector = 4;
  lc.sector_count = 32;
  array_params p;
  p.ndim = 2;
  p.shape[0] = 0;
  p.shape[1] = kAxes;
  p.chunkshape[0] = kRows;
  p.chunkshape[1] = kAxes;
  p.blockshape[0] = 16;
  p.blockshape[1] = kAxes;
  p.dtype = span<const char>("<i2", 3);
  static array_frame_setup setup, chunk_setup;
  if (!array_frame_setup_make(setup, p).ok()) return die("setup");
  p.shape[0] = kRows;
  if (!array_frame_setup_make(chunk_setup, p).ok()) return die("chunk setup");
  flash_frame ff;
  if (auto e = flash_frame_create(ff, lc, alloc, setup.frame); !e.ok()) return die(std::string("create: ") + e.message);
  array_chunk_packer packer;
  if (!array_chunk_packer_init(packer, chunk_setup, alloc).ok()) return die("packer");
  std::vector<uint8_t> items;
  auto chunk_items = [&](int k) {
    std::vector<uint8_t> v(kRows * kAxes * 2);
    for (int i = 0; i < kRows * kAxes; ++i) {
      const auto x = static_cast<uint16_t>((k * 7919 + i * 37 + (i % kAxes) * 1000) & 0x0FFF);
      v[2 * i] = static_cast<uint8_t>(x);
      v[2 * i + 1] = static_cast<uint8_t>(x >> 8);
    }
    return v;
  };
  for (int k = 0; k <= nchunks; ++k) {
    const std::vector<uint8_t> v = chunk_items(k);
    auto chunk = array_chunk_pack(packer, 0, bytes_view(v.data(), v.size()));
    if (!chunk.ok()) return die("pack");
    if (k == nchunks) {
      if (mode != "torn") break;
      flash_sim_cut_after(sim, 2, flash_tear::nothing, 5);  // the record is programmed, the bytes are not
      if (flash_frame_append(ff, *chunk).ok()) return die("the cut append succeeded");
      flash_sim_power_on(sim);
      break;
    }
    if (auto e = flash_frame_append(ff, *chunk); !e.ok()) return die(std::string("append: ") + e.message);
    items.insert(items.end(), v.begin(), v.end());
  }
  if (mode == "final") {
    auto meta = b2nd_meta_decode(setup.metalayers[0].content);
    if (!meta.ok()) return die("meta");
    meta->shape[0] = int64_t{nchunks} * kRows;
    uint8_t buf[sizeof setup.meta_bytes];
    auto len = b2nd_meta_encode(*meta, bytes_mut(buf, sizeof buf));
    if (!len.ok() || !flash_frame_meta_update(ff, setup.metalayers[0].name, bytes_view(buf, *len)).ok())
      return die("meta update");
    if (auto e = flash_frame_finalize(ff); !e.ok()) return die(std::string("finalize: ") + e.message);
  } else if (mode != "open" && mode != "torn") {
    return die("flashimage: MODE is open, torn or final");
  }
  flash_frame_close(ff);
  const bytes_mut b = flash_sim_bytes(sim);
  if (!write_file(out, b.data(), b.size()) || !write_file(raw, items.data(), items.size())) return die("write");
  flash_sim_release(sim);
  return 0;
}

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "gen" && argc == 6) return gen(argv[2], argv[3], std::atoll(argv[4]), std::strtoull(argv[5], nullptr, 10));
  if (cmd == "slice" && argc == 7) return slice(argv[2], std::atoll(argv[3]), argv[4], argv[5], argv[6]);
  if (cmd == "corrupt" && argc == 3) return corrupt(argv[2]);
  if (cmd == "truncate" && argc == 5) {
    std::vector<uint8_t> all;
    if (!read_file(argv[2], all)) return die("cannot read the source");
    const size_t n = static_cast<size_t>(std::atoll(argv[4]));
    return write_file(argv[3], all.data(), n < all.size() ? n : all.size()) ? 0 : die("cannot write");
  }
  if (cmd == "writehex" && argc == 4) {
    const std::string hex = argv[3];
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
      bytes.push_back(static_cast<uint8_t>(std::strtoul(hex.substr(i, 2).c_str(), nullptr, 16)));
    return write_file(argv[2], bytes.data(), bytes.size()) ? 0 : die("cannot write");
  }
  if (cmd == "prepend" && argc == 5) {
    std::vector<uint8_t> all;
    if (!read_file(argv[2], all)) return die("cannot read the source");
    std::vector<uint8_t> out(static_cast<size_t>(std::atoll(argv[4])), 0xA5);
    out.insert(out.end(), all.begin(), all.end());
    return write_file(argv[3], out.data(), out.size()) ? 0 : die("cannot write");
  }
  if (cmd == "arraycreate" && argc == 11) return arraycreate(argv + 2);
  if (cmd == "flashimage" && argc == 6) return flashimage(argv[2], argv[3], std::atoi(argv[4]), argv[5]);
  if (cmd == "rss" && argc >= 4) return rss(std::atol(argv[2]), argv + 3);
  if (cmd == "rewrite" && argc == 4) return rewrite(argv[2], std::atoi(argv[3]));
  if (cmd == "blockdiff" && argc == 8) return blockdiff(argv[2], argv[3], std::atoll(argv[4]), argv[5], argv[6], argv[7]);
  return die("bad arguments (see the comment at the top of testaid.cpp)");
}
