// Everything katrace-stats aggregates over its inputs, and the per-file visitor that feeds it.
// Events are read once, one at a time; every aggregate is keyed by something small (row name,
// link, communicator), except the cross-rank arrivals, which go through an ExternalSorter.
#ifndef KATRACE_TOOLS_STATS_STATS_COLLECTOR_H_
#define KATRACE_TOOLS_STATS_STATS_COLLECTOR_H_

#include <cstdint>
#include <set>
#include <string>

#include "tools/common/trace_header.h"
#include "tools/common/trace_reader.h"
#include "tools/stats/activity_tables.h"
#include "tools/stats/bandwidth_table.h"
#include "tools/stats/comm_sizes.h"
#include "tools/stats/slow_links.h"
#include "tools/stats/stats_options.h"
#include "tools/stats/straggler_report.h"

namespace katrace::tools {

struct StatsState {
  explicit StatsState(const StatsOptions& options)
      : stragglers(options.sort_memory_bytes, options.top_n) {
    if (options.nranks > 0) comm_sizes.Override(options.nranks);
  }
  ActivityTables tables;
  BandwidthTable bandwidth;
  CommSizes comm_sizes;
  StragglerReport stragglers;
  SlowLinks links;
  uint64_t files_read = 0;
  uint64_t files_failed = 0;
  uint64_t events = 0;
  uint64_t incomplete_left_out = 0;
  uint64_t unusable_times_left_out = 0;  // slices whose ts or dur no timeline can place
  std::set<int64_t> ranks;
  std::set<std::string> hosts;  // of the files' first ranks
};

// Reads one file into |state|, its times moved by |clock_shift_ns| (--align-hosts), without the
// events of |left_out_pids| (ranks an earlier input holds). Returns false (after printing why on
// stderr) when the file could not be read to the end; what was read before a cut still counts.
bool CollectStats(const std::string& path, const StatsOptions& options, int64_t clock_shift_ns,
                  const std::set<int64_t>& left_out_pids, StatsState* state);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_STATS_COLLECTOR_H_
