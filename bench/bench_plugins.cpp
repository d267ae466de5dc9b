// SPDX-License-Identifier: BSD-3-Clause
// c-blosc2's n-d plugin codecs, chunk by chunk: NDLZ (cells of 4 and 8) encoding and decoding a 2-D uint8 image,
// as ratios to memcpy of the same bytes and to LZ4 (the same blocks, no filter); and the ZFP modes (codecs 33-35)
// on a 2-D float32 field when this build has them (codec_available). With TESSERA_BENCH_BLOSC2_DIR (a c-blosc2
// build the user made, with its plugins: docs/build.md), also the reference's own NDLZ and ZFP on the same chunks
// (blosc2_compress_ctx / blosc2_decompress_ctx of a b2nd array with the same shapes, one thread), its chunks
// compared with Tessera's byte for byte, and ratio = reference time / Tessera time (above 1: Tessera is faster).
// Every figure is the median of --rounds rounds (default 15); in each round every case runs once, Tessera and
// the reference one after the other, so that load from other processes falls on both alike.
//   tessera_bench_plugins [--rounds N] [--case NAME]   (--case: only that case, e.g. ndlz:4, for profilers)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tessera/chunk.hpp"
#include "tessera/port/posix_allocator.hpp"

#ifdef TESSERA_BENCH_BLOSC2
#include <b2nd.h>
#include <blosc2.h>
#endif

using namespace tessera;

namespace {

using clock_type = std::chrono::steady_clock;

// The image: 1024 x 1024 bytes in 4 chunks of 512 x 512, blocks of 128 x 128 (the chunk buffers hold their
// blocks one after the other, each in C order, as b2nd lays a chunk out).
constexpr int kImage = 1024, kChunk = 512, kBlock = 128;
constexpr size_t kChunkBytes = static_cast<size_t>(kChunk) * kChunk;
constexpr int kChunks = (kImage / kChunk) * (kImage / kChunk);

[[noreturn]] void die(const char* what, const error& e) {
  std::fprintf(stderr, "tessera_bench_plugins: %s: %s\n", what, e.message);
  std::exit(1);
}

uint32_t lcg(uint32_t& s) {
  s = s * 1103515245u + 12345u;
  return s >> 16;
}

// Image-like bytes: 8x8 cells, each one of four sprites, a flat fill, a smooth gradient, a copy of the cell
// above, or noise (one in ten), chosen by a fixed generator.
std::vector<uint8_t> image_make() {
  std::vector<uint8_t> img(static_cast<size_t>(kImage) * kImage);
  uint8_t sprite[4][64];
  uint32_t s = 7;
  for (auto& sp : sprite)
    for (uint8_t& b : sp) b = static_cast<uint8_t>(lcg(s));
  for (int cy = 0; cy < kImage / 8; ++cy)
    for (int cx = 0; cx < kImage / 8; ++cx) {
      const uint32_t kind = lcg(s) % 10;
      const uint8_t fill = static_cast<uint8_t>(lcg(s));
      for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) {
          const int Y = cy * 8 + y, X = cx * 8 + x;
          uint8_t v;
          if (kind < 4) v = sprite[kind][y * 8 + x];
          else if (kind < 6) v = fill;
          else if (kind < 8) v = static_cast<uint8_t>((Y + X) / 4);
          else if (kind == 8 && cy > 0) v = img[static_cast<size_t>(Y - 8) * kImage + X];
          else v = static_cast<uint8_t>(lcg(s));
          img[static_cast<size_t>(Y) * kImage + X] = v;
        }
    }
  return img;
}

// The image's chunks, each as its blocks in order (itemsize bytes per item).
std::vector<uint8_t> chunks_of(const uint8_t* img, size_t itemsize) {
  std::vector<uint8_t> out(kChunkBytes * itemsize * kChunks);
  size_t at = 0;
  for (int gy = 0; gy < kImage / kChunk; ++gy)
    for (int gx = 0; gx < kImage / kChunk; ++gx)
      for (int by = 0; by < kChunk / kBlock; ++by)
        for (int bx = 0; bx < kChunk / kBlock; ++bx)
          for (int y = 0; y < kBlock; ++y) {
            const size_t row = static_cast<size_t>(gy * kChunk + by * kBlock + y) * kImage + gx * kChunk + bx * kBlock;
            std::memcpy(out.data() + at, img + row * itemsize, kBlock * itemsize);
            at += kBlock * itemsize;
          }
  return out;
}

