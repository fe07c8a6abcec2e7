// Renders katrace-stats's reports as text (aligned tables, the default), CSV (one block per
// report, each under a "# <title>" line) or one JSON object keyed by report.
#ifndef KATRACE_TOOLS_STATS_REPORT_WRITER_H_
#define KATRACE_TOOLS_STATS_REPORT_WRITER_H_

#include <string>

#include "tools/stats/stats_collector.h"
#include "tools/stats/stats_options.h"

namespace katrace::tools {

// |state| must be complete (stragglers finished).
std::string RenderStats(const StatsState& state, const StatsOptions& options);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_REPORT_WRITER_H_
