// katrace-sim's command line: flags to SimConfig, with one clear error line for bad input.
#ifndef KATRACE_TOOLS_SIM_SIM_OPTIONS_H_
#define KATRACE_TOOLS_SIM_SIM_OPTIONS_H_

#include <cstddef>
#include <optional>
#include <string>

#include "tools/sim/sim_config.h"

namespace katrace::sim {

enum class ParseOutcome { kRun, kHelp, kError };

// |default_plugin_path| is used when --plugin is absent.
ParseOutcome ParseCommandLine(int argc, char** argv, const std::string& default_plugin_path,
                              SimConfig* config, std::string* error);

const char* UsageText();

// "1M", "64K", "1G", "4096", "2MiB", "512KB": binary multiples. nullopt when malformed.
std::optional<size_t> ParseByteSize(const std::string& text);

// The plugin built next to this binary: <exe dir>/../libnccl-profiler-katrace.so.
std::string DefaultPluginPath();

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_SIM_OPTIONS_H_
