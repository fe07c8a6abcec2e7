// The nesting sweep (see track_nesting.h).
#include "tools/check/track_nesting.h"

#include <tuple>

#include "tools/common/json_fields.h"

namespace katrace::tools {

bool TrackNesting::Less::operator()(const Record& a, const Record& b) const {
  // Longer first at equal start: that is the parent.
  return std::tie(a.track, a.start_ns, a.is_point, b.end_ns, a.index) <
         std::tie(b.track, b.start_ns, b.is_point, a.end_ns, b.index);
}

TrackNesting::TrackNesting(size_t sort_memory_bytes) : sorter_(sort_memory_bytes) {}

void TrackNesting::AddSlice(uint32_t track, int64_t start_ns, int64_t end_ns, uint64_t index,
                            uint64_t line, int64_t pid, const SliceIdentity& who) {
  sorter_.Add(Record{track, 0, start_ns, end_ns, index, line, pid, who.node, who.owner,
                     who.gpu_or_proxy ? 1u : 0u, 0});
}

void TrackNesting::AddFlowPoint(uint32_t track, int64_t ts_ns, uint64_t index, uint64_t line) {
  sorter_.Add(Record{track, 1, ts_ns, ts_ns, index, line, 0, 0, 0, 0, 0});
}

void TrackNesting::Check(const std::vector<std::string>& track_names, AncestryRule* ancestry,
                         bool flow_points, Diagnostics* diag) {
  if (!sorter_.Finish()) {
    diag->Error("internal", 0, "nesting check skipped: " + sorter_.error());
    return;
  }
  std::vector<Record> stack;
  uint32_t track = UINT32_MAX;
  // The same-start rule in one pass: records of one start arrive longest first, so the open
  // slices of this start that are strictly longer than the current record are those seen
  // before the current end. Of those, the one latest in the file is the only one that can
  // break the rule first, so only it is kept (a scan of the stack made 200k same-start slices
  // quadratic). Slices of this start popped off the stack end at the start and so are never
  // longer than a later record.
  bool have_group = false;
  int64_t group_start = 0, group_end = 0;
  bool have_longer = false, have_at_end = false;
  Record longer{}, at_end{};  // the latest-in-file of each set
  Record r;
  while (sorter_.Next(&r)) {
    if (r.track != track) {
      stack.clear();
      track = r.track;
      have_group = false;
    }
    const std::string& track_name = track_names.at(r.track);
    if (r.is_point) {
      // A flow endpoint binds to the slice open at its time, end included.
      while (!stack.empty() && stack.back().end_ns < r.start_ns) stack.pop_back();
      if (stack.empty() && flow_points) {
        diag->Error("flow", r.line,
                    "event #" + std::to_string(r.index) + ": flow endpoint at " +
                        NsToUsText(r.start_ns) + " us has no enclosing slice on track " +
                        track_name + " (a flow to nowhere)");
      }
      continue;
    }
    while (!stack.empty() && stack.back().end_ns <= r.start_ns) stack.pop_back();
    if (!stack.empty() && r.end_ns > stack.back().end_ns) {
      const Record& open = stack.back();
      diag->Error("nesting", r.line,
                  "event #" + std::to_string(r.index) + " " + NsSpanToUsText(r.start_ns, r.end_ns) +
                      " partially overlaps event #" + std::to_string(open.index) + " (" +
                      diag->Position(open.line) + ") " + NsSpanToUsText(open.start_ns, open.end_ns) +
                      " on track " + track_name + "; Perfetto moves one to an overflow track");
      continue;  // as Perfetto does, keep the first one on the track
    }
    if (!have_group || r.start_ns != group_start) {
      have_group = true;
      group_start = r.start_ns;
      group_end = r.end_ns;
      have_longer = have_at_end = false;
    } else if (r.end_ns != group_end) {
      // Everything seen at the previous end is strictly longer than this record.
      if (have_at_end && (!have_longer || at_end.index > longer.index)) longer = at_end;
      have_longer |= have_at_end;
      have_at_end = false;
      group_end = r.end_ns;
    }
    if (have_longer && longer.index > r.index) {
      const Record& it = longer;
      diag->Error("nesting", r.line,
                  "event #" + std::to_string(r.index) + " " + NsSpanToUsText(r.start_ns, r.end_ns) +
                      " starts with the longer event #" + std::to_string(it.index) + " (" +
                      diag->Position(it.line) + ") " + NsSpanToUsText(it.start_ns, it.end_ns) +
                      " on track " + track_name +
                      " but comes first in the file; Perfetto keeps file order for equal "
                      "ts, so the longer one cannot nest (write same-start parents first)");
    }
    if (!have_at_end || r.index > at_end.index) at_end = r;
    have_at_end = true;
    if (ancestry != nullptr && !stack.empty()) {
      const Record& outer = stack.back();
      SliceIdentity inner_who{r.node, r.owner, r.gpu_or_proxy != 0};
      SliceIdentity outer_who{outer.node, outer.owner, outer.gpu_or_proxy != 0};
      ancestry->CheckEnclosure(r.pid, inner_who, r.index, r.line, outer_who, outer.index, outer.line,
                               track_name, diag);
    }
    stack.push_back(r);
  }
  if (!sorter_.error().empty()) diag->Error("internal", 0, sorter_.error());
}

}  // namespace katrace::tools
