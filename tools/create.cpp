// tessera create OUT --dtype DT --shape N,... [...] --input RAW|-: a new array from C-order bytes.
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cli.hpp"
#include "tessera/dtype.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kCmd = "create";

int filters_parse(const char* text, array_params& p) {
  // Given filters fill the last slots in order (the reference's default pipeline has shuffle in the last).
  uint8_t ids[kChunkMaxFilters] = {};
  uint8_t metas[kChunkMaxFilters] = {};
  int n = 0;
  bool none = false;
  const char* s = text;
  if (s[0] == '\0') return fail(kExitUsage, kCmd, "--filters: empty list (use 'none' for no filter)");
  for (int idx = 0;; ++idx) {
    const char* comma = std::strchr(s, ',');
    const size_t len = comma ? static_cast<size_t>(comma - s) : std::strlen(s);
    char item[40];
    if (len == 0 || len >= sizeof item)
      return fail(kExitUsage, kCmd, "--filters: filter %d: empty or too long", idx);
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
    } else if (std::strncmp(item, "trunc:", 6) == 0) {
      int64_t bits = 0;
      if (!parse_int(item + 6, 1, 64, bits))
        return fail(kExitUsage, kCmd, "--filters: filter %d: trunc:BITS needs BITS in [1, 64], got '%s'", idx,
                    item + 6);
      id = static_cast<uint8_t>(filter_id::trunc_prec);
      meta = static_cast<uint8_t>(bits);
    } else {
      return fail(kExitUsage, kCmd,
                  "--filters: filter %d: unknown '%s' (shuffle, bitshuffle, delta, trunc:BITS, bytedelta, none)", idx,
                  item);
    }
    if (id != 0) {
      if (n == kChunkMaxFilters) return fail(kExitUsage, kCmd, "--filters: more than %d filters", kChunkMaxFilters);
      ids[n] = id;
      metas[n] = meta;
      ++n;
    }
    if (!comma) break;
    s = comma + 1;
  }
  if (none && n > 0) return fail(kExitUsage, kCmd, "--filters: 'none' mixed with other filters");
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

int shape_parse(const char* opt, const char* text, int64_t lo, int64_t hi, int64_t* out, int& n) {
  char what[200];
  if (!parse_int_list(text, lo, hi, kMaxDims, out, n, what, sizeof what))
    return fail(kExitUsage, kCmd, "%s: %s", opt, what);
  return 0;
}

// Reads exactly `size` bytes of `in` into buf; reports a shorter or longer input.
int input_read(const char* name, FILE* in, uint8_t* buf, size_t size) {
  size_t got = 0;
  while (got < size) {
    const size_t n = std::fread(buf + got, 1, size - got, in);
    if (n == 0) break;
    got += n;
  }
  if (std::ferror(in)) return fail(kExitFailure, kCmd, "--input: %s: reading failed: %s", name, std::strerror(errno));
  if (got < size)
    return fail(kExitFailure, kCmd, "--input: %s: %zu bytes, the array needs %zu (prod(shape) * itemsize)", name, got,
                size);
  uint8_t extra;
  if (std::fread(&extra, 1, 1, in) == 1)
    return fail(kExitFailure, kCmd, "--input: %s: more than the %zu bytes the array needs (prod(shape) * itemsize)",
                name, size);
  return 0;
}

}  // namespace

