// The layout's reorder buffer order: slices by start, the longer first at equal starts (a parent
// before its children, as Perfetto nests them), then arrival order, so the layout is the same
// every run. The order is total (arrival numbers are unique), so which slices come out, and in
// which order, does not depend on how the queue is built.
//
// Nearly every slice leaves through TakeBefore (the watermark passed its start), a few hundred at
// a time, while thousands wait (tens of thousands where the watermark is held back by an event
// open for long). So what waits is kept as sorted runs: what arrived since the last take is
// sorted into a run of its own (each stream of arrivals sorted apart, where it needs it at all,
// and the streams merged), and each run is kept at least twice as long as the next, by
// merging the newest ones, so there are at most about log2(waiting) runs and an entry is merged
// about log2 times in its wait. A take is then each run's prefix before the watermark (a
// compare an entry taken), sorted together when more than one run gave some. A scan of every
// waiting entry at each take, or a heap pop per entry, cost several times more (10% of a real
// spool's export, where the watermark waited at the start and the queue turned into a heap).
#ifndef KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_
#define KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace katrace {
namespace exporting {

class StartOrderQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t runs() const { return runs_.size(); }  // visible for testing

  // |stream| (below kStreams) names a sequence whose entries arrive in about their order (the
  // layout's track types: host calls, GPU work, ...); any value is right, a good one is cheaper.
  static constexpr size_t kStreams = 16;
  void Push(uint64_t start, uint64_t end, uint32_t slot, size_t stream = 0) {
    incoming_[stream % kStreams].emplace_back(start, end, seq_++, slot);
    ++size_;
  }

  // Appends to |out|, in order, the slots of every entry that starts before |before|, and
  // removes them.
  void TakeBefore(uint64_t before, std::vector<uint32_t>* out) {
    SealIncoming();
    taken_.clear();
    size_t giving = 0;
    for (Run& run : runs_) {
      const size_t first = taken_.size();
      while (run.head < run.entries.size() && run.entries[run.head].start < before) {
        taken_.push_back(run.entries[run.head++]);
      }
      if (taken_.size() != first) ++giving;
    }
    if (giving > 1) std::sort(taken_.begin(), taken_.end(), ByOrder());
    for (const Entry& e : taken_) out->push_back(e.slot);
    size_ -= taken_.size();
    DropEmptyRuns();
  }

  // Removes the first entry and returns its slot; the queue must not be empty.
  uint32_t PopFirst() {
    SealIncoming();
    size_t first = 0;
    for (size_t r = 1; r < runs_.size(); ++r) {
      if (Before(runs_[r].front(), runs_[first].front())) first = r;
    }
    const uint32_t slot = runs_[first].entries[runs_[first].head++].slot;
    --size_;
    DropEmptyRuns();
    return slot;
  }

  // Appends every slot, in order, and empties the queue.
  void TakeAll(std::vector<uint32_t>* out) {
    SealIncoming();
    taken_.clear();
    for (Run& run : runs_) taken_.insert(taken_.end(), run.entries.begin() + Offset(run.head), run.entries.end());
    if (runs_.size() > 1) std::sort(taken_.begin(), taken_.end(), ByOrder());
    for (const Entry& e : taken_) out->push_back(e.slot);
    for (Run& run : runs_) Recycle(&run.entries);
    runs_.clear();
    size_ = 0;
  }

 private:
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

  // Sorted entries; those before |head| have left.
  struct Run {
    std::vector<Entry> entries;
    size_t head = 0;
    size_t live() const { return entries.size() - head; }
    const Entry& front() const { return entries[head]; }
  };

  // The arrivals since the last take become one run: each stream's, sorted unless it already is
  // (arrivals of one stream mostly are; of all streams together, far from it), merged.
  void SealIncoming() {
    std::vector<Entry>* sorted[kStreams];
    size_t n = 0, total = 0;
    for (std::vector<Entry>& stream : incoming_) {
      if (stream.empty()) continue;
      if (!std::is_sorted(stream.begin(), stream.end(), ByOrder())) std::sort(stream.begin(), stream.end(), ByOrder());
      sorted[n++] = &stream;
      total += stream.size();
    }
    if (n == 0) return;
    runs_.emplace_back();
    std::vector<Entry>& run = runs_.back().entries;
    run = TakeSpare();
    if (n == 1) {
      run.swap(*sorted[0]);
    } else {
      std::vector<Entry> merged = TakeSpare();
      run.reserve(total);
      merged.reserve(total);
      std::merge(sorted[0]->begin(), sorted[0]->end(), sorted[1]->begin(), sorted[1]->end(), std::back_inserter(run),
                 ByOrder());
      for (size_t i = 2; i < n; ++i) {
        merged.clear();
        std::merge(run.begin(), run.end(), sorted[i]->begin(), sorted[i]->end(), std::back_inserter(merged), ByOrder());
        run.swap(merged);
      }
      Recycle(&merged);
      for (size_t i = 0; i < n; ++i) sorted[i]->clear();
    }
    while (runs_.size() >= 2 && runs_[runs_.size() - 2].live() <= 2 * runs_.back().live()) MergeNewestTwo();
  }

  void MergeNewestTwo() {
    Run& older = runs_[runs_.size() - 2];
    Run& newer = runs_.back();
    std::vector<Entry> merged = TakeSpare();
    merged.reserve(older.live() + newer.live());
    std::merge(older.entries.begin() + Offset(older.head), older.entries.end(),
               newer.entries.begin() + Offset(newer.head), newer.entries.end(), std::back_inserter(merged),
               ByOrder());
    Recycle(&older.entries);
    older.entries.swap(merged);
    older.head = 0;
    Recycle(&newer.entries);
    runs_.pop_back();
  }

  void DropEmptyRuns() {
    size_t kept = 0;
    for (size_t r = 0; r < runs_.size(); ++r) {
      if (runs_[r].live() == 0) {
        Recycle(&runs_[r].entries);
      } else {
        if (kept != r) runs_[kept] = std::move(runs_[r]);
        ++kept;
      }
    }
    runs_.resize(kept);
  }

  // Emptied vectors keep their capacity for the next run, so the steady state allocates nothing;
  // a few, none larger than a steady state's runs, so what the queue holds stays what waits.
  std::vector<Entry> TakeSpare() {
    if (spare_.empty()) return {};
    std::vector<Entry> v = std::move(spare_.back());
    spare_.pop_back();
    return v;
  }
  void Recycle(std::vector<Entry>* v) {
    v->clear();
    if (v->capacity() != 0 && v->capacity() <= kMaxSpareEntries && spare_.size() < kMaxSpare) {
      spare_.push_back(std::move(*v));
    }
    *v = {};
  }
  static std::ptrdiff_t Offset(size_t i) { return static_cast<std::ptrdiff_t>(i); }

  static constexpr size_t kMaxSpare = 8;
  static constexpr size_t kMaxSpareEntries = size_t{1} << 14;

  std::vector<Entry> incoming_[kStreams];  // arrived since the last take, in arrival order
  std::vector<Run> runs_;        // each at least twice as long as the next when sealed
  std::vector<Entry> taken_;
  std::vector<std::vector<Entry>> spare_;
  size_t size_ = 0;
  uint64_t seq_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_START_ORDER_QUEUE_H_
