// The clock of emulated step writers: like %globaltimer, nanoseconds seeded from CLOCK_REALTIME
// once and then monotonic (later wall-clock steps do not move it).
#ifndef KATRACE_PROXY_DRAIN_REALTIME_STEP_CLOCK_H_
#define KATRACE_PROXY_DRAIN_REALTIME_STEP_CLOCK_H_

#include <stdint.h>
#include <time.h>

namespace katrace {

struct RealtimeStepClock {
  static uint64_t NowNs() {
    static const uint64_t realtime_minus_monotonic_ns =
        Read(CLOCK_REALTIME) - Read(CLOCK_MONOTONIC);
    return Read(CLOCK_MONOTONIC) + realtime_minus_monotonic_ns;
  }

 private:
  static uint64_t Read(clockid_t clock) {
    timespec ts;
    clock_gettime(clock, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
  }
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_REALTIME_STEP_CLOCK_H_
