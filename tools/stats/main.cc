// katrace-stats: Nsight-shaped summaries and a straggler report over katrace traces (see
// kStatsUsage).
#include <cstdio>
#include <vector>

#include "common/ends_with.h"
#include "common/output_file.h"
#include "tools/common/captured_ranks.h"
#include "tools/common/host_alignment.h"
#include "tools/common/trace_header.h"
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
  // The inputs' headers; an input without one is read below anyway, which says why.
  std::vector<TraceInput> probed;
  std::vector<size_t> probed_index;
  for (size_t i = 0; (options.align_hosts || options.inputs.size() > 1) && i < options.inputs.size(); ++i) {
    const HeaderProbe probe = ProbeHeader(options.inputs[i]);
    if (!probe.found) continue;
    probed.push_back({options.inputs[i], probe.header});
    probed_index.push_back(i);
  }
  std::vector<int64_t> shift(options.inputs.size(), 0);
  if (options.align_hosts) {
    ReadOptions read_options;
    read_options.tool = "katrace-stats";
    read_options.progress_min_bytes = options.progress_min_bytes;
    const std::vector<int64_t> moved = AlignInputHosts(probed, false, read_options, &failed);
    for (size_t j = 0; j < moved.size(); ++j) shift[probed_index[j]] = moved[j];
  }
  // A rank in two inputs (a file given twice, a merged trace beside one of its own inputs) counts
  // once: the later inputs leave it out, and the exit status says the tables are not all inputs.
  std::vector<HeldElsewhere> held(options.inputs.size());
  const std::vector<HeldElsewhere> probed_held = RanksHeldElsewhere(probed, "katrace-stats");
  for (size_t j = 0; j < probed_held.size(); ++j) held[probed_index[j]] = probed_held[j];
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    if (!held[i].pids.empty()) failed = true;
    if (held[i].all) {
      ++state.files_failed;
      continue;
    }
    failed |= !CollectStats(options.inputs[i], options, shift[i], held[i].pids, &state);
  }
  // Each unreadable input has had its one line on stderr; tables of nothing would only hide it.
  if (state.files_read == 0 && state.events == 0) return 1;
  if (options.Wants("straggler") && !options.align_hosts && state.hosts.size() > 1) {
    std::fprintf(stderr,
                 "katrace-stats: note: the straggler report compares ranks of %zu hosts, each on its own clock as "
                 "recorded; --align-hosts first aligns the clocks on the collectives' GPU ends\n",
                 state.hosts.size());
  }
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
