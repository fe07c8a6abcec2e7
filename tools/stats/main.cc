// katrace-stats: Nsight-shaped summaries and a straggler report over katrace traces (see
// kStatsUsage).
#include <cstdio>

#include "common/ends_with.h"
#include "common/output_file.h"
#include "tools/stats/hang_merge.h"
#include "tools/stats/report_writer.h"
#include "tools/stats/stats_collector.h"
#include "tools/stats/stats_options.h"

int main(int argc, char** argv) {
  using namespace katrace::tools;
  StatsOptions options;
  const int parsed = ParseStatsOptions(argc, argv, &options);
  if (parsed < 0) return 0;
  if (parsed > 0) return parsed;
  if (options.hang) return MergeHangReports(options.inputs, options.output);
  StatsState state(options);
  bool failed = false;
  for (const std::string& path : options.inputs) failed |= !CollectStats(path, options, &state);
  // Each unreadable input has had its one line on stderr; tables of nothing would only hide it.
  if (state.files_read == 0 && state.events == 0) return 1;
  state.tables.Finish();
  state.stragglers.Finish(state.comm_sizes);
  // A sort that could not spill leaves the straggler tables empty or short: the report says so,
  // but a script reading only the tables would take them as the answer.
  if (!state.stragglers.error.empty()) {
    std::fprintf(stderr, "katrace-stats: straggler report incomplete: %s\n",
                 state.stragglers.error.c_str());
    failed = true;
  }
  const std::string report = RenderStats(state, options);
  katrace::OutputFile out;
  std::string error;
  if (!out.Open(options.output, katrace::EndsWith(options.output, ".gz"), &error) || !out.Write(report) ||
      !out.Commit(&error)) {
    std::fprintf(stderr, "katrace-stats: %s\n", error.c_str());
    return 2;
  }
  return failed ? 1 : 0;
}