double seconds_of(const std::function<void()>& f) {
  const auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One codec's case: Tessera's encode and decode of every chunk; the reference's, where it runs.
struct plugin_case {
  const char* name = nullptr;
  uint8_t codec_id = 0;
  uint8_t meta = 0;
  size_t itemsize = 1;
  const std::vector<uint8_t>* input = nullptr;  // kChunks chunks of kChunkBytes * itemsize
  std::vector<uint8_t> encoded;       // Tessera's chunks, back to back (offsets below)
  std::vector<size_t> offsets, sizes;
  std::vector<uint8_t> decoded;
  std::vector<double> enc, dec, ref_enc, ref_dec;
  bool reference = false, identical = true;
#ifdef TESSERA_BENCH_BLOSC2
  b2nd_array_t* ref_array = nullptr;
  b2nd_context_t* ref_ctx = nullptr;
  std::vector<uint8_t> ref_encoded;
  std::vector<size_t> ref_sizes;
#endif
};

plugin_case case_make(const char* name, uint8_t codec_id, uint8_t meta, size_t itemsize, const std::vector<uint8_t>* in) {
  plugin_case c;
  c.name = name;
  c.codec_id = codec_id;
  c.meta = meta;
  c.itemsize = itemsize;
  c.input = in;
  return c;
}

chunk_encode_params params_of(const plugin_case& c) {
  chunk_encode_params p;
  p.typesize = static_cast<uint8_t>(c.itemsize);
  p.compressor = static_cast<codec>(c.codec_id);
  p.compcode_meta = c.meta;
  p.clevel = 5;
  for (auto& f : p.filters) f = static_cast<uint8_t>(filter_id::none);
  p.blocksize = static_cast<int32_t>(static_cast<size_t>(kBlock) * kBlock * c.itemsize);
  p.geometry.ndim = 2;
  p.geometry.blockshape[0] = kBlock;
  p.geometry.blockshape[1] = kBlock;
  return p;
}

#ifdef TESSERA_BENCH_BLOSC2
// The reference's b2nd array of the case's shapes, whose contexts carry the b2nd metalayer NDLZ and ZFP read.
bool reference_open(plugin_case& c) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = c.codec_id;
  cp.compcode_meta = c.meta;
  cp.clevel = 5;
  cp.typesize = static_cast<int32_t>(c.itemsize);
  cp.nthreads = 1;
  for (uint8_t& f : cp.filters) f = BLOSC_NOFILTER;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  st.dparams = &dp;
  st.contiguous = true;
  const int64_t shape[2] = {kImage, kImage};
  const int32_t chunkshape[2] = {kChunk, kChunk}, blockshape[2] = {kBlock, kBlock};
  c.ref_ctx = b2nd_create_ctx(&st, 2, shape, chunkshape, blockshape, c.itemsize == 1 ? "|u1" : "<f4",
                              DTYPE_NUMPY_FORMAT, nullptr, 0);
  if (c.ref_ctx == nullptr || b2nd_empty(c.ref_ctx, &c.ref_array) < 0) return false;
  const size_t n = kChunkBytes * c.itemsize;
  c.ref_encoded.assign((n + BLOSC2_MAX_OVERHEAD) * kChunks, 0);
  c.ref_sizes.assign(kChunks, 0);
  const int w = blosc2_compress_ctx(c.ref_array->sc->cctx, c.input->data(), static_cast<int32_t>(n),
                                    c.ref_encoded.data(), static_cast<int32_t>(n + BLOSC2_MAX_OVERHEAD));
  return w > 0;
}

void reference_encode(plugin_case& c) {
  const size_t n = kChunkBytes * c.itemsize;
  for (int k = 0; k < kChunks; ++k) {
    uint8_t* dst = c.ref_encoded.data() + static_cast<size_t>(k) * (n + BLOSC2_MAX_OVERHEAD);
    const int w = blosc2_compress_ctx(c.ref_array->sc->cctx, c.input->data() + n * k, static_cast<int32_t>(n), dst,
                                      static_cast<int32_t>(n + BLOSC2_MAX_OVERHEAD));
    if (w <= 0) die("blosc2_compress_ctx", make_error(errc::io, "the reference failed"));
    c.ref_sizes[static_cast<size_t>(k)] = static_cast<size_t>(w);
  }
}

void reference_decode(plugin_case& c) {
  const size_t n = kChunkBytes * c.itemsize;
  for (int k = 0; k < kChunks; ++k) {
    const uint8_t* src = c.ref_encoded.data() + static_cast<size_t>(k) * (n + BLOSC2_MAX_OVERHEAD);
    const int w = blosc2_decompress_ctx(c.ref_array->sc->dctx, src, static_cast<int32_t>(c.ref_sizes[static_cast<size_t>(k)]),
                                        c.decoded.data() + n * k, static_cast<int32_t>(n));
    if (w != static_cast<int>(n)) die("blosc2_decompress_ctx", make_error(errc::io, "the reference failed"));
  }
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  const char* only = nullptr;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (std::strcmp(argv[a], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[a + 1]));
    if (std::strcmp(argv[a], "--case") == 0) only = argv[a + 1];
  }
  const allocator alloc = posix_allocator();
