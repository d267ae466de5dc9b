// SPDX-License-Identifier: BSD-3-Clause
// A data logger as firmware writes one: a 3-axis sensor (int16 x, y, z) is sampled into a 2-D B2ND array of
// shape (N, 3) on raw NOR flash, N not known in advance: the session records a vibration event until it dies
// down. Samples collect in a RAM buffer of one chunk (256 rows); each full chunk is packed (array_chunk_pack: the
// exact chunk the reference would write) and appended to the flash frame, where a power cut no longer loses it.
// When the event ends, the partial last chunk is padded with zeros (as the reference pads it) and appended, the
// "b2nd" metalayer gets the final shape (flash_frame_meta_update) and the frame is finalized: the flash region
// then holds a plain Blosc2 cframe. The flash is memory-mapped (as a microcontroller's internal flash is), so the
// logger reads slices back in place with the decode-only reader (tessera::array_view: no copy, no frame state,
// one block of RAM), and writes the frame out as a file (over semihosting on the Cortex-M4) that c-blosc2,
// python-blosc2 and `tessera info` open. (A chip that is not mapped, SPI NOR behind a driver, is read through
// flash_frame_storage and array_open instead.)
//
// The array grows: it is created with shape (0, 3); its metalayer is written with the header, at finalize, so
// until then it can be replaced by one of the same size (the shape's fields are fixed-width int64, so
// b2nd_meta_encode gives the same size for any N). After a reset, flash_frame_mount takes the params of create
// (shape (0, 3)) and finds the chunks appended; the firmware then updates the shape again before finalizing.
//
// No heap: every byte comes from an arena over a static buffer. The device is the simulated NOR of the tests;
// on a board, fill a flash_device with the driver's read/prog/erase/sync callbacks instead.
// Usage: firmware_logger [-o OUT]   (default OUT: firmware_log.b2nd in the working directory). An option, not a
// bare argument: on the Cortex-M4 under QEMU, picolibc's semihosting argv holds the ELF's path first.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/array_view.hpp"
#include "tessera/codecs.hpp"
#include "tessera/port/flash_frame.hpp"
#include "tessera/port/flash_sim.hpp"

using namespace tessera;

// The codec of the chunks: BloscLZ is always built (also on the Cortex-M4); a build with a codec library can
// compile the logger with another one, e.g. -DTESSERA_LOGGER_CODEC=lz4 (examples/CMakeLists.txt: firmware_logger_lz4).
#ifndef TESSERA_LOGGER_CODEC
#define TESSERA_LOGGER_CODEC blosclz
#endif

namespace {

constexpr int32_t kAxes = 3;
constexpr int32_t kChunkRows = 256;
constexpr int32_t kBlockRows = 64;
constexpr int64_t kMaxSamples = 32 * kChunkRows;  // a session cut short if the event never ends
// The event has ended when x stays within +-kQuietLevel for kQuietRows samples in a row.
constexpr int kQuietLevel = 8;
constexpr int64_t kQuietRows = 128;

alignas(64) uint8_t g_arena[512 * 1024];
int16_t g_chunk_items[kChunkRows * kAxes];  // the chunk being filled, C order (row = one sample)
array_frame_setup g_setup;                  // the array's frame params (shape (0, 3)); large: static, not on
array_frame_setup g_chunk_setup;            // the stack. A one-chunk array's: for the packer (see main)
uint8_t g_meta[sizeof g_setup.meta_bytes];  // the b2nd metalayer with the final shape

int fail(const char* what, const error& e) {
  std::printf("firmware_logger: %s: %s (%s)\n", what, e.message, errc_name(e.code));
  return 1;
}

// The synthetic sensor, an accelerometer in 1/4096 g: gravity on z, a vibration on each axis (scaled sines of
// different periods, decaying: the event dies down) and a small deterministic noise (a 32-bit LCG, so the same
// samples come back for the check).
struct sensor {
  uint32_t noise = 12345;
};

int16_t sensor_axis(sensor& s, int64_t t, int axis) {
  static constexpr float kPeriod[kAxes] = {97.0f, 251.0f, 613.0f};
  static constexpr float kAmplitude[kAxes] = {300.0f, 180.0f, 120.0f};
  static constexpr int kOffset[kAxes] = {0, 0, 4096};
  s.noise = s.noise * 1664525u + 1013904223u;
  const int noise = static_cast<int>((s.noise >> 16) % 9) - 4;  // -4..4
  const float phase = 6.2831853f * static_cast<float>(t % 100000) / kPeriod[axis];
  const float decay = std::exp(-static_cast<float>(t) / 600.0f);
  return static_cast<int16_t>(kOffset[axis] + static_cast<int>(kAmplitude[axis] * decay * std::sin(phase)) + noise);
}

void sensor_sample(sensor& s, int64_t t, int16_t* xyz) {
  for (int axis = 0; axis < kAxes; ++axis) xyz[axis] = sensor_axis(s, t, axis);
}

}  // namespace

