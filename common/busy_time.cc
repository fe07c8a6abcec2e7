// BusyTime (see busy_time.h).
#include "common/busy_time.h"

#include <algorithm>

namespace katrace {

void BusyTime::Add(int64_t start_ns, uint64_t duration_ns) {
  if (duration_ns == 0) return;
  int64_t start = start_ns;
  // Saturate instead of wrapping: a garbage end past INT64_MAX is cut there.
  // (Unsigned arithmetic: INT64_MAX - start fits in 64 bits for any start, negative included.)
  const uint64_t room = static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(start);
  int64_t end = duration_ns > room ? INT64_MAX : static_cast<int64_t>(static_cast<uint64_t>(start) + duration_ns);
  if (start < settled_until_) {
    ++reached_back_;
    if (end <= settled_until_) return;
    start = settled_until_;
  }
  // The common case: at or after the last interval's start, so only the last one can meet it.
  if (live_.empty() || start > live_.back().end) {
    live_.push_back({start, end});
    live_busy_ns_ += static_cast<uint64_t>(end - start);
  } else if (start >= live_.back().start) {
    Interval& last = live_.back();
    if (end > last.end) {
      live_busy_ns_ += static_cast<uint64_t>(end - last.end);
      last.end = end;
    }
  } else {
    // Out of order: merge with every interval it meets (touching ones too, so they stay apart).
    auto first = std::lower_bound(live_.begin(), live_.end(), start,
                                  [](const Interval& i, int64_t s) { return i.end < s; });
    auto past = std::upper_bound(first, live_.end(), end,
                                 [](int64_t e, const Interval& i) { return e < i.start; });
    Interval merged{start, end};
    for (auto it = first; it != past; ++it) {
      merged.start = std::min(merged.start, it->start);
      merged.end = std::max(merged.end, it->end);
      live_busy_ns_ -= static_cast<uint64_t>(it->end - it->start);
    }
    live_busy_ns_ += static_cast<uint64_t>(merged.end - merged.start);
    first = live_.erase(first, past);
    live_.insert(first, merged);
  }
  if (live_.size() > kMaxIntervals) Settle();
}

void BusyTime::Settle() {
  const size_t n = live_.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t length = static_cast<uint64_t>(live_[i].end - live_[i].start);
    settled_busy_ns_ += length;
    live_busy_ns_ -= length;
  }
  settled_until_ = live_[n - 1].end;
  live_.erase(live_.begin(), live_.begin() + static_cast<ptrdiff_t>(n));
}

}  // namespace katrace
