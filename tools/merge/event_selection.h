// Which events of a rank go into the merged trace: rank list, time window (on the merged
// timeline) and kinds. Slices are kept when they overlap the window, not clipped, so nesting
// survives: a kept child's parent overlaps the window too. Flows are kept in pairs only (see
// FlowWindow), so the output never holds half an arrow, and only where --kinds kept the slices at
// both ends (FlowPlan, pftrace_merge_writer.h).
#ifndef KATRACE_TOOLS_MERGE_EVENT_SELECTION_H_
#define KATRACE_TOOLS_MERGE_EVENT_SELECTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/common/json_fields.h"
#include "tools/merge/merge_options.h"

namespace katrace::tools {

class EventSelection {
 public:
  explicit EventSelection(const MergeOptions& options) : options_(options) {}

  bool has_window() const { return options_.from_ns.has_value() || options_.to_ns.has_value(); }
  bool KeepsFlows() const { return KeepsKind("flow"); }
  // |ph|, |cat| and |name| of the event; the span [start, end] on the merged timeline (end =
  // start for points). Metadata always passes. A CollGpu slice follows the kind of its
  // collective: a P2p's (named Send or Recv, as P2p slices are) is kept with p2p, not coll.
  bool Keep(char ph, const std::string& cat, const std::string& name, int64_t start_ns,
            int64_t end_ns) const;
  bool InWindow(int64_t start_ns, int64_t end_ns) const;

 private:
  bool KeepsKind(const std::string& kind) const {
    return !options_.kinds || options_.kinds->count(kind) != 0;
  }
  const MergeOptions& options_;
};

// Flow keys (see FlowKeyOf) whose start and end both fall in the window, collected by a first
// pass over a file when a window is set. Memory grows with the flows inside the window, which is
// what the output will hold anyway.
class FlowWindow {
 public:
  void AddStart(uint64_t key) { starts_.push_back(key); }
  void AddEnd(uint64_t key) { ends_.push_back(key); }
  // Call once after the pass.
  void Seal();
  bool Contains(uint64_t key) const;
  void Clear();

 private:
  std::vector<uint64_t> starts_;
  std::vector<uint64_t> ends_;
  std::vector<uint64_t> both_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_EVENT_SELECTION_H_
