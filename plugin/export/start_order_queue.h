// The layout's reorder buffer order: slices by start, the longer first at equal starts (a parent
// before its children, as Perfetto nests them), then arrival order, so the layout is the same
// every run. The order is total (arrival numbers are unique), so which slices come out, and in
// which order, does not depend on how the queue is built.
//
// Nearly every slice leaves through TakeBefore (the watermark passed its start), a few hundred at
// a time from the few thousand waiting: those are picked out in one pass and sorted, which costs
// far less than a heap pop each. When that pass would look at many waiting slices for each one
// it takes (the watermark held back by an event open for long), or the reorder bound forces out
// the single first one (PopFirst), the queue turns, for good, into a 4-ary heap: half as deep as
// a binary one, its four children of a node on two cache lines.
#ifndef KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_
#define KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <vector>

namespace katrace {
namespace exporting {

class StartOrderQueue {
 public:
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  bool is_heap() const { return heap_; }  // visible for testing

  void Push(uint64_t start, uint64_t end, uint32_t slot) {
    entries_.emplace_back(start, end, seq_++, slot);
    if (heap_) SiftUp(entries_.size() - 1);
  }

  // Appends to |out|, in order, the slots of every entry that starts before |before|, and
  // removes them.
  void TakeBefore(uint64_t before, std::vector<uint32_t>* out) {
    if (!heap_) {
      taken_.clear();
      size_t kept = 0;
      for (const Entry& e : entries_) {
        if (e.start < before) {
          taken_.push_back(e);
        } else {
          entries_[kept++] = e;
        }
      }
      const size_t scanned = entries_.size();
      entries_.resize(kept);
      std::sort(taken_.begin(), taken_.end(), ByOrder());
      for (const Entry& e : taken_) out->push_back(e.slot);
      if (scanned > kScanLimit && scanned > kScanPerTaken * (taken_.size() + 1)) MakeHeap();
      return;
    }
    while (!entries_.empty() && entries_.front().start < before) out->push_back(PopRoot());
  }

  // Removes the first entry and returns its slot.
  uint32_t PopFirst() {
    if (!heap_) MakeHeap();
    return PopRoot();
  }

  // Appends every slot, in order, and empties the queue.
  void TakeAll(std::vector<uint32_t>* out) {
    if (heap_) {
      while (!entries_.empty()) out->push_back(PopRoot());
      return;
    }
    std::sort(entries_.begin(), entries_.end(), ByOrder());
    for (const Entry& e : entries_) out->push_back(e.slot);
    entries_.clear();
  }

 private:
  static constexpr size_t kArity = 4;
  // The one pass may look at up to this many waiting entries per entry it takes (and always at
  // a few thousand) before the heap is the cheaper way.
  static constexpr size_t kScanPerTaken = 32;
  static constexpr size_t kScanLimit = 4096;

  struct Entry {
    // Built in place by emplace_back: a braced temporary went through the stack, and copying it
    // out stalled on the stores just made (store forwarding), most of a push.
    Entry() = default;
    Entry(uint64_t s, uint64_t e, uint64_t q, uint32_t sl) : start(s), end(e), seq(q), slot(sl) {}
    uint64_t start, end, seq;
    uint32_t slot;
  };

  static bool Before(const Entry& a, const Entry& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.seq < b.seq;
  }
  // As a type, so std::sort inlines it instead of calling through a function pointer.
  struct ByOrder {
    bool operator()(const Entry& a, const Entry& b) const { return Before(a, b); }
  };

  void MakeHeap() {
    heap_ = true;
    for (size_t i = entries_.size() / kArity + 1; i-- > 0;) {
      if (i < entries_.size()) SiftDown(i, entries_[i]);
    }
  }

  void SiftUp(size_t i) {
    const Entry e = entries_[i];
    while (i > 0) {
      size_t parent = (i - 1) / kArity;
      if (!Before(e, entries_[parent])) break;
      entries_[i] = entries_[parent];
      i = parent;
    }
    entries_[i] = e;
  }

  // Puts |e| in the hole at |i|, moving it down to where it belongs.
  void SiftDown(size_t i, const Entry e) {
    const size_t n = entries_.size();
    for (;;) {
      size_t child = i * kArity + 1;
      if (child >= n) break;
      size_t best = child;
      const size_t end = child + kArity < n ? child + kArity : n;
      for (size_t c = child + 1; c < end; ++c) {
        if (Before(entries_[c], entries_[best])) best = c;
      }
      if (!Before(entries_[best], e)) break;
      entries_[i] = entries_[best];
      i = best;
    }
    entries_[i] = e;
  }

  uint32_t PopRoot() {
    const uint32_t slot = entries_.front().slot;
    const Entry last = entries_.back();
    entries_.pop_back();
    if (!entries_.empty()) SiftDown(0, last);
    return slot;
  }

  std::vector<Entry> entries_;  // a heap once heap_, else in arrival order
  std::vector<Entry> taken_;
  uint64_t seq_ = 0;
  bool heap_ = false;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_
