// SPDX-License-Identifier: BSD-3-Clause
// The flash log: blobs round-trip; a power cut at every program and erase of a write sequence (littlefs's
// linear power-loss runner, without longjmp: the simulated device dies and every call fails) loses no blob
// whose append returned, and never shows a half-written one; a full region says no_space and keeps its blobs;
// every sector is erased at most once.
#include <cstdio>
#include <cstring>

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "tessera/port/flash.hpp"
#include "tessera/port/flash_log.hpp"
#include "tessera/port/flash_sim.hpp"

using namespace tessera;

namespace {

struct geometry {
  const char* name;
  flash_sim_config sim;
  uint32_t first_sector;  // the log's region inside the device: the sectors around it must stay untouched
  uint32_t sector_count;
};

geometry geometries(int i) {
  geometry g{};
  switch (i) {
    case 0:  // serial NOR: byte programs, 256-byte pages
      g.name = "nor-byte";
      g.sim.read_size = 1;
      g.sim.prog_size = 1;
      g.sim.page_size = 64;
      g.sim.sector_size = 512;
      g.sim.sector_count = 10;
      break;
    case 1:  // MCU internal flash with ECC: 16-byte units programmed once
      g.name = "mcu-ecc16";
      g.sim.read_size = 4;
      g.sim.prog_size = 16;
      g.sim.page_size = 256;
      g.sim.sector_size = 1024;
      g.sim.sector_count = 6;
      break;
    default:  // wide units, erased value 0x00
      g.name = "wide-erased0";
      g.sim.read_size = 8;
      g.sim.prog_size = 32;
      g.sim.page_size = 32;
      g.sim.sector_size = 512;
      g.sim.sector_count = 10;
      g.sim.erased_value = 0x00;
      break;
  }
  g.first_sector = 1;
  g.sector_count = g.sim.sector_count - 2;
  return g;
}
constexpr int kGeometries = 3;

constexpr uint32_t kMaxBlob = 400;
constexpr uint32_t kBlobs = 8;

uint32_t blob_size(uint32_t i) { return 1 + static_cast<uint32_t>((i * 2654435761u) % kMaxBlob); }

// Blob i's bytes; blob 3 is entirely the erased value of 0xFF parts (it must still round-trip).
void blob_fill(uint32_t i, uint8_t* out) {
  test::rng r(1000 + i);
  for (uint32_t k = 0; k < blob_size(i); ++k) out[k] = i == 3 ? 0xFF : static_cast<uint8_t>(r.next());
}

flash_log_config log_config(flash_sim& sim, const geometry& g) {
  flash_log_config c;
  c.device = flash_sim_device(sim);
  c.first_sector = g.first_sector;
  c.sector_count = g.sector_count;
  return c;
}

constexpr uint32_t kFront = 100;  // front area: left alone by the log

struct progress {
  bool formatted = false;  // flash_log_format returned
  uint32_t acked = 0;      // blobs whose append returned
  bool in_flight = false;  // an append had started when the cut came
};

// Formats (unless `resume`) and appends blobs from `first` until kBlobs or the first error.
void write_sequence(flash_sim& sim, const geometry& g, const allocator& alloc, bool resume, uint32_t first,
                    progress& p) {
  static uint8_t bytes[kMaxBlob];
  flash_log log;
  if (resume) {
    if (!flash_log_mount(log, log_config(sim, g), alloc).ok()) return;
  } else {
    if (!flash_log_format(log, log_config(sim, g), alloc, kFront, 0xC0FFEEu).ok()) return;
    p.formatted = true;
  }
  p.acked = first;
  for (uint32_t i = first; i < kBlobs; ++i) {
    blob_fill(i, bytes);
    const bytes_view piece(bytes, blob_size(i));
    p.in_flight = true;
    result<flash_blob> b = flash_log_append(log, static_cast<uint8_t>(i % 7), i * 3, span<const bytes_view>(&piece, 1));
    if (!b.ok()) break;
    p.in_flight = false;
    p.acked = i + 1;
  }
  flash_log_release(log);
}

// After power on: the log mounts (when format returned) and lists blobs 0..m-1 exactly, with
// acked <= m <= acked + in_flight. Returns m, or -1 when there is no log.
int check_recovered(test::context& t, flash_sim& sim, const geometry& g, const allocator& alloc,
                    const progress& p) {
  static uint8_t want[kMaxBlob];
  static uint8_t got[kMaxBlob];
  flash_log log;
  status e = flash_log_mount(log, log_config(sim, g), alloc);
  if (!e.ok()) {
    CHECK(!p.formatted);  // a log whose format returned always mounts
    CHECK_EQ(e.code, errc::malformed);
    return -1;
  }
  CHECK_EQ(log.user_tag, 0xC0FFEEu);
  flash_log_cursor cursor;
  flash_blob b;
  uint32_t m = 0;
  for (;;) {
    result<bool> more = flash_log_next(log, cursor, &b);
    CHECK_OK(more);
    if (!more.ok() || !*more) break;
    CHECK_EQ(b.size, blob_size(m));
    CHECK_EQ(b.tag, m % 7);
    CHECK_EQ(b.aux, m * 3);
    if (b.size == blob_size(m)) {
      blob_fill(m, want);
      CHECK_OK(flash_log_read(log, b.offset, bytes_mut(got, b.size)));
      CHECK(std::memcmp(want, got, b.size) == 0);
      CHECK_OK(flash_log_verify(log, b));
    }
    ++m;
    if (m > kBlobs) break;
  }
  CHECK_LE(p.acked, m);
  CHECK_LE(m, p.acked + (p.in_flight ? 1u : 0u));
  flash_log_release(log);
  return static_cast<int>(m);
}

// The device's bytes outside the log's region must be exactly what they were.
bool outside_untouched(flash_sim& sim, const geometry& g, const uint8_t* before) {
  const size_t lo = static_cast<size_t>(g.first_sector) * g.sim.sector_size;
  const size_t hi = static_cast<size_t>(g.first_sector + g.sector_count) * g.sim.sector_size;
  return std::memcmp(sim.bytes.data(), before, lo) == 0 &&
         std::memcmp(sim.bytes.data() + hi, before + hi, sim.bytes.size() - hi) == 0;
}

}  // namespace

