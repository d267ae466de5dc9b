// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/port/flash_cfi.hpp"

#include <string.h>

namespace tessera {

namespace {

// The Intel/Sharp command set (CFI primary command set 0001h / 0003h).
constexpr uint8_t kReadArray = 0xFF;
constexpr uint8_t kReadStatus = 0x70;
constexpr uint8_t kClearStatus = 0x50;
constexpr uint8_t kQuery = 0x98;
constexpr uint8_t kWordProgram = 0x40;
constexpr uint8_t kBufferProgram = 0xE8;
constexpr uint8_t kBlockErase = 0x20;
constexpr uint8_t kConfirm = 0xD0;
constexpr uint8_t kLockSetup = 0x60;
constexpr uint32_t kQueryAddress = 0x55;  // in chip words
// Status register bits.
constexpr uint8_t kReady = 0x80;
constexpr uint8_t kErrorBits = 0x3A;  // 5: erase error, 4: program error, 3: VPP low, 1: block locked

// Plain reads of the mapped array must not move across the command writes (volatile orders only volatile).
inline void compiler_barrier() noexcept { __asm__ __volatile__("" ::: "memory"); }

// The bus word at byte `offset` of the bank (offsets are bank_width multiples, the base is aligned: init checks).
template <typename T>
volatile T* bus_word(const flash_cfi_config& c, uint32_t offset) noexcept {
  return static_cast<volatile T*>(static_cast<volatile void*>(c.base + offset));
}

uint32_t bus_read(const flash_cfi_config& c, uint32_t offset) noexcept {
  if (c.bus.read != nullptr) return c.bus.read(c.bus.context, offset);
  switch (c.bank_width) {
    case 1: return *bus_word<uint8_t>(c, offset);
    case 2: return *bus_word<uint16_t>(c, offset);
    default: return *bus_word<uint32_t>(c, offset);
  }
}

void bus_write(const flash_cfi_config& c, uint32_t offset, uint32_t value) noexcept {
  if (c.bus.write != nullptr) {
    c.bus.write(c.bus.context, offset, value);
    return;
  }
  switch (c.bank_width) {
    case 1: *bus_word<uint8_t>(c, offset) = static_cast<uint8_t>(value); break;
    case 2: *bus_word<uint16_t>(c, offset) = static_cast<uint16_t>(value); break;
    default: *bus_word<uint32_t>(c, offset) = value; break;
  }
}

// The bus word in src's bytes (as the CPU reads them back from the array).
uint32_t load_word(const uint8_t* src, uint32_t width) noexcept {
  switch (width) {
    case 1: return *src;
    case 2: {
      uint16_t v;
      memcpy(&v, src, sizeof v);
      return v;
    }
    default: {
      uint32_t v;
      memcpy(&v, src, sizeof v);
      return v;
    }
  }
}

// The bytes of a bus word as the CPU reads them from the array (load_word's inverse).
void store_word(uint8_t* dst, uint32_t value, uint32_t width) noexcept {
  if (width == 1) {
    *dst = static_cast<uint8_t>(value);
  } else if (width == 2) {
    const auto v = static_cast<uint16_t>(value);
    memcpy(dst, &v, sizeof v);
  } else {
    memcpy(dst, &value, sizeof value);
  }
}

uint32_t erased_word(uint32_t width) noexcept { return width >= 4 ? 0xFFFFFFFFu : (1u << (8 * width)) - 1u; }

// Byte 1 in the lowest lane of each chip: a command byte times this reaches every chip.
uint32_t replicate_for(uint32_t width, uint32_t chips) noexcept {
  const uint32_t lane_bits = 8u * (width / chips);
  uint32_t r = 0;
  for (uint32_t i = 0; i < chips; ++i) r |= 1u << (lane_bits * i);
  return r;
}

void command(const flash_cfi& f, uint32_t offset, uint8_t cmd) noexcept {
  bus_write(f.config, offset, cmd * f.replicate);
}

void read_array(const flash_cfi& f, uint32_t offset) noexcept {
  command(f, offset, kReadArray);
  compiler_barrier();
}

// Every chip's status bits ORed into one byte.
uint8_t fold_status(const flash_cfi& f, uint32_t s) noexcept {
  const uint32_t lane_bits = 8u * (f.config.bank_width / f.config.chips);
  uint32_t r = 0;
  for (uint32_t i = 0; i < f.config.chips; ++i) r |= s >> (lane_bits * i);
  return static_cast<uint8_t>(r);
}

enum class op : uint8_t { program, erase, unlock };

// Reads the status until every chip is ready, at most poll_limit times. Ready without error bits: ok. Else the
// status is kept in last_status and cleared: errc::io. The bank is back in read-array mode either way. The
// parts answer with the status after a program, erase or lock command by themselves; the explicit 70h makes
// sure of it (QEMU's model, for one, returns to read array when it refuses a buffered program's confirm).
status wait_ready(flash_cfi& f, uint32_t offset, op what) noexcept {
  command(f, offset, kReadStatus);
  const uint32_t ready = kReady * f.replicate;
  uint32_t s = 0;
  uint32_t polls = 0;
  bool done = false;
  while (!done && polls < f.config.poll_limit) {
    s = bus_read(f.config, offset);
    ++polls;
    done = (s & ready) == ready;
  }
  if (polls > f.polls_max) f.polls_max = polls;
  const uint8_t folded = fold_status(f, s);
  if (done && (folded & kErrorBits) == 0) {
    read_array(f, offset);
    return ok_status();
  }
  f.last_status = folded;
  command(f, offset, kClearStatus);
  read_array(f, offset);
  if (!done) return make_error(errc::io, TESSERA_MSG("flash cfi: the part did not get ready (poll_limit)"));
  switch (what) {
    case op::program: return make_error(errc::io, TESSERA_MSG("flash cfi: program failed (status error bits)"));
    case op::erase: return make_error(errc::io, TESSERA_MSG("flash cfi: erase failed (status error bits)"));
    default: return make_error(errc::io, TESSERA_MSG("flash cfi: unlock failed (status error bits)"));
  }
}

status unlock_at(flash_cfi& f, uint32_t at) noexcept {
  command(f, at, kLockSetup);
  command(f, at, kConfirm);
  return wait_ready(f, at, op::unlock);
}

status program_word(flash_cfi& f, uint32_t at, uint32_t value) noexcept {
  command(f, at, kWordProgram);
  bus_write(f.config, at, value);
  ++f.programs;
  return wait_ready(f, at, op::program);
}

// count >= 2 words of src (inside one buffer window) at `at`, through the write buffer.
status program_buffer(flash_cfi& f, uint32_t at, const uint8_t* src, uint32_t count) noexcept {
  const uint32_t w = f.config.bank_width;
  // E8h answers with the extended status: bit 7 when a buffer is free, else E8h again (the data sheets' loop).
  const uint32_t ready = kReady * f.replicate;
  for (uint32_t polls = 1;; ++polls) {
    command(f, at, kBufferProgram);
    if ((bus_read(f.config, at) & ready) == ready) break;
    if (polls >= f.config.poll_limit) {
      read_array(f, at);
      return make_error(errc::io, TESSERA_MSG("flash cfi: no write buffer got free (poll_limit)"));
    }
  }
  bus_write(f.config, at, (count - 1) * f.replicate);  // the word count - 1, to every chip
  for (uint32_t k = 0; k < count; ++k) bus_write(f.config, at + k * w, load_word(src + k * w, w));
  command(f, at, kConfirm);
  f.programs += count;
  return wait_ready(f, at, op::program);
}

flash_cfi& state(void* context) noexcept { return *static_cast<flash_cfi*>(context); }

status cfi_read(void* context, uint32_t sector, uint32_t offset, bytes_mut dst) noexcept {
  const flash_cfi& f = state(context);
  const uint32_t at = sector * f.config.sector_size + offset;
  if (f.config.bus.read == nullptr) {
    compiler_barrier();
    memcpy(dst.data(), const_cast<const uint8_t*>(f.config.base + at), dst.size());  // read array: plain memory
    return ok_status();
  }
  const uint32_t w = f.config.bank_width;
  for (size_t i = 0; i < dst.size();) {
    const auto pos = static_cast<uint32_t>(at + i);
    const uint32_t skip = pos % w;
    uint8_t word[4];
    store_word(word, bus_read(f.config, pos - skip), w);
    const size_t take = dst.size() - i < w - skip ? dst.size() - i : w - skip;
    memcpy(dst.data() + i, word + skip, take);
    i += take;
  }
  return ok_status();
}

status cfi_prog(void* context, uint32_t sector, uint32_t offset, bytes_view src) noexcept {
  flash_cfi& f = state(context);
  const uint32_t w = f.config.bank_width;
  const uint32_t at = sector * f.config.sector_size + offset;
  const auto n = static_cast<uint32_t>(src.size());
  const uint32_t erased = erased_word(w);
  if (w == 0) return make_error(errc::invalid_argument, TESSERA_MSG("flash cfi: not initialized"));
  // The port programs each unit once between erases: every word of the range must read erased. Checked before
  // anything is programmed, so a refused program changes nothing.
  for (uint32_t i = 0; i < n; i += w)
    if (bus_read(f.config, at + i) != erased)
      return make_error(errc::invalid_argument, TESSERA_MSG("flash cfi: program over a word that is not erased"));
  const uint32_t buffer = f.config.use_buffer ? f.config.buffer_size : 0;
  for (uint32_t i = 0; i < n;) {
    // One word, or the words up to the end of this buffer window; all-ones words at either end are left out.
    uint32_t stop = buffer != 0 ? ((at + i) / buffer + 1) * buffer - at : i + w;
    if (stop > n) stop = n;
    uint32_t first = i;
    uint32_t last = stop;
    while (first < last && load_word(src.data() + first, w) == erased) first += w;
    while (last > first && load_word(src.data() + last - w, w) == erased) last -= w;
    const uint32_t count = (last - first) / w;
    if (count != 0) {
      TESSERA_TRY(count == 1 ? program_word(f, at + first, load_word(src.data() + first, w))
                             : program_buffer(f, at + first, src.data() + first, count));
    }
    i = stop;
  }
  // Read back: a part that dropped a write (or a model that lost it) is an error, not a silent hole.
  for (uint32_t k = 0; k < n; k += w)
    if (bus_read(f.config, at + k) != load_word(src.data() + k, w))
      return make_error(errc::io, TESSERA_MSG("flash cfi: programmed words read back different"));
  return ok_status();
}

status cfi_erase(void* context, uint32_t sector) noexcept {
  flash_cfi& f = state(context);
  const uint32_t at = sector * f.config.sector_size;
  TESSERA_TRY(unlock_at(f, at));
  command(f, at, kBlockErase);
  command(f, at, kConfirm);
  ++f.erases;
  return wait_ready(f, at, op::erase);
}

// A base, or both bus functions (not half of them).
bool bus_valid(const flash_cfi_config& c) noexcept {
  if (c.bus.read != nullptr || c.bus.write != nullptr) return c.bus.read != nullptr && c.bus.write != nullptr;
  return c.base != nullptr;
}

bool power_of_two(uint32_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

status flash_cfi_probe(flash_cfi_config& config) noexcept {
  const uint32_t w = config.bank_width;
  if (!bus_valid(config) || (w != 1 && w != 2 && w != 4) || reinterpret_cast<uintptr_t>(config.base) % w != 0)
    return make_error(errc::invalid_argument,
                      TESSERA_MSG("flash cfi: base missing or misaligned, or bank_width not 1, 2 or 4"));
  // Commands in every byte lane: each chip takes its low byte, whatever its width.
  const uint32_t all_lanes = replicate_for(w, w);
  bus_write(config, kQueryAddress * w, kQuery * all_lanes);
  // "QRY" at chip words 10h-12h, each chip answering in its own lanes: the pattern tells how many chips.
  const uint32_t q = bus_read(config, 0x10 * w);
  uint32_t chips = 0;
  for (uint32_t c = 1; c <= w; c *= 2)
    if (q == 'Q' * replicate_for(w, c)) chips = c;
  auto at = [&](uint32_t i) noexcept { return bus_read(config, i * w) & 0xFFu; };
  status s = ok_status();
  if (chips == 0 || at(0x11) != 'R' || at(0x12) != 'Y') {
    s = make_error(errc::unsupported, TESSERA_MSG("flash cfi: no CFI query answer"));
  } else if (const uint32_t set = at(0x13) | at(0x14) << 8; set != 0x0001 && set != 0x0003) {
    s = make_error(errc::unsupported, TESSERA_MSG("flash cfi: not the Intel/Sharp command set"));
  } else if (at(0x2C) != 1) {
    s = make_error(errc::unsupported, TESSERA_MSG("flash cfi: erase blocks of more than one size"));
  } else {
    const uint64_t blocks = (at(0x2D) | at(0x2E) << 8) + 1u;
    const uint32_t units = at(0x2F) | at(0x30) << 8;
    const uint64_t block = units == 0 ? 128u : units * 256u;
    const uint32_t buffer_log2 = at(0x2A) | at(0x2B) << 8;
    const uint64_t size = blocks * block * chips;
    if (size > 0xFFFFFFFFu || buffer_log2 > 16) {
      s = make_error(errc::unsupported, TESSERA_MSG("flash cfi: bank of 4 GiB or more, or an odd write buffer"));
    } else {
      config.chips = static_cast<uint8_t>(chips);
      config.sector_size = static_cast<uint32_t>(block * chips);
      config.size = static_cast<uint32_t>(size);
      config.buffer_size = buffer_log2 == 0 ? 0 : chips << buffer_log2;
    }
  }
  bus_write(config, 0, kReadArray * all_lanes);
  compiler_barrier();
  return s;
}

status flash_cfi_init(flash_cfi& cfi, const flash_cfi_config& config) noexcept {
  const uint32_t w = config.bank_width;
  const uint32_t c = config.chips;
  const uint32_t ss = config.sector_size;
  const uint32_t b = config.buffer_size;
  if (!bus_valid(config) || (w != 1 && w != 2 && w != 4) || (c != 1 && c != 2 && c != 4) || c > w ||
      reinterpret_cast<uintptr_t>(config.base) % w != 0)
    return make_error(errc::invalid_argument,
                      TESSERA_MSG("flash cfi: base missing or misaligned, or bank_width / chips not 1, 2 or 4"));
  if (ss == 0 || ss % w != 0 || config.size == 0 || config.size % ss != 0)
    return make_error(errc::invalid_argument,
                      TESSERA_MSG("flash cfi: sector_size or size not a whole number of units"));
  // The buffer's word count - 1 goes to each chip in its lanes: it must fit them.
  const uint32_t lane_bits = 8 * (w / (c == 0 ? 1 : c));
  if (b != 0 && (!power_of_two(b) || b < w || ss % b != 0 || (lane_bits < 32 && b / w > (1u << lane_bits))))
    return make_error(errc::invalid_argument,
                      TESSERA_MSG("flash cfi: buffer_size not a power of two dividing the sector"));
  if (config.poll_limit == 0) return make_error(errc::invalid_argument, TESSERA_MSG("flash cfi: poll_limit is 0"));
  cfi = flash_cfi{};
  cfi.config = config;
  cfi.replicate = replicate_for(w, c);
  cfi.sector_count = config.size / ss;
  command(cfi, 0, kClearStatus);
  read_array(cfi, 0);
  return ok_status();
}

flash_device flash_cfi_device(flash_cfi& cfi) noexcept {
  flash_device d;
  d.read = cfi_read;
  d.prog = cfi_prog;
  d.erase = cfi_erase;
  d.sync = nullptr;  // prog and erase return once the part is ready: nothing is left pending
  d.context = &cfi;
  d.read_size = 1;
  d.prog_size = cfi.config.bank_width;
  d.page_size = cfi.config.buffer_size;  // 0 (no buffer): one sector
  d.sector_size = cfi.config.sector_size;
  d.sector_count = cfi.sector_count;
  d.erased_value = 0xFF;
  d.mapped = cfi.config.bus.read == nullptr ? const_cast<const uint8_t*>(cfi.config.base) : nullptr;
  return d;
}

status flash_cfi_unlock(flash_cfi& cfi, uint32_t sector) noexcept {
  if (sector >= cfi.sector_count)
    return make_error(errc::out_of_range, TESSERA_MSG("flash cfi: unlock of a sector past the bank"));
  return unlock_at(cfi, sector * cfi.config.sector_size);
}

}  // namespace tessera
