// The GPU's KernelStep clock: %globaltimer, a 64-bit nanosecond counter seeded from the host's
// CLOCK_REALTIME when the device is attached. Its update rate varies (often 1 us, finer while a
// profiler is attached): measure it (globaltimer_tick.h) instead of assuming.
#ifndef KATRACE_DEVICE_GLOBALTIMER_CLOCK_CUH_
#define KATRACE_DEVICE_GLOBALTIMER_CLOCK_CUH_

#include <stdint.h>

#include "katrace/step_hd.h"

namespace katrace {

struct GlobaltimerClock {
  // Host and device so that StepStamper (host and device code) may name it; only device code
  // stamps with it, host code gets 0.
  KATRACE_HD_INLINE static uint64_t NowNs() {
#if defined(__CUDA_ARCH__)
    uint64_t ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
#else
    return 0;
#endif
  }
};

}  // namespace katrace

#endif  // KATRACE_DEVICE_GLOBALTIMER_CLOCK_CUH_
