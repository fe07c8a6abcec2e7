#include "fuzz/trace_tools_input.h"

#include <cstdint>
#include <cstdio>

#include "fuzz/bytes_file.h"
#include "tools/check/trace_checker.h"
#include "tools/common/host_alignment.h"
#include "tools/merge/merge_options.h"
#include "tools/merge/merger.h"
#include "tools/stats/hang_merge.h"
#include "tools/stats/report_writer.h"
#include "tools/stats/stats_collector.h"
#include "tools/stats/stats_options.h"

namespace katrace_fuzz {

void RunTraceToolsOnBytes(const uint8_t* data, size_t size) {
  BytesFile file(data, size);
  if (!file.ok()) return;
  using namespace katrace::tools;

  if (FILE* sink = std::fopen("/dev/null", "w")) {
    CheckOptions check;
    check.quiet = true;
    CheckTraceFile(file.path(), check, sink);
    std::fclose(sink);
  }

  StatsOptions stats;
  StatsState state(stats);
  CollectStats(file.path(), stats, 0, {}, &state);
  state.tables.Finish();
  state.stragglers.Finish(state.comm_sizes);
  RenderStats(state, stats);

  MergeOptions merge;
  merge.inputs = {file.path(), file.path()};
  merge.output = "/dev/null";
  merge.quiet = true;
  RunMerge(merge);

  MergeHangReports({file.path(), file.path()}, "/dev/null");

  // --align-hosts' arithmetic on hostile ends: the file's collectives as one host's, and as a
  // second host's whose clock reads the first's negated (differences as large as values allow).
  HostCollectiveEnds first{"a", {}}, second{"b", {}};
  CollectiveEndsPass pass(0, &first);
  ReadTrace(file.path(), &pass);
  for (const auto& [key, end] : first.ends) second.ends.emplace(key, end == INT64_MIN ? INT64_MAX : -end);
  AlignHosts({first, second});
}

}  // namespace katrace_fuzz
