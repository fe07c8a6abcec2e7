#include "plugin/export/lane_allocator.h"

#include <algorithm>

namespace katrace {
namespace exporting {

int LaneAllocator::Place(uint64_t start, uint64_t end, bool zero_tail) {
  if (end <= start) {
    end = start;
    zero_tail = true;  // a zero-length item is its own tail
  }
  Free next{end, zero_tail, 0};
  if (!heap_.empty()) {
    const Free& first = heap_.front();
    // Free when it ended before |start|, or at it with nothing of zero length there.
    if (first.end < start || (first.end == start && !first.zero_tail)) {
      next.lane = first.lane;
      std::pop_heap(heap_.begin(), heap_.end(), Later);
      heap_.back() = next;
      std::push_heap(heap_.begin(), heap_.end(), Later);
      return next.lane;
    }
  }
  next.lane = lanes_++;
  heap_.push_back(next);
  std::push_heap(heap_.begin(), heap_.end(), Later);
  return next.lane;
}

}  // namespace exporting
}  // namespace katrace
