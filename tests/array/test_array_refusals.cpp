// SPDX-License-Identifier: BSD-3-Clause
// What the array API refuses, and with which code: every call on an array that is not open (invalid_argument),
// every writing call on an array opened read-only (read_only, the storage untouched), parameters out of range
// at create, and the b2nd metalayer, which belongs to the array.
#include <cstdint>
#include <cstring>

#include "tessera/array.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../support/check.hpp"
#include "../support/test_allocators.hpp"
#include "array_testing.hpp"

using namespace tessera;
using namespace array_test;

namespace {

array_params small_params() {
  array_params p;
  p.ndim = 2;
  p.shape[0] = 6;
  p.shape[1] = 8;
  p.chunkshape[0] = 3;
  p.chunkshape[1] = 4;
  p.blockshape[0] = 3;
  p.blockshape[1] = 2;
  p.dtype = str("<i2");
  return p;
}

const int64_t kStart[2] = {1, 1};
const int64_t kStop[2] = {2, 3};
const int64_t kShape[2] = {6, 8};
const int64_t kRows[1] = {2};
const int64_t* const kIndices[2] = {kRows, kRows};
const int64_t kCounts[2] = {1, 1};
const bool kAxes[3] = {true, false, false};

// Every call that takes an array, on `a`: the code each returns (reads and writes alike).
void every_call_is(test::context& t, array& a, errc want, bool writes_only) {
  uint8_t out[64] = {};
  const bytes_view item(out, 2);
  const bytes_view two(out, 4);
  if (!writes_only) {
    CHECK_ERR(array_read(a, bytes_mut(out, 96)), want);
    CHECK_ERR(array_slice_read(a, kStart, kStop, bytes_mut(out, 4)), want);
    CHECK_ERR(array_element_read(a, kStart, bytes_mut(out, 2)), want);
    CHECK_ERR(array_orthogonal_read(a, kIndices, kCounts, bytes_mut(out, 2)), want);
    CHECK_ERR(array_slice_read_into(a, kStart, kStop, bytes_mut(out, 64), kShape, nullptr), want);
    CHECK_ERR(array_meta_find(a, str("b2nd")), want);
    CHECK_ERR(array_meta_name(a, 0), want);
    CHECK_ERR(array_vlmeta_name(a, 0), want);
    CHECK_ERR(array_vlmeta_nbytes(a, str("note")), want);
    CHECK_ERR(array_vlmeta_read(a, str("note"), bytes_mut(out, sizeof out)), want);
    CHECK_ERR(array_refresh(a), want);
    CHECK(array_meta_count(a) == 0);
    CHECK(array_vlmeta_count(a) == 0);
    CHECK(!array_meta_exists(a, str("b2nd")));
    CHECK(!array_vlmeta_exists(a, str("note")));
    CHECK(!array_dirty(a));
    array other;
    CHECK_ERR(array_open_again(other, a, test::system_allocator()), want);
    CHECK(!array_is_open(other));
  }
  CHECK_ERR(array_slice_write(a, kStart, kStop, two), want);
  CHECK_ERR(array_element_write(a, kStart, item), want);
  CHECK_ERR(array_orthogonal_write(a, kIndices, kCounts, item), want);
  CHECK_ERR(array_slice_write_from(a, kStart, kStop, bytes_view(out, 96), kShape, nullptr), want);
  CHECK_ERR(array_meta_update(a, str("extra"), two), want);
  CHECK_ERR(array_vlmeta_write(a, str("note"), two), want);
  CHECK_ERR(array_vlmeta_delete(a, str("note")), want);
  CHECK_ERR(array_resize(a, kShape), want);
  CHECK_ERR(array_resize_at(a, kShape, nullptr), want);
  CHECK_ERR(array_insert(a, 0, 6, 3, bytes_view(out, 48)), want);
  CHECK_ERR(array_append(a, 0, 1, bytes_view(out, 16)), want);
  CHECK_ERR(array_delete(a, 0, 0, 3), want);
}

}  // namespace