TESSERA_TEST(flash_log, blobs_round_trip_on_every_geometry) {
  test::counting_allocator counting;
  for (int gi = 0; gi < kGeometries; ++gi) {
    const geometry g = geometries(gi);
    flash_sim sim;
    REQUIRE_OK(flash_sim_init(sim, g.sim, counting.get()));
    flash_sim_fill_random(sim, 5);  // an old content: format must erase it
    progress p;
    write_sequence(sim, g, counting.get(), false, 0, p);
    CHECK(p.formatted);
    CHECK_EQ(p.acked, kBlobs);
    CHECK_EQ(check_recovered(t, sim, g, counting.get(), p), static_cast<int>(kBlobs));
    CHECK_EQ(flash_sim_max_erase_count(sim, 0, g.sim.sector_count), 1u);
    CHECK_EQ(sim.erase_counts[0], 0u);  // outside the region
    CHECK_EQ(sim.erase_counts[g.sim.sector_count - 1], 0u);
    flash_sim_release(sim);
  }
  CHECK(!counting.leaked());
}

TESSERA_TEST(flash_log, mount_rejects_unformatted_and_other_geometry) {
  test::counting_allocator counting;
  const geometry g = geometries(0);
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, g.sim, counting.get()));
  flash_log log;
  CHECK_ERR(flash_log_mount(log, log_config(sim, g), counting.get()), errc::malformed);  // blank
  flash_sim_fill_random(sim, 9);
  CHECK_ERR(flash_log_mount(log, log_config(sim, g), counting.get()), errc::malformed);  // garbage
  REQUIRE_OK(flash_log_format(log, log_config(sim, g), counting.get(), kFront, 1));
  flash_log_release(log);
  flash_log_config other = log_config(sim, g);
  other.sector_count = g.sector_count - 1;  // a smaller region ending elsewhere: its top slot is not the log's
  CHECK(!flash_log_mount(log, other, counting.get()).ok());
  REQUIRE_OK(flash_log_mount(log, log_config(sim, g), counting.get()));
  CHECK_EQ(log.front_reserve, kFront);
  flash_log_release(log);
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}

