// Rewrites one rank's events for the merged trace: times move onto the merged timeline (ts and
// a Coll/P2p's gpu_start/gpu_end shift by the rank's offset; durations and raw GPU stamps stay),
// the header is restated against the merged clock base, and flow ids become unique per rank,
// since Perfetto pairs v1 flows by (cat, name, id) across the whole trace.
#ifndef KATRACE_TOOLS_MERGE_EVENT_REWRITER_H_
#define KATRACE_TOOLS_MERGE_EVENT_REWRITER_H_

#include <cstdint>
#include <string>

#include "tools/common/json_fields.h"

namespace katrace::tools {

class EventRewriter {
 public:
  // |offset_ns| = this file's base_realtime_ns - |merged_base_realtime_ns|.
  EventRewriter(int64_t rank, int64_t offset_ns, int64_t merged_base_realtime_ns)
      : rank_(rank), offset_ns_(offset_ns), merged_base_realtime_ns_(merged_base_realtime_ns) {}

  // The event's span on the merged timeline; false when it has no usable ts.
  bool MergedSpan(const Json& event, int64_t* start_ns, int64_t* end_ns) const;
  // Appends the rewritten event (one line, no separator) to |out|.
  void Write(const Json& event, std::string* out) const;
  // The flow id this rank's |id| becomes.
  uint64_t FlowId(const Json& id) const;

 private:
  void WriteArgs(const Json& event, const Json& args, std::string* out) const;
  void WriteHeader(const Json& katrace, std::string* out) const;

  int64_t rank_;
  int64_t offset_ns_;
  int64_t merged_base_realtime_ns_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_EVENT_REWRITER_H_