TESSERA_TEST(array_refusals, every_call_on_an_array_not_open_is_invalid_argument) {
  array a;
  every_call_is(t, a, errc::invalid_argument, false);
  CHECK_ERR(array_commit(a), errc::invalid_argument);
  CHECK_ERR(array_compact(a), errc::invalid_argument);
  CHECK(!array_is_open(a));
  // The calls that make arrays from it refuse it too, and leave their destination closed.
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  const storage st = growable_buffer_storage(g);
  const array_target target = array_target_contiguous(st);
  const allocator al = test::system_allocator();
  array dst;
  CHECK_ERR(array_copy(dst, target, al, a), errc::invalid_argument);
  CHECK_ERR(array_slice_copy(dst, target, al, a, kStart, kStop), errc::invalid_argument);
  CHECK_ERR(array_concatenate(dst, target, al, a, a, 0), errc::invalid_argument);
  CHECK_ERR(array_squeeze(dst, target, al, a), errc::invalid_argument);
  CHECK_ERR(array_expand_dims(dst, target, al, a, kAxes, 3), errc::invalid_argument);
  CHECK_ERR(array_save(dst, target, al, a), errc::invalid_argument);
  CHECK(!array_is_open(dst));
  CHECK(g.size() == 0);
}

TESSERA_TEST(array_refusals, every_write_on_a_read_only_array_is_read_only) {
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  const storage st = growable_buffer_storage(g);
  const uint8_t extra_content[2] = {0x92, 0x01};
  frame_metalayer_init extra{str("extra"), bytes_view(extra_content, sizeof extra_content)};
  array_params p = small_params();
  p.metalayers = &extra;
  p.nmetalayers = 1;
  {
    array w;
    REQUIRE_OK(array_create(w, array_target_contiguous(st), test::system_allocator(), p, array_fill_zeros()));
    REQUIRE_OK(array_vlmeta_write(w, str("note"), bytes_view(extra_content, sizeof extra_content)));
    REQUIRE_OK(array_close(w));
  }
  buf before;
  REQUIRE(before.make(g.size()));
  std::memcpy(before.data(), g.bytes().data(), g.size());
  test::counting_allocator counting;
  array a;
  REQUIRE_OK(array_open(a, st, counting.get()));
  every_call_is(t, a, errc::read_only, true);
  CHECK(!array_dirty(a));
  // So are compaction and commits.
  CHECK_ERR(array_compact(a), errc::read_only);
  CHECK_ERR(array_commit(a), errc::read_only);
  // The same array cannot be opened again into itself.
  CHECK_ERR(array_open_again(a, a, test::system_allocator()), errc::invalid_argument);
  CHECK(array_is_open(a));
  CHECK_OK(array_close(a));
  CHECK(!counting.leaked());
  CHECK(g.size() == before.n && std::memcmp(g.bytes().data(), before.data(), before.n) == 0);
}

TESSERA_TEST(array_refusals, the_b2nd_metalayer_belongs_to_the_array) {
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  const storage st = growable_buffer_storage(g);
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(st), test::system_allocator(), small_params(), array_fill_zeros()));
  const uint8_t content[3] = {0x93, 0x01, 0x02};
  CHECK_ERR(array_meta_update(a, str("b2nd"), bytes_view(content, sizeof content)), errc::invalid_argument);
  CHECK_ERR(array_meta_update(a, str("caterva"), bytes_view(content, sizeof content)), errc::invalid_argument);
  CHECK(!array_dirty(a));
  CHECK_OK(array_close(a));
}

