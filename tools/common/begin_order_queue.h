// Hands a protobuf trace's events to a TraceVisitor in the order the JSON trace of the same spool
// has them, although a protobuf slice is whole only at its end: JSON writes each slice as one
// "X" event where it begins, and the events after it in the file may come long before its end.
//
// Each event takes the next position (its TraceEvent::index, the index it has in the JSON
// trace) when it is added; a slice is added open, at its begin, and closed at its end. Events
// leave from the front as soon as nothing open is ahead of them, so a trace whose slices are
// short holds only the few events of one slice's time. A slice open for long (a hung
// collective, say) would hold everything behind it; so when the queue grows past a bound it is
// compacted: every complete event leaves at once, out of order but with its own index, except
// one that starts no later than an open slice ahead of it. Every reader of these events sorts
// by time (Perfetto, check's nesting and flow sweeps, stats), and only events of equal times
// depend on file order (Perfetto keeps it; check's same-start rule compares the indexes), so
// those wait for the slice (and the rare one placed back in time, which is not worth telling
// apart). What stays is the open slices and their same-start followers; the reader caps their
// bytes (ReadOptions::max_held_bytes).
// Thread safety: none.
#ifndef KATRACE_TOOLS_COMMON_BEGIN_ORDER_QUEUE_H_
#define KATRACE_TOOLS_COMMON_BEGIN_ORDER_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>

#include "tools/common/trace_reader.h"

namespace katrace::tools {

struct HeldEvent {
  TraceEvent event;  // its index is set by Add
  bool has_ts = false;
  int64_t ts_ns = 0;
  bool open = false;  // a slice waiting for its end
  uint64_t bytes = 0;  // roughly what its DOM takes, set by Add
};

class BeginOrderQueue {
 public:
  explicit BeginOrderQueue(TraceVisitor* visitor) : visitor_(visitor) {}

  // The position the next Add gives.
  uint64_t next_position() const { return next_position_; }
  // Adds |held| at the next position. False once the visitor has asked to stop.
  bool Add(HeldEvent held);
  // The event at |position| while it is held, else nullptr.
  HeldEvent* Find(uint64_t position);
  // The slice at |position| is complete.
  bool Close(uint64_t position);
  // Delivers every complete event that need not wait (see above).
  bool Compact();
  // The end of the input: delivers every complete event in order and drops the open ones,
  // handing each to |on_open| first.
  bool Finish(const std::function<void(const HeldEvent&)>& on_open);

  uint64_t held_bytes() const { return held_bytes_; }
  size_t held() const { return entries_.size(); }
  // The oldest event held (an open slice, when any is), or nullptr.
  const HeldEvent* front() const { return entries_.empty() ? nullptr : &entries_.front(); }
  uint64_t delivered() const { return delivered_; }
  bool stopped() const { return stopped_; }

 private:
  bool Deliver(HeldEvent* held);
  bool DeliverFront();

  // Compaction runs when this many events are held: at least kMinCompact, and twice what the
  // last one left, so that its cost per event stays constant however many slices stay open.
  static constexpr size_t kMinCompact = 4096;

  TraceVisitor* visitor_;
  std::deque<HeldEvent> entries_;  // by position
  uint64_t next_position_ = 0;
  uint64_t held_bytes_ = 0;
  uint64_t delivered_ = 0;
  size_t compact_at_ = kMinCompact;
  bool stopped_ = false;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_BEGIN_ORDER_QUEUE_H_
