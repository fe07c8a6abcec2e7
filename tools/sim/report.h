// The run report katrace-sim prints: which plugin and ABI, the mask, per event kind how many
// starts/stops/states were issued and how many handles came back NULL, and the callback rate.
#ifndef KATRACE_TOOLS_SIM_REPORT_H_
#define KATRACE_TOOLS_SIM_REPORT_H_

#include <cstdio>

#include "tools/sim/sim_config.h"
#include "tools/sim/simulation.h"

namespace katrace::sim {

void PrintReport(const SimConfig& config, const SimResult& result, std::FILE* out);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_REPORT_H_
