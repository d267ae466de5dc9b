// SPDX-License-Identifier: BSD-3-Clause
// Structure-aware inputs for the chunk and frame fuzzers: an input that starts with kStructuredTag is a recipe,
// not a chunk. The recipe chooses the parameters and the data; the harness builds a valid chunk with the
// project's own encoder (chunk_encode, chunk_encode_special), then applies the edits the rest of the recipe
// selects (a header field set to a value near its own, a bstarts entry or a stream size rewritten, a byte
// flipped, the chunk cut short). Random bytes rarely make a header good enough to reach the blocks; a recipe
// always does, and its edits then reach each check behind it.
// Also: a user codec and a user filter (chunk_plugins) for the decoders to run, and the recipe's chosen decoder
// geometry (the n-d plugins need the block shape).
#pragma once

#include <cstring>
#include <vector>

#include "tessera/chunk.hpp"

#include "fuzz_common.hpp"

namespace tessera::fuzz {

// The first byte of a recipe. No chunk or frame written by a Blosc library starts with it.
inline constexpr uint8_t kStructuredTag = 0xF5;

// The recipe's bytes, taken in order; past the end every read is 0 (a short recipe is a plain one).
class recipe {
 public:
  recipe(const uint8_t* data, size_t size) noexcept : p_(data), n_(size) {}
  uint8_t u8() noexcept { return pos_ < n_ ? p_[pos_++] : 0; }
  uint16_t u16() noexcept { return static_cast<uint16_t>(u8() | u8() << 8); }
  uint32_t u32() noexcept { return static_cast<uint32_t>(u16() | static_cast<uint32_t>(u16()) << 16); }
  size_t pick(size_t count) noexcept { return u8() % count; }
  bool flag() noexcept { return (u8() & 1) != 0; }
  size_t left() const noexcept { return n_ - pos_; }
  // The next n bytes (fewer at the end).
  bytes_view take(size_t n) noexcept {
    if (n > left()) n = left();
    bytes_view v(p_ + pos_, n);
    pos_ += n;
    return v;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

// ---- A user codec (id 200) and a user filter (id 161) for the decoders: simple, invertible, checked ----------

inline constexpr uint8_t kUserCodecId = 200;
inline constexpr uint8_t kUserFilterId = 161;

// The codec drops the stream's trailing run of one byte value: out = prefix, the value, the run length (u32 LE).
inline status user_encode(void*, bytes_view in, bytes_mut out, uint8_t, size_t* written) noexcept {
  *written = 0;
  const size_t n = in.size();
  if (n == 0) return ok_status();
  size_t run = 1;
  while (run < n && in[n - 1 - run] == in[n - 1]) ++run;
  const size_t need = n - run + 5;
  if (need >= n || need > out.size()) return ok_status();  // does not shrink: stored raw
  std::memcpy(out.data(), in.data(), n - run);
  out[n - run] = in[n - 1];
  for (int i = 0; i < 4; ++i) out[n - run + 1 + i] = static_cast<uint8_t>(run >> (8 * i));
  *written = need;
  return ok_status();
}
inline status user_decode(void*, bytes_view in, bytes_mut out, uint8_t, size_t* written) noexcept {
  *written = 0;
  if (in.size() < 5) return make_error(errc::corrupt, "user codec: stream shorter than its trailer");
  const size_t prefix = in.size() - 5;
  uint32_t run = 0;
  for (int i = 0; i < 4; ++i) run |= static_cast<uint32_t>(in[prefix + 1 + i]) << (8 * i);
  if (prefix > out.size() || run != out.size() - prefix) return make_error(errc::corrupt, "user codec: wrong size");
  std::memcpy(out.data(), in.data(), prefix);
  std::memset(out.data() + prefix, in[prefix], run);
  *written = out.size();
  return ok_status();
}
// The filter XORs every byte with its meta (its own inverse).
inline status user_xor(void*, bytes_view in, bytes_mut out, uint8_t meta, uint8_t) noexcept {
  for (size_t i = 0; i < in.size(); ++i) out[i] = static_cast<uint8_t>(in[i] ^ meta);
  return ok_status();
}

inline const chunk_plugins* user_plugins() noexcept {
  static const chunk_user_codec codecs[] = {{kUserCodecId, user_encode, user_decode, nullptr},
                                            {201, user_encode, nullptr, nullptr}};  // 201: cannot decode
  static const chunk_user_filter filters[] = {{kUserFilterId, user_xor, user_xor, nullptr},
                                              {162, user_xor, nullptr, nullptr}};  // 162: cannot undo
  static const chunk_plugins p{codecs, 2, filters, 2};
  return &p;
}

// ---- Building a chunk -----------------------------------------------------------------------------------------

struct built_chunk {
  bool built = false;          // the encoder made it (else `bytes` is empty)
  bool lossless = false;       // decoding it gives `source` back (no lossy filter)
  bool edited = false;         // an edit changed its bytes
  std::vector<uint8_t> bytes;  // the chunk, after the edits
  std::vector<uint8_t> source; // what was encoded
  chunk_nd_geometry geometry;  // the blocks' shape it was written with (ndim 0: none)
  bool plugins = false;        // it needs the user codec or filter
};

namespace detail_build {

inline const uint8_t kTypesizes[] = {1, 2, 4, 8, 3, 16, 1, 4, 2, 12, 255, 8};
inline const uint8_t kFilterChoices[] = {0, 0, 0, 1, 2, 3, 4, 35, 36, 32, 33, kUserFilterId, 1, 2};
inline const codec kCodecs[] = {codec::blosclz, codec::lz4, codec::lz4hc, codec::zlib, codec::zstd,
                                codec::ndlz, chunk_user_codec_id(kUserCodecId), codec::blosclz, codec::lz4};

// The data: a pattern the recipe chooses, with the recipe's own bytes mixed in (so matches and runs abound).
inline void data_fill(recipe& r, std::vector<uint8_t>& d, uint8_t typesize) {
  const uint8_t kind = r.u8() % 6;
  const uint8_t a = r.u8();
  const bytes_view seed = r.take(r.u8() % 64);
  for (size_t i = 0; i < d.size(); ++i) {
    switch (kind) {
      case 0: d[i] = a; break;                                                     // one value
      case 1: d[i] = static_cast<uint8_t>(i / typesize * a + (i % typesize == 0)); break;  // ramps
      case 2: d[i] = seed.empty() ? 0 : seed[i % seed.size()]; break;              // the recipe's bytes, repeated
      case 3: d[i] = static_cast<uint8_t>((i * 2654435761u) >> 13); break;         // noise
      case 4: d[i] = i % typesize + 1 == typesize ? 0x3f : static_cast<uint8_t>(i / 64); break;  // float-like
      default: d[i] = (i / 256) % 2 == 0 ? 0 : a; break;                          // runs
    }
  }
  // A few of the recipe's bytes dropped in anywhere.
  for (size_t k = 0, n = r.u8() % 8; k < n && !d.empty(); ++k) d[r.u16() % d.size()] = r.u8();
}

// A value near v, or a boundary, as the recipe picks.
inline int32_t wrap(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }
inline int32_t near_value(recipe& r, int32_t v32, int32_t size) {
  const int64_t v = v32;
  switch (r.u8() % 12) {
    case 0: return 0;
    case 1: return -1;
    case 2: return wrap(v + 1);
    case 3: return wrap(v - 1);
    case 4: return INT32_MAX;
    case 5: return INT32_MIN;
    case 6: return size;
    case 7: return size - 1;
    case 8: return wrap(v * 2);
    case 9: return wrap(v / 2);
    case 10: return -static_cast<int32_t>(r.u8());
    default: return wrap(r.u32());
  }
}

inline int32_t load(const std::vector<uint8_t>& b, size_t at) {
  if (at + 4 > b.size()) return 0;
  const uint32_t u = b[at] | uint32_t{b[at + 1]} << 8 | uint32_t{b[at + 2]} << 16 | uint32_t{b[at + 3]} << 24;
  return static_cast<int32_t>(u);
}
inline void store(std::vector<uint8_t>& b, size_t at, int32_t v) {
  if (at + 4 > b.size()) return;
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i));
}

}  // namespace detail_build

// Applies the recipe's edits (up to 6) to a chunk's bytes; returns whether any changed them.
inline bool chunk_edit(recipe& r, std::vector<uint8_t>& c) {
  using namespace detail_build;
  bool edited = false;
  const size_t nedits = r.u8() % 7;
  for (size_t k = 0; k < nedits && !c.empty(); ++k) {
    const std::vector<uint8_t> before = c;
    const int32_t size = static_cast<int32_t>(c.size());
    const size_t hs = c.size() >= 32 && (c[2] & 0x05) == 0x05 ? 32 : 16;
    switch (r.u8() % 10) {
      case 0:  // a header byte
        c[r.u8() % (hs < c.size() ? hs : c.size())] = r.u8();
        break;
      case 1:  // nbytes, blocksize or cbytes
      {
        const size_t at = 4 + 4 * (r.u8() % 3);
        store(c, at, near_value(r, load(c, at), size));
        break;
      }
      case 2:  // a bstarts entry
      {
        const size_t at = hs + 4 * (r.u8() % 8);
        store(c, at, near_value(r, load(c, at), size));
        break;
      }
      case 3:  // the size of the stream a bstarts entry points to (or the dictionary size after bstarts)
      {
        const int32_t start = load(c, hs + 4 * (r.u8() % 8));
        if (start >= 0 && static_cast<size_t>(start) + 4 <= c.size())
          store(c, static_cast<size_t>(start), near_value(r, load(c, static_cast<size_t>(start)), size));
        break;
      }
      case 4:  // a byte anywhere
        c[r.u16() % c.size()] ^= static_cast<uint8_t>(1u << (r.u8() % 8));
        break;
      case 5:  // flag bits: flags, blosc2_flags, blosc2_flags2
      {
        const size_t at = r.flag() ? 2 : (hs == 32 ? (r.flag() ? 31 : 30) : 2);
        if (at < c.size()) c[at] ^= r.u8();  // an earlier cut may have left less
        break;
      }
      case 6:  // a filter slot or its meta, the codec's id or meta
        if (hs == 32) c[16 + r.u8() % 14] = r.u8();
        break;
      case 7:  // cut
        c.resize(r.u16() % c.size());
        break;
      case 8:  // the version byte
        c[0] = static_cast<uint8_t>(r.u8() % 9);
        break;
      default:  // a run of bytes from elsewhere in the chunk
      {
        const size_t from = r.u16() % c.size(), to = r.u16() % c.size();
        const size_t n = r.u8() % 16;
        for (size_t i = 0; i < n && from + i < c.size() && to + i < c.size(); ++i) c[to + i] = c[from + i];
        break;
      }
    }
    edited = edited || c != before;
  }
  return edited;
}

// Builds the chunk the recipe describes with the project's encoder, then edits it.
inline built_chunk chunk_build(recipe& r, const allocator& alloc, size_t max_nbytes = 16384) {
  using namespace detail_build;
  built_chunk b;
  chunk_encode_params p;
  p.typesize = kTypesizes[r.pick(sizeof kTypesizes)];
  p.compressor = kCodecs[r.pick(sizeof kCodecs / sizeof kCodecs[0])];
  p.clevel = r.u8() % 10;
  const uint8_t shape = r.u8();
  p.split = static_cast<split_mode>(1 + shape % 4);
  p.use_dict = (shape & 0x10) != 0 && codec_takes_dict(p.compressor);
  const size_t nfilters = r.u8() % 4;
  for (size_t i = 0; i < kChunkMaxFilters; ++i) p.filters[i] = 0;
  bool lossy = false, user_filter = false;
  for (size_t i = 0; i < nfilters; ++i) {
    const size_t slot = kChunkMaxFilters - 1 - r.u8() % kChunkMaxFilters;
    p.filters[slot] = kFilterChoices[r.pick(sizeof kFilterChoices)];
    p.filters_meta[slot] = r.u8() % 4 == 0 ? r.u8() : 0;
    const auto f = static_cast<filter_id>(p.filters[slot]);
    if (f == filter_id::trunc_prec || f == filter_id::int_trunc || f == filter_id::ndmean) lossy = true;
    if (f == filter_id::ndcell || f == filter_id::ndmean) p.filters_meta[slot] = static_cast<uint8_t>(1 + r.u8() % 8);
    if (p.filters[slot] == kUserFilterId) b.plugins = user_filter = true;
  }
  if (p.compressor == codec::ndlz) p.compcode_meta = r.flag() ? 4 : 8;
  if (p.compressor == chunk_user_codec_id(kUserCodecId)) b.plugins = true;
  p.plugins = user_plugins();

  // Sizes: items per block and blocks, so that n-d plugins get whole blocks of their shape.
  const uint8_t ndim = static_cast<uint8_t>(r.u8() % 4);  // 0: no geometry
  size_t items = 1;
  if (ndim > 0) {
    b.geometry.ndim = static_cast<int8_t>(ndim);
    for (int d = 0; d < ndim; ++d) {
      b.geometry.blockshape[d] = 1 + r.u8() % (ndim == 1 ? 64 : ndim == 2 ? 24 : 8);
      items *= static_cast<size_t>(b.geometry.blockshape[d]);
    }
    p.geometry = b.geometry;
    p.blocksize = static_cast<int32_t>(items * p.typesize);
  } else {
    const uint8_t bs = r.u8();
    p.blocksize = bs < 128 ? 0 : static_cast<int32_t>((bs - 127) * p.typesize * (1 + (bs & 3) * 7));
  }
  size_t nbytes;
  if (ndim > 0) {
    nbytes = items * p.typesize * (1 + r.u8() % 4);
  } else {
    nbytes = (r.u16() % (max_nbytes / p.typesize + 1)) * p.typesize;
  }
  if (nbytes > max_nbytes) nbytes = max_nbytes / p.typesize * p.typesize;
  b.source.assign(nbytes, 0);
  data_fill(r, b.source, p.typesize);

  const uint8_t special = r.u8() % 8;
  std::vector<uint8_t> out(chunk_encode_bound(nbytes) + p.typesize);
  if (special >= 1 && special <= 4) {
    const auto kind = static_cast<chunk_special>(special);
    bytes_view value(b.source.data(), b.source.size() >= p.typesize ? p.typesize : 0);
    const auto n = chunk_encode_special(p, kind, nbytes, value, bytes_mut(out.data(), out.size()));
    if (!n.ok()) return b;
    out.resize(*n);
    b.lossless = false;
  } else {
    chunk_encoder e;
    chunk_encoder_options eo;
    eo.max_blocksize = 0;
    if (!chunk_encoder_init(e, alloc, eo).ok()) return b;
    // Sometimes an output too short for the chunk: the encoder's memcpyed fallback or buffer_too_small.
    const size_t room = special == 7 ? nbytes + 16 + r.u8() % 32 : out.size();
    const auto n = chunk_encode(e, p, bytes_view(b.source.data(), b.source.size()),
                                bytes_mut(out.data(), room < out.size() ? room : out.size()));
    chunk_encoder_release(e);
    if (!n.ok()) return b;
    out.resize(*n);
    b.lossless = !lossy;
    // A pipeline whose output is all zeros makes the all-zeros special chunk, as the reference's does (it looks at
    // the filtered streams): a user filter can map other data there (the XOR filter, data equal to its meta), and
    // that chunk then reads back as zeros. The library's lossless filters map only zeros to zeros.
    if (user_filter && out.size() == kChunkHeaderExtendedSize && ((out[31] >> 4) & 7) == 1) b.lossless = false;
  }
  b.built = true;
  b.bytes = std::move(out);
  b.edited = chunk_edit(r, b.bytes);
  return b;
}

}  // namespace tessera::fuzz
