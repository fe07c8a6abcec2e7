// Host clocks. Events are timed with CLOCK_MONOTONIC (immune to NTP steps); one realtime/monotonic
// pair read at start anchors the trace so ranks can be merged on realtime.
#ifndef KATRACE_PLUGIN_CLOCK_H_
#define KATRACE_PLUGIN_CLOCK_H_

#include <stdint.h>
#include <time.h>

namespace katrace {

inline uint64_t NowMonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t NowRealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CLOCK_H_