TESSERA_TEST(flash_log, caller_cache_needs_no_allocation) {
  const geometry g = geometries(1);
  test::counting_allocator counting;
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, g.sim, counting.get()));
  alignas(8) static uint8_t cache[128];
  flash_log_config c = log_config(sim, g);
  c.cache_buffer = cache;
  c.cache_size = sizeof cache;
  flash_log log;
  REQUIRE_OK(flash_log_format(log, c, allocator_refusing(), 0, 7));
  uint8_t data[300];
  for (int i = 0; i < 300; ++i) data[i] = static_cast<uint8_t>(i * 7);
  const bytes_view pieces[3] = {bytes_view(data, 5), bytes_view(data + 5, 0), bytes_view(data + 5, 295)};
  result<flash_blob> b = flash_log_append(log, 1, 2, span<const bytes_view>(pieces, 3));
  REQUIRE_OK(b);
  CHECK_EQ(b->size, 300u);
  CHECK_EQ(b->offset, 0u);
  flash_log_release(log);
  REQUIRE_OK(flash_log_mount(log, c, allocator_refusing()));
  uint8_t back[300];
  REQUIRE_OK(flash_log_read(log, b->offset, bytes_mut(back, 300)));
  CHECK(std::memcmp(back, data, 300) == 0);
  // Unaligned reads through the cache.
  REQUIRE_OK(flash_log_read(log, 3, bytes_mut(back, 201)));
  CHECK(std::memcmp(back, data + 3, 201) == 0);
  c.cache_size = 24;  // not a prog_size multiple
  CHECK_ERR(flash_log_mount(log, c, allocator_refusing()), errc::invalid_argument);
  flash_log_release(log);
  flash_sim_release(sim);
}

TESSERA_TEST(flash_log, full_region_is_no_space_and_keeps_its_blobs) {
  test::counting_allocator counting;
  for (int gi = 0; gi < kGeometries; ++gi) {
    const geometry g = geometries(gi);
    flash_sim sim;
    REQUIRE_OK(flash_sim_init(sim, g.sim, counting.get()));
    flash_log log;
    REQUIRE_OK(flash_log_format(log, log_config(sim, g), counting.get(), kFront, 0));
    static uint8_t bytes[kMaxBlob];
    uint32_t n = 0;
    const flash_log_keep keep{300, 2};  // room a caller saves for its own finish
    for (;; ++n) {
      blob_fill(n % kBlobs, bytes);
      const bytes_view piece(bytes, blob_size(n % kBlobs));
      const uint32_t free_before = flash_log_free_bytes(log, keep);
      result<flash_blob> b = flash_log_append(log, 0, n, span<const bytes_view>(&piece, 1), keep);
      if (!b.ok()) {
        CHECK_EQ(b.err().code, errc::no_space);
        CHECK_LT(free_before, piece.size());  // refused only when it truly does not fit
        break;
      }
      REQUIRE(n < 1000);
    }
    CHECK_LT(3u, n);
    // What `keep` saved is still there: a 300-byte blob using the two kept records fits exactly.
    CHECK_LE(300u, flash_log_free_bytes(log, flash_log_keep{0, 1}));
    const bytes_view last(bytes, 300);
    CHECK_OK(flash_log_append(log, 9, 0, span<const bytes_view>(&last, 1), flash_log_keep{0, 1}));
    flash_log_release(log);
    REQUIRE_OK(flash_log_mount(log, log_config(sim, g), counting.get()));
    flash_log_cursor cursor;
    flash_blob b;
    uint32_t m = 0;
    while (true) {
      result<bool> more = flash_log_next(log, cursor, &b);
      REQUIRE_OK(more);
      if (!*more) break;
      CHECK_OK(flash_log_verify(log, b));
      ++m;
    }
    CHECK_EQ(m, n + 1);
    flash_log_release(log);
    flash_sim_release(sim);
  }
  CHECK(!counting.leaked());
}

