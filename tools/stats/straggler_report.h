// The cross-rank straggler report: for each collective instance, identified across ranks by
// (comm, func, seq), which rank arrived last and by how much. Arrivals are host Coll starts (or
// GPU starts) on the realtime clock each file records, so files from different hosts line up as
// well as their clocks agree. Arrivals go through an ExternalSorter, so memory stays bounded
// however many instances and ranks there are.
#ifndef KATRACE_TOOLS_STATS_STRAGGLER_REPORT_H_
#define KATRACE_TOOLS_STATS_STRAGGLER_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/summary_table.h"
#include "tools/common/external_sorter.h"
#include "tools/stats/comm_sizes.h"

namespace katrace::tools {

// "rank 5", or "rank 1 (comm rank 3)" when a process holds a rank other than its own.
std::string ParticipantLabel(int64_t pid, int64_t comm_rank);

class StragglerReport {
 public:
  StragglerReport(size_t sort_memory_bytes, size_t top_n);
  void AddArrival(uint64_t comm, const std::string& func, int64_t seq, int64_t pid,
                  int64_t comm_rank, int64_t arrival_realtime_ns);
  // Sorts and sweeps; call once after every file was read.
  void Finish(const CommSizes& sizes);

  struct Instance {
    uint64_t comm = 0;
    std::string func;
    int64_t seq = 0;
    uint64_t participants = 0;
    std::string last, first, next;  // labels: last to arrive, first, the one before the last
    int64_t delay_ns = 0;           // last - first
    int64_t lead_ns = 0;            // last - next
  };

  SummaryTable delay_per_rank;  // rows: the rank that came last; values: last - first
  SummaryTable lag_per_rank;    // rows: every rank; values: its arrival - first arrival
  std::vector<Instance> worst;  // the top_n largest delays, largest first
  uint64_t instances = 0;           // seen on 2+ ranks
  uint64_t single_rank_instances = 0;
  uint64_t short_instances = 0;     // fewer ranks than the communicator has
  std::string error;

 private:
  struct Record {
    uint64_t comm;
    uint32_t func;
    uint32_t pad;
    int64_t seq;
    int64_t arrival_ns;
    int64_t pid;
    int64_t comm_rank;
  };
  struct Less {
    bool operator()(const Record& a, const Record& b) const;
  };

  ExternalSorter<Record, Less> sorter_;
  size_t top_n_;
  std::vector<std::string> funcs_;
  std::map<std::string, uint32_t> func_ids_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_STRAGGLER_REPORT_H_
