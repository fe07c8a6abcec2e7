// KernelStep rings: per channel one start ring (32-byte records) and one stop ring (8-byte words)
// of the same power-of-two depth, in host-mapped memory; plus the write and read protocol that the
// GPU stamper (nvcc), emulated CPU writers and the host drain (g++) all share.
//
// Protocol. Writer: reserve a sequence number (relaxed fetch_add on writer-side memory), store
// start words 1-3 (relaxed), then publish word 0 with a release store (one system fence on the
// GPU). Stop: one relaxed store of the stop word, tagged with the same sequence number.
// Reader (a seqlock without a writer-side "busy" mark): acquire-load word 0; a different sequence
// means "not yet" (older) or "overwritten" (newer); otherwise copy words 1-3, check that each
// carries the lap tag of this sequence, and re-load word 0. A tag mismatch means a writer of
// another lap is writing the slot; a changed word 0 means one has published: either way the
// record is lost (counted), never returned torn. The acquire pairs with the writer's release, so
// words 1-3 are at least as new as this record's; the tags reject words of any other lap except
// one exactly a multiple of 16 laps away.
//
// Invariant that makes detection exact: a writer never holds a reservation while the ring's other
// writers write 16 laps (16 * depth records), and at most kStepMaxWritersPerRing writers are
// mid-record at once. GPU roles of a channel meet at a barrier every slice, and the emulated
// writer's lockstep mode does the same. (A writer stalled that long could publish its sequence
// over a slot whose words a writer 16 laps later already replaced.)
//
// Memory per channel: depth * 40 bytes.
#ifndef KATRACE_STEP_RING_H_
#define KATRACE_STEP_RING_H_

#include <stddef.h>
#include <stdint.h>

#include "katrace/step_atomic.h"
#include "katrace/step_hd.h"
#include "katrace/step_record.h"

