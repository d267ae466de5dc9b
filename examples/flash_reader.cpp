// SPDX-License-Identifier: BSD-3-Clause
// A decode-only firmware: a device that reads an array prepared on a laptop (a calibration table, a lookup grid,
// a model) and stored in its flash. The array is a B2ND frame written by the reference implementation
// (c-blosc2), linked into the image as a `const uint8_t[]` (flash_reader_data.hpp, generated at build time from a
// golden file): on a microcontroller it stays in flash and is read in place, execute-in-place style, through
// tessera::array_view, the decode-only reader over a frame in memory. Nothing of the frame is copied to RAM: the
// header, the index and the chunks are parsed and decoded where they are.
//
// It opens the array, reads one element and one 2-D slice, checks them against the reference's own decode, and
// prints the RAM it used: the high water of the arena all of Tessera's memory comes from. The goal (issue 12):
// one block plus 4 KiB besides the caller's output and the view object (the decoder sizes its scratch by what
// the chunk's pipeline needs, when it first needs it: a shuffled block whose few wanted elements are gathered in
// place needs that one block); with Zstd, plus Zstd's decoder context, whose size is printed. Exit status 0 when
// every value matches and the RAM goal is met.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "flash_reader_data.hpp"
#include "tessera/array_view.hpp"
#include "tessera/codecs.hpp"
#include "tessera/port/memory_storage.hpp"  // arena

using namespace tessera;

// The Zstd image (TESSERA_READER_ZSTD, examples/CMakeLists.txt) prints and allows Zstd's decoder context: its
// size from libzstd itself (a stable function of its static-context API; Tessera allocates exactly that).
#ifdef TESSERA_READER_ZSTD
extern "C" size_t ZSTD_estimateDCtxSize(void);
static size_t codec_context_bytes() { return ZSTD_estimateDCtxSize(); }
#else
static size_t codec_context_bytes() { return 0; }
#endif

namespace {

// What the reads may allocate besides one block: 4 KiB on 32-bit targets (issue 12's goal), twice that on 64-bit
// hosts, whose pointers and sizes are twice as wide.
constexpr size_t kOverhead = 1024 * sizeof(void*);

#ifndef TESSERA_READER_ARENA  // bytes; an image can ask for more (examples/CMakeLists.txt: flash_reader_zstd)
#define TESSERA_READER_ARENA (64 * 1024)
#endif
#ifndef TESSERA_READER_SLICE  // bytes of the output buffer
#define TESSERA_READER_SLICE (16 * 1024)
#endif
alignas(64) uint8_t g_arena[TESSERA_READER_ARENA];  // every byte Tessera allocates; the high water is what a device needs
uint8_t g_slice[TESSERA_READER_SLICE];   // the caller's output

#ifdef TESSERA_READER_STACK  // bytes: the stack the image may use (examples/CMakeLists.txt: part_image)
// The stack a whole run needs, measured: the free RAM below the caller, from the end of static data up (the
// stack grows down into it from the top of RAM: picolibc's linker script), is filled with a pattern first, and
// the deepest byte no longer holding it is the high water.
extern "C" char __ram[];
extern "C" char __end[];
extern "C" char __stack[];
constexpr uint8_t kPaint = 0xa5;

[[gnu::noinline]] void stack_paint() {
  volatile uint8_t here = 0;
  const uintptr_t top = reinterpret_cast<uintptr_t>(&here) - 64;  // below this function's own frame
  for (uintptr_t a = reinterpret_cast<uintptr_t>(__end); a < top; ++a) *reinterpret_cast<volatile uint8_t*>(a) = kPaint;
}

size_t stack_high_water() {
  uintptr_t a = reinterpret_cast<uintptr_t>(__end);
  while (a < reinterpret_cast<uintptr_t>(__stack) && *reinterpret_cast<const volatile uint8_t*>(a) == kPaint) ++a;
  return static_cast<size_t>(reinterpret_cast<uintptr_t>(__stack) - a);
}
#endif

int fail(const char* what, const error& e) {
  std::printf("flash_reader: %s: %s (%s)\n", what, e.message, errc_name(e.code));
  return 1;
}

void coords_print(const char* label, const int64_t* c, int ndim) {
  std::printf("%s(", label);
  for (int d = 0; d < ndim; ++d) std::printf(d == 0 ? "%lld" : ", %lld", static_cast<long long>(c[d]));
  std::printf(")");
}

// The item as a number when the dtype is a little-endian float32, else its bytes.
void item_print(span<const char> dtype, const uint8_t* item, size_t size) {
  if (size == 4 && dtype.size() == 3 && std::memcmp(dtype.data(), "<f4", 3) == 0) {
    float v;
    std::memcpy(&v, item, sizeof v);
    std::printf("%g", static_cast<double>(v));
    return;
  }
  for (size_t i = 0; i < size; ++i) std::printf("%02x", item[i]);
}

}  // namespace

