#include "tools/sim/event_issuer.h"

#include <algorithm>

namespace katrace::sim {

void CallCounters::Add(const CallCounters& other) {
  for (int i = 0; i < kNumEventKinds; ++i) {
    kinds[i].starts += other.kinds[i].starts;
    kinds[i].null_handles += other.kinds[i].null_handles;
    kinds[i].stops += other.kinds[i].stops;
    kinds[i].null_stops += other.kinds[i].null_stops;
    kinds[i].states += other.kinds[i].states;
    kinds[i].null_states += other.kinds[i].null_states;
  }
  calls += other.calls;
  call_ns += other.call_ns;
}

uint64_t MeasureTimerOverheadNs() {
  constexpr int kSamples = 2000;
  uint64_t best = UINT64_MAX;
  // Minimum over small batches: robust against preemption on a busy machine.
  for (int batch = 0; batch < 20; ++batch) {
    uint64_t begin = EventIssuer::NowNs();
    for (int i = 0; i < kSamples / 20; ++i) {
      volatile uint64_t sink = EventIssuer::NowNs();
      (void)sink;
    }
    uint64_t per_call = (EventIssuer::NowNs() - begin) / (kSamples / 20);
    best = std::min(best, per_call);
  }
  return best;
}

}  // namespace katrace::sim