namespace katrace {

constexpr uint32_t kStepRingMinDepthLog2 = 1;
// Keeps a reader that is many laps behind inside the stop word's 24-bit sequence window.
constexpr uint32_t kStepRingMaxDepthLog2 = 20;
// 16384 steps per channel: 640 KiB of pinned memory per channel (PR #2316 used 10 MiB).
constexpr uint32_t kStepRingDefaultDepthLog2 = 14;
constexpr size_t kStepRingBytesPerSlot = sizeof(StepStartRecord) + sizeof(uint64_t);

// One channel's ring pair, rounded up to whole 64-byte lines so that rings can sit back to back.
KATRACE_HD_INLINE constexpr size_t StepRingBytes(uint32_t depth_log2) {
  return ((kStepRingBytesPerSlot << depth_log2) + 63) / 64 * 64;
}
static_assert(StepRingBytes(kStepRingDefaultDepthLog2) <= (size_t{1} << 20),
              "default rings stay within 1 MiB of pinned memory per channel");

// One channel's rings, as raw pointers so that the same value works as a kernel argument.
// |next_seq| is the writers' reservation counter: it lives on the writers' side (device memory for
// the GPU) and the reader never touches it.
struct StepRingView {
  StepStartRecord* starts;  // 1 << depth_log2 records
  uint64_t* stops;          // 1 << depth_log2 words
  uint64_t* next_seq;
  uint32_t depth_log2;
};

// Lays one ring out in |memory| (StepRingBytes(depth_log2) bytes, 64-byte aligned, zeroed):
// starts first, then stops.
KATRACE_HD_INLINE StepRingView MakeStepRingView(void* memory, uint64_t* next_seq,
                                                uint32_t depth_log2) {
  StepRingView view;
  view.starts = static_cast<StepStartRecord*>(memory);
  view.stops = reinterpret_cast<uint64_t*>(view.starts + (size_t{1} << depth_log2));
  view.next_seq = next_seq;
  view.depth_log2 = depth_log2;
  return view;
}

enum class StepSlotState : uint8_t {
  kNotYet,       // the record for this sequence is not visible (yet)
  kReady,        // read intact
  kOverwritten,  // a later record took the slot: this one is lost
};

// ---- Writer side ----------------------------------------------------------------------------

KATRACE_HD_INLINE uint64_t ReserveStepSeq(const StepRingView& ring) {
  return step_atomic::FetchAddRelaxed(ring.next_seq, 1);
}

KATRACE_HD_INLINE StepStartRecord& StartSlot(const StepRingView& ring, uint64_t seq) {
  return ring.starts[seq & ((uint64_t{1} << ring.depth_log2) - 1)];
}

// Split from PublishStart only so that tests can interleave writers; use WriteStart.
KATRACE_HD_INLINE void WriteStartPayload(const StepRingView& ring, const StepStart& start) {
  StepStartRecord& slot = StartSlot(ring, start.seq);
  const uint64_t lap = step_record::LapTag(start.seq, ring.depth_log2);
  step_atomic::StoreRelaxed(&slot.word[1], step_record::PackWord1(start, lap));
  step_atomic::StoreRelaxed(&slot.word[2], step_record::PackWord2(start, lap));
  step_atomic::StoreRelaxed(&slot.word[3], step_record::PackWord3(start, lap));
}

KATRACE_HD_INLINE void PublishStart(const StepRingView& ring, const StepStart& start) {
  // Release: words 1-3 become visible no later than the sequence number that vouches for them.
  step_atomic::StoreRelease(&StartSlot(ring, start.seq).word[0],
                            step_record::PackWord0(start.seq, start.step));
}

KATRACE_HD_INLINE void WriteStart(const StepRingView& ring, const StepStart& start) {
  WriteStartPayload(ring, start);
  PublishStart(ring, start);
}

KATRACE_HD_INLINE void WriteStop(const StepRingView& ring, uint64_t seq, uint64_t stop_ns) {
  // Relaxed: the stop word is self-contained and nothing else is ordered after it.
  step_atomic::StoreRelaxed(&ring.stops[seq & ((uint64_t{1} << ring.depth_log2) - 1)],
                            step_record::PackStop(seq, stop_ns));
}

// ---- Reader side ----------------------------------------------------------------------------

KATRACE_HD_INLINE StepSlotState ReadStart(const StepRingView& ring, uint64_t seq, StepStart* out) {
  StepStartRecord& slot = StartSlot(ring, seq);
  const uint64_t w0 = step_atomic::LoadAcquire(&slot.word[0]);
  const int64_t distance = step_record::SeqDistance(w0, seq, 32);
  if (distance < 0) return StepSlotState::kNotYet;
  if (distance > 0) return StepSlotState::kOverwritten;
  // Acquire on the payload keeps the re-check below after it (free on x86).
  const uint64_t w1 = step_atomic::LoadAcquire(&slot.word[1]);
  const uint64_t w2 = step_atomic::LoadAcquire(&slot.word[2]);
  const uint64_t w3 = step_atomic::LoadAcquire(&slot.word[3]);
  const uint64_t lap = step_record::LapTag(seq, ring.depth_log2);
  if (step_record::TagOf(w1) != lap || step_record::TagOf(w2) != lap ||
      step_record::TagOf(w3) != lap || step_atomic::LoadRelaxed(&slot.word[0]) != w0) {
    return StepSlotState::kOverwritten;
  }
  step_record::Unpack(seq, w0, w1, w2, w3, out);
  return StepSlotState::kReady;
}

// How many sequences newer than |seq| the record now in |seq|'s start slot is: 0 when the slot
// holds |seq|'s record, an older one or none; otherwise a multiple of the depth.
KATRACE_HD_INLINE uint64_t StartSlotLead(const StepRingView& ring, uint64_t seq) {
  const int64_t distance =
      step_record::SeqDistance(step_atomic::LoadAcquire(&StartSlot(ring, seq).word[0]), seq, 32);
  return distance > 0 ? uint64_t(distance) : 0;
}

// |ready_ns| is the start's transfer time, from which the stop's high bits are rebuilt.
KATRACE_HD_INLINE StepSlotState ReadStop(const StepRingView& ring, uint64_t seq, uint64_t ready_ns,
                                         uint64_t* stop_ns) {
  const uint64_t word =
      step_atomic::LoadRelaxed(&ring.stops[seq & ((uint64_t{1} << ring.depth_log2) - 1)]);
  const int64_t distance = step_record::SeqDistance(word, seq, kStepStopSeqBits);
  if (distance < 0) return StepSlotState::kNotYet;
  if (distance > 0) return StepSlotState::kOverwritten;
  *stop_ns = step_record::StopTime(word, ready_ns);
  return StepSlotState::kReady;
}

}  // namespace katrace

#endif  // KATRACE_STEP_RING_H_
