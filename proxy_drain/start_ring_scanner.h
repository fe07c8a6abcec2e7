// Finds every start record of one channel's start ring exactly once, in visibility order: each
// sequence number ends as read (OnStart) or lost to overrun (OnLost). Writers reserve before they
// publish, so records can appear out of order; a gap (a sequence not visible while a later one is)
// is remembered and re-checked at each scan, and never holds back what follows it.
//
// A reader many laps behind (a proxy thread that stalled while the GPU stamped on, or rings that
// still hold an earlier run's records) does not walk the sequences it can no longer read one by
// one: that would stall the proxy thread for as many probes as records were missed. Every
// sequence more than kCertainlyOverwrittenLaps laps behind a record seen in its slot is
// overwritten for certain (no writer holds a reservation across 16 laps: step_ring.h), so those
// are counted lost at once and the scan goes on from there.
//
// Thread safety: one thread (the drain's) owns a scanner.
#ifndef KATRACE_PROXY_DRAIN_START_RING_SCANNER_H_
#define KATRACE_PROXY_DRAIN_START_RING_SCANNER_H_

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <vector>

#include "katrace/step_ring.h"

namespace katrace {

class StartRingScanner {
 public:
  // |max_gap|: how many not-yet-visible slots in a row a scan looks past before it concludes that
  // nothing later was written. At least the number of writers of the ring, whose unfinished
  // records are the only possible holes.
  StartRingScanner(const StepRingView& ring, uint32_t max_gap)
      : ring_(ring),
        max_gap_(
            std::min<uint64_t>(std::max<uint32_t>(max_gap, 1), uint64_t{1} << ring.depth_log2)),
        max_pending_(std::max<size_t>(size_t{4} << ring.depth_log2, 1024)) {}

  static constexpr uint64_t kCertainlyOverwrittenLaps = 17;

  // OnStart(const StepStart&), OnLost(uint64_t count): that many sequences lost.
  template <class OnStart, class OnLost>
  void Scan(OnStart&& on_start, OnLost&& on_lost) {
    StepStart start;
    size_t kept = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      const uint64_t seq = pending_[i];
      switch (ReadStart(ring_, seq, &start)) {
        case StepSlotState::kReady:
          on_start(start);
          break;
        case StepSlotState::kOverwritten:
          on_lost(1);
          break;
        case StepSlotState::kNotYet:
          pending_[kept++] = seq;
          break;
      }
    }
    pending_.resize(kept);

    uint64_t probe = next_seq_;
    uint32_t gap = 0;
    while (gap < max_gap_) {
      const StepSlotState state = ReadStart(ring_, probe, &start);
      if (state == StepSlotState::kNotYet) {
        ++gap;
        ++probe;
        continue;
      }
      for (uint64_t hole = probe - gap; hole < probe; ++hole) pending_.push_back(hole);
      gap = 0;
      if (state == StepSlotState::kReady) {
        on_start(start);
      } else {
        const uint64_t lead = StartSlotLead(ring_, probe);
        const uint64_t margin = kCertainlyOverwrittenLaps << ring_.depth_log2;
        if (lead > margin) {
          on_lost(lead - margin);
          probe += lead - margin;
          next_seq_ = probe;
          continue;
        }
        on_lost(1);
      }
      next_seq_ = ++probe;
    }

    // Holes only outlive a lap when writers broke the ring's writer limit; bound the memory.
    if (pending_.size() > max_pending_) {
      const size_t excess = pending_.size() - max_pending_;
      on_lost(excess);
      pending_.erase(pending_.begin(), pending_.begin() + excess);
    }
  }

  // Every sequence below this has been resolved or is pending.
  uint64_t next_seq() const { return next_seq_; }
  // Every sequence below this has been resolved.
  uint64_t resolved_floor() const { return pending_.empty() ? next_seq_ : pending_.front(); }
  size_t num_pending() const { return pending_.size(); }

 private:
  StepRingView ring_;
  uint64_t max_gap_;
  size_t max_pending_;
  uint64_t next_seq_ = 0;
  std::vector<uint64_t> pending_;  // ascending holes below next_seq_
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_START_RING_SCANNER_H_
