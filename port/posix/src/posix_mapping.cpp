// SPDX-License-Identifier: BSD-3-Clause
// A read-only mmap of a whole file as a storage, touched only under a read lease (see the header); the descriptor
// stays open for the lease and for the reads outside it. errno is turned into a static message naming the call.
#include "tessera/port/posix_mapping.hpp"
#include "tessera/port/posix_file.hpp"

#include "posix_internal.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <csignal>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/types.h>
#include <unistd.h>

namespace tessera {
namespace {

static_assert(sizeof(off_t) == 8, "the POSIX port needs a 64-bit off_t (_FILE_OFFSET_BITS=64)");

const posix_mapping* mapping_of(void* context) noexcept { return static_cast<const posix_mapping*>(context); }

posix_mapping* mapping_mut(void* context) noexcept { return static_cast<posix_mapping*>(context); }

// The descriptor's pread storage: reads outside the lease, and the file's size.
storage file_of(const posix_mapping* m) noexcept {
  posix_file f;
  f.fd = m->fd;
  return posix_file_storage(f);
}

// Always through pread: the core reads the map through view, inside its own read bracket; this callback may be
// called outside any bracket (opens, refreshes, frame reads), where the map must not be touched.
status mapping_read(void* context, uint64_t offset, bytes_mut dst) noexcept {
  const posix_mapping* m = mapping_of(context);
  if (m->fd < 0) return make_error(errc::io, TESSERA_MSG("posix_mapping: read of a closed mapping"));
  return storage_read(file_of(m), offset, dst);
}

status mapping_size(void* context, uint64_t* out) noexcept {
  const posix_mapping* m = mapping_of(context);
  if (m->fd < 0) return make_error(errc::io, TESSERA_MSG("posix_mapping: size of a closed mapping"));
  auto n = storage_size(file_of(m));
  if (!n.ok()) return n.err();
  *out = *n;
  return ok_status();
}

bytes_view mapping_view(void* context) noexcept {
  const posix_mapping* m = mapping_of(context);
  // size <= SIZE_MAX: posix_mapping_open refuses larger files.
  return m->leased ? bytes_view(m->data, static_cast<size_t>(m->size)) : bytes_view();
}

// Takes a read lease on m's file and checks the file still covers the map. The lease's owner is cleared right
// after: a lease break then signals no one (the breaker just waits for reads_end). In the instant between the two
// calls the owner is this process, so the descriptor's signal is set at open to SIGURG, which is ignored unless a
// program asks for it, rather than the default SIGIO, which would end the process.
bool lease_take(const posix_mapping* m) noexcept {
#if defined(F_SETLEASE) && defined(F_SETSIG)
  if (m->data == nullptr || m->fd < 0) return false;
  if (::fcntl(m->fd, F_SETLEASE, F_RDLCK) != 0) return false;  // open for writing, not the owner, no leases here
  (void)::fcntl(m->fd, F_SETOWN, 0);
  struct stat st;
  if (::fstat(m->fd, &st) == 0 && st.st_size >= 0 && static_cast<uint64_t>(st.st_size) >= m->size) return true;
  (void)::fcntl(m->fd, F_SETLEASE, F_UNLCK);  // cut below the map: its tail would raise SIGBUS
  return false;
#else
  (void)m;
  return false;
#endif
}

void lease_release(const posix_mapping* m) noexcept {
#if defined(F_SETLEASE)
  (void)::fcntl(m->fd, F_SETLEASE, F_UNLCK);
#else
  (void)m;
#endif
}

// Brackets of several handles (each on its own thread) share one mapping: the count and the lease change under a
// spin lock, held only for the lease's few system calls. The lease changes only when no bracket is open, so
// inside any bracket `leased` stays as the lock's last holder left it.
class mapping_lock {
 public:
  explicit mapping_lock(posix_mapping* m) noexcept : m_(m) {
    while (__atomic_test_and_set(&m_->lock, __ATOMIC_ACQUIRE)) sched_yield();
  }
  ~mapping_lock() { __atomic_clear(&m_->lock, __ATOMIC_RELEASE); }
  mapping_lock(const mapping_lock&) = delete;
  mapping_lock& operator=(const mapping_lock&) = delete;

 private:
  posix_mapping* m_;
};

void mapping_reads_begin(void* context) noexcept {
  posix_mapping* m = mapping_mut(context);
  const mapping_lock held(m);
  if (m->reads++ == 0) m->leased = lease_take(m);
}

void mapping_reads_end(void* context) noexcept {
  posix_mapping* m = mapping_mut(context);
  const mapping_lock held(m);
  if (m->reads == 0) return;  // unbalanced: nothing is open
  if (--m->reads == 0 && m->leased) {
    m->leased = false;
    lease_release(m);
  }
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
  m.fd = fd;
#if defined(F_SETSIG)
  (void)::fcntl(fd, F_SETSIG, SIGURG);  // see lease_take
#endif
  if (size == 0) return m;  // mmap of length 0 is EINVAL; an empty file is a valid, empty mapping
  void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    ::close(fd);
    return mmap_error(e);
  }
  m.data = static_cast<const uint8_t*>(p);
  m.size = size;
  return m;
}

status posix_mapping_close(posix_mapping& m) noexcept {
  void* p = const_cast<uint8_t*>(m.data);
  const size_t n = static_cast<size_t>(m.size);
  const int fd = m.fd;  // closing it ends a lease still held
  m = posix_mapping{};
  bool unmapped = true;
  if (p != nullptr) unmapped = ::munmap(p, n) == 0;
  // Read-only: close's result cannot lose data; Linux closes the descriptor even on EINTR.
  if (fd >= 0) (void)::close(fd);
  if (!unmapped) return make_error(errc::io, TESSERA_MSG("posix_mapping: munmap failed"));
  return ok_status();
}

storage posix_mapping_storage(const posix_mapping& m) noexcept {
  storage s;
  s.context = const_cast<posix_mapping*>(&m);  // reads_begin and reads_end keep its lease state
  s.read = mapping_read;
  s.size = mapping_size;
  s.view = mapping_view;
  s.concurrent_reads = true;
  s.reads_begin = mapping_reads_begin;
  s.reads_end = mapping_reads_end;
  return s;
}

}  // namespace tessera
