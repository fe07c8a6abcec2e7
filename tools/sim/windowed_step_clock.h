// The clock of katrace-sim's emulated KernelStep writers: CLOCK_REALTIME nanoseconds (what
// %globaltimer counts, and what the sim's GPU windows are cut from), held at or after a floor:
// the KernelCh start of the work being stamped, then the role's previous stamp. So a stamp never
// precedes its KernelCh start (the writer may run a few µs ahead of a window it did not sleep
// for) and a role's stamps never go backwards.
// Thread safety: the floor is per thread (StepStamper's clock is a static function); a writer
// selects the floor of the role it stamps with a Scope.
#ifndef KATRACE_TOOLS_SIM_WINDOWED_STEP_CLOCK_H_
#define KATRACE_TOOLS_SIM_WINDOWED_STEP_CLOCK_H_

#include <time.h>

#include <cstdint>

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

  static uint64_t RealtimeNs() {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
  }

  // Only inside a Scope; advances the floor to the stamp it returns.
  static uint64_t NowNs() {
    uint64_t now = RealtimeNs();
    if (now < *floor_ns_) now = *floor_ns_;
    *floor_ns_ = now;
    return now;
  }

 private:
  static inline thread_local uint64_t* floor_ns_ = nullptr;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_WINDOWED_STEP_CLOCK_H_
