// Knobs of the KernelStep drain. Defaults follow PR #2316's lessons (a lost-completion lag of 64).
#ifndef KATRACE_PROXY_DRAIN_STEP_DRAIN_CONFIG_H_
#define KATRACE_PROXY_DRAIN_STEP_DRAIN_CONFIG_H_

#include <stdint.h>

namespace katrace {

struct StepDrainConfig {
  // The descriptor's rank field (the communicator rank the rings belong to).
  int rank = 0;
  // A step still without a stop once this many later starts were read on its channel is
  // abandoned (stop delivered with pTimer 0). PR #2316 found 1024 held stops back for a whole
  // training step; 64 did not lose live steps.
  uint32_t abandon_lag = 64;
  // Must equal the device stamper's sample_every; used to count the steps it skipped: each kept
  // step above 0 stands for the sample_every - 1 before it. Steps after a stream's last kept step
  // are invisible to the drain and not counted.
  uint32_t sample_every = 1;
  // Not-yet-visible slots a scan looks past; at least the writers per ring (GPU roles per channel).
  uint32_t max_scan_gap = 16;
  // Emit drain reports every this many polls (0: only from Flush and Close).
  uint32_t report_every_polls = 4096;
  // Works live at once per (channel, direction), as a power of two (16 at most: one per tag).
  uint32_t work_slots_log2 = 10;
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_STEP_DRAIN_CONFIG_H_
