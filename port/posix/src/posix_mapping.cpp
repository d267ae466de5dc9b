// A read-only mmap of a whole file as a storage. The descriptor is closed right after mmap: the mapping holds
// its own reference to the file. errno is turned into a static message naming the call.
#include "tessera/port/posix_mapping.hpp"

#include "posix_internal.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

namespace tessera {
namespace {

static_assert(sizeof(off_t) == 8, "the POSIX port needs a 64-bit off_t (_FILE_OFFSET_BITS=64)");

const posix_mapping* mapping_of(void* context) noexcept { return static_cast<const posix_mapping*>(context); }

status mapping_read(void* context, uint64_t offset, bytes_mut dst) noexcept {
  const posix_mapping* m = mapping_of(context);
  if (offset > m->size || dst.size() > m->size - offset)
    return make_error(errc::truncated, TESSERA_MSG("posix_mapping: read past the end of the mapped file"));
  if (!dst.empty()) std::memcpy(dst.data(), m->data + offset, dst.size());
  return ok_status();
}

status mapping_size(void* context, uint64_t* out) noexcept {
  *out = mapping_of(context)->size;
  return ok_status();
}

bytes_view mapping_view(void* context) noexcept {
  const posix_mapping* m = mapping_of(context);
  // size <= SIZE_MAX: posix_mapping_open refuses larger files.
  return bytes_view(m->data, static_cast<size_t>(m->size));
}

status mmap_error(int e) noexcept {
  switch (e) {
    case ENOMEM:
    case EOVERFLOW: return make_error(errc::io, TESSERA_MSG("posix_mapping: mmap failed: not enough address space"));
    case EACCES:
    case EPERM: return make_error(errc::io, TESSERA_MSG("posix_mapping: mmap failed: permission denied"));
    case ENODEV: return make_error(errc::io, TESSERA_MSG("posix_mapping: mmap failed: the file system cannot map files"));
    case EAGAIN: return make_error(errc::io, TESSERA_MSG("posix_mapping: mmap failed: the file is locked or memory limit"));
    default: return make_error(errc::io, TESSERA_MSG("posix_mapping: mmap failed"));
  }
}

}  // namespace

result<posix_mapping> posix_mapping_open(const char* path) noexcept {
  if (path == nullptr || path[0] == '\0') return make_error(errc::invalid_argument, TESSERA_MSG("posix_mapping: empty path"));
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below); regular files ignore it.
  const int fd = detail::posix_open_retry(-1, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0) return detail::posix_open_error(errno);
  struct stat st;
  TESSERA_TRY(detail::posix_stat_opened(fd, &st));
  // Devices, FIFOs and sockets report no meaningful size (0): mapping them would silently be empty or fail.
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(errc::io, TESSERA_MSG("posix_mapping: open failed: not a regular file"));
  }
  if (st.st_size < 0) {
    ::close(fd);
    return make_error(errc::io, TESSERA_MSG("posix_mapping: fstat reported a negative size"));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // 32-bit targets: a size that size_t cannot hold would wrap mmap's length.
  if (size > static_cast<uint64_t>(SIZE_MAX)) {
    ::close(fd);
    return make_error(errc::overflow, TESSERA_MSG("posix_mapping: the file is larger than the address space"));
  }
  posix_mapping m;
  if (size == 0) {  // mmap of length 0 is EINVAL; an empty file is a valid, empty mapping
    ::close(fd);
    return m;
  }
  void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int e = errno;
  // The mapping keeps the file referenced; close's result cannot affect it (nothing was written).
  ::close(fd);
  if (p == MAP_FAILED) return mmap_error(e);
  m.data = static_cast<const uint8_t*>(p);
  m.size = size;
  return m;
}

status posix_mapping_close(posix_mapping& m) noexcept {
  if (m.data == nullptr) {
    m.size = 0;
    return ok_status();
  }
  void* p = const_cast<uint8_t*>(m.data);
  const size_t n = static_cast<size_t>(m.size);
  m.data = nullptr;
  m.size = 0;
  if (::munmap(p, n) != 0) return make_error(errc::io, TESSERA_MSG("posix_mapping: munmap failed"));
  return ok_status();
}

storage posix_mapping_storage(const posix_mapping& m) noexcept {
  storage s;
  s.context = const_cast<posix_mapping*>(&m);  // only ever read through mapping_of
  s.read = mapping_read;
  s.size = mapping_size;
  s.view = mapping_view;
  s.concurrent_reads = true;
  return s;
}

}  // namespace tessera