int main(int argc, char** argv) {
#ifdef TESSERA_LOGGER_LINK_LZ4
  codec_link_lz4_encoder();  // a firmware links the codec libraries it names, nothing else (tessera/codecs.hpp)
  codec_link_lz4_decoder();
#endif
  const char* out_path = "firmware_log.b2nd";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "-o") == 0) out_path = argv[i + 1];
  arena heap;
  arena_init(heap, g_arena, sizeof g_arena);
  const allocator alloc = arena_allocator(heap);

  flash_sim_config sc;  // 16 sectors of 4 KiB, byte-programmable NOR
  sc.sector_count = 16;
  flash_sim sim;
  if (auto e = flash_sim_init(sim, sc, alloc); !e.ok()) return fail("flash", e);
  flash_sim_fill_random(sim, 7);  // a used part: what was there before must not leak into the array
  flash_log_config lc;
  lc.device = flash_sim_device(sim);

  array_params p;
  p.ndim = 2;
  p.shape[0] = 0;  // nothing logged yet: the shape is set at the end
  p.shape[1] = kAxes;
  p.chunkshape[0] = kChunkRows;
  p.chunkshape[1] = kAxes;
  p.blockshape[0] = kBlockRows;
  p.blockshape[1] = kAxes;
  p.dtype = span<const char>("<i2", 3);
  p.compressor = codec::TESSERA_LOGGER_CODEC;
  if (auto e = array_frame_setup_make(g_setup, p); !e.ok()) return fail("setup", e);
  // The packer cuts chunks out of the array's shape, which has none yet: give it a one-chunk array of the same
  // geometry and pack every chunk as that one (a chunk's bytes depend on its items and the codec params only).
  p.shape[0] = kChunkRows;
  if (auto e = array_frame_setup_make(g_chunk_setup, p); !e.ok()) return fail("setup", e);
  if (g_chunk_setup.frame.chunksize != g_setup.frame.chunksize ||
      g_chunk_setup.frame.blocksize != g_setup.frame.blocksize) {
    std::printf("firmware_logger: the packer's chunks differ from the array's\n");
    return 1;
  }

  flash_frame ff;
  if (auto e = flash_frame_create(ff, lc, alloc, g_setup.frame); !e.ok()) return fail("create", e);
  array_chunk_packer packer;
  if (auto e = array_chunk_packer_init(packer, g_chunk_setup, alloc); !e.ok()) return fail("packer", e);

  // Acquisition: one sample per tick, until the event is over; a chunk goes to flash as soon as it is full (or
  // the session ends: the rows after the last sample are zeros, the padding the reference writes).
  sensor s;
  int64_t samples = 0;
  int64_t nchunk = 0;
  int32_t rows = 0;
  int64_t quiet = 0;
  bool ended = false;
  while (!ended) {
    int16_t* xyz = g_chunk_items + rows * kAxes;
    sensor_sample(s, samples, xyz);
    ++samples;
    ++rows;
    quiet = xyz[0] >= -kQuietLevel && xyz[0] <= kQuietLevel ? quiet + 1 : 0;
    ended = quiet == kQuietRows || samples == kMaxSamples;
    if (rows < kChunkRows && !ended) continue;
    std::memset(g_chunk_items + rows * kAxes, 0, static_cast<size_t>(kChunkRows - rows) * kAxes * sizeof(int16_t));
    auto chunk = array_chunk_pack(packer, 0, bytes_view(reinterpret_cast<const uint8_t*>(g_chunk_items),
                                                        sizeof g_chunk_items));
    if (!chunk.ok()) return fail("pack", chunk.err());
    if (auto e = flash_frame_append(ff, *chunk); !e.ok()) return fail("append", e);
    ++nchunk;
    rows = 0;
  }
  // The final shape into the b2nd metalayer: the one of create, re-encoded with N rows (the same size).
  auto meta = b2nd_meta_decode(g_setup.metalayers[0].content);
  if (!meta.ok()) return fail("b2nd meta", meta.err());
  meta->shape[0] = samples;
  auto meta_len = b2nd_meta_encode(*meta, bytes_mut(g_meta, sizeof g_meta));
  if (!meta_len.ok()) return fail("b2nd meta", meta_len.err());
  if (auto e = flash_frame_meta_update(ff, g_setup.metalayers[0].name, bytes_view(g_meta, *meta_len)); !e.ok())
    return fail("meta update", e);
  if (auto e = flash_frame_finalize(ff); !e.ok()) return fail("finalize", e);
  std::printf("logged %lld samples in %lld chunks; frame of %llu bytes (raw %lld bytes); arena high water %u bytes\n",
              static_cast<long long>(samples), static_cast<long long>(nchunk),
              static_cast<unsigned long long>(ff.frame_len),
              static_cast<long long>(samples * kAxes * static_cast<int64_t>(sizeof(int16_t))),
              static_cast<unsigned>(heap.high_water));

  // The finalized flash region is an ordinary array: read it in place, rows [1534, 1540) (across a chunk
  // boundary) and the last rows (in the padded chunk).
  const bytes_view frame = flash_frame_view(ff);
  if (frame.empty()) {
    std::printf("firmware_logger: the flash is not memory-mapped (read it with flash_frame_storage and array_open)\n");
    return 1;
  }
  array_view a;
  if (auto e = array_view_open(a, frame, alloc); !e.ok()) return fail("array_view_open", e);
  const array_layout& l = a.layout;
  const span<const char> dt = a.dtype;
  std::printf("array: shape (%lld, %lld), dtype %.*s\n", static_cast<long long>(l.shape[0]),
              static_cast<long long>(l.shape[1]), static_cast<int>(dt.size()), dt.data());
  int wrong = l.ndim != 2 || l.shape[0] != samples || l.shape[1] != kAxes;
  const int64_t starts[2] = {1534 < samples ? 1534 : 0, samples - 3};
  for (const int64_t first : starts) {
    constexpr int64_t kRows = 6;
    const int64_t n = first + kRows <= samples ? kRows : samples - first;
    const int64_t start[2] = {first, 0}, stop[2] = {first + n, kAxes};
    int16_t slice[kRows * kAxes];
    if (auto e = array_view_slice_read(a, start, stop, bytes_mut(reinterpret_cast<uint8_t*>(slice), sizeof slice)); !e.ok())
      return fail("slice", e);
    // The expected samples: the sensor again from the start (its noise is a sequence).
    sensor again;
    int16_t want[kAxes];
    for (int64_t t = 0; t < first; ++t) sensor_sample(again, t, want);
    std::printf("rows [%lld:%lld, 0:3]:\n", static_cast<long long>(first), static_cast<long long>(first + n));
    for (int64_t r = 0; r < n; ++r) {
      sensor_sample(again, first + r, want);
      std::printf("  %6d %6d %6d\n", slice[r * kAxes], slice[r * kAxes + 1], slice[r * kAxes + 2]);
      for (int axis = 0; axis < kAxes; ++axis) wrong += slice[r * kAxes + axis] != want[axis];
    }
  }
  array_view_close(a);

  // The image: the frame's bytes, straight from flash, into a host file.
  const size_t image_len = frame.size();
  std::FILE* f = std::fopen(out_path, "wb");
  if (f == nullptr) {
    std::printf("firmware_logger: cannot create %s\n", out_path);
    return 1;
  }
  const bool written = std::fwrite(frame.data(), 1, image_len, f) == image_len;
  if (std::fclose(f) != 0 || !written) {
    std::printf("firmware_logger: writing %s failed\n", out_path);
    return 1;
  }
  std::printf("wrote %s (%u bytes)\n", out_path, static_cast<unsigned>(image_len));
  flash_frame_close(ff);
  flash_sim_release(sim);
  if (wrong != 0) std::printf("firmware_logger: %d values differ from the samples logged\n", wrong);
  return wrong == 0 ? 0 : 1;
}