#ifdef TESSERA_BENCH_BLOSC2
  blosc2_init();
  std::printf("reference: c-blosc2 %s (TESSERA_BENCH_BLOSC2_DIR), one thread\n", BLOSC2_VERSION_STRING);
#else
  std::printf("reference: not built (configure with -DTESSERA_BENCH_BLOSC2_DIR=<a c-blosc2 build>)\n");
#endif

  const std::vector<uint8_t> img = image_make();
  const std::vector<uint8_t> u1 = chunks_of(img.data(), 1);
  // A smooth float32 field for ZFP, the image's size in items.
  std::vector<float> field(static_cast<size_t>(kImage) * kImage);
  for (int y = 0; y < kImage; ++y)
    for (int x = 0; x < kImage; ++x)
      field[static_cast<size_t>(y) * kImage + x] = static_cast<float>(std::sin(y / 37.0) * std::cos(x / 23.0) * 100.0 + img[static_cast<size_t>(y) * kImage + x] / 64.0);
  const std::vector<uint8_t> f4 = chunks_of(reinterpret_cast<const uint8_t*>(field.data()), 4);

  std::vector<plugin_case> cases;
  cases.push_back(case_make("ndlz:4", 32, 4, 1, &u1));
  cases.push_back(case_make("ndlz:8", 32, 8, 1, &u1));
  cases.push_back(case_make("lz4", static_cast<uint8_t>(codec::lz4), 0, 1, &u1));
  // ZFP: accuracy 10^-2 (meta -2 as a signed byte), precision 16 bits, rate 25% of the float's bits.
  cases.push_back(case_make("zfp_acc:-2", 33, static_cast<uint8_t>(-2), 4, &f4));
  cases.push_back(case_make("zfp_prec:16", 34, 16, 4, &f4));
  cases.push_back(case_make("zfp_rate:25", 35, 25, 4, &f4));

  chunk_encoder enc;
  chunk_encoder_options eo;
  eo.max_blocksize = static_cast<size_t>(kBlock) * kBlock * 4;
  if (auto s = chunk_encoder_init(enc, alloc, eo); !s.ok()) die("chunk_encoder_init", s);
  chunk_decoder dec;
  chunk_decoder_options dopt;
  dopt.max_blocksize = eo.max_blocksize;
  dopt.geometry.ndim = 2;
  dopt.geometry.blockshape[0] = kBlock;
  dopt.geometry.blockshape[1] = kBlock;
  if (auto s = chunk_decoder_init(dec, alloc, dopt); !s.ok()) die("chunk_decoder_init", s);

  std::vector<plugin_case*> active;
  for (plugin_case& c : cases) {
    if (only != nullptr && std::strcmp(c.name, only) != 0) continue;
    if (!codec_available(static_cast<codec>(c.codec_id))) {
      std::printf("%-12s not in this build of Tessera: skipped\n", c.name);
      continue;
    }
    const size_t n = kChunkBytes * c.itemsize;
    c.encoded.assign(chunk_encode_bound(n) * kChunks, 0);
    c.offsets.assign(kChunks, 0);
    c.sizes.assign(kChunks, 0);
    c.decoded.assign(n * kChunks, 0);
#ifdef TESSERA_BENCH_BLOSC2
    c.reference = c.codec_id != static_cast<uint8_t>(codec::lz4) && reference_open(c);
    if (!c.reference && c.codec_id != static_cast<uint8_t>(codec::lz4))
      std::printf("%-12s the reference build does not run it (plugin off?): Tessera alone\n", c.name);
#endif
    active.push_back(&c);
  }

  std::vector<uint8_t> copy(u1.size());
  std::vector<double> memcpy_s;
  const auto encode = [&](plugin_case& c) {
    const chunk_encode_params p = params_of(c);
    const size_t n = kChunkBytes * c.itemsize;
    for (int k = 0; k < kChunks; ++k) {
      const size_t at = static_cast<size_t>(k) * chunk_encode_bound(n);
      auto w = chunk_encode(enc, p, bytes_view(c.input->data() + n * k, n),
                            bytes_mut(c.encoded.data() + at, chunk_encode_bound(n)));
      if (!w.ok()) die("chunk_encode", w.err());
      c.offsets[static_cast<size_t>(k)] = at;
      c.sizes[static_cast<size_t>(k)] = *w;
    }
  };
  const auto decode = [&](plugin_case& c) {
    const size_t n = kChunkBytes * c.itemsize;
    for (int k = 0; k < kChunks; ++k) {
      auto w = chunk_decode(dec, bytes_view(c.encoded.data() + c.offsets[static_cast<size_t>(k)], c.sizes[static_cast<size_t>(k)]),
                            bytes_mut(c.decoded.data() + n * k, n));
      if (!w.ok()) die("chunk_decode", w.err());
    }
  };
  for (int r = 0; r < rounds; ++r) {
    memcpy_s.push_back(seconds_of([&] { std::memcpy(copy.data(), u1.data(), u1.size()); }));
    for (plugin_case* c : active) {
      c->enc.push_back(seconds_of([&] { encode(*c); }));
#ifdef TESSERA_BENCH_BLOSC2
      if (c->reference) c->ref_enc.push_back(seconds_of([&] { reference_encode(*c); }));
#endif
      c->dec.push_back(seconds_of([&] { decode(*c); }));
#ifdef TESSERA_BENCH_BLOSC2
      if (c->reference) c->ref_dec.push_back(seconds_of([&] { reference_decode(*c); }));
#endif
    }
  }

  // Checks: lossless codecs decode the input; the reference's chunks are Tessera's.
  for (plugin_case* c : active) {
    decode(*c);
    if (c->codec_id <= 32 && c->decoded != *c->input) die(c->name, make_error(errc::corrupt, "decoded != input"));
#ifdef TESSERA_BENCH_BLOSC2
    if (c->reference) {
      const size_t n = kChunkBytes * c->itemsize;
      for (int k = 0; k < kChunks; ++k) {
        const size_t kk = static_cast<size_t>(k);
        const uint8_t* ref = c->ref_encoded.data() + kk * (n + BLOSC2_MAX_OVERHEAD);
        if (c->ref_sizes[kk] != c->sizes[kk] || std::memcmp(ref, c->encoded.data() + c->offsets[kk], c->sizes[kk]) != 0)
          c->identical = false;
      }
    }
#endif
  }

  const double mem = median(memcpy_s);
  const plugin_case* lz4 = nullptr;
  for (plugin_case* c : active)
    if (c->codec_id == static_cast<uint8_t>(codec::lz4)) lz4 = c;
  std::printf("data: %d x %d |u1 image (ZFP: the same shape of <f4), %d chunks of %d x %d, blocks %d x %d, clevel 5,"
              " no filter; medians of %d rounds\n", kImage, kImage, kChunks, kChunk, kChunk, kBlock, kBlock, rounds);
  std::printf("memcpy of the %zu image bytes: %.3f ms\n", u1.size(), mem * 1e3);
  std::printf("%-12s %9s %9s | %8s %8s | %8s %8s | %8s %8s | %s\n", "codec", "ratio", "MB", "enc ms", "dec ms",
              "enc/memcpy", "dec/memcpy", "enc/LZ4", "dec/LZ4", "reference time / Tessera time (enc, dec)");
  for (plugin_case* c : active) {
    size_t total = 0;
    for (size_t s : c->sizes) total += s;
    const double e = median(c->enc), d = median(c->dec);
    const double m = mem * static_cast<double>(c->itemsize);  // memcpy of the case's bytes
    std::printf("%-12s %9.2f %9.2f | %8.3f %8.3f | %8.1f %8.1f |", c->name,
                static_cast<double>(c->input->size()) / static_cast<double>(total), static_cast<double>(c->input->size()) / 1e6,
                e * 1e3, d * 1e3, e / m, d / m);
    if (lz4 != nullptr && c->itemsize == 1) std::printf(" %8.2f %8.2f |", e / median(lz4->enc), d / median(lz4->dec));
    else std::printf(" %8s %8s |", "-", "-");
    if (c->reference)
      std::printf(" %.2f, %.2f (chunks %s)", median(c->ref_enc) / e, median(c->ref_dec) / d,
                  c->identical ? "identical" : "DIFFER");
    std::printf("\n");
  }
#ifdef TESSERA_BENCH_BLOSC2
  for (plugin_case& c : cases) {
    if (c.ref_array != nullptr) (void)b2nd_free(c.ref_array);
    if (c.ref_ctx != nullptr) (void)b2nd_free_ctx(c.ref_ctx);
  }
  blosc2_destroy();
#endif
  for (plugin_case* c : active)
    if (c->reference && !c->identical) return 1;
  return 0;
}
