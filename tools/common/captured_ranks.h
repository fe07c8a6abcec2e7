// Ranks named by the capture that wrote them: the process (host, OS pid, clock base) and the
// rank's pid in that process's own trace. A merged trace's pids are its own (the merge may have
// moved a rank to a free pid), so files are compared by these names, not by pid: a trace merged
// again beside a merged trace that already holds its ranks (or two merged traces that share some)
// would otherwise put those ranks in the result twice, under two pids.
#ifndef KATRACE_TOOLS_COMMON_CAPTURED_RANKS_H_
#define KATRACE_TOOLS_COMMON_CAPTURED_RANKS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tools/common/json_fields.h"
#include "tools/common/trace_header.h"

namespace katrace::tools {

struct CapturedRank {
  std::string host;
  int64_t os_pid = 0;
  int64_t base_realtime_ns = 0;
  int64_t pid = 0;  // in the capture's own trace

  bool operator<(const CapturedRank& other) const {
    return std::tie(host, os_pid, base_realtime_ns, pid) <
           std::tie(other.host, other.os_pid, other.base_realtime_ns, other.pid);
  }
};

// The ranks of one capture's own (not merged) trace, from its header, each with its pid there.
std::map<CapturedRank, int64_t> CapturedRanksOf(const TraceHeader& header);

// A rank a merged trace holds a second time, under another pid: its capture reached that merge
// twice (a file given twice, or a merged trace beside one of its own inputs, to a katrace-merge
// that did not yet leave the second out).
struct RankHeldTwice {
  CapturedRank rank;
  int64_t first_pid = 0;
  int64_t pid = 0;  // the other one
};

// The ranks a merged trace holds, each with its pid in that trace, from its footer
// (otherData.katrace): each input's pids, moved back where the merge moved them (`pid_remap`),
// named by that input's footer; an input that was itself a merged trace is followed down.
// Entries without the fields are skipped. A rank held twice is returned with its first pid, and
// its other pid added to |twice| when given.
std::map<CapturedRank, int64_t> CapturedRanksOfMerged(const Json& merged_footer,
                                                      std::vector<RankHeldTwice>* twice = nullptr);

// What of one input a rank already held by an earlier input leaves out.
struct HeldElsewhere {
  std::set<int64_t> pids;  // its pids whose ranks an earlier input holds
  bool all = false;        // every rank it holds (the input adds nothing)
};

// For each of |inputs|, its ranks that an input before it already holds, merged inputs counted
// first (in order), then the others: a rank is kept where it is first held, and a merged input's
// rank held twice in it is kept under its first pid. Each rank left out is said in one stderr
// line that starts with |tool|. The ranks of a merged input are read from its footer, in a pass
// over the file, made only when there are several inputs.
std::vector<HeldElsewhere> RanksHeldElsewhere(const std::vector<TraceInput>& inputs, const std::string& tool);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_CAPTURED_RANKS_H_
