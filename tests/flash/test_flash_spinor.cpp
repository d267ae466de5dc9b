// SPDX-License-Identifier: BSD-3-Clause
// The SPI NOR driver (tessera/port/flash_spinor.hpp) against a model of a JEDEC-command-set part written here,
// behind the driver's transport: what QEMU's m25p80 model never does (tests/flash/pflash_*.sh run the driver on
// that one, examples/pflash_board_spinor.hpp): a part slow to get idle or never idle, a write enable that does
// not latch, a page program that wraps within its page (the model carries on into the next page instead), a
// part that drops programs or erases, a transport that fails, ids of other parts or of no part. Last, an array
// written through the flash port on the model, remounted and read back.
#include <cstring>

#include "port_roundtrip.hpp"
#include "tessera/port/flash_spinor.hpp"

using namespace tessera;

namespace {

constexpr uint32_t kModelBytes = 128 * 1024;  // two 64 KiB blocks; addresses past it alias (as small parts do)
constexpr uint32_t kPage = 256;
constexpr uint32_t kLogMax = 256;
uint8_t g_mem[kModelBytes];  // the part's bytes (outside the model, which is reset by assignment)

// A serial NOR part: the commands of the driver, refusing (and counting) what a real part would ignore.
struct part_model {
  uint8_t* mem = g_mem;
  uint8_t id[3] = {0x9D, 0x70, 0x11};  // ISSI, capacity 2^17: 128 KiB
  bool wel = false;
  uint32_t busy_left = 0;

  // Faults.
  uint32_t busy_reads = 0;  // status reads answering busy after each program or erase
  bool never_idle = false;  // after the next program or erase, busy for ever
  bool busy_now = false;  // busy from the start (a reset during an erase), for busy_reads reads
  bool write_protected = false;  // 06h does not set WEL
  bool drop_programs = false;  // programs store nothing
  bool drop_erases = false;  // erases change nothing
  uint32_t fail_transfer = 0;  // the transfer of this number (1-based) fails; 0: none

  // What happened.
  uint32_t transfers = 0;
  uint32_t sequence_errors = 0;  // a command while busy, a program or erase without WEL, a bad head
  uint32_t nlog = 0;
  uint8_t log_op[kLogMax] = {};
  uint32_t log_addr[kLogMax] = {};
  uint32_t log_len[kLogMax] = {};

