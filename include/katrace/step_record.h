// KernelStep ring records: the fields of one step, and how they pack into a 32-byte start record
// and an 8-byte stop word. Shared by nvcc and g++; plain integer arithmetic only.
//
// Start record: four 8-byte words, each written with one aligned atomic store.
//   word 0 (published last): 0-31 (seq + 1) mod 2^32 | 32-63 step
//   word 1: 0-59 ready_ns low bits                                               | 60-63 lap tag
//   word 2: 0-31 size | 32-55 peer | 56-59 ready_ns high bits                    | 60-63 lap tag
//   word 3: 0-15 work tag | 16 send | 17 wait measured | 18-59 wait ns           | 60-63 lap tag
// The lap tag is (seq >> depth_log2) mod 16: words 1-3 each name the lap that wrote them, so a copy
// that mixes words of two writers of one slot is detected without a second fence on the writer.
// Stop word: bits 0-23 (seq + 1) mod 2^24; bits 24-63 stop_ns low 40 bits (the reader rebuilds the
// high bits from the start's ready_ns: a transfer never lasts 2^39 ns). A single store: no tearing.
// Zeroed memory reads as sequence -1 ("not written yet") in both rings.
#ifndef KATRACE_STEP_RECORD_H_
#define KATRACE_STEP_RECORD_H_

#include <stdint.h>

#include "katrace/step_hd.h"

