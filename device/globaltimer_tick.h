// Measures the update interval of the GPU's %globaltimer (the resolution of every KernelStep
// stamp), host API free of CUDA types.
#ifndef KATRACE_DEVICE_GLOBALTIMER_TICK_H_
#define KATRACE_DEVICE_GLOBALTIMER_TICK_H_

#include <stdint.h>

#include <string>

namespace katrace {

struct GlobaltimerTick {
  uint64_t min_ns = 0;   // smallest observed change
  uint64_t mean_ns = 0;  // average change over |num_changes|
  int num_changes = 0;
};

// One thread spins on %globaltimer and records successive changes. False (with |error|) when no
// GPU or a CUDA call failed.
bool MeasureGlobaltimerTick(GlobaltimerTick* tick, std::string* error);

}  // namespace katrace

#endif  // KATRACE_DEVICE_GLOBALTIMER_TICK_H_
