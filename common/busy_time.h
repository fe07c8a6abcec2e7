// Busy time: the length of the union of many [start, end) intervals, so slices that run at the
// same time count once. A summary row's Time (%) is its busy time over the table's span, which
// concurrent slices (ProxyOps of many connections, KernelChs of many channels) cannot push past
// 100 %, where their summed durations can.
// Thread safety: none; one thread at a time (busy_ns() included: it may sweep, see below).
//
// Streaming with bounded memory: the union is kept as a sorted list of disjoint intervals. The
// exporter and the trace files deliver slices roughly in time order (completion order), so
// almost every slice extends or follows the last interval, an O(1) step. When the list passes
// kMaxIntervals, its oldest half is folded into a settled prefix: a known busy length up to a
// settled time.
//
// Exact whatever the order: a slice can still start before the settled time. katrace-stats reads
// its files one after another, so every slice of the second rank's file does; in the exporter's
// completion order it takes a slice spanning thousands of gaps of its own row. Such a slice adds
// its part after the settled time to the list as before; its part before it is kept in a
// reach-back spill and measured against the settled intervals when busy_ns() is next read:
//   busy = settled + |union of reach-back parts, less the settled intervals| + list.
// For that the settled intervals are written, in time order as they settle, to a settled spill.
// Both spills are byte streams of (gap, length) varints, held in memory up to 256 KiB each, then
// in an unlinked temporary file in $TMPDIR (else /tmp), so a row's memory stays under about 2 MiB
// whatever the input: the list (64 KiB), the two streams' memory, 32,768 reach-back parts waiting
// to be sorted (512 KiB), and the read buffers of one sweep (about 550 KiB). The reach-back parts
// are sorted in memory, written as sorted runs, and the runs merged 32 at a time, so a sweep
// reads at most 33 runs and the settled spill once. Rows that never reach back pay for the
// settled spill only: 2 to 6 bytes per settled interval (disk, not memory, past 256 KiB), a
// varint encoding per interval, and no sweep.
//
// Exactness is given up only when a spill cannot be written or read (no temporary directory, a
// full disk, no descriptor left): from then on the row works as before the spills existed, and
// every slice whose overlap with older gaps went unmeasured is counted in reached_back(), so a
// caller can say so (SummaryTable's note under the table, which counts what Add() reports; a
// read failing in the sweep itself, after every write succeeded, shows in reached_back() only).
#ifndef KATRACE_COMMON_BUSY_TIME_H_
#define KATRACE_COMMON_BUSY_TIME_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace katrace {

class BusyTime {
 public:
  static constexpr size_t kMaxIntervals = 2048;

  BusyTime();
  ~BusyTime();
  BusyTime(BusyTime&&) noexcept;
  BusyTime& operator=(BusyTime&&) noexcept;

  // [start_ns, start_ns + duration_ns); a zero duration adds nothing.
  void Add(int64_t start_ns, uint64_t duration_ns);

  // The exact union; the first call after a slice reached back sweeps the spills (see above).
  uint64_t busy_ns() const;
  // Slices whose overlap with older gaps could not be measured because a spill failed; 0 in a
  // run without I/O errors. A failed read shows here once busy_ns() has run.
  uint64_t reached_back() const { return reached_back_ + (sweep_failed_ ? deferred_ : 0); }
  // Slices that started before the settled time and were measured through the spills.
  uint64_t deferred() const { return deferred_; }

 private:
  struct Interval {
    int64_t start, end;
  };
  class History;  // the two spills (busy_time.cc)

  void Settle();
  // A spill failed: back to counting only each slice's part after the settled time.
  void LoseHistory();

  std::vector<Interval> live_;  // sorted, disjoint, not touching
  uint64_t live_busy_ns_ = 0;
  uint64_t settled_busy_ns_ = 0;
  int64_t settled_until_ = INT64_MIN;  // every interval ending by here is in settled_busy_ns_
  uint64_t reached_back_ = 0;
  uint64_t deferred_ = 0;
  std::unique_ptr<History> history_;  // from the first Settle() until a spill fails
  bool history_lost_ = false;
  // What the reach-back parts add to the settled prefix, as of the last sweep.
  mutable uint64_t reach_back_ns_ = 0;
  mutable bool sweep_due_ = false;
  mutable bool sweep_failed_ = false;
};

}  // namespace katrace

#endif  // KATRACE_COMMON_BUSY_TIME_H_