namespace katrace {

// One KernelStep as the stamper writes it and the drain reads it. Times are GPU %globaltimer ns
// (or CLOCK_REALTIME-seeded ns for emulated writers).
struct StepStart {
  uint64_t seq;            // per-ring sequence number; pairs the start with its stop
  uint64_t ready_ns;       // transfer start
  uint64_t wait_start_ns;  // wait (credit or data) start; 0 when not measured
  uint32_t step;           // slice index within the work for this (direction, peer)
  uint32_t size_bytes;     // slice bytes
  int32_t peer;            // communicator rank; kStepPeerUnknown when it did not fit
  uint16_t work_tag;       // low bits of the work counter: routes the step to its Coll/P2p
  bool is_send;
};

constexpr int kStepPeerBits = 24;
// Peers 0..kStepPeerMax travel exactly (16.7 million ranks); anything else reads back as unknown.
constexpr int32_t kStepPeerMax = (1 << kStepPeerBits) - 2;
constexpr int32_t kStepPeerUnknown = -1;
constexpr int kStepWaitBits = 42;
// Waits are stored as ready - wait_start; longer ones (over 73 minutes) saturate to this.
constexpr uint64_t kStepWaitMaxNs = (uint64_t{1} << kStepWaitBits) - 1;
constexpr int kStepLapTagBits = 4;
// Writers that may be mid-record on one ring at once (see the invariant in step_ring.h).
constexpr int kStepMaxWritersPerRing = (1 << kStepLapTagBits) - 1;
constexpr int kStepStopSeqBits = 24;
constexpr int kStepStopTimeBits = 40;

// A start record's storage. Only step_ring.h's protocol functions touch the words.
struct alignas(32) StepStartRecord {
  uint64_t word[4];
};
static_assert(sizeof(StepStartRecord) == 32, "a start record is 32 bytes");
static_assert(alignof(StepStartRecord) == 32, "a start record never straddles a 64-byte line");

namespace step_record {

constexpr uint64_t kLow60 = (uint64_t{1} << 60) - 1;
constexpr uint64_t kLow40 = (uint64_t{1} << kStepStopTimeBits) - 1;
constexpr uint64_t kLow24 = (uint64_t{1} << 24) - 1;
constexpr uint32_t kPeerField = (1u << kStepPeerBits) - 1;

KATRACE_HD_INLINE uint64_t LapTag(uint64_t seq, uint32_t depth_log2) {
  return ((seq >> depth_log2) & ((1u << kStepLapTagBits) - 1)) << 60;
}
KATRACE_HD_INLINE uint64_t TagOf(uint64_t word) { return word & ~kLow60; }

KATRACE_HD_INLINE uint64_t PackWord0(uint64_t seq, uint32_t step) {
  return ((seq + 1) & 0xFFFFFFFFu) | (uint64_t{step} << 32);
}
KATRACE_HD_INLINE uint64_t PackWord1(const StepStart& s, uint64_t lap) {
  return (s.ready_ns & kLow60) | lap;
}
KATRACE_HD_INLINE uint64_t PackWord2(const StepStart& s, uint64_t lap) {
  const uint32_t peer = (s.peer >= 0 && s.peer <= kStepPeerMax) ? uint32_t(s.peer) : kPeerField;
  return uint64_t{s.size_bytes} | (uint64_t{peer} << 32) | ((s.ready_ns >> 60) << 56) | lap;
}
KATRACE_HD_INLINE uint64_t PackWord3(const StepStart& s, uint64_t lap) {
  uint64_t word = uint64_t{s.work_tag} | (uint64_t{s.is_send} << 16);
  if (s.wait_start_ns != 0) {
    const uint64_t wait = s.ready_ns > s.wait_start_ns ? s.ready_ns - s.wait_start_ns : 0;
    word |= (uint64_t{1} << 17) | ((wait < kStepWaitMaxNs ? wait : kStepWaitMaxNs) << 18);
  }
  return word | lap;
}

KATRACE_HD_INLINE void Unpack(uint64_t seq, uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3,
                              StepStart* out) {
  out->seq = seq;
  out->step = uint32_t(w0 >> 32);
  out->ready_ns = (w1 & kLow60) | (((w2 >> 56) & 0xF) << 60);
  out->size_bytes = uint32_t(w2);
  const uint32_t peer = uint32_t(w2 >> 32) & kPeerField;
  out->peer = peer == kPeerField ? kStepPeerUnknown : int32_t(peer);
  out->work_tag = uint16_t(w3);
  out->is_send = ((w3 >> 16) & 1) != 0;
  const bool has_wait = ((w3 >> 17) & 1) != 0;
  out->wait_start_ns = has_wait ? out->ready_ns - ((w3 >> 18) & kStepWaitMaxNs) : 0;
}

KATRACE_HD_INLINE uint64_t PackStop(uint64_t seq, uint64_t stop_ns) {
  return ((seq + 1) & kLow24) | ((stop_ns & kLow40) << kStepStopSeqBits);
}

// Where |stored| (a sequence field of |bits| bits holding seq + 1) lies relative to |seq|:
// negative = older (slot not written for |seq| yet), 0 = |seq| itself, positive = newer (|seq| was
// overwritten). Modular, so sequence wrap-around is harmless while the reader is less than half the
// field's range behind the writers.
KATRACE_HD_INLINE int64_t SeqDistance(uint64_t stored, uint64_t seq, int bits) {
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  const uint64_t diff = (stored - (seq + 1)) & mask;
  const uint64_t half = uint64_t{1} << (bits - 1);
  return diff >= half ? int64_t(diff) - int64_t(mask) - 1 : int64_t(diff);
}

// The full stop time from its low 40 bits and the step's ready time (stop may not precede ready by
// more than 2^39 ns; a clock that stepped back yields a stop before ready, reported as is).
KATRACE_HD_INLINE uint64_t StopTime(uint64_t stop_word, uint64_t ready_ns) {
  const uint64_t stop_low = stop_word >> kStepStopSeqBits;
  const uint64_t diff = (stop_low - ready_ns) & kLow40;
  const uint64_t half = uint64_t{1} << (kStepStopTimeBits - 1);
  return diff >= half ? ready_ns - ((kLow40 + 1) - diff) : ready_ns + diff;
}

}  // namespace step_record
}  // namespace katrace

#endif  // KATRACE_STEP_RECORD_H_
