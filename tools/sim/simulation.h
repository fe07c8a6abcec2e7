// One katrace-sim run: load the plugin, set the shared mask, run every rank's threads, join,
// finalize, unload, and gather what was issued. Usable in-process (tests) or from main.
#ifndef KATRACE_TOOLS_SIM_SIMULATION_H_
#define KATRACE_TOOLS_SIM_SIMULATION_H_

#include <cstdint>
#include <string>

#include "tools/sim/event_issuer.h"
#include "tools/sim/gpu_clock.h"
#include "tools/sim/kernel_step_stats.h"
#include "tools/sim/profiler_api.h"
#include "tools/sim/sim_config.h"

namespace katrace::sim {

struct KernelStepResult {
  int active_ranks = 0;          // ranks that ran KernelSteps (v6 plugin, KernelStep in the mask)
  uint32_t ring_depth_log2 = 0;  // slots per ring, as a power of two
  uint64_t ring_bytes_per_channel = 0;
  KernelStepStats totals;  // summed over ranks
};

struct SimResult {
  std::string plugin_path;
  std::string plugin_name;
  AbiVersion abi = AbiVersion::kV6;
  int mask_before_init = 0;
  int mask_after_init = 0;  // after every rank's init (what the plugin asked for)
  int mask_at_end = 0;
  int init_failures = 0;
  int null_contexts = 0;
  CallCounters counters;
  uint64_t wall_ns = 0;  // first operation of any rank to the last event of any rank
  uint64_t timer_overhead_ns = 0;
  KernelStepResult kernel_steps;
  GpuTimelineTruth gpu_clock;  // what the emulated %globaltimer counted
};

// Returns false with a one-line |error| when the plugin cannot be loaded.
bool RunSimulation(const SimConfig& config, SimResult* result, std::string* error);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_SIMULATION_H_
