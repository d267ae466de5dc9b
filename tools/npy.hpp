// SPDX-License-Identifier: BSD-3-Clause
// NumPy .npy files (format versions 1.0, 2.0 and 3.0; numpy/lib/format.py's NEP 1 layout): the magic
// "\x93NUMPY", the version, the header's length (2 bytes little-endian in 1.0, 4 in 2.0 and 3.0), and the header,
// a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with spaces and a newline
// so the data starts at a multiple of 64; then the items in C order. The descr is a dtype string ('<f4') or,
// for a structured dtype, the repr of its descr list, which B2ND keeps verbatim as its dtype string (as
// python-blosc2 does). 1.0 and 2.0 headers are latin-1, 3.0 UTF-8 (B2ND's dtype strings are UTF-8).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/layout.hpp"
#include "tessera/span.hpp"

namespace tessera::cli {

inline constexpr size_t kNpyMaxDescr = 4096;

struct npy_header {
  int major = 1;
  int minor = 0;
  char descr[kNpyMaxDescr] = {};  ///< the dtype string (UTF-8), verbatim for a structured dtype's list
  size_t descr_len = 0;
  bool fortran_order = false;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  uint32_t itemsize = 0;
  uint64_t data_offset = 0;  ///< where the items start
};

/// Reads the header at the start of fd, exactly its bytes (so a pipe is left at the items), and parses it.
/// Refuses Fortran order, more than kMaxDims dimensions, object and unknown dtypes. Reports failures itself
/// (returns the exit status, 0 on success).
[[nodiscard]] int npy_header_read(const char* cmd, const char* name, int fd, npy_header& h) noexcept;

/// The item size of a descr (a dtype string, or a structured dtype's descr list); 0 when it is not one NumPy
/// stores as plain bytes.
[[nodiscard]] uint32_t npy_descr_itemsize(span<const char> descr) noexcept;

/// The header (magic to newline) of a C-order array of `dtype` (a B2ND dtype string; itemsize when it is not one
/// NumPy knows: then '|V<itemsize>') and shape. Version 1.0, 2.0 when the header needs more than 65535 bytes,
/// 3.0 when the dtype is not ASCII. Returns its length, 0 when it does not fit `cap`.
[[nodiscard]] size_t npy_header_format(span<const char> dtype, int32_t itemsize, int ndim, const int64_t* shape,
                                       char* out, size_t cap) noexcept;

}  // namespace tessera::cli