int main() {
#ifdef TESSERA_READER_STACK
  stack_paint();
#endif
#ifdef TESSERA_READER_CODEC_LINK
  tessera::TESSERA_READER_CODEC_LINK();  // links the one codec library this array needs, its decoder only
#endif
#ifdef TESSERA_READER_FILTER_LINK
  tessera::TESSERA_READER_FILTER_LINK();  // and the filter it needs besides shuffle (an n-d plugin's)
#endif
  const flash_golden& g = kFlashGolden;
  arena heap;
  arena_init(heap, g_arena, sizeof g_arena);
  const allocator alloc = arena_allocator(heap);

  // No single allocation may follow a (corrupt) frame's claims past 256 KiB: the check counts the decoder's worst
  // case for the block size, codec contexts of hosted builds (Zstd, Zlib) included. What is really allocated is
  // bounded by the arena, and printed below.
  array_view_options options;
  options.max_alloc = 256 * 1024;
  array_view a;
  if (auto e = array_view_open(a, bytes_view(g.frame, g.frame_size), alloc, options); !e.ok()) return fail("array_view_open", e);
  const size_t open_bytes = heap.high_water;
  const array_layout& l = a.layout;
  const span<const char> dtype = a.dtype;
  const size_t itemsize = static_cast<size_t>(a.itemsize);
  const size_t blocksize = static_cast<size_t>(l.block_nitems) * itemsize;
  std::printf("%s: %u bytes in flash at %p, ndim %d, dtype %.*s, block %u bytes\n", g.name,
              static_cast<unsigned>(g.frame_size), static_cast<const void*>(g.frame), l.ndim,
              static_cast<int>(dtype.size()), dtype.data(), static_cast<unsigned>(blocksize));
  int wrong = l.ndim != g.ndim || itemsize != g.element_size;

  uint8_t item[16] = {};
  if (itemsize > sizeof item) {
    std::printf("flash_reader: items of %u bytes are wider than the example's buffer\n", static_cast<unsigned>(itemsize));
    return 1;
  }
  if (auto e = array_view_element_read(a, g.element_coords, bytes_mut(item, itemsize)); !e.ok()) return fail("element", e);
  const size_t element_bytes = heap.high_water;
  const bool element_ok = itemsize == g.element_size && std::memcmp(item, g.element_expected, itemsize) == 0;
  coords_print("element ", g.element_coords, l.ndim);
  std::printf(" = ");
  item_print(dtype, item, itemsize);
  std::printf(element_ok ? " (as the reference)\n" : " WRONG: the reference decodes ");
  if (!element_ok) {
    item_print(dtype, g.element_expected, g.element_size);
    std::printf("\n");
    ++wrong;
  }

  if (g.slice_size > sizeof g_slice) {
    std::printf("flash_reader: the slice (%u bytes) is larger than the output buffer\n",
                static_cast<unsigned>(g.slice_size));
    return 1;
  }
  if (auto e = array_view_slice_read(a, g.slice_start, g.slice_stop, bytes_mut(g_slice, g.slice_size)); !e.ok())
    return fail("slice", e);
  size_t differ = 0;
  for (size_t i = 0; i < g.slice_size; i += itemsize)
    differ += std::memcmp(g_slice + i, g.slice_expected + i, itemsize) != 0;
  coords_print("slice [", g.slice_start, l.ndim);
  coords_print(", ", g.slice_stop, l.ndim);
  std::printf(")): %u items, first ", static_cast<unsigned>(g.slice_size / itemsize));
  item_print(dtype, g_slice, itemsize);
  std::printf(", last ");
  item_print(dtype, g_slice + g.slice_size - itemsize, itemsize);
  if (differ == 0) {
    std::printf(" (all as the reference)\n");
  } else {
    std::printf(": %u items differ from the reference\n", static_cast<unsigned>(differ));
    ++wrong;
  }
  array_view_close(a);

  // The RAM: the arena's high water after each step.
  const size_t context = codec_context_bytes();
  const size_t goal = blocksize + kOverhead + context;
  std::printf("RAM (arena high water): open %u bytes, + element read %u bytes, + slice read %u bytes "
              "(goal one block + %u KiB", static_cast<unsigned>(open_bytes), static_cast<unsigned>(element_bytes),
              static_cast<unsigned>(heap.high_water), static_cast<unsigned>(kOverhead / 1024));
  if (context > 0) std::printf(" + Zstd decoder context %u bytes", static_cast<unsigned>(context));
  std::printf(" = %u bytes: %s); view object %u bytes (caller's)\n", static_cast<unsigned>(goal),
              heap.high_water <= goal ? "goal met" : "NOT MET", static_cast<unsigned>(sizeof a));
#ifdef TESSERA_READER_STACK
  // What the part's RAM holds: static data (the arena and the output buffer among it) and the stack (the link
  // checks static data + TESSERA_READER_STACK against the part's RAM: examples/part_ram.ld.in).
  const size_t used = stack_high_water();
  const size_t statics = static_cast<size_t>(__end - __ram);
  std::printf("RAM of the image: .data + .bss %u bytes (arena %u, output %u), stack %u bytes used of %u allowed: "
              "%u bytes in all with the allowance\n", static_cast<unsigned>(statics),
              static_cast<unsigned>(sizeof g_arena), static_cast<unsigned>(sizeof g_slice),
              static_cast<unsigned>(used), static_cast<unsigned>(TESSERA_READER_STACK),
              static_cast<unsigned>(statics + TESSERA_READER_STACK));
  if (used > TESSERA_READER_STACK) {
    std::printf("flash_reader: the run used %u bytes of stack, more than the %u allowed\n",
                static_cast<unsigned>(used), static_cast<unsigned>(TESSERA_READER_STACK));
    ++wrong;
  }
#endif
  if (heap.high_water > goal) {
    std::printf("flash_reader: the reads needed %u bytes of RAM, more than the goal's %u\n",
                static_cast<unsigned>(heap.high_water), static_cast<unsigned>(goal));
    ++wrong;
  }
  return wrong == 0 ? 0 : 1;
}