namespace {

struct params_case {
  const char* name;
  void (*spoil)(array_params& p);
  errc want;
};

frame_metalayer_init g_metas[kFrameMaxMetalayers + 1];
const uint8_t kContent[1] = {0xc0};
char g_long_dtype[kArrayMaxDtypeLen + 2];

void spoil_ndim(array_params& p) { p.ndim = kMaxDims + 1; }
void spoil_negative_ndim(array_params& p) { p.ndim = -1; }
void spoil_negative_itemsize(array_params& p) { p.itemsize = -2; }
void spoil_long_dtype(array_params& p) { p.dtype = span<const char>(g_long_dtype, kArrayMaxDtypeLen + 1); }
void spoil_unknown_dtype(array_params& p) { p.dtype = str("<x7"); }
void spoil_no_dtype(array_params& p) { p.dtype = span<const char>(); }
void spoil_disagreeing_itemsize(array_params& p) { p.itemsize = 4; }
void spoil_clevel_low(array_params& p) { p.clevel = -1; }
void spoil_clevel_high(array_params& p) { p.clevel = 10; }
void spoil_many_metalayers(array_params& p) {
  for (auto& m : g_metas) m = frame_metalayer_init{str("m"), bytes_view(kContent, 1)};
  p.metalayers = g_metas;
  p.nmetalayers = kFrameMaxMetalayers;  // one more than the array may add besides b2nd
}
void spoil_metalayers_null(array_params& p) { p.nmetalayers = 1; }
void spoil_metalayer_b2nd(array_params& p) {
  g_metas[0] = frame_metalayer_init{str("b2nd"), bytes_view(kContent, 1)};
  p.metalayers = g_metas;
  p.nmetalayers = 1;
}
void spoil_metalayer_caterva(array_params& p) {
  g_metas[0] = frame_metalayer_init{str("caterva"), bytes_view(kContent, 1)};
  p.metalayers = g_metas;
  p.nmetalayers = 1;
}
void spoil_huge_block(array_params& p) {  // a block of 2^31 items of 2 bytes: past the format's block size
  p.ndim = 2;
  p.shape[0] = p.shape[1] = int64_t{1} << 16;
  p.chunkshape[0] = p.chunkshape[1] = 1 << 15;
  p.blockshape[0] = p.blockshape[1] = 1 << 15;
}

const params_case kParamsCases[] = {
    {"ndim past kMaxDims", spoil_ndim, errc::invalid_argument},
    {"ndim -1", spoil_negative_ndim, errc::invalid_argument},
    {"itemsize -2", spoil_negative_itemsize, errc::invalid_argument},
    {"dtype too long", spoil_long_dtype, errc::invalid_argument},
    {"unknown dtype, no itemsize", spoil_unknown_dtype, errc::invalid_argument},
    {"no dtype, no itemsize", spoil_no_dtype, errc::invalid_argument},
    {"itemsize disagreeing with the dtype", spoil_disagreeing_itemsize, errc::invalid_argument},
    {"clevel -1", spoil_clevel_low, errc::invalid_argument},
    {"clevel 10", spoil_clevel_high, errc::invalid_argument},
    {"too many metalayers", spoil_many_metalayers, errc::invalid_argument},
    {"metalayers null", spoil_metalayers_null, errc::invalid_argument},
    {"a metalayer named b2nd", spoil_metalayer_b2nd, errc::invalid_argument},
    {"a metalayer named caterva", spoil_metalayer_caterva, errc::invalid_argument},
    {"a block past the format's largest", spoil_huge_block, errc::overflow},
};

}  // namespace

