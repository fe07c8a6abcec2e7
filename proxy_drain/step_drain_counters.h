// The KernelStep drain's loss and routing counters: one list, so the struct, the reports and any
// summary use the same names (the trace footer's `drain` object uses them too).
#ifndef KATRACE_PROXY_DRAIN_STEP_DRAIN_COUNTERS_H_
#define KATRACE_PROXY_DRAIN_STEP_DRAIN_COUNTERS_H_

#include <stdint.h>

// X(name, description)
#define KATRACE_STEP_DRAIN_COUNTERS(X)                                                           \
  X(seen, "step start records read intact")                                                      \
  X(lost_overrun, "start or stop records overwritten by the writers before the drain read them") \
  X(abandoned, "steps closed without a stop: lag exceeded, work retired or drain closed")        \
  X(sampled_out, "steps left out on purpose: by sampling, or read with the mask off")             \
  X(late, "steps whose work was retired or never registered; not emitted")

namespace katrace {

struct StepDrainCounters {
#define KATRACE_STEP_DRAIN_FIELD(name, description) uint64_t name = 0;
  KATRACE_STEP_DRAIN_COUNTERS(KATRACE_STEP_DRAIN_FIELD)
#undef KATRACE_STEP_DRAIN_FIELD

  StepDrainCounters& operator+=(const StepDrainCounters& other) {
#define KATRACE_STEP_DRAIN_ADD(name, description) name += other.name;
    KATRACE_STEP_DRAIN_COUNTERS(KATRACE_STEP_DRAIN_ADD)
#undef KATRACE_STEP_DRAIN_ADD
    return *this;
  }
  StepDrainCounters operator-(const StepDrainCounters& other) const {
    StepDrainCounters out;
#define KATRACE_STEP_DRAIN_SUB(name, description) out.name = name - other.name;
    KATRACE_STEP_DRAIN_COUNTERS(KATRACE_STEP_DRAIN_SUB)
#undef KATRACE_STEP_DRAIN_SUB
    return out;
  }
  bool Any() const {
    uint64_t any = 0;
#define KATRACE_STEP_DRAIN_OR(name, description) any |= name;
    KATRACE_STEP_DRAIN_COUNTERS(KATRACE_STEP_DRAIN_OR)
#undef KATRACE_STEP_DRAIN_OR
    return any != 0;
  }
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_STEP_DRAIN_COUNTERS_H_
