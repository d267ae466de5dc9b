// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/storage.hpp"

namespace tessera {

status storage_read(const storage& s, uint64_t offset, bytes_mut dst) noexcept {
  if (s.read == nullptr) return make_error(errc::unsupported, TESSERA_MSG("storage: no read callback"));
  if (dst.empty()) return ok_status();
  if (offset > UINT64_MAX - dst.size()) return make_error(errc::out_of_range, TESSERA_MSG("storage: read range overflows"));
  return s.read(s.context, offset, dst);
}

status storage_write(const storage& s, uint64_t offset, bytes_view src) noexcept {
  if (s.write == nullptr) return make_error(errc::unsupported, TESSERA_MSG("storage: read-only (no write callback)"));
  if (src.empty()) return ok_status();
  if (offset > UINT64_MAX - src.size()) return make_error(errc::out_of_range, TESSERA_MSG("storage: write range overflows"));
  return s.write(s.context, offset, src);
}

result<uint64_t> storage_size(const storage& s) noexcept {
  if (s.size == nullptr) return make_error(errc::unsupported, TESSERA_MSG("storage: no size callback"));
  uint64_t n = 0;
  if (status e = s.size(s.context, &n); !e.ok()) return e;
  return n;
}

status storage_truncate(const storage& s, uint64_t size) noexcept {
  if (s.truncate == nullptr) return make_error(errc::unsupported, TESSERA_MSG("storage: cannot truncate"));
  return s.truncate(s.context, size);
}

status storage_sync(const storage& s) noexcept { return s.sync == nullptr ? ok_status() : s.sync(s.context); }

bytes_view storage_view(const storage& s) noexcept { return s.view == nullptr ? bytes_view{} : s.view(s.context); }

bytes_mut storage_lend(const storage& s, uint64_t offset, size_t size) noexcept {
  if (s.lend == nullptr || offset > UINT64_MAX - size) return bytes_mut{};
  return s.lend(s.context, offset, size);
}

}  // namespace tessera