// littlefs's linear power-loss runner: cut at the 1st, 2nd, ... program or erase of the sequence, in each tear
// mode; after each cut, recover, check, finish the sequence and check again.
TESSERA_TEST(flash_log, power_cut_at_every_program_and_erase) {
  test::counting_allocator counting;
  for (int gi = 0; gi < kGeometries; ++gi) {
    const geometry g = geometries(gi);
    flash_sim sim;
    REQUIRE_OK(flash_sim_init(sim, g.sim, counting.get()));
    owned_array<uint8_t> old_bytes;
    REQUIRE_OK(old_bytes.allocate(counting.get(), sim.bytes.size()));
    flash_sim_fill_random(sim, 77);
    std::memcpy(old_bytes.data(), sim.bytes.data(), sim.bytes.size());

    // Dry run: the number of programs and erases of the whole sequence.
    progress dry;
    flash_sim_cut_after(sim, 0, flash_tear::none, 0);
    write_sequence(sim, g, counting.get(), false, 0, dry);
    const uint64_t total = flash_sim_ops(sim);
    CHECK_EQ(dry.acked, kBlobs);
    uint32_t worst_erase = 0;
    int recovered_with_in_flight = 0;
    for (int mode = 0; mode < 4; ++mode) {
      for (uint64_t cut = 1; cut <= total; ++cut) {
        std::memcpy(sim.bytes.data(), old_bytes.data(), sim.bytes.size());
        flash_sim_reset_erase_counts(sim);
        flash_sim_power_on(sim);
        flash_sim_cut_after(sim, cut, static_cast<flash_tear>(mode), cut * 31 + mode);
        progress p;
        write_sequence(sim, g, counting.get(), false, 0, p);
        REQUIRE(sim.dead);  // the cut came inside the sequence
        flash_sim_power_on(sim);
        const int m = check_recovered(t, sim, g, counting.get(), p);
        if (m > static_cast<int>(p.acked)) ++recovered_with_in_flight;
        // Finish: re-format when there is no log, else resume after the blobs found.
        progress rest = p;
        write_sequence(sim, g, counting.get(), m >= 0, m >= 0 ? static_cast<uint32_t>(m) : 0, rest);
        CHECK_EQ(rest.acked, kBlobs);
        CHECK_EQ(check_recovered(t, sim, g, counting.get(), rest), static_cast<int>(kBlobs));
        CHECK(outside_untouched(sim, g, old_bytes.data()));
        const uint32_t worst = flash_sim_max_erase_count(sim, 0, g.sim.sector_count);
        // One erase per sector per log; a format cut before its end is redone (a torn sector erased twice).
        CHECK_LE(worst, p.formatted ? 1u : 2u);
        if (worst > worst_erase) worst_erase = worst;
      }
    }
    std::printf("flash_log %s: %llu programs+erases per sequence, cut at each in 4 tear modes; "
                "in-flight blob recovered whole %d times; max erases of a sector %u (1 without a cut)\n",
                g.name, static_cast<unsigned long long>(total), recovered_with_in_flight, static_cast<unsigned>(worst_erase));
    CHECK_LT(0, recovered_with_in_flight);
    old_bytes.reset();
    flash_sim_release(sim);
  }
  CHECK(!counting.leaked());
}

