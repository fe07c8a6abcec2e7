// The layout's reorder buffer order: slices by start, the longer first at equal starts (a parent
// before its children, as Perfetto nests them), then arrival order, so the layout is the same
// every run. The order is total (arrival numbers are unique), so which slice comes out next does
// not depend on how the queue is built: a 4-ary heap, half as deep as a binary one, whose four
// children of a node share two cache lines. Popping is most of the layout's bookkeeping: one
// pop per slice, from a queue of the thousands of slices that wait for the watermark.
#ifndef KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_
#define KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace katrace {
namespace exporting {

class StartOrderQueue {
 public:
  struct Entry {
    uint64_t start, end, seq;
    uint32_t slot;
  };

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Entry& top() const { return heap_.front(); }

  void Push(uint64_t start, uint64_t end, uint32_t slot) {
    Entry e{start, end, seq_++, slot};
    size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {
      size_t parent = (i - 1) / kArity;
      if (!Before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Removes the first entry and returns its slot.
  uint32_t Pop() {
    const uint32_t slot = heap_.front().slot;
    const Entry last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n == 0) return slot;
    // The hole at the root moves down to where the last entry belongs.
    size_t i = 0;
    for (;;) {
      size_t child = i * kArity + 1;
      if (child >= n) break;
      size_t best = child;
      const size_t end = child + kArity < n ? child + kArity : n;
      for (size_t c = child + 1; c < end; ++c) {
        if (Before(heap_[c], heap_[best])) best = c;
      }
      if (!Before(heap_[best], last)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return slot;
  }

 private:
  static constexpr size_t kArity = 4;

  static bool Before(const Entry& a, const Entry& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.seq < b.seq;
  }

  std::vector<Entry> heap_;
  uint64_t seq_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_
