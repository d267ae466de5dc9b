// SPDX-License-Identifier: BSD-3-Clause
// The device calls with their checks (flash.cpp) as the port's own code calls them: returning a
// detail::code_status (tessera/error.hpp), which a build without messages returns in a register. The public
// flash_read, flash_prog, flash_erase and flash_sync are these.
#pragma once

#include "tessera/port/flash.hpp"

namespace tessera::detail {

[[nodiscard]] code_status flash_read_checked(const flash_device& d, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept;
[[nodiscard]] code_status flash_prog_checked(const flash_device& d, uint32_t sector, uint32_t offset, bytes_view src) noexcept;
[[nodiscard]] code_status flash_erase_checked(const flash_device& d, uint32_t sector) noexcept;
[[nodiscard]] code_status flash_sync_checked(const flash_device& d) noexcept;

}  // namespace tessera::detail
