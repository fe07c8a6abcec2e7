// The merged trace's footer (otherData.katrace, format "katrace-merged"): counters summed over
// the captures the inputs hold, each once (a merged input adds the footers it was made of;
// `waits` also takes the `writer_stalls` of older inputs), `spool` as a list with one {rank,
// blocks, bytes, clean_end, cut_offset} per capture that had one (offsets and clean ends do not
// sum), `ranks` = every pid of the merged trace, the selection that was applied, and one entry
// per input with its own footer, so nothing a per-rank footer said is lost, its `pids` in the
// merged trace and, when the merge moved a rank off a pid another input holds, `pid_remap`
// [{from, to}]. Holds one small object per input file.
// Under --ranks the sums hold the captures of the selected ranks only: a merged input's parts
// whose pids are all left out are not summed (nor listed in `spool`); a capture that held a
// selected rank and others (one process with several ranks) is summed whole, since its counters
// are not kept per rank.
#ifndef KATRACE_TOOLS_MERGE_MERGED_FOOTER_H_
#define KATRACE_TOOLS_MERGE_MERGED_FOOTER_H_

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tools/common/json_fields.h"
#include "tools/merge/merge_options.h"

namespace katrace::tools {

class MergedFooter {
 public:
  MergedFooter();
  // |footer| is the input's otherData.katrace, or null when it had none (cut file); |pid_map|
  // (own pid, merged pid) for each of its ranks that had events; |ranks| the --ranks selection.
  void AddInput(const std::string& path, int64_t rank, int64_t offset_ns, uint64_t events_in,
                uint64_t events_out, const Json* footer, const std::string& problem,
                const std::vector<std::pair<int64_t, int64_t>>& pid_map, const RankSelection& ranks);
  // --align-hosts: the last input's host was moved by |ns| (part of its rebased_ns).
  void NoteHostShift(int64_t ns);
  // The footer object (otherData.katrace); a merged .pftrace carries it as its footer track's
  // description.
  Json Katrace(int64_t merged_base_realtime_ns, const MergeOptions& options) const;
  // The whole `"otherData":{...}` member.
  std::string Render(int64_t merged_base_realtime_ns, const MergeOptions& options) const;

 private:
  // Sums |footer| (and, for a merged one, the footers it was made of, those of a part with a
  // rank |ranks| keeps) into the totals, each capture once; |rank| names its spool entry.
  void AddCaptures(const Json& footer, int64_t rank, const RankSelection& ranks);

  Json sums_;
  std::set<std::string> captures_;  // host, OS pid and clock base of each capture summed
  std::set<int64_t> pids_;
  Json spools_;
  Json inputs_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_MERGED_FOOTER_H_