// A second cut while recovering from the first: the abort record of a torn blob, and blobs after it.
TESSERA_TEST(flash_log, second_cut_during_recovery) {
  test::counting_allocator counting;
  const geometry g = geometries(1);
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, g.sim, counting.get()));
  owned_array<uint8_t> old_bytes, after_first;
  REQUIRE_OK(old_bytes.allocate(counting.get(), sim.bytes.size()));
  REQUIRE_OK(after_first.allocate(counting.get(), sim.bytes.size()));
  flash_sim_fill_random(sim, 78);
  std::memcpy(old_bytes.data(), sim.bytes.data(), sim.bytes.size());
  progress dry;
  flash_sim_cut_after(sim, 0, flash_tear::none, 0);
  write_sequence(sim, g, counting.get(), false, 0, dry);
  const uint64_t total = flash_sim_ops(sim);
  uint64_t runs = 0;
  for (uint64_t cut1 = g.sector_count + 2; cut1 <= total; cut1 += 2) {  // past the format
    std::memcpy(sim.bytes.data(), old_bytes.data(), sim.bytes.size());
    flash_sim_power_on(sim);
    flash_sim_cut_after(sim, cut1, flash_tear::garbage, cut1);
    progress p1;
    write_sequence(sim, g, counting.get(), false, 0, p1);
    flash_sim_power_on(sim);
    const int m1 = check_recovered(t, sim, g, counting.get(), p1);
    REQUIRE(m1 >= 0);
    std::memcpy(after_first.data(), sim.bytes.data(), sim.bytes.size());
    progress resume_dry = p1;
    flash_sim_cut_after(sim, 0, flash_tear::none, 0);
    write_sequence(sim, g, counting.get(), true, static_cast<uint32_t>(m1), resume_dry);
    const uint64_t total2 = flash_sim_ops(sim);
    for (uint64_t cut2 = 1; cut2 <= total2; ++cut2) {
      std::memcpy(sim.bytes.data(), after_first.data(), sim.bytes.size());
      flash_sim_power_on(sim);
      flash_sim_cut_after(sim, cut2, flash_tear::partial, cut2 * 7 + cut1);
      progress p2 = p1;
      p2.acked = static_cast<uint32_t>(m1);
      p2.in_flight = false;
      write_sequence(sim, g, counting.get(), true, static_cast<uint32_t>(m1), p2);
      flash_sim_power_on(sim);
      const int m2 = check_recovered(t, sim, g, counting.get(), p2);
      REQUIRE(m2 >= 0);
      progress rest = p2;
      write_sequence(sim, g, counting.get(), true, static_cast<uint32_t>(m2), rest);
      CHECK_EQ(check_recovered(t, sim, g, counting.get(), rest), static_cast<int>(kBlobs));
      ++runs;
    }
  }
  CHECK_LT(50u, runs);
  after_first.reset();
  old_bytes.reset();
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}