TESSERA_TEST(array_refusals, parameters_out_of_range_are_refused_before_anything_is_written) {
  std::memset(g_long_dtype, 'x', sizeof g_long_dtype);
  for (const params_case& c : kParamsCases) {
    growable_buffer g;
    growable_buffer_init(g, test::system_allocator());
    const storage st = growable_buffer_storage(g);
    test::counting_allocator counting;
    array_params p = small_params();
    c.spoil(p);
    array a;
    const status s = array_create(a, array_target_contiguous(st), counting.get(), p, array_fill_zeros());
    if (s.code != c.want) {
      char text[160];
      std::snprintf(text, sizeof text, "%s: %s (%s)", c.name, errc_name(s.code), s.message);
      test::report_failure(t, __FILE__, __LINE__, text);
    }
    CHECK(!array_is_open(a));
    CHECK(g.size() == 0);
    CHECK(!counting.leaked());
    // array_frame_setup_make (the flash writer's way in) checks the same.
    array_frame_setup setup;
    CHECK(array_frame_setup_make(setup, p).code == c.want);
  }
  // A target with both a storage and a directory, or neither.
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  const storage st = growable_buffer_storage(g);
  memory_directory md;
  REQUIRE_OK(memory_directory_init(md, test::system_allocator(), 4));
  array_target both = array_target_contiguous(st);
  both.dir = memory_directory_interface(md);
  array a;
  CHECK_ERR(array_create(a, both, test::system_allocator(), small_params(), array_fill_zeros()), errc::invalid_argument);
  array_target neither = both;
  neither.st = storage{};
  neither.dir = storage_directory{};
  CHECK_ERR(array_create(a, neither, test::system_allocator(), small_params(), array_fill_zeros()), errc::invalid_argument);
  // A target kept after the storage struct it was made from is gone (held by value): the array is created
  // in the buffer, and a sparse target likewise in the directory.
  {
    growable_buffer kept_buf;
    growable_buffer_init(kept_buf, test::system_allocator());
    const array_target kept = array_target_contiguous(growable_buffer_storage(kept_buf));
    const array_target kept_sparse = array_target_sparse(memory_directory_interface(md));
    array k;
    REQUIRE_OK(array_create(k, kept, test::system_allocator(), small_params(), array_fill_zeros()));
    REQUIRE_OK(array_close(k));
    CHECK(kept_buf.bytes().size() > 0);
    REQUIRE_OK(array_create(k, kept_sparse, test::system_allocator(), small_params(), array_fill_zeros()));
    REQUIRE_OK(array_close(k));
    CHECK(memory_directory_find(md, "chunks.b2frame").size() > 0);
  }
  // A fill of an unknown kind.
  array_fill odd = array_fill_zeros();
  odd.kind = static_cast<array_fill_kind>(99);
  CHECK_ERR(array_create(a, array_target_contiguous(st), test::system_allocator(), small_params(), odd),
            errc::invalid_argument);
  CHECK(!array_is_open(a));
  CHECK(g.size() == 0);
}