  void log(uint8_t op, uint32_t addr, uint32_t len) {
    if (nlog < kLogMax) {
      log_op[nlog] = op;
      log_addr[nlog] = addr;
      log_len[nlog] = len;
    }
    ++nlog;
  }
  // The log entries with opcode `op`.
  uint32_t count(uint8_t op) const {
    uint32_t n = 0;
    for (uint32_t i = 0; i < nlog && i < kLogMax; ++i) n += log_op[i] == op;
    return n;
  }
  void busy_after_write() {
    wel = false;
    busy_left = busy_reads;
    if (never_idle) busy_left = UINT32_MAX;
  }
};

part_model g_part;

// The address of a command's head: 3 bytes for the classic opcodes, 4 for the 4-byte ones. false: a head of
// another length.
bool address_of(bytes_view head, bool four, uint32_t& address) {
  if (head.size() != (four ? 5u : 4u)) return false;
  address = 0;
  for (size_t i = 1; i < head.size(); ++i) address = address << 8 | head[i];
  return true;
}

status model_transfer(void* context, bytes_view head, bytes_view out, bytes_mut in) noexcept {
  part_model& m = *static_cast<part_model*>(context);
  ++m.transfers;
  if (m.fail_transfer != 0 && m.transfers == m.fail_transfer)
    return make_error(errc::io, TESSERA_MSG("model: the SPI controller timed out"));
  if (head.empty()) {
    ++m.sequence_errors;
    return ok_status();
  }
  const uint8_t op = head[0];
  if (op == 0x05) {  // read status: answered while busy too
    const bool busy = m.busy_left > 0;
    if (busy && m.busy_left != UINT32_MAX) --m.busy_left;
    if (head.size() != 1 || !out.empty() || in.size() != 1) ++m.sequence_errors;
    if (!in.empty()) in[0] = static_cast<uint8_t>((busy ? 0x01 : 0) | (m.wel ? 0x02 : 0));
    return ok_status();
  }
  if (m.busy_left > 0) {  // the part ignores every other command while busy: a driver bug
    ++m.sequence_errors;
    return ok_status();
  }
  uint32_t addr = 0;
  switch (op) {
    case 0x9F:
      for (size_t i = 0; i < in.size(); ++i) in[i] = i < 3 ? m.id[i] : 0xFF;
      m.log(op, 0, 0);
      return ok_status();
    case 0x06:
      if (!m.write_protected) m.wel = true;
      return ok_status();
    case 0x03:
    case 0x13:
      if (!address_of(head, op == 0x13, addr) || !out.empty()) {
        ++m.sequence_errors;
        return ok_status();
      }
      for (size_t i = 0; i < in.size(); ++i) in[i] = m.mem[(addr + i) % kModelBytes];
      return ok_status();
    case 0x02:
    case 0x12: {
      if (!address_of(head, op == 0x12, addr) || !m.wel || !in.empty() || out.size() > kPage) {
        ++m.sequence_errors;
        return ok_status();
      }
      m.log(op, addr, static_cast<uint32_t>(out.size()));
      // Within the page: past its end the part wraps to the page's start (it never carries into the next).
      const uint32_t base = addr % kModelBytes / kPage * kPage;
      for (size_t i = 0; i < out.size() && !m.drop_programs; ++i) m.mem[base + (addr + i) % kPage] &= out[i];
      m.busy_after_write();
      return ok_status();
    }
    case 0x20:
    case 0x21:
    case 0xD8:
    case 0xDC: {
      if (!address_of(head, op == 0x21 || op == 0xDC, addr) || !m.wel || !out.empty() || !in.empty()) {
        ++m.sequence_errors;
        return ok_status();
      }
      m.log(op, addr, 0);
      const uint32_t unit = op == 0x20 || op == 0x21 ? 4096 : 65536;
      if (!m.drop_erases) std::memset(m.mem + addr % kModelBytes / unit * unit, 0xFF, unit);
      m.busy_after_write();
      return ok_status();
    }
    default:
      ++m.sequence_errors;
      return ok_status();
  }
}

part_model& fresh_part() {
  g_part = part_model{};
  for (uint32_t i = 0; i < kModelBytes; ++i) g_mem[i] = static_cast<uint8_t>(i * 131 + 7);  // a used part
  return g_part;
}

flash_spinor_config part_config(part_model& m) {
  flash_spinor_config c;
  c.transport.transfer = model_transfer;
  c.transport.context = &m;
  return c;
}

void fill(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>((i * 37 + seed) ^ (i >> 7));
}

}  // namespace

