// katrace-sim: drive any NCCL profiler plugin the way NCCL core does and report what it recorded.
#include <cstdio>
#include <string>

#include "tools/sim/report.h"
#include "tools/sim/sim_options.h"
#include "tools/sim/simulation.h"

int main(int argc, char** argv) {
  using namespace katrace::sim;
  SimConfig config;
  std::string error;
  switch (ParseCommandLine(argc, argv, DefaultPluginPath(), &config, &error)) {
    case ParseOutcome::kHelp:
      std::fputs(UsageText(), stdout);
      return 0;
    case ParseOutcome::kError:
      std::fprintf(stderr, "katrace-sim: %s\n", error.c_str());
      return 2;
    case ParseOutcome::kRun:
      break;
  }
  SimResult result;
  if (!RunSimulation(config, &result, &error)) {
    std::fprintf(stderr, "katrace-sim: %s\n", error.c_str());
    return 1;
  }
  if (!config.quiet) PrintReport(config, result, stdout);
  return 0;
}
