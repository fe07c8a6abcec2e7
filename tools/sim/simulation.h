// One katrace-sim run: load the plugin, set the shared mask, run every rank's threads, join,
// finalize, unload, and gather what was issued. Usable in-process (tests) or from main.
#ifndef KATRACE_TOOLS_SIM_SIMULATION_H_
#define KATRACE_TOOLS_SIM_SIMULATION_H_

#include <cstdint>
#include <string>

#include "tools/sim/event_issuer.h"
#include "tools/sim/profiler_api.h"
#include "tools/sim/sim_config.h"

namespace katrace::sim {

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
};

// Returns false with a one-line |error| when the plugin cannot be loaded.
bool RunSimulation(const SimConfig& config, SimResult* result, std::string* error);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_SIMULATION_H_