TESSERA_TEST(flash_spinor, init_reads_the_id_and_the_geometry) {
  part_model& m = fresh_part();
  flash_spinor nor;
  REQUIRE_OK(flash_spinor_init(nor, part_config(m)));
  CHECK_EQ(nor.jedec_id, 0x9D7011u);
  CHECK_EQ(nor.config.size, kModelBytes);  // 2^capacity
  CHECK_EQ(nor.config.address_bytes, 3);
  const flash_device d = flash_spinor_device(nor);
  CHECK_OK(flash_device_validate(d));
  CHECK_EQ(d.read_size, 1u);
  CHECK_EQ(d.prog_size, 1u);
  CHECK_EQ(d.page_size, 256u);
  CHECK_EQ(d.sector_size, 4096u);
  CHECK_EQ(d.sector_count, 32u);
  CHECK(d.sync == nullptr && d.mapped == nullptr);
  // The configured part, a given size (a part whose capacity byte is not a power of two), 64 KiB sectors.
  flash_spinor_config c = part_config(m);
  c.jedec_id = 0x9D7011;
  c.size = 65536;
  c.erase_size = 65536;
  REQUIRE_OK(flash_spinor_init(nor, c));
  CHECK_EQ(flash_spinor_device(nor).sector_count, 1u);
  CHECK_EQ(flash_spinor_device(nor).sector_size, 65536u);
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_spinor, init_refuses_other_parts_and_bad_configs) {
  part_model& m = fresh_part();
  flash_spinor nor;
  flash_spinor_config c = part_config(m);
  c.jedec_id = 0xEF4018;  // a Winbond W25Q128 is expected
  CHECK_ERR(flash_spinor_init(nor, c), errc::unsupported);
  uint8_t dst[4];
  CHECK_ERR(flash_spinor_read(nor, 0, bytes_mut(dst, sizeof dst)), errc::invalid_argument);  // a failed init
  const uint8_t none[2][3] = {{0, 0, 0}, {0xFF, 0xFF, 0xFF}};  // MISO held low or floating high: no part
  for (const auto& id : none) {
    std::memcpy(m.id, id, 3);
    CHECK_ERR(flash_spinor_init(nor, part_config(m)), errc::io);
  }
  const uint8_t odd[3] = {0xC2, 0x20, 0x05};  // a capacity byte that is no size
  std::memcpy(m.id, odd, 3);
  CHECK_ERR(flash_spinor_init(nor, part_config(m)), errc::unsupported);
  c = part_config(m);
  c.size = 3 * 4096;
  CHECK_OK(flash_spinor_init(nor, c));  // the size given: the capacity byte is not needed
  c.size = 4096 * 3 + 512;
  CHECK_ERR(flash_spinor_init(nor, c), errc::invalid_argument);
  c.size = 32u << 20;
  c.address_bytes = 3;  // 3-byte addresses reach 16 MiB
  CHECK_ERR(flash_spinor_init(nor, c), errc::invalid_argument);
  const flash_spinor_config good = part_config(m);
  c = good;
  c.transport.transfer = nullptr;
  CHECK_ERR(flash_spinor_init(nor, c), errc::invalid_argument);
  c = good;
  c.poll_limit = 0;
  CHECK_ERR(flash_spinor_init(nor, c), errc::invalid_argument);
  c = good;
  c.page_size = 384;
  CHECK_ERR(flash_spinor_init(nor, c), errc::invalid_argument);
  c = good;
  c.erase_size = 32768;
  CHECK_ERR(flash_spinor_init(nor, c), errc::invalid_argument);
  c = good;
  c.address_bytes = 2;
  CHECK_ERR(flash_spinor_init(nor, c), errc::invalid_argument);
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_spinor, a_part_that_stays_busy_is_a_timeout) {
  part_model& m = fresh_part();
  flash_spinor nor;
  flash_spinor_config c = part_config(m);
  c.poll_limit = 50;
  m.busy_reads = 7;  // slow but finishing: every command waits for it
  REQUIRE_OK(flash_spinor_init(nor, c));
  const uint8_t data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  REQUIRE_OK(flash_spinor_erase(nor, 0, 4096));
  REQUIRE_OK(flash_spinor_program(nor, 100, bytes_view(data, sizeof data)));
  CHECK_EQ(nor.polls_max, 8u);  // seven busy answers, then idle
  CHECK_EQ(m.sequence_errors, 0u);
  m.never_idle = true;  // WIP never clears: the bound turns the hang into an error
  CHECK_ERR(flash_spinor_program(nor, 200, bytes_view(data, sizeof data)), errc::io);
  CHECK_EQ(nor.polls_max, 50u);
  CHECK_EQ(nor.last_status & 0x01, 0x01);
  uint8_t back[4];
  CHECK_ERR(flash_spinor_read(nor, 0, bytes_mut(back, sizeof back)), errc::io);  // still busy: nothing is sent
  CHECK_ERR(flash_spinor_erase(nor, 4096, 4096), errc::io);
  CHECK_ERR(flash_spinor_init(nor, c), errc::io);  // init waits for a part busy since before the reset
  CHECK_EQ(m.sequence_errors, 0u);
  // A reset during an erase: init waits it out, then reads the id.
  m.never_idle = false;
  m.busy_left = 20;
  CHECK_OK(flash_spinor_init(nor, c));
  CHECK_EQ(nor.jedec_id, 0x9D7011u);
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_spinor, a_program_is_split_at_page_ends) {
  part_model& m = fresh_part();
  flash_spinor nor;
  REQUIRE_OK(flash_spinor_init(nor, part_config(m)));
  REQUIRE_OK(flash_spinor_erase(nor, 0, 8192));
  static uint8_t data[700];
  fill(data, sizeof data, 3);
  m.nlog = 0;
  // 0x1F0: 16 bytes to the page end, two whole pages, 172 bytes of the next.
  REQUIRE_OK(flash_spinor_program(nor, 0x1F0, bytes_view(data, sizeof data)));
  REQUIRE_EQ(m.nlog, 4u);
  const uint32_t addr[4] = {0x1F0, 0x200, 0x300, 0x400};
  const uint32_t len[4] = {16, 256, 256, 172};
  for (uint32_t i = 0; i < 4; ++i) {
    CHECK_EQ(m.log_op[i], 0x02);
    CHECK_EQ(m.log_addr[i], addr[i]);
    CHECK_EQ(m.log_len[i], len[i]);
  }
  CHECK_EQ(nor.programs, 4u);
  static uint8_t back[700];
  REQUIRE_OK(flash_spinor_read(nor, 0x1F0, bytes_mut(back, sizeof back)));
  CHECK(std::memcmp(back, data, sizeof data) == 0);  // a program across a page end would have wrapped
  uint8_t around[2];
  REQUIRE_OK(flash_spinor_read(nor, 0x1EF, bytes_mut(around, 1)));
  REQUIRE_OK(flash_spinor_read(nor, 0x1F0 + sizeof data, bytes_mut(around + 1, 1)));
  CHECK(around[0] == 0xFF && around[1] == 0xFF);
  // Within one page: one program. Through the device the port never asks for more than a page.
  const flash_device d = flash_spinor_device(nor);
  m.nlog = 0;
  CHECK_OK(flash_prog(d, 1, 0x10, bytes_view(data, 0xF0)));
  CHECK_EQ(m.nlog, 1u);
  CHECK_ERR(flash_prog(d, 1, 0x80, bytes_view(data, 0x100)), errc::invalid_argument);
  CHECK_EQ(m.nlog, 1u);
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_spinor, programs_go_only_to_erased_bytes_and_are_read_back) {
  part_model& m = fresh_part();
  flash_spinor nor;
  REQUIRE_OK(flash_spinor_init(nor, part_config(m)));
  REQUIRE_OK(flash_spinor_erase(nor, 0, 4096));
  uint8_t data[100];
  fill(data, sizeof data, 9);
  REQUIRE_OK(flash_spinor_program(nor, 1000, bytes_view(data, sizeof data)));
  m.nlog = 0;
  // Over programmed bytes (1050..1149): refused before anything is sent (the part would AND the values).
  CHECK_ERR(flash_spinor_program(nor, 1050, bytes_view(data, sizeof data)), errc::invalid_argument);
  CHECK_EQ(m.count(0x02), 0u);
  // Over the used part's bytes (another sector, not erased): refused too.
  CHECK_ERR(flash_spinor_program(nor, 5000, bytes_view(data, 4)), errc::invalid_argument);
  // Without verify the driver trusts the port: the part ANDs the bytes, as real NOR does.
  nor.config.verify = false;
  const uint8_t zero_low[1] = {0xF0};
  CHECK_OK(flash_spinor_program(nor, 1000, bytes_view(zero_low, 1)));
  uint8_t b = 0;
  REQUIRE_OK(flash_spinor_read(nor, 1000, bytes_mut(&b, 1)));
  CHECK_EQ(b, static_cast<uint8_t>(data[0] & 0xF0));
  nor.config.verify = true;
  // A part that drops a program is caught by the read-back.
  m.drop_programs = true;
  CHECK_ERR(flash_spinor_program(nor, 2000, bytes_view(data, sizeof data)), errc::io);
  m.drop_programs = false;
  // A write-protected part: the write enable does not latch, nothing is programmed or erased.
  m.write_protected = true;
  m.nlog = 0;
  CHECK_ERR(flash_spinor_program(nor, 3000, bytes_view(data, sizeof data)), errc::io);
  CHECK_EQ(nor.last_status & 0x02, 0);
  CHECK_ERR(flash_spinor_erase(nor, 4096, 4096), errc::io);
  CHECK_EQ(m.nlog, 0u);
  m.write_protected = false;
  // A part that drops an erase: the sector reads back not erased.
  m.drop_erases = true;
  CHECK_ERR(flash_spinor_erase(nor, 8192, 4096), errc::io);
  m.drop_erases = false;
  // Past the part.
  CHECK_ERR(flash_spinor_program(nor, kModelBytes - 10, bytes_view(data, 11)), errc::out_of_range);
  CHECK_ERR(flash_spinor_read(nor, kModelBytes, bytes_mut(&b, 1)), errc::out_of_range);
  CHECK_ERR(flash_spinor_erase(nor, kModelBytes, 4096), errc::out_of_range);
  CHECK_OK(flash_spinor_program(nor, 10, bytes_view()));  // nothing to do
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_spinor, erases_use_blocks_where_aligned_and_sectors_elsewhere) {
  part_model& m = fresh_part();
  flash_spinor nor;
  REQUIRE_OK(flash_spinor_init(nor, part_config(m)));
  m.nlog = 0;
  // [60 KiB, 128 KiB): one sector before the block boundary, then the whole second block.
  REQUIRE_OK(flash_spinor_erase(nor, 60 * 1024, 68 * 1024));
  REQUIRE_EQ(m.nlog, 2u);
  CHECK(m.log_op[0] == 0x20 && m.log_addr[0] == 60 * 1024);
  CHECK(m.log_op[1] == 0xD8 && m.log_addr[1] == 64 * 1024);
  // [4 KiB, 68 KiB): no whole aligned block in it: sixteen sectors.
  m.nlog = 0;
  REQUIRE_OK(flash_spinor_erase(nor, 4096, 64 * 1024));
  CHECK_EQ(m.count(0x20), 16u);
  CHECK_EQ(m.count(0xD8), 0u);
  CHECK_EQ(nor.erases, 18u);
  static uint8_t back[4096];
  REQUIRE_OK(flash_spinor_read(nor, 60 * 1024, bytes_mut(back, sizeof back)));
  bool erased = true;
  for (uint8_t v : back) erased = erased && v == 0xFF;
  CHECK(erased);
  CHECK_ERR(flash_spinor_erase(nor, 100, 4096), errc::invalid_argument);  // not a sector
  CHECK_ERR(flash_spinor_erase(nor, 0, 1000), errc::invalid_argument);
  // The device erases its sector: 4 KiB with 20h.
  m.nlog = 0;
  CHECK_OK(flash_erase(flash_spinor_device(nor), 3));
  CHECK(m.nlog == 1 && m.log_op[0] == 0x20 && m.log_addr[0] == 3 * 4096);
  // 64 KiB sectors: D8h only, and only whole blocks.
  flash_spinor_config c = part_config(m);
  c.erase_size = 65536;
  REQUIRE_OK(flash_spinor_init(nor, c));
  m.nlog = 0;
  CHECK_ERR(flash_spinor_erase(nor, 4096, 4096), errc::invalid_argument);
  CHECK_OK(flash_erase(flash_spinor_device(nor), 1));
  CHECK(m.nlog == 1 && m.log_op[0] == 0xD8 && m.log_addr[0] == 65536);
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_spinor, parts_over_16_mib_use_the_4_byte_opcodes) {
  part_model& m = fresh_part();
  m.id[2] = 0x19;  // 32 MiB, as QEMU's is25wp256 answers (the model aliases it onto its 128 KiB)
  flash_spinor nor;
  REQUIRE_OK(flash_spinor_init(nor, part_config(m)));
  CHECK_EQ(nor.config.size, 32u << 20);
  CHECK_EQ(nor.config.address_bytes, 4);
  const uint32_t high = (16u << 20) + 65536;  // past what 3 bytes reach
  m.nlog = 0;
  REQUIRE_OK(flash_spinor_erase(nor, high, 65536 + 4096));
  uint8_t data[300];
  fill(data, sizeof data, 5);
  REQUIRE_OK(flash_spinor_program(nor, high + 0x80, bytes_view(data, sizeof data)));
  REQUIRE_EQ(m.nlog, 4u);
  CHECK(m.log_op[0] == 0xDC && m.log_addr[0] == high);
  CHECK(m.log_op[1] == 0x21 && m.log_addr[1] == high + 65536);
  CHECK(m.log_op[2] == 0x12 && m.log_addr[2] == high + 0x80 && m.log_len[2] == 128);
  CHECK(m.log_op[3] == 0x12 && m.log_addr[3] == high + 0x100 && m.log_len[3] == 172);
  uint8_t back[300];
  REQUIRE_OK(flash_spinor_read(nor, high + 0x80, bytes_mut(back, sizeof back)));
  CHECK(std::memcmp(back, data, sizeof data) == 0);
  CHECK_EQ(flash_spinor_device(nor).sector_count, 8192u);
  // 4-byte opcodes on a small part too, when asked.
  flash_spinor_config c = part_config(m);
  c.size = kModelBytes;
  c.address_bytes = 4;
  REQUIRE_OK(flash_spinor_init(nor, c));
  CHECK_OK(flash_spinor_read(nor, 16, bytes_mut(back, 4)));
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_spinor, transport_errors_are_passed_up) {
  part_model& m = fresh_part();
  flash_spinor nor;
  REQUIRE_OK(flash_spinor_init(nor, part_config(m)));
  uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  // Each transfer of an erase and a program in turn: the controller's error comes back as it is.
  for (uint32_t k = 1; k <= 12; ++k) {
    REQUIRE_OK(flash_spinor_erase(nor, 0, 4096));
    m.fail_transfer = m.transfers + k;
    const status s = k % 2 == 0 ? flash_spinor_program(nor, 40, bytes_view(data, sizeof data))
                                : flash_spinor_erase(nor, 4096, 4096);
    const bool failed_here = m.transfers >= m.fail_transfer;
    if (failed_here) {
      CHECK_ERR(s, errc::io);
      // The controller's own message (its code's name where messages are compiled out), not the driver's.
      const error expected = make_error(errc::io, TESSERA_MSG("model: the SPI controller timed out"));
      CHECK(s.message != nullptr && std::strcmp(s.message, expected.message) == 0);
    } else {
      CHECK_OK(s);
    }
    m.fail_transfer = 0;
  }
  m.fail_transfer = m.transfers + 1;
  CHECK_ERR(flash_spinor_init(nor, part_config(m)), errc::io);
  m.fail_transfer = 0;
  CHECK_EQ(m.sequence_errors, 0u);
}

TESSERA_TEST(flash_spinor, an_array_through_the_port_on_the_model) {
  part_model& m = fresh_part();
  flash_spinor nor;
  flash_spinor_config c = part_config(m);
  c.jedec_id = 0x9D7011;
  m.busy_reads = 2;
  REQUIRE_OK(flash_spinor_init(nor, c));
  flash_log_config lc;
  lc.device = flash_spinor_device(nor);
  lc.first_sector = 2;  // a region of the part, not all of it
  lc.sector_count = 6;
  test::check_array_through_port<128>(t, lc);
  CHECK_EQ(m.sequence_errors, 0u);
  CHECK_EQ(nor.erases, 6u);
  CHECK(nor.programs > 0);
  // The sectors outside the region kept the used part's bytes.
  uint8_t outside[2];
  REQUIRE_OK(flash_spinor_read(nor, 2 * 4096 - 1, bytes_mut(outside, 1)));
  REQUIRE_OK(flash_spinor_read(nor, 8 * 4096, bytes_mut(outside + 1, 1)));
  CHECK(outside[0] == static_cast<uint8_t>((2 * 4096 - 1) * 131 + 7) &&
        outside[1] == static_cast<uint8_t>(8 * 4096 * 131 + 7));
}
