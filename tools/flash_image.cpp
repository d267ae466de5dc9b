// SPDX-License-Identifier: BSD-3-Clause
#include "flash_image.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cli.hpp"
#include "tessera/chunk.hpp"
#include "tessera/dtype.hpp"
#include "tessera/frame.hpp"
#include "tessera/port/flash_frame.hpp"
#include "tessera/port/memory_storage.hpp"

namespace tessera::cli {

flash_geometry g_flash;

namespace {

// A size: decimal or 0x hexadecimal, with an optional K, M or G (binary multiples).
bool size_parse(const char* text, size_t len, uint64_t& out) noexcept {
  char buf[32];
  if (len == 0 || len >= sizeof buf) return false;
  std::memcpy(buf, text, len);
  buf[len] = '\0';
  uint64_t mult = 1;
  switch (buf[len - 1]) {
    case 'k': case 'K': mult = uint64_t{1} << 10; break;
    case 'm': case 'M': mult = uint64_t{1} << 20; break;
    case 'g': case 'G': mult = uint64_t{1} << 30; break;
    default: break;
  }
  if (mult != 1) buf[--len] = '\0';
  if (len == 0 || buf[0] < '0' || buf[0] > '9') return false;
  const bool hex = len > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(buf, &end, hex ? 16 : 10);
  if (errno != 0 || end == nullptr || *end != '\0' || v > UINT64_MAX / mult) return false;
  out = static_cast<uint64_t>(v) * mult;
  return true;
}

}  // namespace

int flash_geometry_parse(const char* cmd, const char* text, flash_geometry& g) noexcept {
  g = flash_geometry{};
  g.set = true;
  bool have_size = false, have_sector = false;
  for (const char* p = text; *p != '\0';) {
    const char* comma = std::strchr(p, ',');
    const size_t len = comma ? static_cast<size_t>(comma - p) : std::strlen(p);
    const char* eq = p;
    while (eq != p + len && *eq != '=') ++eq;
    if (eq == p + len)
      return fail(kExitUsage, cmd, "--flash-log: '%.*s' is not KEY=VALUE (keys: offset, size, sector, unit, read, "
                  "erased, dtype)", static_cast<int>(len), p);
    const size_t klen = static_cast<size_t>(eq - p);
    const char* v = eq + 1;
    const size_t vlen = len - klen - 1;
    auto key = [&](const char* k) { return std::strlen(k) == klen && std::strncmp(p, k, klen) == 0; };
    uint64_t* field = key("offset") ? &g.offset : key("size") ? &g.size : key("sector") ? &g.sector
                    : key("unit") ? &g.unit : key("read") ? &g.read : key("erased") ? &g.erased : nullptr;
    if (key("dtype")) {
      if (vlen == 0 || vlen >= sizeof g.dtype) return fail(kExitUsage, cmd, "--flash-log: dtype: empty or too long");
      std::snprintf(g.dtype, sizeof g.dtype, "%.*s", static_cast<int>(vlen), v);
    } else if (field == nullptr) {
      return fail(kExitUsage, cmd, "--flash-log: unknown key '%.*s' (keys: offset, size, sector, unit, read, erased, "
                  "dtype)", static_cast<int>(klen), p);
    } else if (!size_parse(v, vlen, *field)) {
      return fail(kExitUsage, cmd, "--flash-log: %.*s: '%.*s' is not a size (bytes, 0x hex, K/M/G suffixes)",
                  static_cast<int>(klen), p, static_cast<int>(vlen), v);
    }
    have_size |= key("size");
    have_sector |= key("sector");
    if (comma == nullptr) break;
    p = comma + 1;
  }
  if (!have_size || !have_sector)
    return fail(kExitUsage, cmd, "--flash-log needs size= and sector= (e.g. offset=0,size=1M,sector=4096,unit=4)");
  if (g.sector == 0 || g.unit == 0 || g.read == 0 || g.size == 0)
    return fail(kExitUsage, cmd, "--flash-log: size, sector, unit and read must be above 0");
  if (g.erased > 0xFF) return fail(kExitUsage, cmd, "--flash-log: erased is a byte value (0 to 0xff)");
  if (g.size % g.sector != 0)
    return fail(kExitUsage, cmd, "--flash-log: size %" PRIu64 " is not a whole number of sectors of %" PRIu64, g.size,
                g.sector);
  if (g.sector % g.unit != 0 || g.unit % g.read != 0)
    return fail(kExitUsage, cmd, "--flash-log: read (%" PRIu64 ") must divide unit (%" PRIu64 "), which must divide "
                "sector (%" PRIu64 ")", g.read, g.unit, g.sector);
  if (g.size > UINT32_MAX || g.sector > UINT32_MAX)
    return fail(kExitUsage, cmd, "--flash-log: the region is larger than 4 GiB (the flash log's limit)");
  return 0;
}

struct flash_image {
  const uint8_t* map = nullptr;  // the whole file, read only
  size_t map_size = 0;
  const uint8_t* region = nullptr;
  flash_frame ff;
  const_buffer frame_bytes{};     // a finalized frame, in place
  growable_buffer rebuilt;        // the cframe made of the chunks of an array not finalized
};

void flash_image_free(flash_image* fi) noexcept {
  if (fi == nullptr) return;
  flash_frame_close(fi->ff);
  growable_buffer_release(fi->rebuilt);
  if (fi->map != nullptr) ::munmap(const_cast<uint8_t*>(fi->map), fi->map_size);
  delete fi;
}

flash_image_summary flash_image_summarize(const flash_image& fi) noexcept {
  flash_image_summary s;
  s.finalized = fi.ff.finalized;
  s.damaged = fi.ff.damaged;
  s.chunks = fi.ff.nchunks;
  s.free_bytes = flash_log_free_bytes(fi.ff.log, flash_log_keep{});
  return s;
}

namespace {

status image_read(void* context, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept {
  const auto& fi = *static_cast<const flash_image*>(context);
  std::memcpy(dst.data(), fi.region + static_cast<size_t>(sector) * g_flash.sector + offset, dst.size());
  return ok_status();
}

// The image is read only: the mount never programs nor erases (what recovery would write waits for the next
// append), and these say so if it ever tried.
status image_prog(void*, uint32_t, uint32_t, bytes_view) noexcept {
  return make_error(errc::unsupported, "flash image: read only (a program was refused)");
}
status image_erase(void*, uint32_t) noexcept {
  return make_error(errc::unsupported, "flash image: read only (an erase was refused)");
}

// The API codec number of a chunk's codec format.
codec codec_of(const chunk_header& h) noexcept {
  switch (h.format) {
    case codec_format::lz4: return codec::lz4;
    case codec_format::zlib: return codec::zlib;
    case codec_format::zstd: return codec::zstd;
    case codec_format::user: return chunk_user_codec_id(h.udcodec);
    default: return codec::blosclz;
  }
}

// Chunk k of the mounted array into buf (grown as needed); its bytes.
int chunk_fetch(const char* cmd, const char* path, flash_frame& ff, int64_t k, owned_array<uint8_t>& buf,
                bytes_view& out) noexcept {
  for (;;) {
    result<size_t> n = flash_frame_chunk_read(ff, k, bytes_mut(buf.data(), buf.size()));
    if (n.ok()) {
      out = bytes_view(buf.data(), *n);
      return 0;
    }
    if (n.err().code != errc::buffer_too_small || buf.size() >= ff.log.region_size) {
      char what[64];
      std::snprintf(what, sizeof what, "chunk %" PRId64 " of the flash log", k);
      return fail_error(cmd, what, n.err());
    }
    const size_t next = buf.size() * 2 < ff.log.region_size ? buf.size() * 2 : ff.log.region_size;
    buf.reset();
    if (auto e = buf.allocate(tool_allocator(), next); !e.ok()) return fail_error(cmd, path, e);
  }
}

// An array not finalized has no header: its committed chunks become a one-dimensional cframe in memory (items
// of the chunks' typesize, or of dtype=; chunk order), which every command reads as any other array.
int rebuild(const char* cmd, const char* path, flash_image& fi) noexcept {
  flash_frame& ff = fi.ff;
  if (ff.nchunks == 0)
    return fail(kExitFailure, cmd, "%s: the flash log holds no chunk (and no finalized array): nothing to read", path);
  owned_array<uint8_t> buf;
  if (auto e = buf.allocate(tool_allocator(), ff.log.region_size < 65536 ? ff.log.region_size : 65536); !e.ok())
    return fail_error(cmd, path, e);
  bytes_view chunk;
  if (int rc = chunk_fetch(cmd, path, ff, 0, buf, chunk); rc != 0) return rc;
  result<chunk_header> h = chunk_header_read(chunk);
  if (!h.ok()) return fail_error(cmd, "chunk 0 of the flash log", h.err());
  array_params p;
  p.dtype = span<const char>(g_flash.dtype, std::strlen(g_flash.dtype));
  p.itemsize = h->typesize;
  if (!p.dtype.empty()) {
    const dtype_info di = dtype_parse(p.dtype);
    if (!di.known) return fail(kExitUsage, cmd, "--flash-log: dtype '%s' is not a dtype this tool knows", g_flash.dtype);
    p.itemsize = static_cast<int32_t>(di.itemsize);
  }
  if (p.itemsize <= 0 || h->nbytes % p.itemsize != 0 || h->blocksize % p.itemsize != 0)
    return fail(kExitFailure, cmd, "%s: the chunks (%" PRId32 " bytes, blocks of %" PRId32 ") are not whole items of "
                "%" PRId32 " bytes", path, h->nbytes, h->blocksize, p.itemsize);
  p.ndim = 1;
  p.shape[0] = ff.nchunks * (h->nbytes / p.itemsize);
  p.chunkshape[0] = h->nbytes / p.itemsize;
  p.blockshape[0] = h->blocksize / p.itemsize;
  p.compressor = codec_of(*h);
  for (int i = 0; i < kChunkMaxFilters; ++i) {
    p.filters[i] = h->filters[i];
    p.filters_meta[i] = h->filters_meta[i];
  }
  p.compcode_meta = h->compcode_meta;
  array_frame_setup setup;
  if (auto e = array_frame_setup_make(setup, p); !e.ok()) return fail_error(cmd, "the chunks' array", e);
  setup.frame.typesize = h->typesize;
  growable_buffer_init(fi.rebuilt, tool_allocator());
  frame f;
  if (auto e = frame_create(f, growable_buffer_storage(fi.rebuilt), tool_allocator(), setup.frame); !e.ok())
    return fail_error(cmd, path, e);
  for (int64_t k = 0; k < ff.nchunks; ++k) {
    if (k != 0) {
      if (int rc = chunk_fetch(cmd, path, ff, k, buf, chunk); rc != 0) return rc;
    }
    if (auto e = frame_chunk_append(f, chunk); !e.ok()) {
      char what[64];
      std::snprintf(what, sizeof what, "chunk %" PRId64 " of the flash log", k);
      return fail_error(cmd, what, e);
    }
  }
  if (auto e = frame_commit(f); !e.ok()) return fail_error(cmd, path, e);
  if (auto e = frame_close(f); !e.ok()) return fail_error(cmd, path, e);
  fi.frame_bytes.data = fi.rebuilt.bytes().data();
  fi.frame_bytes.size = fi.rebuilt.size();
  return 0;
}

}  // namespace

int flash_array_open(const char* cmd, const char* path, opened_array& o, const executor& exec) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(kExitFailure, cmd, "%s: %s", path, std::strerror(errno));
  struct stat sb;
  if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    const int err = errno;
    ::close(fd);
    return fail(kExitFailure, cmd, "%s: %s", path, S_ISDIR(sb.st_mode) ? "a directory, not a flash image"
                                                                       : std::strerror(err));
  }
  const uint64_t file_size = static_cast<uint64_t>(sb.st_size);
  if (g_flash.offset > file_size || g_flash.size > file_size - g_flash.offset) {
    ::close(fd);
    return fail(kExitFailure, cmd, "%s: the region [%" PRIu64 ", %" PRIu64 ") reaches past the image's end (%" PRIu64
                " bytes): check --flash-log offset= and size=", path, g_flash.offset, g_flash.offset + g_flash.size,
                file_size);
  }
  auto* fi = new (std::nothrow) flash_image;
  if (fi == nullptr) {
    ::close(fd);
    return fail(kExitFailure, cmd, "%s: out of memory", path);
  }
  o.flash = fi;
  void* m = ::mmap(nullptr, static_cast<size_t>(file_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_err = errno;
  ::close(fd);
  if (m == MAP_FAILED) return fail(kExitFailure, cmd, "%s: cannot map the image: %s", path, std::strerror(map_err));
  fi->map = static_cast<const uint8_t*>(m);
  fi->map_size = static_cast<size_t>(file_size);
  fi->region = fi->map + g_flash.offset;

  flash_log_config lc;
  lc.device.read = image_read;
  lc.device.prog = image_prog;
  lc.device.erase = image_erase;
  lc.device.context = fi;
  lc.device.read_size = static_cast<uint32_t>(g_flash.read);
  lc.device.prog_size = static_cast<uint32_t>(g_flash.unit);
  lc.device.sector_size = static_cast<uint32_t>(g_flash.sector);
  lc.device.sector_count = static_cast<uint32_t>(g_flash.size / g_flash.sector);
  lc.device.erased_value = static_cast<uint8_t>(g_flash.erased);
  lc.device.mapped = fi->region;
  const status mounted = flash_frame_mount_read(fi->ff, lc, tool_allocator());
  if (!mounted.ok()) {
    if (!fi->ff.damaged) {
      if (mounted.code == errc::malformed || mounted.code == errc::invalid_argument)
        return fail(kExitFailure, cmd, "%s: no flash log of this geometry in the region (%s): check --flash-log", path,
                    mounted.message);
      return fail_error(cmd, path, mounted);
    }
    // Damage: what is before it still reads (chunks [0, nchunks)); the finalized frame, if any, is not trusted.
    (void)fail(0, cmd, "%s: warning: the flash log is damaged after chunk %" PRId64 " (%s): reading the %" PRId64
               " chunks before it", path, fi->ff.nchunks - 1,
               mounted.message, fi->ff.nchunks);
    fi->ff.finalized = false;
  }
  if (fi->ff.finalized) {
    fi->frame_bytes.data = flash_frame_view(fi->ff).data();
    fi->frame_bytes.size = static_cast<size_t>(fi->ff.frame_len);
  } else if (int rc = rebuild(cmd, path, *fi); rc != 0) {
    return rc;
  }
  o.st = const_buffer_storage(fi->frame_bytes);
  array_open_options options;
  options.exec = exec;
  if (auto e = array_open(o.a, o.st, tool_allocator(), options); !e.ok()) return fail_error(cmd, path, e);
  return 0;
}

}  // namespace tessera::cli
