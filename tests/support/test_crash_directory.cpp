// SPDX-License-Identifier: BSD-3-Clause
// The directory crash model itself (crash_directory.hpp): when creations, removals and renames become durable,
// the crash images a state leaves (subsets of pending namespace operations, each file's pending writes), failed
// syncs and failing namespace calls, and the checks against the durable sparse frame.
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tessera/frame.hpp"
#include "tessera/port/memory_storage.hpp"

#include "../frame/frame_testing.hpp"
#include "check.hpp"
#include "crash_directory.hpp"
#include "test_allocators.hpp"

using namespace tessera;
using crash_model::bytes;
using crash_model::crash_directory;
using crash_model::entries;

namespace {

status put(const storage_directory& d, const char* name, const bytes& b, bool sync) {
  storage st;
  TESSERA_TRY(storage_directory_open(d, name, storage_open::replace, &st));
  status s = storage_write(st, 0, bytes_view(b.data(), b.size()));
  if (s.ok() && sync) s = storage_sync(st);
  const status c = storage_directory_close(d, &st);
  return s.ok() ? c : s;
}

// Every crash image (exhaustive) as entries.
std::set<entries> images(const crash_directory& cd, uint32_t sector = 512) {
  std::set<entries> out;
  cd.for_each_crash_image(sector, [&out](const bytes& b) {
    out.insert(crash_model::image_entries(b));
    return true;
  }, 0, 1, 16);
  return out;
}

bool has_violation(const crash_directory& cd, const char* what) {
  for (const std::string& v : cd.violations())
    if (v.find(what) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

// A committed sparse frame of 3 stored chunks (entries 00000000..00000002) through cd.
status make_frame(crash_directory& cd) {
  frame_test::scratch_buffers<1024, 256> g;
  frame_create_params p;
  p.typesize = 4;
  p.blocksize = 256;
  frame_open_options o;
  o.writable = true;
  frame f;
  const storage_directory d = cd.directory();
  TESSERA_TRY(frame_create_sparse(f, d, test::system_allocator(), p, o));
  for (int i = 0; i < 3; ++i) {
    const size_t n = frame_test::chunk_make(static_cast<uint64_t>(i) + 1, 1024, 256, g.src, g.chunk, sizeof g.chunk, g.work);
    TESSERA_TRY(frame_chunk_append(f, bytes_view(g.chunk, n)));
  }
  TESSERA_TRY(frame_commit(f));
  return frame_close(f);
}

}  // namespace

TESSERA_TEST(crash_directory, a_creation_is_durable_with_its_files_sync) {
  crash_directory cd;
  const storage_directory d = cd.directory();
  storage st;
  REQUIRE_OK(storage_directory_open(d, "a", storage_open::replace, &st));
  const bytes b(600, 7);
  REQUIRE_OK(storage_write(st, 0, bytes_view(b.data(), b.size())));
  CHECK_EQ(cd.visible().count("a"), size_t{1});
  CHECK_EQ(cd.durable().count("a"), size_t{0});
  CHECK_EQ(cd.pending().size(), size_t{1});
  // Before the sync: the entry or not, its content any subset of the write's two sectors at any size prefix.
  const auto before = images(cd);
  CHECK(before.count(entries{}) == 1);
  CHECK(before.count(entries{{"a", b}}) == 1);
  CHECK(before.count(entries{{"a", bytes{}}}) == 1);
  bytes half(600, 0);
  std::memset(half.data(), 7, 512);
  CHECK(before.count(entries{{"a", half}}) == 1);
  REQUIRE_OK(storage_sync(st));
  REQUIRE_OK(storage_directory_close(d, &st));
  CHECK(cd.pending().empty());
  CHECK(cd.durable() == (entries{{"a", b}}));
  CHECK((images(cd) == std::set<entries>{entries{{"a", b}}}));
  CHECK_EQ(cd.open_handles(), 0u);
}

TESSERA_TEST(crash_directory, rename_and_remove_are_durable_when_they_return_and_atomic_inside) {
  crash_directory cd;
  const storage_directory d = cd.directory();
  REQUIRE_OK(put(d, "old", bytes{1}, true));
  REQUIRE_OK(put(d, "tmp", bytes{2}, true));
  std::vector<std::set<entries>> seen;
  cd.on_call = [&](uint64_t, crash_model::dir_call k) {
    if (k == crash_model::dir_call::rename) seen.push_back(images(cd));
  };
  REQUIRE_OK(storage_directory_rename(d, "tmp", "old"));
  cd.on_call = nullptr;
  // Before the call, and inside it (applied, not yet durable): the target old or new, never neither.
  REQUIRE_EQ(seen.size(), size_t{2});
  CHECK(seen[0] == (std::set<entries>{entries{{"old", bytes{1}}, {"tmp", bytes{2}}}}));
  CHECK(seen[1] == (std::set<entries>{entries{{"old", bytes{1}}, {"tmp", bytes{2}}}, entries{{"old", bytes{2}}}}));
  CHECK(cd.durable() == (entries{{"old", bytes{2}}}));
  REQUIRE_OK(storage_directory_remove(d, "old"));
  CHECK(cd.durable().empty());
  CHECK_ERR(storage_directory_remove(d, "old"), errc::io);
  CHECK_ERR(storage_directory_rename(d, "none", "x"), errc::io);
}

TESSERA_TEST(crash_directory, a_sync_makes_earlier_namespace_operations_durable) {
  crash_directory cd;
  const storage_directory d = cd.directory();
  storage a, b;
  REQUIRE_OK(storage_directory_open(d, "a", storage_open::replace, &a));
  REQUIRE_OK(storage_directory_open(d, "b", storage_open::replace, &b));
  CHECK_EQ(cd.pending().size(), size_t{2});
  CHECK_EQ(images(cd).size(), size_t{4});  // any subset of the two creations
  REQUIRE_OK(storage_sync(b));
  CHECK(cd.pending().empty());
  CHECK_EQ(cd.durable().size(), size_t{2});
  REQUIRE_OK(storage_directory_close(d, &a));
  REQUIRE_OK(storage_directory_close(d, &b));
}

TESSERA_TEST(crash_directory, replace_of_an_existing_entry_empties_it_until_synced) {
  crash_directory cd;
  const storage_directory d = cd.directory();
  REQUIRE_OK(put(d, "a", bytes(100, 3), true));
  storage st;
  REQUIRE_OK(storage_directory_open(d, "a", storage_open::replace, &st));
  CHECK(cd.visible().at("a").empty());
  CHECK(cd.durable().at("a") == bytes(100, 3));
  CHECK(cd.pending().empty());  // no namespace operation: the entry was there
  const auto im = images(cd);
  CHECK(im.count(entries{{"a", bytes(100, 3)}}) == 1);
  CHECK(im.count(entries{{"a", bytes{}}}) == 1);
  REQUIRE_OK(storage_sync(st));
  REQUIRE_OK(storage_directory_close(d, &st));
  CHECK(cd.durable().at("a").empty());
}

TESSERA_TEST(crash_directory, failed_syncs_drop_and_failing_namespace_calls_take_three_courses) {
  crash_directory cd;
  const storage_directory d = cd.directory();
  REQUIRE_OK(put(d, "a", bytes{1}, true));  // calls 1-4: open, write, sync, close
  REQUIRE_OK(put(d, "b", bytes{2}, true));  // calls 5-8
  // A failed sync: the write is dropped (read, never durable), the creation stays pending.
  storage st;
  REQUIRE_OK(storage_directory_open(d, "c", storage_open::replace, &st));  // call 9
  REQUIRE_OK(storage_write(st, 0, bytes_view(bytes{9}.data(), 1)));        // call 10
  cd.faults.fail_calls = {11};
  CHECK_ERR(storage_sync(st), errc::io);  // call 11
  CHECK(cd.visible().at("c") == bytes{9});
  CHECK_EQ(cd.lossy_failures(), uint64_t{1});
  REQUIRE_OK(storage_sync(st));  // call 12: the creation becomes durable, and the size
  CHECK(cd.durable().at("c") == bytes{0});  // the dropped byte is not
  REQUIRE_OK(storage_directory_close(d, &st));  // call 13
  // A failing call: modulo 3, 2 is done and dropped, 0 does nothing, 1 is done and pending.
  cd.faults.fail_calls = {14, 15, 16};
  CHECK_ERR(storage_directory_rename(d, "a", "x"), errc::io);  // call 14: seen, never durable
  CHECK(cd.visible().count("x") == 1 && cd.visible().count("a") == 0);
  CHECK(cd.durable().count("a") == 1 && cd.durable().count("x") == 0);
  CHECK(cd.pending().empty());
  CHECK_ERR(storage_directory_remove(d, "b"), errc::io);  // call 15: nothing
  CHECK(cd.visible().count("b") == 1);
  CHECK_ERR(storage_directory_rename(d, "b", "y"), errc::io);  // call 16: seen, pending
  CHECK(cd.visible().count("y") == 1 && cd.durable().count("b") == 1);
  REQUIRE_EQ(cd.pending().size(), size_t{1});
  const auto im = images(cd);
  CHECK_EQ(im.size(), size_t{2});  // the rename kept by a crash or not
  CHECK_EQ(cd.lossy_failures(), uint64_t{3});
  // A later durable operation makes the pending one durable.
  cd.faults.fail_calls.clear();
  REQUIRE_OK(storage_directory_remove(d, "c"));
  CHECK(cd.durable().count("y") == 1 && cd.durable().count("b") == 0);
  // A failing creating open as the Nth sync, N odd: the entry is seen, never durable.
  if (cd.syncs() % 2 == 1) REQUIRE_OK(put(d, "p", bytes{1}, false));  // a creating open: one sync more
  cd.faults.fail_syncs = {cd.syncs() + 1};
  CHECK_ERR(storage_directory_open(d, "n", storage_open::replace, &st), errc::io);
  CHECK(cd.visible().count("n") == 1 && cd.durable().count("n") == 0);
  for (const crash_model::ns_op& op : cd.pending()) CHECK(op.name != "n");
  cd.faults.clear();
  cd.restart();
  CHECK(cd.visible() == cd.durable());
  CHECK(cd.visible().count("a") == 1 && cd.visible().count("x") == 0 && cd.visible().count("n") == 0);
  // From N on: a crash.
  cd.faults.fail_from = cd.calls() + 1;
  CHECK_ERR(put(d, "z", bytes{1}, true), errc::io);
  CHECK(cd.crashed());
  CHECK_EQ(cd.open_handles(), 0u);
}

TESSERA_TEST(crash_directory, checks_against_the_durable_sparse_frame) {
  crash_directory cd;
  cd.checks_on();
  REQUIRE_OK(make_frame(cd));
  if (!cd.violations().empty()) tessera::test::report_failure(t, __FILE__, __LINE__, joined(cd.violations()).c_str());
  const crash_model::sparse_refs& r = cd.durable_frame();
  CHECK(r.valid);
  CHECK_EQ(r.names.size(), size_t{4});  // chunks.b2frame and three entries
  // The next commit's index, built in a copy: chunk 0 replaced by a new entry, 00000003.chunk.
  bytes index, chunk3;
  {
    memory_directory md;
    REQUIRE_OK(memory_directory_init(md, test::system_allocator(), 16));
    const storage_directory m = memory_directory_interface(md);
    for (const auto& kv : cd.visible()) REQUIRE_OK(put(m, kv.first.c_str(), kv.second, false));
    frame f;
    frame_open_options o;
    o.writable = true;
    REQUIRE_OK(frame_open_sparse(f, m, test::system_allocator(), o));
    frame_test::scratch_buffers<1024, 256> g;
    const size_t n = frame_test::chunk_make(9, 1024, 256, g.src, g.chunk, sizeof g.chunk, g.work);
    REQUIRE_OK(frame_chunk_update(f, 0, bytes_view(g.chunk, n)));
    REQUIRE_OK(frame_commit(f));
    REQUIRE_OK(frame_close(f));
    const bytes_view i = memory_directory_find(md, kSparseIndexName), c = memory_directory_find(md, "00000003.chunk");
    REQUIRE(!i.empty() && !c.empty());
    index.assign(i.data(), i.data() + i.size());
    chunk3.assign(c.data(), c.data() + c.size());
  }
  const storage_directory d = cd.directory();
  // Emptying and removing what the durable frame references.
  storage st;
  REQUIRE_OK(storage_directory_open(d, "00000001.chunk", storage_open::replace, &st));
  REQUIRE_OK(storage_directory_close(d, &st));
  CHECK(has_violation(cd, "truncate of file"));
  CHECK_OK(storage_directory_remove(d, "00000002.chunk"));
  CHECK(has_violation(cd, "remove 00000002.chunk, which the durable frame references"));
  // A rename that commits an index not synced, whose new chunk entry's name is not durable: its creation's
  // directory sync failed, and opening it again with replace created nothing.
  if (cd.syncs() % 2 == 1) REQUIRE_OK(put(d, "notes.txt", bytes{1}, false));  // a creating open: one sync more
  cd.faults.fail_syncs = {cd.syncs() + 1};  // odd: dropped
  CHECK_ERR(storage_directory_open(d, "00000003.chunk", storage_open::replace, &st), errc::io);
  cd.faults.clear();
  REQUIRE_OK(put(d, "00000003.chunk", chunk3, true));
  REQUIRE_OK(put(d, kSparseIndexTempName, index, false));
  REQUIRE_OK(storage_directory_rename(d, kSparseIndexTempName, kSparseIndexName));
  CHECK(has_violation(cd, "whose content is not durable"));
  CHECK(has_violation(cd, "00000003.chunk: its directory entry is not durable"));
  CHECK(has_violation(cd, "replaces what the durable frame references") == false);
}
