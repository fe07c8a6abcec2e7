// Rewrites one input's events for the merged trace: times move onto the merged timeline (ts and
// every argument the kind schema types as a time shift by the file's offset; durations and raw
// GPU stamps stay),
// the header is restated against the merged clock base, pids become the ones the merge gave the
// file's ranks (see pid_assigner.h; the header's rank and ranks[].pid too), and flow ids become
// unique per input file, since Perfetto pairs v1 flows by (cat, name, id) across the whole trace.
#ifndef KATRACE_TOOLS_MERGE_EVENT_REWRITER_H_
#define KATRACE_TOOLS_MERGE_EVENT_REWRITER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "tools/common/json_fields.h"

namespace katrace::tools {

class EventRewriter {
 public:
  // The merged pid of one of this file's pids.
  using PidMap = std::function<int64_t(int64_t)>;
  // Whether one of this file's pids is in the merged trace (--ranks, and not already in another
  // input).
  using PidFilter = std::function<bool(int64_t)>;
  // |input| numbers the file among the merge's inputs (flow ids are made unique with it);
  // |offset_ns| = this file's base_realtime_ns - |merged_base_realtime_ns|; |keep_pid| (null:
  // every pid) says which ranks the merged trace holds, and a restated header still lists.
  EventRewriter(int64_t input, int64_t offset_ns, int64_t merged_base_realtime_ns, PidMap pid_map,
                PidFilter keep_pid = nullptr)
      : input_(input), offset_ns_(offset_ns), merged_base_realtime_ns_(merged_base_realtime_ns),
        pid_map_(std::move(pid_map)), keep_pid_(std::move(keep_pid)) {}

  // Whether the merged trace holds this file's |pid| (--ranks, and not already in another input).
  bool KeepsPid(int64_t pid) const { return !keep_pid_ || keep_pid_(pid); }
  // The event's span on the merged timeline; false when it has no usable ts.
  bool MergedSpan(const Json& event, int64_t* start_ns, int64_t* end_ns) const;
  // Appends the rewritten event (one line, no separator) to |out|.
  void Write(const Json& event, std::string* out) const;
  // The flow id this file's |id| becomes.
  uint64_t FlowId(const Json& id) const;
  // The pieces of Write for a writer of another format: the merged pid of one of the file's
  // pids, the shift of its times, whether args.|key| of |event| is a time that shifts with ts
  // (every argument the kind schema types as a time: a Coll/P2p's gpu_start/gpu_end, a
  // GroupApi's group_start_done/group_end_entered, a ProxyOp's in_progress), and a
  // process_name's header restated for the merge.
  int64_t MapPid(int64_t pid) const { return pid_map_ ? pid_map_(pid) : pid; }
  int64_t offset_ns() const { return offset_ns_; }
  static bool ShiftsArg(const std::string& cat, const std::string& key);
  Json Header(const Json& katrace) const;

 private:
  void WriteArgs(const Json& event, const Json& args, std::string* out) const;

  int64_t input_;
  int64_t offset_ns_;
  int64_t merged_base_realtime_ns_;
  PidMap pid_map_;
  PidFilter keep_pid_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_EVENT_REWRITER_H_
