// Busy time: the length of the union of many [start, end) intervals, so slices that run at the
// same time count once. A summary row's Time (%) is its busy time over the table's span, which
// concurrent slices (ProxyOps of many connections, KernelChs of many channels) cannot push past
// 100 %, where their summed durations can.
// Thread safety: none; one thread at a time.
//
// Streaming with bounded memory: the union is kept as a sorted list of disjoint intervals. The
// exporter and the trace files deliver slices roughly in time order (completion order), so
// almost every slice extends or follows the last interval, an O(1) step. When the list passes
// kMaxIntervals, its oldest half is folded into a settled prefix: a known busy length up to a
// settled time. A slice that later reaches back before the settled time adds only its part
// after it (its overlap with older gaps is not known any more); such slices are counted in
// reached_back() so a caller can say so. In the exporter's completion order that needs a slice
// spanning thousands of gaps of its own row, which no run has shown.
#ifndef KATRACE_COMMON_BUSY_TIME_H_
#define KATRACE_COMMON_BUSY_TIME_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace katrace {

class BusyTime {
 public:
  static constexpr size_t kMaxIntervals = 2048;

  // [start_ns, start_ns + duration_ns); a zero duration adds nothing.
  void Add(int64_t start_ns, uint64_t duration_ns);

  uint64_t busy_ns() const { return settled_busy_ns_ + live_busy_ns_; }
  // Slices whose start lay before the settled prefix: their overlap with it was not measured.
  uint64_t reached_back() const { return reached_back_; }

 private:
  struct Interval {
    int64_t start, end;
  };
  void Settle();

  std::vector<Interval> live_;  // sorted, disjoint, not touching
  uint64_t live_busy_ns_ = 0;
  uint64_t settled_busy_ns_ = 0;
  int64_t settled_until_ = INT64_MIN;  // every interval ending by here is in settled_busy_ns_
  uint64_t reached_back_ = 0;
};

}  // namespace katrace

#endif  // KATRACE_COMMON_BUSY_TIME_H_
