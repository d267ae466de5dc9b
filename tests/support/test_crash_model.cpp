// SPDX-License-Identifier: BSD-3-Clause
// The page-cache crash model itself (crash_model.hpp): what becomes durable when, the crash images a state
// leaves (lost and torn writes per sector, size prefixes), a failed sync (Linux's: the data is dropped yet still
// read), the fault plan, and the write checks against the durable frame.
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tessera/frame.hpp"

#include "../frame/frame_testing.hpp"
#include "check.hpp"
#include "crash_model.hpp"
#include "test_allocators.hpp"

using namespace tessera;
using crash_model::bytes;
using crash_model::page_cache;

namespace {

bytes filled(size_t n, uint8_t v) { return bytes(n, v); }

status put(const storage& st, uint64_t at, const bytes& b) { return storage_write(st, at, bytes_view(b.data(), b.size())); }

bytes got(const storage& st, uint64_t at, size_t n) {
  bytes b(n);
  if (!storage_read(st, at, bytes_mut(b.data(), n)).ok()) return bytes{};
  return b;
}

// Every crash image of pc at `sector` (the exhaustive enumeration).
std::set<bytes> images(const page_cache& pc, uint32_t sector) {
  std::set<bytes> out;
  pc.for_each_crash_image(sector, [&out](const bytes& b) {
    out.insert(b);
    return true;
  });
  return out;
}

bool contains_span(const std::vector<std::string>& v, const char* what) {
  for (const std::string& s : v)
    if (s.find(what) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

span<const char> nm(const char* s) { return span<const char>(s, std::strlen(s)); }

// A frame (4 chunks of 1 KiB, a vlmetalayer) created through pc at `base` and committed: the durable image.
status make_frame(page_cache& pc, uint64_t base) {
  frame_test::scratch_buffers<1024, 256> g;
  const storage st = pc.storage();
  frame f;
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = 256;
  frame_open_options o;
  o.base_offset = base;
  TESSERA_TRY(frame_create(f, st, test::system_allocator(), p, o));
  for (uint64_t i = 1; i <= 4; ++i) TESSERA_TRY(frame_chunk_append(f, g.chunk_of(i)));
  const uint8_t v[3] = {1, 2, 3};
  TESSERA_TRY(frame_vlmeta_set(f, nm("a"), bytes_view(v, 3)));
  TESSERA_TRY(frame_commit(f));
  return frame_close(f);
}

}  // namespace

TESSERA_TEST(crash_model, a_synced_write_is_durable) {
  page_cache pc;
  const storage st = pc.storage();
  REQUIRE_OK(put(st, 0, filled(1000, 7)));
  CHECK(pc.durable().empty());
  CHECK(got(st, 0, 1000) == filled(1000, 7));  // reads see the page cache
  REQUIRE_OK(storage_sync(st));
  CHECK(pc.durable() == filled(1000, 7));
  CHECK(pc.pending().empty());
  // Nothing pending: the only crash image is the durable one.
  const std::set<bytes> all = images(pc, 512);
  CHECK(all.size() == 1);
  CHECK(all.count(filled(1000, 7)) == 1);
  CHECK_EQ(pc.calls(), 3u);
  CHECK_EQ(pc.syncs(), 1u);
}

TESSERA_TEST(crash_model, an_unsynced_write_may_be_lost_or_torn_per_sector) {
  page_cache pc(filled(1024, 'A'));
  const storage st = pc.storage();
  REQUIRE_OK(put(st, 0, filled(1024, 'B')));
  CHECK_EQ(pc.crash_units(512), 2u);
  CHECK_EQ(pc.crash_units(4096), 1u);
  CHECK_EQ(pc.crash_size_changes(), 0u);
  bytes first_new = filled(1024, 'A');
  std::memset(first_new.data(), 'B', 512);
  bytes second_new = filled(1024, 'A');
  std::memset(second_new.data() + 512, 'B', 512);
  const std::set<bytes> s512 = images(pc, 512);
  CHECK_EQ(s512.size(), 4u);
  CHECK(s512.count(first_new) == 1);  // torn: the first sector new, the second old
  CHECK(s512.count(second_new) == 1);  // and the other way round (any order)
  CHECK(s512.count(filled(1024, 'A')) == 1);  // lost
  CHECK(s512.count(filled(1024, 'B')) == 1);  // written
  // One 4096-byte sector: all or nothing.
  const std::set<bytes> s4096 = images(pc, 4096);
  CHECK_EQ(s4096.size(), 2u);
  CHECK(s4096.count(first_new) == 0);
  // Pieces are aligned to absolute offsets: a write of 100 bytes across 512 is two units.
  REQUIRE_OK(put(st, 460, filled(100, 'C')));
  CHECK_EQ(pc.crash_units(512), 4u);
  // Random images are among the exhaustive ones.
  test::rng r(3);
  const std::set<bytes> all = images(pc, 512);
  for (int i = 0; i < 50; ++i) CHECK(all.count(pc.crash_image(r, 512)) == 1);
}

TESSERA_TEST(crash_model, sizes_come_from_a_prefix_of_the_size_changes) {
  page_cache pc(filled(2000, 'A'));
  const storage st = pc.storage();
  REQUIRE_OK(storage_truncate(st, 1000));
  REQUIRE_OK(put(st, 1500, filled(100, 'B')));  // grows the file to 1600: [1000, 1500) reads zeros
  CHECK(got(st, 1000, 500) == filled(500, 0));
  CHECK_EQ(pc.crash_size_changes(), 2u);
  const std::set<bytes> all = images(pc, 512);
  std::set<size_t> sizes;
  for (const bytes& b : all) sizes.insert(b.size());
  CHECK(sizes == (std::set<size_t>{1000, 1600, 2000}));
  bytes grown = filled(1600, 0);
  std::memset(grown.data(), 'A', 1000);
  CHECK(all.count(grown) == 1);  // grown back, the write lost: zeros, never the old bytes
  std::memset(grown.data() + 1500, 'B', 100);
  CHECK(all.count(grown) == 1);
  bytes old_size = filled(2000, 'A');
  std::memset(old_size.data() + 1500, 'B', 36);  // the truncate lost, the write's first piece [1500, 1536) kept
  CHECK(all.count(old_size) == 1);
  for (const bytes& b : all)
    if (b.size() == 1600) CHECK(b[1200] == 0);
  // A write past the end of an empty file: lost (size 0), or the new size with its pieces or zeros.
  page_cache e;
  const storage se = e.storage();
  REQUIRE_OK(put(se, 0, filled(1024, 'X')));
  const std::set<bytes> ei = images(e, 512);
  CHECK(ei.count(bytes{}) == 1);
  CHECK(ei.count(filled(1024, 0)) == 1);
  CHECK(ei.count(filled(1024, 'X')) == 1);
  CHECK_EQ(ei.size(), 5u);  // empty, and 4 subsets at size 1024
}

TESSERA_TEST(crash_model, a_failed_sync_never_makes_its_data_durable) {
  page_cache pc(filled(1024, 'A'));
  const storage st = pc.storage();
  pc.faults.fail_syncs = {1};
  REQUIRE_OK(put(st, 0, filled(1024, 'B')));
  CHECK_ERR(storage_sync(st), errc::io);
  CHECK_EQ(pc.failed_syncs(), 1u);
  CHECK(got(st, 0, 1024) == filled(1024, 'B'));  // still read: the cache marked it clean
  CHECK(pc.durable() == filled(1024, 'A'));
  CHECK(pc.pending().empty());
  CHECK_EQ(pc.dropped().size(), 1u);
  // Later syncs succeed, without it.
  REQUIRE_OK(put(st, 2048, filled(10, 'C')));
  REQUIRE_OK(storage_sync(st));
  CHECK(std::memcmp(pc.durable().data(), filled(1024, 'A').data(), 1024) == 0);
  CHECK_EQ(pc.durable().size(), 2058u);
  CHECK(pc.durable()[2048] == 'C');
  CHECK(pc.durable()[1500] == 0);
  for (const bytes& b : images(pc, 512)) CHECK(b[0] == 'A');
  // Written again and synced, it is durable at last.
  REQUIRE_OK(put(st, 0, filled(1024, 'B')));
  REQUIRE_OK(storage_sync(st));
  CHECK(pc.durable()[0] == 'B');
  CHECK(pc.dropped().empty());
  // A restart forgets the page cache: reads see the disk.
  pc.faults.fail_syncs = {4};
  REQUIRE_OK(put(st, 0, filled(4, 'D')));
  CHECK_ERR(storage_sync(st), errc::io);
  pc.restart();
  CHECK(got(st, 0, 4) == filled(4, 'B'));
}

TESSERA_TEST(crash_model, faults_fail_once_or_from_then_on) {
  page_cache pc(filled(100, 'A'));
  const storage st = pc.storage();
  pc.faults.fail_calls = {2};
  std::vector<uint64_t> seen;
  pc.on_call = [&seen](uint64_t call, crash_model::call_kind) { seen.push_back(call); };
  CHECK_OK(put(st, 0, filled(4, 'B')));           // 1
  CHECK_ERR(put(st, 4, filled(4, 'C')), errc::io);  // 2: fails, changes nothing
  CHECK(got(st, 4, 4) == filled(4, 'A'));          // 3
  CHECK_EQ(pc.pending().size(), 1u);
  CHECK_EQ(pc.failed_calls(), 1u);
  CHECK(!pc.crashed());
  pc.faults.fail_from = 5;
  uint64_t size = 0;
  CHECK_OK(st.size(st.context, &size));  // 4
  CHECK_ERR(storage_sync(st), errc::io);  // 5: a crash
  CHECK_ERR(storage_truncate(st, 10), errc::io);
  CHECK(pc.crashed());
  CHECK(seen == (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  // Paused calls are the test's own: neither counted nor failed.
  pc.paused = true;
  CHECK(got(st, 0, 4) == filled(4, 'B'));
  CHECK_EQ(pc.calls(), 6u);
}

TESSERA_TEST(crash_model, the_write_checks_flag_a_write_over_a_durable_chunk) {
  page_cache pc;
  pc.checks_on(0);
  REQUIRE_OK(make_frame(pc, 0));
  CHECK(pc.violations().empty());  // the writer's own commits: clean
  const crash_model::frame_extents& d = pc.durable_frame();
  REQUIRE(d.valid);
  CHECK_EQ(d.nchunks, 4);
  const crash_model::extent* chunk2 = nullptr;
  for (const auto& e : d.extents)
    if (e.what == "chunk 2") chunk2 = &e;
  REQUIRE(chunk2 != nullptr);
  const storage st = pc.storage();
  const uint64_t end = pc.visible().size();
  REQUIRE_OK(put(st, end, filled(100, 1)));  // past the frame: fine
  CHECK(pc.violations().empty());
  REQUIRE_OK(put(st, chunk2->begin + 10, filled(4, 1)));
  REQUIRE_EQ(pc.violations().size(), 1u);
  CHECK(contains_span(pc.violations(), "chunk 2"));
  pc.violations_clear();
  // The trailer too.
  REQUIRE_OK(put(st, d.extents.back().begin, filled(4, 1)));
  CHECK(contains_span(pc.violations(), "index and trailer"));
  // Off: nothing is checked.
  pc.violations_clear();
  pc.checks_off();
  REQUIRE_OK(put(st, chunk2->begin, filled(4, 1)));
  CHECK(pc.violations().empty());
}

TESSERA_TEST(crash_model, the_write_checks_flag_a_header_write_across_a_sector) {
  // The frame at 450: its header crosses 512 (the bytes of one made at 0, moved: offsets in a frame are
  // relative to its start). Its header written again as it is.
  page_cache made;
  REQUIRE_OK(make_frame(made, 0));
  bytes image = filled(450, 0xEE);
  image.insert(image.end(), made.durable().begin(), made.durable().end());
  page_cache pc(image);
  pc.checks_on(450);
  const crash_model::frame_extents& d = pc.durable_frame();
  REQUIRE(d.valid);
  REQUIRE(450 + d.header_len > 512);
  const bytes header(pc.visible().begin() + 450, pc.visible().begin() + 450 + static_cast<long>(d.header_len));
  REQUIRE_OK(put(pc.storage(), 450, header));
  REQUIRE_EQ(pc.violations().size(), 1u);
  CHECK(contains_span(pc.violations(), "spans the 512-byte sector boundary at 512"));
  // The same frame at 0: its header within sector 0, rewritten as it is: nothing to flag.
  page_cache p0;
  REQUIRE_OK(make_frame(p0, 0));
  p0.checks_on(0);
  const bytes h0(p0.visible().begin(), p0.visible().begin() + static_cast<long>(p0.durable_frame().header_len));
  REQUIRE_OK(put(p0.storage(), 0, h0));
  CHECK(p0.violations().empty());
  // Writes before the base belong to someone else.
  REQUIRE_OK(put(pc.storage(), 10, filled(4, 1)));
  CHECK(contains_span(pc.violations(), "before the frame's base offset"));
}

TESSERA_TEST(crash_model, the_write_checks_flag_a_header_committing_bytes_not_durable) {
  // F1 durable; F2 (one more chunk) made on a copy. F2's new bytes written without a sync, then its header.
  page_cache a;
  REQUIRE_OK(make_frame(a, 0));
  const bytes f1 = a.durable();
  page_cache b(f1);
  {
    frame_test::scratch_buffers<1024, 256> g;
    frame f;
    frame_open_options o;
    o.writable = true;
    REQUIRE_OK(frame_open(f, b.storage(), test::system_allocator(), o));
    REQUIRE_OK(frame_chunk_append(f, g.chunk_of(9)));
    REQUIRE_OK(frame_commit(f));
    (void)detail::frame_release(f);
  }
  const bytes f2 = b.visible();
  REQUIRE(f2.size() > f1.size());
  const uint64_t hl = a.durable_frame().header_len;
  for (int dropped = 0; dropped < 2; ++dropped) {
    page_cache pc(f1);
    pc.checks_on(0);
    const storage st = pc.storage();
    REQUIRE_OK(put(st, f1.size(), bytes(f2.begin() + static_cast<long>(f1.size()), f2.end())));
    if (dropped == 1) {
      pc.faults.fail_syncs = {1};
      CHECK_ERR(storage_sync(st), errc::io);
    }
    CHECK(pc.violations().empty());
    REQUIRE_OK(put(st, 0, bytes(f2.begin(), f2.begin() + static_cast<long>(hl))));
    REQUIRE_EQ(pc.violations().size(), 1u);
    CHECK(contains_span(pc.violations(), "references bytes not durable"));
    CHECK(contains_span(pc.violations(), dropped == 1 ? "dropped by a failed sync" : "not synced"));
    // Synced first (written again after the failed sync), the same header write is the commit point.
    page_cache ok(f1);
    ok.checks_on(0);
    const storage so = ok.storage();
    REQUIRE_OK(put(so, f1.size(), bytes(f2.begin() + static_cast<long>(f1.size()), f2.end())));
    REQUIRE_OK(storage_sync(so));
    REQUIRE_OK(put(so, 0, bytes(f2.begin(), f2.begin() + static_cast<long>(hl))));
    if (!ok.violations().empty()) tessera::test::report_failure(t, __FILE__, __LINE__, joined(ok.violations()).c_str());
    // A header that commits a frame that does not open is flagged as well.
    bytes bad(f2.begin(), f2.begin() + static_cast<long>(hl));
    bad[0] ^= 0xFF;
    REQUIRE_OK(put(so, 0, bad));
    CHECK(contains_span(ok.violations(), "does not open"));
  }
}

TESSERA_TEST(crash_model, the_write_checks_tolerate_an_image_that_is_not_a_frame) {
  page_cache pc(filled(3000, 0x5A));
  pc.checks_on(0);
  const storage st = pc.storage();
  REQUIRE_OK(put(st, 0, filled(200, 1)));
  REQUIRE_OK(storage_sync(st));
  REQUIRE_OK(put(st, 100, filled(2000, 2)));
  REQUIRE_OK(storage_truncate(st, 10));
  CHECK(pc.violations().empty());
  CHECK(!pc.durable_frame().valid);
  // A frame created there is checked from its first durable commit on.
  page_cache fresh;
  fresh.checks_on(0);
  REQUIRE_OK(make_frame(fresh, 0));
  CHECK(fresh.durable_frame().valid);
  CHECK(fresh.violations().empty());
}
