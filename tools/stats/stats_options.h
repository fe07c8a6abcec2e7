// katrace-stats's command line.
#ifndef KATRACE_TOOLS_STATS_STATS_OPTIONS_H_
#define KATRACE_TOOLS_STATS_STATS_OPTIONS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace katrace::tools {

enum class StatsFormat { kText, kCsv, kJson };

struct StatsOptions {
  std::vector<std::string> inputs;
  std::string output = "-";
  StatsFormat format = StatsFormat::kText;
  // host, gpu, coll, channel, peer, bw, straggler; empty = all.
  std::set<std::string> reports;
  size_t top_n = 10;
  int64_t nranks = 0;         // 0 = infer
  bool gpu_arrival = false;   // straggler arrival = GPU start instead of host Coll start
  bool align_hosts = false;   // each host's files on the first input's host's clock (host_alignment.h)
  size_t sort_memory_bytes = size_t{256} << 20;
  uint64_t progress_min_bytes = uint64_t{256} << 20;
  bool hang = false;  // --hang: the inputs are hang reports (<trace>.hang.json), merged
  bool Wants(const char* report) const { return reports.empty() || reports.count(report) != 0; }
};

extern const char kStatsUsage[];

// 0 on success, 2 on a usage error (printed), -1 after --help (printed).
int ParseStatsOptions(int argc, char** argv, StatsOptions* options);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_STATS_OPTIONS_H_