TESSERA_TEST(array_refusals, arrays_made_from_arrays_refuse_what_does_not_fit) {
  growable_buffer g1, g2, g3;
  growable_buffer_init(g1, test::system_allocator());
  growable_buffer_init(g2, test::system_allocator());
  growable_buffer_init(g3, test::system_allocator());
  const storage s1 = growable_buffer_storage(g1), s2 = growable_buffer_storage(g2), s3 = growable_buffer_storage(g3);
  const allocator al = test::system_allocator();
  array a, b, dst;
  REQUIRE_OK(array_create(a, array_target_contiguous(s1), al, small_params(), array_fill_zeros()));
  array_params other = small_params();
  other.shape[0] = 5;  // 5 x 8 "<i2"
  REQUIRE_OK(array_create(b, array_target_contiguous(s2), al, other, array_fill_zeros()));
  const array_target target = array_target_contiguous(s3);
  // The destination cannot be a source.
  CHECK_ERR(array_copy(a, target, al, a), errc::invalid_argument);
  CHECK_ERR(array_slice_copy(a, target, al, a, kStart, kStop), errc::invalid_argument);
  CHECK_ERR(array_concatenate(a, target, al, a, b, 0), errc::invalid_argument);
  CHECK_ERR(array_concatenate(b, target, al, a, b, 0), errc::invalid_argument);
  CHECK_ERR(array_expand_dims(a, target, al, a, kAxes, 3), errc::invalid_argument);
  CHECK_ERR(array_save(a, target, al, a), errc::invalid_argument);
  // Slices outside the source.
  const int64_t past[2] = {7, 3}, reversed[2] = {1, 0};
  CHECK_ERR(array_slice_copy(dst, target, al, a, kStart, past), errc::out_of_range);
  CHECK_ERR(array_slice_copy(dst, target, al, a, kStart, reversed), errc::out_of_range);
  // Concatenation: an axis outside, extents that differ off the axis, other itemsizes or dtypes.
  CHECK_ERR(array_concatenate(dst, target, al, a, b, 2), errc::invalid_argument);
  CHECK_ERR(array_concatenate(dst, target, al, a, b, -1), errc::invalid_argument);
  CHECK_ERR(array_concatenate(dst, target, al, a, b, 1), errc::invalid_argument);
  array c;
  growable_buffer g4;
  growable_buffer_init(g4, test::system_allocator());
  const storage s4 = growable_buffer_storage(g4);
  array_params wide = small_params();
  wide.dtype = str("<i4");
  REQUIRE_OK(array_create(c, array_target_contiguous(s4), al, wide, array_fill_zeros()));
  CHECK_ERR(array_concatenate(dst, target, al, a, c, 0), errc::invalid_argument);
  CHECK_OK(array_close(c));
  growable_buffer_release(g4);
  growable_buffer_init(g4, test::system_allocator());
  array_params unsigned_items = small_params();
  unsigned_items.dtype = str("<u2");
  REQUIRE_OK(array_create(c, array_target_contiguous(s4), al, unsigned_items, array_fill_zeros()));
  CHECK_ERR(array_concatenate(dst, target, al, a, c, 0), errc::invalid_argument);
  CHECK_OK(array_close(c));
  // expand_dims: fewer dimensions than the source, none marked new, or too many marked.
  const bool none[3] = {false, false, false}, all[3] = {true, true, true};
  CHECK_ERR(array_expand_dims(dst, target, al, a, kAxes, 1), errc::invalid_argument);
  CHECK_ERR(array_expand_dims(dst, target, al, a, nullptr, 3), errc::invalid_argument);
  CHECK_ERR(array_expand_dims(dst, target, al, a, none, 3), errc::invalid_argument);
  CHECK_ERR(array_expand_dims(dst, target, al, a, all, 3), errc::invalid_argument);
  CHECK_ERR(array_expand_dims(dst, target, al, a, kAxes, kMaxDims + 1), errc::invalid_argument);
  CHECK(!array_is_open(dst));
  CHECK(g3.size() == 0);
  CHECK_OK(array_close(a));
  CHECK_OK(array_close(b));
}

// Coordinates and positions outside the array, each with its code, and nothing written: element reads and writes
// below 0 and at the extent, inserts at a position past the extent or before 0, deletes reaching past the end,
// resizes to a negative extent, concatenations along an axis the arrays do not have.
TESSERA_TEST(array_refusals, coordinates_and_positions_outside_the_array) {
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(growable_buffer_storage(g)), test::system_allocator(),
                          small_params(), array_fill_zeros()));
  const size_t size_before = g.size();
  uint8_t item[2] = {1, 2};
  const int64_t below[2] = {-1, 0}, at_extent[2] = {2, 8};
  CHECK_ERR(array_element_write(a, below, bytes_view(item, 2)), errc::out_of_range);
  CHECK_ERR(array_element_write(a, at_extent, bytes_view(item, 2)), errc::out_of_range);
  CHECK_ERR(array_element_read(a, below, bytes_mut(item, 2)), errc::out_of_range);
  CHECK_ERR(array_element_read(a, at_extent, bytes_mut(item, 2)), errc::out_of_range);
  uint8_t rows[2 * 8 * 2] = {};
  CHECK_ERR(array_insert(a, 0, 7, 1, bytes_view(rows, 16)), errc::out_of_range);
  CHECK_ERR(array_insert(a, 0, -1, 1, bytes_view(rows, 16)), errc::out_of_range);
  CHECK_ERR(array_insert(a, 0, 0, -1, bytes_view(rows, 16)), errc::invalid_argument);
  CHECK_ERR(array_insert(a, 2, 0, 1, bytes_view(rows, 16)), errc::invalid_argument);  // no axis 2
  CHECK_ERR(array_delete(a, 0, 5, 2), errc::out_of_range);
  const int64_t negative[2] = {6, -8};
  CHECK_ERR(array_resize(a, negative), errc::invalid_argument);
  growable_buffer g2;
  growable_buffer_init(g2, test::system_allocator());
  array c;
  CHECK_ERR(array_concatenate(c, array_target_contiguous(growable_buffer_storage(g2)), test::system_allocator(), a, a, 2),
            errc::invalid_argument);
  CHECK(!array_is_open(c));
  // Nothing changed: the shape and a zero item where the refused writes aimed.
  CHECK_EQ(array_layout_get(a).shape[0], 6);
  CHECK_EQ(array_layout_get(a).shape[1], 8);
  const int64_t origin[2] = {0, 0};
  REQUIRE_OK(array_element_read(a, origin, bytes_mut(item, 2)));
  CHECK(item[0] == 0 && item[1] == 0);
  CHECK_OK(array_close(a));
  CHECK_EQ(g.size(), size_before);
}

