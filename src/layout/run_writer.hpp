// Writes one contiguous run of the output from pieces, in address order. With `streaming` (x86-64 hosts, large
// outputs) the run's whole 64-byte lines are written with non-temporal stores: a line about to be overwritten
// whole is not first read from memory (the read-for-ownership that makes a big strided copy cost twice a
// memcpy), and it does not evict the cache. The pieces are assembled in a small buffer so that the stores are
// aligned whatever the pieces' sizes; the run's partial first and last lines (shared with other runs, maybe
// written by another worker) are written with ordinary stores. Without streaming, pieces are copied as they come.
// run_writer_fence() must follow a task's streaming writes before another thread reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tessera::detail {

class run_writer {
 public:
  explicit run_writer(bool streaming) noexcept : streaming_(kCanStream && streaming) {}

  // Starts a run at `to`. Streaming, a run that starts where the previous one ended continues it: the line they
  // share is not written in two parts with ordinary stores (each one a read of the line from memory first; the
  // whole read's rows are 1600 bytes, one such line in 25, 2% of its time).
  void begin(uint8_t* to) noexcept {
    if (streaming_ && fill_ > 0) {
      if (to == to_ + fill_) return;
      drain(true);
    }
    to_ = to;
    fill_ = 0;
  }

  void put(const uint8_t* src, size_t n) noexcept {
    if (!streaming_) {
      std::memcpy(to_ + fill_, src, n);
      fill_ += n;
      return;
    }
    while (n > 0) {
      const size_t take = n < kBuffer - fill_ ? n : kBuffer - fill_;
      std::memcpy(buf_ + fill_, src, take);
      fill_ += take;
      src += take;
      n -= take;
      if (fill_ == kBuffer) drain(false);
    }
  }

  // Writes what is buffered; the run ends here.
  void end() noexcept {
    if (streaming_ && fill_ > 0) drain(true);
  }

  static constexpr bool kCanStream =
#if defined(__SSE2__) && defined(__x86_64__)
      true;
#else
      false;
#endif

 private:
  static constexpr size_t kBuffer = 4096;

  // buf_[0, fill_) goes to to_: the bytes before to_'s first line boundary and (at the end) after its last whole
  // line with ordinary stores, the whole lines streamed. Not at the end, the partial last line stays buffered.
  void drain(bool last) noexcept {
    const uintptr_t at = reinterpret_cast<uintptr_t>(to_);
    size_t head = (64 - (at & 63)) & 63;
    if (head > fill_) head = fill_;
    std::memcpy(to_, buf_, head);
    const size_t body = (fill_ - head) & ~static_cast<size_t>(63);
#if defined(__SSE2__) && defined(__x86_64__)
    for (size_t o = head; o < head + body; o += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf_ + o));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf_ + o + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf_ + o + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(buf_ + o + 48));
      __m128i* p = reinterpret_cast<__m128i*>(to_ + o);
      _mm_stream_si128(p, a);
      _mm_stream_si128(p + 1, b);
      _mm_stream_si128(p + 2, c);
      _mm_stream_si128(p + 3, d);
    }
#endif
    const size_t rest = fill_ - head - body;
    if (last) {
      std::memcpy(to_ + head + body, buf_ + head + body, rest);
      to_ += fill_;
      fill_ = 0;
      return;
    }
    std::memmove(buf_, buf_ + head + body, rest);
    to_ += head + body;
    fill_ = rest;
  }

  // The buffer is one page, page-aligned: a run's bytes assembled across a page boundary made the whole read
  // up to 1.5x slower (78 - 95 against 64 ms for the 256 MB read, 1600-byte rows, in the processes whose stack
  // put the buffer there; measured by moving it through a page in 64-byte steps).
  alignas(kBuffer) uint8_t buf_[kBuffer];
  bool streaming_;
  uint8_t* to_ = nullptr;
  size_t fill_ = 0;
};

// Orders a task's streaming stores before whatever the task does next (the executor's hand-back included).
inline void run_writer_fence() noexcept {
#if defined(__SSE2__) && defined(__x86_64__)
  _mm_sfence();
#endif
}

}  // namespace tessera::detail
