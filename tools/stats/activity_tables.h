// The Nsight-shaped duration tables of katrace-stats: host-side and GPU-side activity (the
// plugin's own finalize summary, common/activity_summary.h, fed the trace's slices), collectives
// by function, size, algorithm and protocol (GPU extent), and KernelStep wait and transfer time
// per channel and per peer. Every table here is of slices, so Time (%) is busy time over the
// table's span. One SummaryTable row per distinct key, so memory follows the key count.
#ifndef KATRACE_TOOLS_STATS_ACTIVITY_TABLES_H_
#define KATRACE_TOOLS_STATS_ACTIVITY_TABLES_H_

#include <cstdint>
#include <string>

#include "common/activity_summary.h"
#include "common/summary_table.h"

namespace katrace::tools {

// "1 MiB", "96 KiB", "1000 B": exact binary units, for row names.
std::string SizeText(uint64_t bytes);

struct KernelStepTimes {
  int64_t channel = 0;
  bool send = false;
  int64_t peer = 0;
  int64_t start_ns = 0;   // the step's slice start on the stats timeline (the wait's, if any)
  bool has_wait = false;  // gpu_start_ns was measured
  uint64_t wait_ns = 0;
  bool has_transfer = false;  // the stop came
  uint64_t transfer_ns = 0;
};

class ActivityTables {
 public:
  ActivityTables();
  // Any X event; the activity summary decides what counts.
  void AddSlice(const ActivitySlice& slice) { activity.Add(slice); }
  // A Coll (|algo|/|proto| set) or P2p with a GPU extent starting at |gpu_start_ns|.
  void AddCollective(const std::string& func, uint64_t bytes, const std::string& algo,
                     const std::string& proto, int64_t gpu_start_ns, uint64_t gpu_ns);
  void AddKernelStep(const KernelStepTimes& step);
  // Call once after the last file.
  void Finish() { activity.Finish(); }

  ActivitySummary activity;  // .host, .gpu
  SummaryTable collectives;
  SummaryTable wait_per_channel;
  SummaryTable transfer_per_channel;
  SummaryTable wait_per_peer;
  SummaryTable transfer_per_peer;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_ACTIVITY_TABLES_H_
