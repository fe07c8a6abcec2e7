// Per-track nesting of X slices, checked the way Perfetto imports them: events sorted by start,
// a stack per track, and a slice that starts inside another but ends after it is a partial
// overlap (Perfetto moves it to an overflow track). Same-start slices must come parent first in
// the file, since Perfetto keeps file order for equal timestamps. Flow endpoints ride along as
// points and must fall inside a slice of their track, or the arrow binds to nothing.
// On GPU and proxy tracks every enclosure also goes to the ancestry rule (ancestry_rule.h).
// The file need not be sorted: records go through an ExternalSorter, so memory is the sort
// budget plus a stack as deep as the deepest nesting.
#ifndef KATRACE_TOOLS_CHECK_TRACK_NESTING_H_
#define KATRACE_TOOLS_CHECK_TRACK_NESTING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/check/ancestry_rule.h"
#include "tools/check/diagnostics.h"
#include "tools/common/external_sorter.h"

namespace katrace::tools {

class TrackNesting {
 public:
  explicit TrackNesting(size_t sort_memory_bytes);
  void AddSlice(uint32_t track, int64_t start_ns, int64_t end_ns, uint64_t index, uint64_t line,
                int64_t pid = 0, const SliceIdentity& who = SliceIdentity());
  void AddFlowPoint(uint32_t track, int64_t ts_ns, uint64_t index, uint64_t line);
  // |track_names[i]| names track i in messages.
  // |ancestry| (may be null) is asked about every enclosure. |flow_points|: report flow
  // endpoints outside any slice (false for a cut file, whose enclosing slices may be cut off).
  void Check(const std::vector<std::string>& track_names, AncestryRule* ancestry, bool flow_points,
             Diagnostics* diag);

 private:
  struct Record {
    uint32_t track;
    uint32_t is_point;  // slices sort before points at the same start
    int64_t start_ns;
    int64_t end_ns;
    uint64_t index;
    uint64_t line;
    int64_t pid;
    uint64_t node;   // SliceIdentity
    uint64_t owner;
    uint32_t gpu_or_proxy;
    uint32_t pad;
  };
  struct Less {
    bool operator()(const Record& a, const Record& b) const;
  };
  ExternalSorter<Record, Less> sorter_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_CHECK_TRACK_NESTING_H_
