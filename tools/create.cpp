// SPDX-License-Identifier: BSD-3-Clause
// tessera create OUT (--dtype DT --shape N,... | a .npy input) [...] --input FILE|-: a new array from C-order
// items, streamed: the input is read one slab of whole chunks at a time (a regular file by position, so a slab
// can be a part of a row of chunks; a pipe or stdin in order, one row of chunks at a time), its chunks encoded on
// the thread pool and appended in order. The array goes to a temporary name, renamed at the end.
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cli.hpp"
#include "npy.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "target.hpp"
#include "tessera/dtype.hpp"
#include "writer.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kCmd = "create";

struct input_source {
  const char* name = "";
  int fd = -1;
  bool own = false;
  bool seekable = false;  // a regular file read by position
  uint64_t base = 0;      // where the items start
  uint64_t nbytes = 0;    // the items the array needs
  uint64_t got = 0;       // read so far (a stream)
  ~input_source() {
    if (own && fd >= 0) ::close(fd);
  }
};

bool pread_all(int fd, uint8_t* buf, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, buf + got, n - got, static_cast<off_t>(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

int short_input(const input_source& in, uint64_t got) {
  return fail(kExitFailure, kCmd, "--input: %s: %" PRIu64 " bytes, the array needs %" PRIu64
              " (prod(shape) * itemsize)", in.name, got, in.nbytes);
}
int long_input(const input_source& in) {
  return fail(kExitFailure, kCmd, "--input: %s: more than the %" PRIu64 " bytes the array needs (prod(shape) * itemsize)",
              in.name, in.nbytes);
}

// Slab [start, stop) of the plan into buf (C order).
int input_read_slab(input_source& in, const slab_plan& plan, const int64_t* start, const int64_t* stop, uint8_t* buf,
                    size_t bytes) {
  const int64_t itemsize = plan.itemsize;
  const int level = plan.level;
  if (!in.seekable) {  // in order: the slab is the next `bytes` of the stream
    size_t got = 0;
    while (got < bytes) {
      const ssize_t r = ::read(in.fd, buf + got, bytes - got);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return fail(kExitFailure, kCmd, "--input: %s: reading failed: %s", in.name, std::strerror(errno));
      if (r == 0) return short_input(in, in.got + got);
      got += static_cast<size_t>(r);
    }
    in.got += got;
    return 0;
  }
  // By position: one contiguous run per index of dimensions 0..level-1 inside the slab.
  int64_t inner = itemsize;  // bytes of one step along dimension `level`
  for (int d = level + 1; d < plan.ndim; ++d) inner *= plan.shape[d];
  const size_t run = level < 0 ? bytes : static_cast<size_t>((stop[level] - start[level]) * inner);
  int64_t idx[kMaxDims] = {};
  for (int d = 0; d < level; ++d) idx[d] = start[d];
  for (size_t done = 0; done < bytes; done += run) {
    int64_t lin = 0;  // the run's first item, as a linear index of the whole array
    for (int d = 0; d < plan.ndim; ++d) lin = lin * plan.shape[d] + (d < level ? idx[d] : d == level ? start[d] : 0);
    const uint64_t off = in.base + static_cast<uint64_t>(lin) * static_cast<uint64_t>(itemsize);
    if (!pread_all(in.fd, buf + done, run, off))
      return fail(kExitFailure, kCmd, "--input: %s: reading failed: %s", in.name,
                  errno ? std::strerror(errno) : "the file got shorter");
    for (int d = level - 1; d >= 0; --d) {  // next index, C order
      if (++idx[d] < stop[d]) break;
      idx[d] = start[d];
    }
  }
  return 0;
}

}  // namespace

int cmd_create(int argc, char** argv) noexcept {
  const char* out_path = nullptr;
  const char* dtype = nullptr;
  const char* shape = nullptr;
  const char* input = nullptr;
  const char* format = nullptr;
  bool sparse = false;
  array_params p;
  write_options wo;
  run_options ro;
  for (int i = 0; i < argc; ++i) {
    const char* v = nullptr;
    const char* arg = argv[i];
    if (int rc = write_option_take(kCmd, argc, argv, i, p, wo); rc >= 0) {
      if (rc != 0) return rc;
    } else if (int rc2 = run_option_take(kCmd, argc, argv, i, ro); rc2 >= 0) {
      if (rc2 != 0) return rc2;
    } else if (option_take(argc, argv, i, "--dtype", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--dtype needs a value (e.g. <f4, |u1, <i8)");
      dtype = v;
    } else if (option_take(argc, argv, i, "--shape", v)) {
      if (!v) return fail(kExitUsage, kCmd, "--shape needs a value (N,...)");
      shape = v;
    } else if (option_take(argc, argv, i, "--format", v)) {
      if (!v || (std::strcmp(v, "raw") != 0 && std::strcmp(v, "npy") != 0))
        return fail(kExitUsage, kCmd, "--format: '%s' is neither raw nor npy", v ? v : "");
      format = v;
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
  if (input == nullptr) return fail(kExitUsage, kCmd, "--input is required (a file of C-order bytes or a .npy file, or -)");
  // .npy: named so, or --format npy (e.g. for stdin).
  const size_t ilen = std::strlen(input);
  const bool npy = format != nullptr ? std::strcmp(format, "npy") == 0
                                     : ilen > 4 && strcasecmp(input + ilen - 4, ".npy") == 0;
  if (npy && (dtype != nullptr || shape != nullptr))
    return fail(kExitUsage, kCmd, "%s: a .npy input gives the dtype and shape itself", dtype ? "--dtype" : "--shape");
  if (!npy && dtype == nullptr) return fail(kExitUsage, kCmd, "--dtype is required (e.g. <f4, |u1, <i8)");
  if (!npy && shape == nullptr) return fail(kExitUsage, kCmd, "--shape is required (N,...; '' for a scalar)");

  input_source in;
  const bool from_stdin = std::strcmp(input, "-") == 0;
  in.name = from_stdin ? "stdin" : input;
  if (from_stdin) {
    in.fd = 0;
  } else {
    in.fd = ::open(input, O_RDONLY | O_CLOEXEC);
    if (in.fd < 0) return fail(kExitFailure, kCmd, "--input: %s: %s", input, std::strerror(errno));
    in.own = true;
  }
  struct stat sb;
  if (::fstat(in.fd, &sb) != 0) return fail(kExitFailure, kCmd, "--input: %s: %s", in.name, std::strerror(errno));
  if (S_ISDIR(sb.st_mode)) return fail(kExitFailure, kCmd, "--input: %s: is a directory", in.name);
  in.seekable = !from_stdin && S_ISREG(sb.st_mode);

  npy_header nh;
  if (npy) {
    char label[PATH_MAX + 16];
    std::snprintf(label, sizeof label, "--input: %s", in.name);
    if (int rc = npy_header_read(kCmd, label, in.fd, nh); rc != 0) return rc;
    in.base = nh.data_offset;
    p.dtype = span<const char>(nh.descr, nh.descr_len);
    p.itemsize = static_cast<int32_t>(nh.itemsize);
    p.ndim = nh.ndim;
    for (int d = 0; d < nh.ndim; ++d) p.shape[d] = nh.shape[d];
    if (p.itemsize > kArrayMaxItemsize)
      return fail(kExitFailure, kCmd, "--input: %s: items of %d bytes (at most %d)", in.name, p.itemsize, kArrayMaxItemsize);
  } else {
    const dtype_info di = dtype_parse(span<const char>(dtype, std::strlen(dtype)));
    if (!di.known) return fail(kExitUsage, kCmd, "--dtype: '%s' is not a NumPy dtype string (e.g. <f4, |u1, <i8)", dtype);
    if (di.itemsize < 1 || di.itemsize > static_cast<uint32_t>(kArrayMaxItemsize))
      return fail(kExitUsage, kCmd, "--dtype: '%s': items of %u bytes (at most %d)", dtype, di.itemsize,
                  kArrayMaxItemsize);
    p.dtype = span<const char>(dtype, std::strlen(dtype));
    p.itemsize = static_cast<int32_t>(di.itemsize);
    int64_t v[kMaxDims] = {};
    int n = 0;
    char what[200];
    if (!parse_int_list(shape, 0, std::numeric_limits<int64_t>::max(), kMaxDims, v, n, what, sizeof what))
      return fail(kExitUsage, kCmd, "--shape: %s", what);
    p.ndim = n;
    for (int d = 0; d < n; ++d) p.shape[d] = v[d];
  }
  filters_finish(p);
  if (int rc = shapes_apply(kCmd, wo, p); rc != 0) return rc;
  if (int rc = codec_finish(kCmd, wo, p); rc != 0) return rc;

  // The input: exactly prod(shape) * itemsize bytes.
  uint64_t nbytes = static_cast<uint64_t>(p.itemsize);
  for (int d = 0; d < p.ndim; ++d) {
    const uint64_t ext = static_cast<uint64_t>(p.shape[d]);
    if (ext != 0 && nbytes > (uint64_t{1} << 62) / ext) return fail(kExitUsage, kCmd, "--shape: the array is too large");
    nbytes *= ext;
  }
  in.nbytes = nbytes;
  if (in.seekable) {
    const uint64_t size = static_cast<uint64_t>(sb.st_size) - (static_cast<uint64_t>(sb.st_size) >= in.base ? in.base : 0);
    if (size < nbytes) return short_input(in, size);
    if (size > nbytes) return long_input(in);
  }

  run_workers rw;
  if (int rc = run_workers_start(kCmd, ro, rw); rc != 0) return rc;

  output_target t;
  writer_handle w;
  if (int rc = writer_start(kCmd, t, out_path, sparse, p, rw.threads, w); rc != 0) return rc;

  // Slabs: a few chunks per worker (a stream: whole rows of chunks, the order it arrives in).
  slab_plan plan;
  owned_array<uint8_t> slab;
  if (int rc = slabs_prepare(kCmd, out_path, p, rw.threads, in.seekable ? kMaxDims : 0, plan, slab); rc != 0) return rc;
  const slab_fill fill = [](void* c, const slab_plan& pl, const int64_t* start, const int64_t* stop,
                            bytes_mut items) noexcept {
    return input_read_slab(*static_cast<input_source*>(c), pl, start, stop, items.data(), items.size());
  };
  if (int rc = writer_put_slabs(kCmd, *w, rw.exec, plan, bytes_mut(slab.data(), slab.size()), nbytes, ro.quiet, fill, &in);
      rc != 0)
    return rc;
  if (!in.seekable) {  // a stream must end here
    uint8_t extra;
    ssize_t r;
    do r = ::read(in.fd, &extra, 1);
    while (r < 0 && errno == EINTR);
    if (r > 0) return long_input(in);
    if (r < 0) return fail(kExitFailure, kCmd, "--input: %s: reading failed: %s", in.name, std::strerror(errno));
  }
  if (int rc = writer_finish(*w); rc != 0) return rc;
  return target_commit(kCmd, t);
}

}  // namespace tessera::cli