// Each argument of the reads, the slice buffers, insert, delete and the copies out of range in turn, with its
// code; the edge cases that are no error (nothing selected, nothing inserted or deleted, a scalar's null
// coordinates) succeed and change nothing.
TESSERA_TEST(array_refusals, each_argument_out_of_range_in_turn) {
  growable_buffer g, g2;
  growable_buffer_init(g, test::system_allocator());
  growable_buffer_init(g2, test::system_allocator());
  const allocator al = test::system_allocator();
  const storage s = growable_buffer_storage(g), s2 = growable_buffer_storage(g2);  // the targets point at these
  const array_target target = array_target_contiguous(s2);
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(s), al, small_params(),
                          array_fill_full(bytes_view(reinterpret_cast<const uint8_t*>("\x07\x00"), 2))));
  const size_t size_before = g.size();
  uint8_t out[6 * 8 * 2] = {};

  // Orthogonal reads: a negative count, a count with no indices, a selection whose size overflows, an index
  // below 0; no items selected (a count of 0 with no indices) reads nothing.
  const int64_t two[2] = {1, 2}, below[1] = {-1};
  const int64_t* const with_null[2] = {nullptr, two};
  const int64_t* const with_below[2] = {two, below};
  const int64_t negative_count[2] = {-1, 1}, one_each[2] = {1, 1}, zero_first[2] = {0, 2};
  const int64_t huge[2] = {2, INT64_MAX / 2};
  const int64_t* const both[2] = {two, two};
  CHECK_ERR(array_orthogonal_read(a, kIndices, negative_count, bytes_mut(out, sizeof out)), errc::invalid_argument);
  CHECK_ERR(array_orthogonal_read(a, with_null, one_each, bytes_mut(out, sizeof out)), errc::invalid_argument);
  CHECK_ERR(array_orthogonal_read(a, both, huge, bytes_mut(out, sizeof out)), errc::overflow);
  CHECK_ERR(array_orthogonal_read(a, with_below, one_each, bytes_mut(out, sizeof out)), errc::out_of_range);
  out[0] = 0xee;
  CHECK_OK(array_orthogonal_read(a, with_null, zero_first, bytes_mut(out, sizeof out)));
  CHECK_EQ(out[0], 0xee);

  // Slice buffers: a null stop or buffer_shape, a start below 0, a stop before its start, a buffer_start past
  // the buffer's shape.
  const int64_t negative_start[2] = {-1, 0}, reversed_stop[2] = {1, 0}, past_buffer[2] = {7, 0};
  CHECK_ERR(array_slice_read_into(a, kStart, nullptr, bytes_mut(out, sizeof out), kShape, nullptr),
            errc::invalid_argument);
  CHECK_ERR(array_slice_read_into(a, kStart, kStop, bytes_mut(out, sizeof out), nullptr, nullptr),
            errc::invalid_argument);
  CHECK_ERR(array_slice_read_into(a, negative_start, kStop, bytes_mut(out, sizeof out), kShape, nullptr),
            errc::out_of_range);
  CHECK_ERR(array_slice_read_into(a, kStart, reversed_stop, bytes_mut(out, sizeof out), kShape, nullptr),
            errc::out_of_range);
  CHECK_ERR(array_slice_read_into(a, kStart, kStop, bytes_mut(out, sizeof out), kShape, past_buffer),
            errc::out_of_range);
  // Slice writes: a start below 0, a stop before its start.
  CHECK_ERR(array_slice_write(a, negative_start, kStop, bytes_view(out, 4)), errc::out_of_range);
  CHECK_ERR(array_slice_write(a, kStart, reversed_stop, bytes_view(out, 4)), errc::out_of_range);

  // Insert: an axis below 0, a count past INT64_MAX with the extent, one whose items overflow; 0 rows is a no-op.
  CHECK_ERR(array_insert(a, -1, 0, 1, bytes_view(out, 16)), errc::invalid_argument);
  CHECK_ERR(array_insert(a, 0, 0, INT64_MAX, bytes_view(out, 16)), errc::invalid_argument);
  CHECK_ERR(array_insert(a, 0, 0, INT64_MAX / 4, bytes_view(out, 16)), errc::overflow);
  CHECK_OK(array_insert(a, 0, 0, 0, bytes_view()));
  // Delete: an axis below 0, a position below 0, a negative count, a position past the extent; 0 rows: no-op.
  CHECK_ERR(array_delete(a, -1, 0, 1), errc::invalid_argument);
  CHECK_ERR(array_delete(a, 0, -1, 1), errc::out_of_range);
  CHECK_ERR(array_delete(a, 0, 0, -1), errc::out_of_range);
  CHECK_ERR(array_delete(a, 0, 7, 0), errc::out_of_range);
  CHECK_OK(array_delete(a, 0, 2, 0));

  // Copies: a slice starting below 0; a concatenation of arrays with different numbers of dimensions.
  array dst, three;
  CHECK_ERR(array_slice_copy(dst, target, al, a, negative_start, kStop), errc::out_of_range);
  REQUIRE_OK(array_expand_dims(three, target, al, a, kAxes, 3));
  growable_buffer g3;
  growable_buffer_init(g3, test::system_allocator());
  const storage s3 = growable_buffer_storage(g3);
  CHECK_ERR(array_concatenate(dst, array_target_contiguous(s3), al, a, three, 0), errc::invalid_argument);
  CHECK(!array_is_open(dst));
  CHECK_EQ(g3.size(), 0u);
  CHECK_OK(array_close(three));

  // Nothing changed: the shape and every item.
  CHECK_EQ(array_layout_get(a).shape[0], 6);
  CHECK_EQ(array_layout_get(a).shape[1], 8);
  REQUIRE_OK(array_read(a, bytes_mut(out, sizeof out)));
  for (size_t i = 0; i < sizeof out; i += 2) CHECK(out[i] == 7 && out[i + 1] == 0);
  CHECK(!array_dirty(a));
  CHECK_EQ(g.size(), size_before);  // before the close, which may tidy the frame's end
  CHECK_OK(array_close(a));
}

// A scalar (no dimensions) takes null coordinates and buffer shapes in its slice buffers.
TESSERA_TEST(array_refusals, a_scalar_slice_buffer_takes_null_coordinates) {
  growable_buffer g;
  growable_buffer_init(g, test::system_allocator());
  array_params p;
  p.ndim = 0;
  p.dtype = str("<i2");
  const storage s = growable_buffer_storage(g);
  array a;
  REQUIRE_OK(array_create(a, array_target_contiguous(s), test::system_allocator(), p,
                          array_fill_full(bytes_view(reinterpret_cast<const uint8_t*>("\x05\x01"), 2))));
  uint8_t out[2] = {};
  REQUIRE_OK(array_slice_read_into(a, nullptr, nullptr, bytes_mut(out, 2), nullptr, nullptr));
  CHECK(out[0] == 5 && out[1] == 1);
  const uint8_t item[2] = {9, 0};
  REQUIRE_OK(array_slice_write_from(a, nullptr, nullptr, bytes_view(item, 2), nullptr, nullptr));
  REQUIRE_OK(array_read(a, bytes_mut(out, 2)));
  CHECK(out[0] == 9 && out[1] == 0);
  CHECK_OK(array_close(a));
}