// What the log refuses, with its code, before it touches the device: regions outside the device, geometries it
// cannot hold a record in, caches of the wrong size, a front area that fills the region, calls on a log that is
// not mounted (or still formatting), reads outside the region, sources without a read, misaligned front writes.
TESSERA_TEST(flash_log, configurations_and_calls_it_refuses) {
  test::counting_allocator counting;
  const allocator al = counting.get();
  const geometry g = geometries(1);  // read 4, program 16, sectors of 1024
  flash_sim sim;
  REQUIRE_OK(flash_sim_init(sim, g.sim, al));
  flash_log log;
  flash_log_config c = log_config(sim, g);
  c.first_sector = g.sim.sector_count;
  CHECK_ERR(flash_log_format(log, c, al, kFront, 1), errc::invalid_argument);
  c = log_config(sim, g);
  c.sector_count = g.sim.sector_count;  // from sector 1: one past the end
  CHECK_ERR(flash_log_format(log, c, al, kFront, 1), errc::invalid_argument);
  c = log_config(sim, g);
  c.cache_size = 24;  // not a program unit multiple
  CHECK_ERR(flash_log_mount(log, c, al), errc::invalid_argument);
  c.cache_size = 16;  // smaller than a record
  CHECK_ERR(flash_log_format(log, c, al, kFront, 1), errc::invalid_argument);
  c = log_config(sim, g);
  CHECK_ERR(flash_log_format(log, c, al, g.sector_count * g.sim.sector_size, 1), errc::no_space);
  CHECK(sim.erases == 0 && sim.progs == 0);
  flash_log_release(log);

  // Calls on a log that is not mounted.
  uint8_t bytes[64] = {};
  const bytes_view piece(bytes, 10);
  flash_blob blob;
  CHECK_ERR(flash_log_read(log, 0, bytes_mut(bytes, 4)), errc::invalid_argument);
  CHECK_ERR(flash_log_verify(log, blob), errc::invalid_argument);
  CHECK_ERR(flash_log_is_erased(log, 0, 4), errc::invalid_argument);
  CHECK_ERR(flash_log_format_step(log), errc::invalid_argument);
  CHECK_ERR(flash_log_append(log, 1, 0, span<const bytes_view>(&piece, 1)), errc::invalid_argument);
  CHECK(flash_log_free_bytes(log) == 0);
  // A format in progress refuses appends until it is done.
  REQUIRE_OK(flash_log_format_start(log, log_config(sim, g), al, kFront, 1));
  CHECK_ERR(flash_log_append(log, 1, 0, span<const bytes_view>(&piece, 1)), errc::invalid_argument);
  for (;;) {
    result<bool> done = flash_log_format_step(log);
    REQUIRE_OK(done);
    if (*done) break;
  }
  CHECK_ERR(flash_log_format_step(log), errc::invalid_argument);

  // A mounted log: ranges outside the region or misaligned, a source without read, misaligned front writes.
  const uint32_t region = log.region_size;
  CHECK_ERR(flash_log_is_erased(log, 2, 4), errc::out_of_range);
  CHECK_ERR(flash_log_is_erased(log, region - 4, 8), errc::out_of_range);
  CHECK_ERR(flash_log_is_erased(log, region + 4, 0), errc::out_of_range);
  CHECK_ERR(flash_log_read(log, region - 2, bytes_mut(bytes, 4)), errc::out_of_range);
  result<bool> erased = flash_log_is_erased(log, 0, kFront);
  CHECK(erased.ok() && *erased);
  flash_log_source no_read;
  no_read.size = 8;
  CHECK_ERR(flash_log_append_source(log, 1, 0, no_read), errc::invalid_argument);
  CHECK_ERR(flash_log_write_front(log, 1, 0, 8, span<const bytes_view>(&piece, 1)), errc::invalid_argument);
  CHECK_ERR(flash_log_write_front(log, 1, 0, kFront - 8, span<const bytes_view>(&piece, 1)), errc::invalid_argument);
  result<flash_blob> front = flash_log_write_front(log, 1, 0, 0, span<const bytes_view>(&piece, 1));
  CHECK_OK(front);
  CHECK_ERR(flash_log_write_front(log, 1, 0, 0, span<const bytes_view>(&piece, 1)), errc::invalid_argument);  // rewritten
  if (front.ok()) {
    CHECK_OK(flash_log_verify(log, *front));
    flash_blob wrong = *front;
    wrong.crc ^= 1;
    CHECK_ERR(flash_log_verify(log, wrong), errc::corrupt);
  }
  flash_log_release(log);
  flash_sim_release(sim);

  // Geometries the log cannot use: reads wider than its record buffer, a record slot larger than a sector.
  flash_sim_config wide = g.sim;
  wide.read_size = 128;
  wide.prog_size = 128;
  wide.page_size = 128;
  REQUIRE_OK(flash_sim_init(sim, wide, al));
  c = flash_log_config{};
  c.device = flash_sim_device(sim);
  CHECK_ERR(flash_log_format(log, c, al, 0, 1), errc::invalid_argument);
  flash_sim_release(sim);
  flash_sim_config tiny = g.sim;
  tiny.read_size = 4;
  tiny.prog_size = 32;
  tiny.page_size = 32;
  tiny.sector_size = 32;
  tiny.sector_count = 8;
  REQUIRE_OK(flash_sim_init(sim, tiny, al));
  c.device = flash_sim_device(sim);
  CHECK_ERR(flash_log_format(log, c, al, 0, 1), errc::invalid_argument);
  flash_log_release(log);
  flash_sim_release(sim);
  CHECK(!counting.leaked());
}

