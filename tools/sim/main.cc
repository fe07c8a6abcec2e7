// katrace-sim: drive any NCCL profiler plugin the way NCCL core does and report what it recorded.
#include <cstdio>
#include <cstdlib>
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
  // katrace reads its own settings at init and they win over the mask NCCL hands it, so
  // --mask would seem to do nothing with it, and its summary would ignore --quiet. Both are
  // passed on the way katrace takes them, unless the user set them already (then theirs win,
  // and the report says so).
  if (config.mask && std::getenv("KATRACE_MASK") == nullptr) {
    setenv("KATRACE_MASK", std::to_string(*config.mask).c_str(), 1);
  }
  if (config.quiet && std::getenv("KATRACE_SUMMARY") == nullptr) setenv("KATRACE_SUMMARY", "0", 1);
  SimResult result;
  if (!RunSimulation(config, &result, &error)) {
    std::fprintf(stderr, "katrace-sim: %s\n", error.c_str());
    return 1;
  }
  if (!config.quiet) PrintReport(config, result, stdout);
  return 0;
}
