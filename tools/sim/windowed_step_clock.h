// The clock of katrace-sim's emulated KernelStep writers: the run's GPU timeline (gpu_clock.h:
// realtime through the --gpu-clock model, what the sim's GPU windows are cut from), held at or
// after a floor:
// the KernelCh start of the work being stamped, then the role's previous stamp. So a stamp never
// precedes its KernelCh start (the writer may run a few µs ahead of a window it did not sleep
// for) and a role's stamps never go backwards. The stamp written carries the model's jitter on
// top; the floor does not.
// Thread safety: the floor is per thread (StepStamper's clock is a static function); a writer
// selects the floor of the role it stamps with a Scope.
#ifndef KATRACE_TOOLS_SIM_WINDOWED_STEP_CLOCK_H_
#define KATRACE_TOOLS_SIM_WINDOWED_STEP_CLOCK_H_

#include <time.h>

#include <cstdint>

#include "tools/sim/gpu_clock.h"

namespace katrace::sim {

class WindowedStepClock {
 public:
  class Scope {
   public:
    explicit Scope(uint64_t* floor_ns) : saved_(floor_ns_) { floor_ns_ = floor_ns; }
    ~Scope() { floor_ns_ = saved_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    uint64_t* saved_;
  };

  // The GPU time now, without jitter (what the writer waits on).
  static uint64_t GpuNs() { return GpuTimeline::NowNs(); }

  // Only inside a Scope; advances the floor to the stamp it returns.
  static uint64_t NowNs() {
    uint64_t now = GpuNs();
    if (now < *floor_ns_) now = *floor_ns_;
    *floor_ns_ = now;
    return GpuTimeline::Stamp(now);
  }

 private:
  static inline thread_local uint64_t* floor_ns_ = nullptr;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_WINDOWED_STEP_CLOCK_H_