namespace {

// A blob's bytes from memory, for flash_log_append_source.
status source_read(void* context, uint32_t offset, bytes_mut dst) noexcept {
  std::memcpy(dst.data(), static_cast<const uint8_t*>(context) + offset, dst.size());
  return ok_status();
}

// A call that failed with the device's error (a transient fault) is called once more and must then succeed.
status g_last_error;  // the error of the last call that failed twice (or otherwise), for the report
int g_last_line = 0;
template <class Call>
bool retried_at(int line, Call call) {
  status s = call();
  if (!s.ok() && s.code == errc::io) s = call();
  if (!s.ok()) {
    g_last_error = s;
    g_last_line = line;
  }
  return s.ok();
}
#define retried(call) retried_at(__LINE__, call)

// Format, a front blob, kBlobs appends (blob 5 from a source), a mount and every blob listed, read and verified:
// each call retried once after an io error. False when a call fails otherwise or twice.
bool workload_retrying(flash_sim& sim, const geometry& g, const allocator& alloc) {
  static uint8_t bytes[kMaxBlob];
  flash_log log;
  if (!retried([&] { return flash_log_format(log, log_config(sim, g), alloc, kFront, 0xC0FFEEu); })) return false;
  bool ok = true;
  const uint8_t front_bytes[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  const bytes_view front(front_bytes, sizeof front_bytes);
  ok = ok && retried([&] {
         // At front_end: a failed front write may have programmed some of its bytes, which are never rewritten.
         auto b = flash_log_write_front(log, 8, 0, log.front_end, span<const bytes_view>(&front, 1));
         return b.ok() ? ok_status() : b.err();
       });
  for (uint32_t i = 0; ok && i < kBlobs; ++i) {
    blob_fill(i, bytes);
    const bytes_view piece(bytes, blob_size(i));
    ok = retried([&] {
      if (i == 5) {
        flash_log_source src;
        src.read = source_read;
        src.context = bytes;
        src.size = blob_size(i);
        auto b = flash_log_append_source(log, static_cast<uint8_t>(i % 7), i * 3, src);
        return b.ok() ? ok_status() : b.err();
      }
      auto b = flash_log_append(log, static_cast<uint8_t>(i % 7), i * 3, span<const bytes_view>(&piece, 1));
      return b.ok() ? ok_status() : b.err();
    });
  }
  flash_log_release(log);
  if (!ok) return false;
  // A reader: mount, then each blob listed, read and verified (each call retried once).
  if (!retried([&] { return flash_log_mount(log, log_config(sim, g), alloc); })) return false;
  flash_log_cursor cursor;
  flash_blob b;
  for (uint32_t m = 0; ok && m <= kBlobs + 1; ++m) {
    bool more = false;
    const flash_log_cursor before = cursor;
    ok = retried([&] {
      cursor = before;
      result<bool> r = flash_log_next(log, cursor, &b);
      if (!r.ok()) return r.err();
      more = *r;
      return ok_status();
    });
    if (!ok || !more) break;
    ok = retried([&] { return flash_log_read(log, b.offset, bytes_mut(bytes, b.size)); }) &&
         retried([&] { return flash_log_verify(log, b); });
  }
  flash_log_release(log);
  return ok;
}

// The region as the workload leaves it: the front blob, then blobs 0..kBlobs-1 exactly, nothing else.
void check_workload(test::context& t, flash_sim& sim, const geometry& g, const allocator& alloc) {
  progress p;
  p.formatted = true;
  p.acked = kBlobs;
  flash_log log;
  REQUIRE_OK(flash_log_mount(log, log_config(sim, g), alloc));
  flash_log_cursor cursor;
  flash_blob b;
  result<bool> first = flash_log_next(log, cursor, &b);  // the front blob
  CHECK(first.ok() && *first && b.tag == 8 && b.size == 20);
  if (first.ok() && *first) CHECK_OK(flash_log_verify(log, b));
  uint32_t m = 0;
  static uint8_t want[kMaxBlob];
  static uint8_t got[kMaxBlob];
  for (;;) {
    result<bool> more = flash_log_next(log, cursor, &b);
    CHECK_OK(more);
    if (!more.ok() || !*more || m >= kBlobs) break;
    CHECK_EQ(b.size, blob_size(m));
    CHECK_EQ(b.aux, m * 3);
    blob_fill(m, want);
    if (b.size == blob_size(m)) {
      CHECK_OK(flash_log_read(log, b.offset, bytes_mut(got, b.size)));
      CHECK(std::memcmp(want, got, b.size) == 0);
    }
    ++m;
  }
  CHECK_EQ(m, kBlobs);
  flash_log_release(log);
}

}  // namespace

// A transient device error at each program and erase (leaving nothing, a physical tear or random bytes), then at
// each read, of a format, a front write, appends (one from a source) and a reader's mount, listing, reads and
// verifies; the caller retries a failed call once. Every retry succeeds and the region holds exactly what was
// written: a failed call left nothing that counts.
TESSERA_TEST(flash_log, transient_error_at_every_operation_then_retry) {
  test::counting_allocator counting;
  // nothing done, the physical tear, random bytes (the power-cut sweeps cover the other tears): the Cortex-M4 image
  // runs this sweep under QEMU with the others.
  const flash_tear effects[] = {flash_tear::nothing, flash_tear::partial, flash_tear::garbage};
  for (int gi = 0; gi < kGeometries; ++gi) {
    const geometry g = geometries(gi);
    flash_sim sim;
    REQUIRE_OK(flash_sim_init(sim, g.sim, counting.get()));
    for (int reads = 0; reads < 2; ++reads) {
      const uint8_t ops = reads ? flash_sim_op_read : flash_sim_op_prog | flash_sim_op_erase;
      flash_sim_fail_after(sim, ops, 0, 0, flash_tear::nothing, 0);  // count only
      REQUIRE(workload_retrying(sim, g, counting.get()));
      const uint64_t total = flash_sim_fail_ops(sim);
      for (flash_tear effect : effects) {
        if (reads && effect != flash_tear::nothing) break;  // a failed read has one effect (noise)
        for (uint64_t k = 1; k <= total; ++k) {
          flash_sim_fill_random(sim, 3 + k);
          const uint64_t faults_before = sim.faults;
          flash_sim_fail_after(sim, ops, k, 1, effect, k * 17 + static_cast<uint64_t>(effect));
          if (!workload_retrying(sim, g, counting.get())) {
            std::printf("flash_log %s: a %s fault at operation %llu (effect %d): the call at line %d failed: %s (%s)\n",
                        g.name, reads ? "read" : "program/erase", static_cast<unsigned long long>(k),
                        static_cast<int>(effect), g_last_line, errc_name(g_last_error.code), g_last_error.message);
            CHECK(false);
            break;
          }
          CHECK_EQ(sim.faults, faults_before + 1);
          flash_sim_fail_after(sim, 0, 0, 0, flash_tear::nothing, 0);
          check_workload(t, sim, g, counting.get());
          if (t.failures > 0) break;
        }
        if (t.failures > 0) break;
      }
    }
    flash_sim_release(sim);
    if (t.failures > 0) break;
  }
  CHECK(!counting.leaked());
}
