#include "plugin/export/lane_allocator.h"

#include <algorithm>

namespace katrace {
namespace exporting {

// The lane that freed first is taken again: |next| replaces it at the top and sinks to its
// place, one sift instead of a pop and a push (the order is total: the same heap top follows).
void LaneAllocator::ReplaceTop(const Free& next) {
  const size_t n = heap_.size();
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && Later(heap_[child], heap_[child + 1])) ++child;
    if (!Later(next, heap_[child])) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = next;
}

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
      ReplaceTop(next);
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
