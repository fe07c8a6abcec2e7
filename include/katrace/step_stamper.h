// The three KernelStep stamps of one slice, for the thread of one role (direction, peer) of a
// simple-prims-style slice loop: WaitStart before waiting for credit or data, TransferStart when
// the copy begins, SliceEnd once the slice is posted. Shared by the GPU (Clock = %globaltimer) and
// emulated CPU writers (Clock = realtime), so CPU tests run the device's code.
//
// Sampling is deterministic: a step is kept when step % sample_every == 0 (so step 0 always is),
// and every role of a channel agrees without talking. StepStamper<false, Clock> is empty: with
// stamping compiled off, the calls vanish and the loop carries no stamping state.
//
// Thread safety: one object per role thread; the ring itself takes several writers.
#ifndef KATRACE_STEP_STAMPER_H_
#define KATRACE_STEP_STAMPER_H_

#include <stdint.h>

#include "katrace/step_hd.h"
#include "katrace/step_ring.h"

namespace katrace {

template <bool kEnabled, class Clock>
class StepStamper;

template <class Clock>
class StepStamper<true, Clock> {
 public:
  KATRACE_HD_INLINE StepStamper(const StepRingView& ring, uint32_t work_tag, int peer, bool is_send,
                                uint32_t sample_every)
      : ring_(ring),
        sample_every_(sample_every),
        peer_(peer),
        work_tag_(uint16_t(work_tag)),
        is_send_(is_send) {}

  KATRACE_HD_INLINE static bool Sampled(uint32_t step, uint32_t sample_every) {
    return sample_every <= 1 || step % sample_every == 0;
  }

  KATRACE_HD_INLINE void WaitStart(uint32_t step) {
    if (Sampled(step, sample_every_)) wait_start_ns_ = Clock::NowNs();
  }

  // A step without a WaitStart has no wait measured (its startTs is 0).
  KATRACE_HD_INLINE void TransferStart(uint32_t step, uint32_t size_bytes) {
    open_ = Sampled(step, sample_every_);
    if (open_) {
      StepStart start;
      start.ready_ns = Clock::NowNs();
      start.seq = ReserveStepSeq(ring_);
      start.wait_start_ns = wait_start_ns_;
      start.step = step;
      start.size_bytes = size_bytes;
      start.peer = peer_;
      start.work_tag = work_tag_;
      start.is_send = is_send_;
      WriteStart(ring_, start);
      seq_ = start.seq;
    }
    wait_start_ns_ = 0;
  }

  KATRACE_HD_INLINE void SliceEnd() {
    if (open_) WriteStop(ring_, seq_, Clock::NowNs());
    open_ = false;
  }

 private:
  StepRingView ring_;
  uint64_t wait_start_ns_ = 0;
  uint64_t seq_ = 0;
  uint32_t sample_every_;
  int peer_;
  uint16_t work_tag_;
  bool is_send_;
  bool open_ = false;
};

template <class Clock>
class StepStamper<false, Clock> {
 public:
  KATRACE_HD_INLINE StepStamper(const StepRingView&, uint32_t, int, bool, uint32_t) {}
  KATRACE_HD_INLINE void WaitStart(uint32_t) {}
  KATRACE_HD_INLINE void TransferStart(uint32_t, uint32_t) {}
  KATRACE_HD_INLINE void SliceEnd() {}
};

}  // namespace katrace

#endif  // KATRACE_STEP_STAMPER_H_
