// Lanes for slices that may overlap: interval partitioning. Things that run concurrently (the
// tasks of one group, ProxyOps in flight on one connection, ProxySteps, KernelSteps of one
// channel, direction and peer) are items of one lane group; each item (a slice together with the
// sub-slices inside it) goes on a lane whose last item has ended, else on a new lane. Fed in start
// order, the greedy uses the fewest lanes there can be (as many as items are ever in flight at
// once); fed out of order it still never puts two overlapping items on one lane, it may only use
// a lane more. Nothing is moved and nothing is guessed: lanes of one group never hold a partial
// overlap, and the lane count grows with concurrency, not with the length of the run.
#ifndef KATRACE_PLUGIN_EXPORT_LANE_ALLOCATOR_H_
#define KATRACE_PLUGIN_EXPORT_LANE_ALLOCATOR_H_

#include <stdint.h>

#include <vector>

namespace katrace {
namespace exporting {

class LaneAllocator {
 public:
  // The lane for an item spanning [start, end]. |zero_tail|: the item ends in a zero-length
  // slice (it is one, always so when end <= start, or a sub-slice sits at its end). Such a lane is free only after |end|, not
  // at it: a slice starting at |end| would sort before the zero-length one and seem to enclose it.
  // Returns the lane index: 0, 1, ... in the order lanes were first needed.
  int Place(uint64_t start, uint64_t end, bool zero_tail);

  int lanes() const { return lanes_; }

 private:
  struct Free {
    uint64_t end;
    bool zero_tail;
    int lane;
  };
  // A min-heap on (end, zero_tail, lane): the top is the lane that freed first.
  static bool Later(const Free& a, const Free& b) {
    if (a.end != b.end) return a.end > b.end;
    if (a.zero_tail != b.zero_tail) return a.zero_tail;
    return a.lane > b.lane;
  }
  void ReplaceTop(const Free& next);
  std::vector<Free> heap_;
  int lanes_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_LANE_ALLOCATOR_H_
