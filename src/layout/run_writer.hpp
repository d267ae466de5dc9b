// SPDX-License-Identifier: BSD-3-Clause
// Writes contiguous runs of the output from pieces, in address order. With `streaming` (x86-64 hosts, large
// outputs) the runs' aligned 16-byte units are written with non-temporal stores straight from the pieces: a line
// about to be overwritten whole is not first read from memory (the read-for-ownership that makes a big strided
// copy cost twice a memcpy), and it does not evict the cache. The bytes before a run's first unit boundary and
// after its last (shared with other runs, maybe written by another worker) are written with ordinary stores; a
// run that starts where the previous one ended continues it. Without streaming, pieces are copied as they come.
// run_writer_fence() must follow a task's streaming writes before another thread reads them.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tessera::detail {

class run_writer {
 public:
  // `overread`: the 15 bytes before and after every piece may be read (their values are not used); a unit that
  // spans two pieces is then put together from a load in each rather than copied through a buffer.
  run_writer(bool streaming, bool overread) noexcept : streaming_(kCanStream && streaming), overread_(overread) {}

  // Starts a run at `to`. Streaming, a run that starts where the previous one ended continues it: the unit they
  // share is not written in two parts with ordinary stores (whole-array reads merge 25 rows into one run).
  void begin(uint8_t* to) noexcept {
    if (streaming_) {
      if (to == out_ && out_ != nullptr) return;
      end();
      head_ = (16 - (reinterpret_cast<uintptr_t>(to) & 15)) & 15;
    }
    out_ = to;
  }

  void put(const uint8_t* src, size_t n) noexcept {
    if (!streaming_) {
      memcpy(out_, src, n);
      out_ += n;
      return;
    }
    stream(src, n);
  }

  // Writes what is pending (the rest of its unit, if a run continues there, is then written as a run's head).
  void end() noexcept {
    if (pending_ == 0) return;
    memcpy(out_ - pending_, pending_src_ != nullptr ? pending_src_ : unit_, pending_);
    head_ = 16 - pending_;
    pending_ = 0;
  }

  static constexpr bool kCanStream =
#if defined(__SSE2__) && defined(__x86_64__)
      true;
#else
      false;
#endif

 private:
#if defined(__SSE2__) && defined(__x86_64__)
  void stream(const uint8_t* src, size_t n) noexcept {
    if (head_ > 0) {  // the run's bytes up to its first unit boundary
      const size_t take = n < head_ ? n : head_;
      memcpy(out_, src, take);
      out_ += take;
      src += take;
      n -= take;
      head_ -= take;
    }
    if (pending_ > 0 && n > 0) {  // complete the unit the last piece began
      const size_t need = 16 - pending_;
      if (n < need) {  // still not complete: gathered in unit_
        if (pending_src_ != nullptr) memcpy(unit_, pending_src_, pending_);
        memcpy(unit_ + pending_, src, n);
        pending_src_ = nullptr;
        pending_ += n;
        out_ += n;
        return;
      }
      __m128i v;
      if (pending_src_ != nullptr && overread_) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pending_src_));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src - pending_));
        const __m128i keep = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kFirst + 16 - pending_));
        v = _mm_or_si128(_mm_and_si128(keep, a), _mm_andnot_si128(keep, b));
      } else {
        if (pending_src_ != nullptr) memcpy(unit_, pending_src_, pending_);
        memcpy(unit_ + pending_, src, need);
        v = _mm_load_si128(reinterpret_cast<const __m128i*>(unit_));
      }
      _mm_stream_si128(reinterpret_cast<__m128i*>(out_ - pending_), v);
      out_ += need;
      src += need;
      n -= need;
      pending_ = 0;
    }
    for (; n >= 16; n -= 16, src += 16, out_ += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(out_), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
    if (n > 0) {  // pending until the next piece (or the run's end)
      pending_src_ = src;
      pending_ = n;
      out_ += n;
    }
  }

  // kFirst + 16 - k: k bytes of ones, then zeros.
  alignas(16) static constexpr uint8_t kFirst[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
#else
  void stream(const uint8_t*, size_t) noexcept {}
#endif

  bool streaming_;
  bool overread_;
  uint8_t* out_ = nullptr;  // where the next byte goes
  size_t head_ = 0;         // bytes still to write with ordinary stores before the run's first unit boundary
  // The unit in progress: its first pending_ bytes, at out_ - pending_, are pending_src_[0, pending_) (or
  // unit_'s when they came from several pieces).
  size_t pending_ = 0;
  const uint8_t* pending_src_ = nullptr;
  alignas(16) uint8_t unit_[16] = {};
};

// Orders a task's streaming stores before whatever the task does next (the executor's hand-back included).
inline void run_writer_fence() noexcept {
#if defined(__SSE2__) && defined(__x86_64__)
  _mm_sfence();
#endif
}

}  // namespace tessera::detail
