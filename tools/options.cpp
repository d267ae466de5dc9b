// SPDX-License-Identifier: BSD-3-Clause
#include "options.hpp"

#include <cstring>
#include <limits>

#include "cli.hpp"
#include "tessera/dtype.hpp"

namespace tessera::cli {

namespace {

constexpr char kCodecNames[] = "blosclz, lz4, lz4hc, zlib, zstd, ndlz:4, ndlz:8, zfp_acc, zfp_prec, zfp_rate";

bool codec_is_zfp(codec c) noexcept { return c == codec::zfp_acc || c == codec::zfp_prec || c == codec::zfp_rate; }

int filters_parse(const char* cmd, const char* text, array_params& p) {
  // Given filters fill the last slots in order (the reference's default pipeline has shuffle in the last).
  uint8_t ids[kChunkMaxFilters] = {};
  uint8_t metas[kChunkMaxFilters] = {};
  int n = 0;
  bool none = false;
  const char* s = text;
  if (s[0] == '\0') return fail(kExitUsage, cmd, "--filters: empty list (use 'none' for no filter)");
  for (int idx = 0;; ++idx) {
    const char* comma = std::strchr(s, ',');
    const size_t len = comma ? static_cast<size_t>(comma - s) : std::strlen(s);
    char item[40];
    if (len == 0 || len >= sizeof item) return fail(kExitUsage, cmd, "--filters: filter %d: empty or too long", idx);
    std::memcpy(item, s, len);
    item[len] = '\0';
    uint8_t id = 0;
    uint8_t meta = 0;
    if (std::strcmp(item, "none") == 0) {
      none = true;
    } else if (std::strcmp(item, "shuffle") == 0) {
      id = static_cast<uint8_t>(filter_id::shuffle);
    } else if (std::strcmp(item, "bitshuffle") == 0) {
      id = static_cast<uint8_t>(filter_id::bitshuffle);
    } else if (std::strcmp(item, "delta") == 0) {
      id = static_cast<uint8_t>(filter_id::delta);
    } else if (std::strcmp(item, "bytedelta") == 0) {
      id = static_cast<uint8_t>(filter_id::bytedelta);  // meta: the typesize, set once it is known
    } else if (std::strncmp(item, "ndcell:", 7) == 0 || std::strncmp(item, "ndmean:", 7) == 0) {
      // c-blosc2's n-d filters, the cell edge as meta (NDMEAN reads it as a signed byte).
      const bool mean = item[2] == 'm';
      int64_t edge = 0;
      if (!parse_int(item + 7, 1, mean ? 127 : 255, edge))
        return fail(kExitUsage, cmd, "--filters: filter %d: %.6s:EDGE needs EDGE in [1, %d], got '%s'", idx, item,
                    mean ? 127 : 255, item + 7);
      id = static_cast<uint8_t>(mean ? filter_id::ndmean : filter_id::ndcell);
      meta = static_cast<uint8_t>(edge);
    } else if (std::strncmp(item, "trunc:", 6) == 0) {
      int64_t bits = 0;
      if (!parse_int(item + 6, 1, 64, bits))
        return fail(kExitUsage, cmd, "--filters: filter %d: trunc:BITS needs BITS in [1, 64], got '%s'", idx,
                    item + 6);
      id = static_cast<uint8_t>(filter_id::trunc_prec);
      meta = static_cast<uint8_t>(bits);
    } else {
      return fail(kExitUsage, cmd,
                  "--filters: filter %d: unknown '%s' (shuffle, bitshuffle, delta, trunc:BITS, bytedelta, ndcell:EDGE, "
                  "ndmean:EDGE, none)", idx,
                  item);
    }
    if (id != 0) {
      if (n == kChunkMaxFilters) return fail(kExitUsage, cmd, "--filters: more than %d filters", kChunkMaxFilters);
      ids[n] = id;
      metas[n] = meta;
      ++n;
    }
    if (!comma) break;
    s = comma + 1;
  }
  if (none && n > 0) return fail(kExitUsage, cmd, "--filters: 'none' mixed with other filters");
  for (int i = 0; i < kChunkMaxFilters; ++i) {
    p.filters[i] = 0;
    p.filters_meta[i] = 0;
  }
  for (int i = 0; i < n; ++i) {
    p.filters[kChunkMaxFilters - n + i] = ids[i];
    p.filters_meta[kChunkMaxFilters - n + i] = metas[i];
  }
  return 0;
}

}  // namespace

int codec_finish(const char* cmd, const write_options& o, array_params& p) noexcept {
  if (o.codec_meta != nullptr) {
    if (!o.codec_set) return fail(kExitUsage, cmd, "--codec-meta needs --codec (the codec it is the meta of)");
    int64_t lo = 0, hi = 255;
    const char* what = "a byte, stored in the chunks as it is";
    switch (p.compressor) {
      case codec::ndlz: lo = 4; hi = 8; what = "the cell edge, 4 or 8"; break;
      case codec::zfp_acc: lo = -128; hi = 127; what = "the tolerance's exponent: 10^N, -128..127"; break;
      case codec::zfp_prec: lo = 1; hi = 64; what = "bit planes kept (N + 2 * ndim + 3, at most 64), 1..64"; break;
      case codec::zfp_rate: lo = 1; hi = 100; what = "the percent of the items' bits kept, 1..100"; break;
      default: break;
    }
    int64_t m = 0;
    if (!parse_int(o.codec_meta, lo, hi, m) || (p.compressor == codec::ndlz && m != 4 && m != 8))
      return fail(kExitUsage, cmd, "--codec-meta: '%s' is not a meta of %s (%s)", o.codec_meta, codec_name(p.compressor), what);
    p.compcode_meta = static_cast<uint8_t>(m & 0xff);  // zfp_acc: the signed byte
  } else if (o.codec_set && codec_is_zfp(p.compressor)) {
    return fail(kExitUsage, cmd, "--codec %s needs --codec-meta N (%s)", codec_name(p.compressor),
                p.compressor == codec::zfp_acc    ? "the tolerance is 10^N, N in -128..127"
                : p.compressor == codec::zfp_prec ? "N + 2 * ndim + 3 bit planes, N in 1..64"
                                                  : "N percent of the items' bits, N in 1..100");
  } else if (o.codec_set && p.compressor == codec::ndlz && p.compcode_meta == 0) {
    return fail(kExitUsage, cmd, "--codec ndlz needs its cell edge: ndlz:4, ndlz:8 or --codec-meta 4|8");
  }
  if (!o.codec_set || !codec_is_zfp(p.compressor)) return 0;
  const char* name = codec_name(p.compressor);
  const dtype_info di = dtype_parse(p.dtype);
  if (di.kind != 'f' || (p.itemsize != 4 && p.itemsize != 8))
    return fail(kExitUsage, cmd, "--codec %s: ZFP takes float32 or float64 items (<f4, <f8), not %.*s", name,
                static_cast<int>(p.dtype.size()), p.dtype.data());
  if (p.ndim < 1 || p.ndim > 4)
    return fail(kExitUsage, cmd, "--codec %s: ZFP takes arrays of 1 to 4 dimensions, not %d", name, p.ndim);
  for (int d = 0; d < p.ndim; ++d)
    if (p.blockshape[d] != 0 && p.blockshape[d] < 4)
      return fail(kExitUsage, cmd, "--codec %s: ZFP takes blocks of at least 4 items each way (--blocks: %d in dimension %d)",
                  name, p.blockshape[d], d);
  for (int i = 0; i < kChunkMaxFilters; ++i) {
    if (!o.filters_set) {
      p.filters[i] = p.filters_meta[i] = 0;  // ZFP reads the items as numbers: no default shuffle
    } else if (p.filters[i] == static_cast<uint8_t>(filter_id::shuffle) ||
               p.filters[i] == static_cast<uint8_t>(filter_id::bitshuffle)) {
      return fail(kExitUsage, cmd, "--codec %s: ZFP takes no shuffle or bitshuffle filter (it reads the items as numbers)",
                  name);
    }
  }
  return 0;
}

int write_option_take(const char* cmd, int argc, char** argv, int& i, array_params& p, write_options& o) noexcept {
  const char* v = nullptr;
  if (option_take(argc, argv, i, "--chunks", v)) {
    if (!v) return fail(kExitUsage, cmd, "--chunks needs a value (N,...)");
    o.chunks = v;
  } else if (option_take(argc, argv, i, "--blocks", v)) {
    if (!v) return fail(kExitUsage, cmd, "--blocks needs a value (N,...)");
    o.blocks = v;
  } else if (option_take(argc, argv, i, "--codec-meta", v)) {
    if (!v) return fail(kExitUsage, cmd, "--codec-meta needs a value (N: the codec's meta, see tessera help create)");
    o.codec_meta = v;
  } else if (option_take(argc, argv, i, "--codec", v)) {
    if (!v) return fail(kExitUsage, cmd, "--codec needs a value (%s)", kCodecNames);
    const codec all[] = {codec::blosclz, codec::lz4,     codec::lz4hc,    codec::zlib,
                         codec::zstd,    codec::ndlz,    codec::zfp_acc,  codec::zfp_prec,
                         codec::zfp_rate};
    bool found = false;
    p.compcode_meta = 0;
    for (codec c : all)
      if (std::strcmp(v, codec_name(c)) == 0) {
        p.compressor = c;
        found = true;
      }
    if (std::strcmp(v, "ndlz:4") == 0 || std::strcmp(v, "ndlz:8") == 0) {  // the cell edge is the codec's meta
      p.compressor = codec::ndlz;
      p.compcode_meta = static_cast<uint8_t>(v[5] - '0');
      found = true;
    }
    if (!found) return fail(kExitUsage, cmd, "--codec: unknown '%s' (%s)", v, kCodecNames);
    if (!codec_available(p.compressor))
      return fail(kExitUsage, cmd, "--codec: %s is not in this build of tessera%s", v,
                  codec_is_zfp(p.compressor) ? " (ZFP needs libzfp when tessera is built: hosts only)" : "");
    o.codec_set = true;
  } else if (option_take(argc, argv, i, "--clevel", v)) {
    int64_t c = 0;
    if (!v || !parse_int(v, 0, 9, c)) return fail(kExitUsage, cmd, "--clevel: '%s' is not a level in [0, 9]", v ? v : "");
    p.clevel = static_cast<int>(c);
    o.clevel_set = true;
  } else if (option_take(argc, argv, i, "--filters", v)) {
    if (!v) return fail(kExitUsage, cmd, "--filters needs a value (e.g. shuffle or delta,shuffle)");
    if (int rc = filters_parse(cmd, v, p); rc != 0) return rc;
    o.filters_set = true;
  } else if (option_take(argc, argv, i, "--split", v)) {
    if (!v) return fail(kExitUsage, cmd, "--split needs a value (always, never, auto)");
    if (std::strcmp(v, "always") == 0) p.split = split_mode::always;
    else if (std::strcmp(v, "never") == 0) p.split = split_mode::never;
    else if (std::strcmp(v, "auto") == 0) p.split = split_mode::automatic;
    else return fail(kExitUsage, cmd, "--split: '%s' is none of always, never, auto", v);
    o.split_set = true;
  } else if (std::strcmp(argv[i], "--dict") == 0) {
    p.use_dict = true;  // LZ4, LZ4HC and Zstd: array_create refuses it with another codec
    o.dict_set = true;
  } else {
    return -1;
  }
  return 0;
}

int run_option_take(const char* cmd, int argc, char** argv, int& i, run_options& o) noexcept {
  const char* v = nullptr;
  if (option_take(argc, argv, i, "--threads", v)) {
    if (!v || !parse_int(v, 1, kThreadPoolMaxWorkers, o.threads))
      return fail(kExitUsage, cmd, "--threads: '%s' is not a count in [1, %u]", v ? v : "", kThreadPoolMaxWorkers);
    return 0;
  }
  if (std::strcmp(argv[i], "--quiet") == 0 || std::strcmp(argv[i], "-q") == 0) {
    o.quiet = true;
    return 0;
  }
  return -1;
}

uint32_t run_threads(const run_options& o) noexcept {
  if (o.threads > 0) return static_cast<uint32_t>(o.threads);
  const uint32_t n = cpu_count();
  return n > kThreadPoolMaxWorkers ? kThreadPoolMaxWorkers : n;
}

int run_executor(const char* cmd, uint32_t threads, thread_pool& pool, executor& exec) noexcept {
  exec = executor_serial();
  if (threads <= 1) return 0;
  if (auto e = thread_pool_init(pool, threads); !e.ok()) return fail_error(cmd, "--threads", e);
  exec = thread_pool_executor(pool);
  return 0;
}

int run_workers_start(const char* cmd, const run_options& o, run_workers& w) noexcept {
  w.threads = run_threads(o);
  return run_executor(cmd, w.threads, w.pool, w.exec);
}

int shapes_apply(const char* cmd, const write_options& o, array_params& p) noexcept {
  const int32_t i32max = std::numeric_limits<int32_t>::max();
  const char* opts[2] = {"--chunks", "--blocks"};
  const char* vals[2] = {o.chunks, o.blocks};
  int32_t* out[2] = {p.chunkshape, p.blockshape};
  for (int k = 0; k < 2; ++k) {
    if (vals[k] == nullptr) continue;
    int64_t v[kMaxDims] = {};
    int n = 0;
    char what[200];
    if (!parse_int_list(vals[k], 1, i32max, kMaxDims, v, n, what, sizeof what))
      return fail(kExitUsage, cmd, "%s: %s", opts[k], what);
    if (n != p.ndim) return fail(kExitUsage, cmd, "%s: %d values, the shape has %d dimensions", opts[k], n, p.ndim);
    for (int d = 0; d < n; ++d) out[k][d] = static_cast<int32_t>(v[d]);
  }
  if (o.blocks != nullptr && o.chunks != nullptr)
    for (int d = 0; d < p.ndim; ++d)
      if (p.blockshape[d] > p.chunkshape[d])
        return fail(kExitUsage, cmd, "--blocks: dimension %d: block %d larger than the chunk %d", d, p.blockshape[d],
                    p.chunkshape[d]);
  return 0;
}

void filters_finish(array_params& p) noexcept {
  for (int i = 0; i < kChunkMaxFilters; ++i)
    if (p.filters[i] == static_cast<uint8_t>(filter_id::bytedelta)) p.filters_meta[i] = static_cast<uint8_t>(p.itemsize);
}

}  // namespace tessera::cli
