// BusyTime (see busy_time.h): the live list, and the two spills that keep it exact when a slice
// reaches back before the settled time.
#include "common/busy_time.h"

#include <algorithm>
#include <vector>

#include "common/span_spill.h"

namespace katrace {
namespace {

constexpr size_t kPendingParts = 32768;  // reach-back parts sorted in memory into one run (512 KiB)
constexpr size_t kMaxRuns = 32;          // runs merged into one once there are this many

using span_spill::ByteSpill;
using span_spill::Length;
using span_spill::Span;
using span_spill::SpanEncoder;
using span_spill::SpanReader;
using span_spill::SpanUnion;

}  // namespace

// The settled intervals in time order, and the parts of reach-back slices before the settled
// time they met, as sorted runs plus the parts not sorted yet.
class BusyTime::History {
 public:
  // Intervals Settle() folds: sorted, after (or touching) every earlier one.
  bool AddSettled(const Interval* first, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (!settled_encoder_.Put({first[i].start, first[i].end})) return false;
    }
    return true;
  }

  bool AddReachBack(int64_t start, int64_t end) {
    pending_.push_back({start, end});
    return pending_.size() < kPendingParts || WriteRun();
  }

  // |union of the reach-back parts, less the settled intervals|: every part lies before the
  // settled time it met, so the live list plays no part. False when a spill could not be read.
  bool Sweep(uint64_t* extra_ns) {
    if (!settled_encoder_.Flush()) return false;
    std::sort(pending_.begin(), pending_.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    SpanUnion reach;
    for (const Run& run : runs_) reach.AddRun(&reach_back_, run.offset, run.bytes);
    reach.AddSorted(&pending_);
    SpanReader settled(&settled_, 0, settled_.size());
    Span s{0, 0};
    bool have_settled = settled.Next(&s);
    uint64_t extra = 0;
    Span r;
    while (reach.Next(&r)) {
      // Both sides are sorted and disjoint, so neither reader ever steps back.
      while (have_settled && s.end <= r.start) have_settled = settled.Next(&s);
      uint64_t covered = 0;
      while (have_settled && s.start < r.end) {
        covered += Length(std::max(r.start, s.start), std::min(r.end, s.end));
        if (s.end > r.end) break;  // it may cover the next part too
        have_settled = settled.Next(&s);
      }
      extra += Length(r.start, r.end) - covered;
    }
    if (reach.failed() || settled.failed()) return false;
    *extra_ns = extra;
    return true;
  }

 private:
  struct Run {
    uint64_t offset, bytes;
  };

  // The pending parts, sorted and coalesced, become a run; kMaxRuns runs are merged into one, so
  // a sweep reads at most kMaxRuns + 1 sources whatever the count of parts.
  bool WriteRun() {
    std::sort(pending_.begin(), pending_.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    SpanUnion one;
    one.AddSorted(&pending_);
    if (!Write(&one)) return false;
    pending_.clear();
    if (runs_.size() < kMaxRuns) return true;
    SpanUnion all;
    for (const Run& run : runs_) all.AddRun(&reach_back_, run.offset, run.bytes);
    runs_.clear();
    // The merged runs' bytes stay in the spill unused: at most one copy per merge level.
    return Write(&all) && !all.failed();
  }

  bool Write(SpanUnion* spans) {
    const uint64_t offset = reach_back_.size();
    SpanEncoder encoder(&reach_back_);
    Span s;
    while (spans->Next(&s)) {
      if (!encoder.Put(s)) return false;
    }
    if (!encoder.Flush()) return false;
    runs_.push_back({offset, reach_back_.size() - offset});
    return true;
  }

  ByteSpill settled_;
  SpanEncoder settled_encoder_{&settled_};  // its buffer is flushed before a sweep reads the spill
  ByteSpill reach_back_;
  std::vector<Run> runs_;
  std::vector<Span> pending_;
};

BusyTime::BusyTime() = default;
BusyTime::~BusyTime() = default;
BusyTime::BusyTime(BusyTime&&) noexcept = default;
BusyTime& BusyTime::operator=(BusyTime&&) noexcept = default;

void BusyTime::Add(int64_t start_ns, uint64_t duration_ns) {
  if (duration_ns == 0) return;
  int64_t start = start_ns;
  // Saturate instead of wrapping: a garbage end past INT64_MAX is cut there.
  // (Unsigned arithmetic: INT64_MAX - start fits in 64 bits for any start, negative included.)
  const uint64_t room = static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(start);
  int64_t end = duration_ns > room ? INT64_MAX : static_cast<int64_t>(static_cast<uint64_t>(start) + duration_ns);
  if (start < settled_until_) {
    // Its part before the settled time waits for the sweep; the rest joins the list below.
    if (history_ != nullptr && history_->AddReachBack(start, std::min(end, settled_until_))) {
      ++deferred_;
      sweep_due_ = true;
    } else {
      if (history_ != nullptr) LoseHistory();
      ++reached_back_;
    }
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
  if (history_ == nullptr && !history_lost_) history_ = std::make_unique<History>();
  if (history_ != nullptr && !history_->AddSettled(live_.data(), n)) LoseHistory();
  settled_until_ = live_[n - 1].end;
  live_.erase(live_.begin(), live_.begin() + static_cast<ptrdiff_t>(n));
}

void BusyTime::LoseHistory() {
  history_.reset();
  history_lost_ = true;
  // What the spills measured is gone with them: every part they held counts as unmeasured.
  reached_back_ += deferred_;
  deferred_ = 0;
  reach_back_ns_ = 0;
  sweep_due_ = false;
  sweep_failed_ = false;
}

uint64_t BusyTime::busy_ns() const {
  if (sweep_due_) {
    sweep_due_ = false;
    uint64_t extra = 0;
    sweep_failed_ = !history_->Sweep(&extra);
    if (!sweep_failed_) reach_back_ns_ = extra;
  }
  return settled_busy_ns_ + (sweep_failed_ ? 0 : reach_back_ns_) + live_busy_ns_;
}

}  // namespace katrace