int cmd_create(int argc, char** argv) noexcept {
  const char* out_path = nullptr;
  const char* dtype = nullptr;
  const char* shape = nullptr;
  const char* chunks = nullptr;
  const char* blocks = nullptr;
  const char* input = nullptr;
  bool sparse = false;
  array_params p;
  int64_t threads = 1;
  for (int i = 0; i < argc; ++i) {
    const char* v = nullptr;
    const char* arg = argv[i];
    if (option_take(argc, argv, i, "--dtype", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--dtype needs a value (e.g. <f4, |u1, <i8)");
      dtype = v;
    } else if (option_take(argc, argv, i, "--shape", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--shape needs a value (N,...)");
      shape = v;
    } else if (option_take(argc, argv, i, "--chunks", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--chunks needs a value (N,...)");
      chunks = v;
    } else if (option_take(argc, argv, i, "--blocks", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--blocks needs a value (N,...)");
      blocks = v;
    } else if (option_take(argc, argv, i, "--codec", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--codec needs a value (blosclz, lz4, lz4hc, zlib, zstd)");
      const codec all[] = {codec::blosclz, codec::lz4, codec::lz4hc, codec::zlib, codec::zstd};
      bool found = false;
      for (codec c : all)
        if (std::strcmp(v, codec_name(c)) == 0) {
          p.compressor = c;
          found = true;
        }
      if (!found) return fail(kExitUsage, kCmd, "--codec: unknown '%s' (blosclz, lz4, lz4hc, zlib, zstd)", v);
      if (!codec_available(p.compressor))
        return fail(kExitUsage, kCmd, "--codec: %s is not in this build of tessera", v);
    } else if (option_take(argc, argv, i, "--clevel", v)) {
      int64_t c = 0;
      if (!v || !parse_int(v, 0, 9, c))
        return fail(kExitUsage, kCmd, "--clevel: '%s' is not a level in [0, 9]", v ? v : "");
      p.clevel = static_cast<int>(c);
    } else if (option_take(argc, argv, i, "--filters", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--filters needs a value (e.g. shuffle or delta,shuffle)");
      if (int rc = filters_parse(v, p); rc != 0) return rc;
    } else if (option_take(argc, argv, i, "--split", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--split needs a value (always, never, auto)");
      if (std::strcmp(v, "always") == 0) p.split = split_mode::always;
      else if (std::strcmp(v, "never") == 0) p.split = split_mode::never;
      else if (std::strcmp(v, "auto") == 0) p.split = split_mode::automatic;
      else return fail(kExitUsage, kCmd, "--split: '%s' is none of always, never, auto", v);
    } else if (option_take(argc, argv, i, "--threads", v)) {
      if (!v || !parse_int(v, 1, kThreadPoolMaxWorkers, threads))
        return fail(kExitUsage, kCmd, "--threads: '%s' is not a count in [1, %u]", v ? v : "", kThreadPoolMaxWorkers);
    } else if (std::strcmp(arg, "--sparse") == 0) {
      sparse = true;
    } else if (option_take(argc, argv, i, "--input", v)) {
      if (!v || v[0] == '\0') return fail(kExitUsage, kCmd, "--input needs a file name or - (stdin)");
      input = v;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return fail(kExitUsage, kCmd, "unknown option '%s'", arg);
    } else if (out_path == nullptr) {
      out_path = arg;
    } else {
      return fail(kExitUsage, kCmd, "unexpected argument '%s' (one OUT only)", arg);
    }
  }
  if (out_path == nullptr || out_path[0] == '\0') return fail(kExitUsage, kCmd, "no OUT given");
  if (dtype == nullptr) return fail(kExitUsage, kCmd, "--dtype is required (e.g. <f4, |u1, <i8)");
  if (shape == nullptr) return fail(kExitUsage, kCmd, "--shape is required (N,...; '' for a scalar)");
  if (input == nullptr) return fail(kExitUsage, kCmd, "--input is required (a file of C-order bytes, or -)");

  const dtype_info di = dtype_parse(span<const char>(dtype, std::strlen(dtype)));
  if (!di.known) return fail(kExitUsage, kCmd, "--dtype: '%s' is not a NumPy dtype string (e.g. <f4, |u1, <i8)", dtype);
  if (di.itemsize < 1 || di.itemsize > static_cast<uint32_t>(kArrayMaxItemsize))
    return fail(kExitUsage, kCmd, "--dtype: '%s': items of %u bytes (at most %d)", dtype, di.itemsize,
                kArrayMaxItemsize);
  p.dtype = span<const char>(dtype, std::strlen(dtype));
  p.itemsize = static_cast<int32_t>(di.itemsize);
  for (int i = 0; i < kChunkMaxFilters; ++i)
    if (p.filters[i] == static_cast<uint8_t>(filter_id::bytedelta)) p.filters_meta[i] = static_cast<uint8_t>(p.itemsize);

  int64_t v[kMaxDims] = {};
  int n = 0;
  if (int rc = shape_parse("--shape", shape, 0, std::numeric_limits<int64_t>::max(), v, n); rc != 0) return rc;
  p.ndim = n;
  for (int d = 0; d < n; ++d) p.shape[d] = v[d];
  const int32_t i32max = std::numeric_limits<int32_t>::max();
  const char* part_opts[2] = {"--chunks", "--blocks"};
  const char* part_vals[2] = {chunks, blocks};
  int32_t* part_out[2] = {p.chunkshape, p.blockshape};
  for (int k = 0; k < 2; ++k) {
    if (part_vals[k] == nullptr) continue;
    if (int rc = shape_parse(part_opts[k], part_vals[k], 1, i32max, v, n); rc != 0) return rc;
    if (n != p.ndim)
      return fail(kExitUsage, kCmd, "%s: %d values, the shape has %d dimensions", part_opts[k], n, p.ndim);
    for (int d = 0; d < n; ++d) part_out[k][d] = static_cast<int32_t>(v[d]);
  }
  if (blocks != nullptr && chunks != nullptr)
    for (int d = 0; d < p.ndim; ++d)
      if (p.blockshape[d] > p.chunkshape[d])
        return fail(kExitUsage, kCmd, "--blocks: dimension %d: block %d larger than the chunk %d", d, p.blockshape[d],
                    p.chunkshape[d]);

  // The input: exactly prod(shape) * itemsize bytes.
  uint64_t nbytes = static_cast<uint64_t>(p.itemsize);
  for (int d = 0; d < p.ndim; ++d) {
    const uint64_t ext = static_cast<uint64_t>(p.shape[d]);
    if (ext != 0 && nbytes > SIZE_MAX / ext) return fail(kExitUsage, kCmd, "--shape: the array is too large");
    nbytes *= ext;
  }
  owned_array<uint8_t> data;
  if (nbytes > 0)
    if (auto e = data.allocate(tool_allocator(), static_cast<size_t>(nbytes)); !e.ok())
      return fail_error(kCmd, "the input's buffer", e);
  {
    const bool from_stdin = std::strcmp(input, "-") == 0;
    FILE* in = from_stdin ? stdin : std::fopen(input, "rb");
    if (in == nullptr) return fail(kExitFailure, kCmd, "--input: %s: %s", input, std::strerror(errno));
    struct stat sb;
    if (!from_stdin && ::fstat(fileno(in), &sb) == 0 && S_ISDIR(sb.st_mode)) {
      std::fclose(in);
      return fail(kExitFailure, kCmd, "--input: %s: is a directory", input);
    }
    const int rc = input_read(from_stdin ? "stdin" : input, in, data.data(), static_cast<size_t>(nbytes));
    if (!from_stdin) std::fclose(in);
    if (rc != 0) return rc;
  }

  thread_pool pool;
  if (threads > 1) {
    if (auto e = thread_pool_init(pool, static_cast<uint32_t>(threads)); !e.ok())
      return fail_error(kCmd, "--threads", e);
    p.exec = thread_pool_executor(pool);
  }

  array a;
  status st;
  if (sparse) {
    auto d = posix_directory_open(out_path, true);
    if (!d.ok()) return fail_error(kCmd, out_path, d.err());
    posix_directory dir = *d;
    const storage_directory sd = posix_directory_interface(dir);
    st = array_create(a, array_target_sparse(sd), tool_allocator(), p,
                      array_fill_buffer(bytes_view(data.data(), static_cast<size_t>(nbytes))));
    (void)array_close(a);
    const status sc = posix_directory_close(dir);
    if (st.ok()) st = sc;
  } else {
    struct stat sb;
    if (::stat(out_path, &sb) == 0 && S_ISDIR(sb.st_mode))
      return fail(kExitFailure, kCmd, "%s: is a directory (a cframe is a file; use --sparse for a directory)",
                  out_path);
    auto f = posix_file_open(out_path, posix_open::replace);
    if (!f.ok()) return fail_error(kCmd, out_path, f.err());
    posix_file file = *f;
    const storage s = posix_file_storage(file);
    // Not durable: a fresh file has no earlier frame to protect, and the layout is then the reference's own.
    st = array_create(a, array_target_contiguous(s, false), tool_allocator(), p,
                      array_fill_buffer(bytes_view(data.data(), static_cast<size_t>(nbytes))));
    (void)array_close(a);
    const status sc = posix_file_close(file);
    if (st.ok()) st = sc;
    if (!st.ok()) (void)posix_file_remove(out_path);  // no half-written array left behind
  }
  if (!st.ok()) return fail_error(kCmd, out_path, st);
  return 0;
}

}  // namespace tessera::cli
