// The export's conversion of the spool's host ticks to CLOCK_MONOTONIC ns (the capture reads the
// ticks: plugin/capture/host_clock.h), from the spool's Clock records (formula in
// katrace/spool_format.h), piecewise: CLOCK_MONOTONIC is slewed by NTP while the TSC is not, so
// one rate over the whole run drifts by microseconds. Ticks are converted by linear
// interpolation between the two Clock records around them, and outside the records with the
// nearest segment's rate. The common case (ticks already are monotonic ns, every record says
// so) is the identity and costs nothing; otherwise each segment has a 32.32 fixed-point rate, so
// converting never divides. Garbage calibration (zero or absurd rates, ticks or ns going
// backwards) degrades that segment to an offset-only conversion instead of overflowing: every
// step is done in 128 bits and saturated.
// Every timestamp of the export is converted (three an event), and a run writes a Clock record
// at each tick of its spool writer, so the segment is found through equal buckets of ticks
// (twice as many as segments), each knowing the segment its first tick falls in: the segment
// is that one or, rarely, one of the few that start inside the bucket, searched between the
// bucket's and the next one's. Records bunched in a few buckets (a hostile spool) only widen
// that search, which stays a binary one.
#ifndef KATRACE_PLUGIN_EXPORT_TICK_CONVERTER_H_
#define KATRACE_PLUGIN_EXPORT_TICK_CONVERTER_H_

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <vector>

#include "katrace/spool_format.h"

namespace katrace {
namespace exporting {

class TickConverter {
 public:
  // |clocks|: every Clock record of the spool, in any order.
  void Init(std::vector<spool::ClockBody> clocks) {
    segments_.clear();
    identity_ = true;
    if (clocks.empty()) return;
    std::stable_sort(clocks.begin(), clocks.end(),
                     [](const spool::ClockBody& a, const spool::ClockBody& b) { return a.ticks < b.ticks; });
    bool all_identity = true;
    for (size_t i = 0; i < clocks.size(); ++i) {
      const spool::ClockBody& c = clocks[i];
      if (c.ticks != c.monotonic_ns) all_identity = false;
      // At equal ticks the first record is the knot; the others add no segment.
      if (!segments_.empty() && segments_.back().t0 == c.ticks) continue;
      segments_.push_back(Segment{c.ticks, c.monotonic_ns, kOne});
    }
    if (all_identity) {
      segments_.clear();
      return;
    }
    identity_ = false;
    for (size_t i = 0; i + 1 < segments_.size(); ++i) segments_[i].mult = Rate(segments_[i], segments_[i + 1]);
    // Past the last record: the last segment's rate (a single record: offset only).
    if (segments_.size() >= 2) segments_.back().mult = segments_[segments_.size() - 2].mult;
    IndexBuckets();
  }

  bool identity() const { return identity_; }

  uint64_t Ns(uint64_t ticks) const {
    if (identity_) return ticks;
    return Convert(segments_[SegmentOf(ticks)], ticks);
  }

  // The segment that starts at or before |ticks|; before the first, the first (extrapolated);
  // after the last, the last. Public for its test, which checks it against a plain search.
  size_t SegmentOf(uint64_t ticks) const {
    if (segments_.size() < 2 || ticks <= segments_.front().t0) return 0;
    if (ticks >= segments_.back().t0) return segments_.size() - 1;
    const size_t bucket = static_cast<size_t>((ticks - segments_.front().t0) >> bucket_shift_);
    // The answer lies between the segment of this bucket's first tick and the next bucket's.
    const size_t low = first_segment_[bucket], high = first_segment_[bucket + 1];
    if (low == high || segments_[low + 1].t0 > ticks) return low;
    auto it = std::upper_bound(segments_.begin() + static_cast<std::ptrdiff_t>(low) + 1,
                               segments_.begin() + static_cast<std::ptrdiff_t>(high) + 1, ticks,
                               [](uint64_t t, const Segment& s) { return t < s.t0; });
    return static_cast<size_t>(it - segments_.begin()) - 1;
  }

 private:
  static constexpr uint64_t kOne = uint64_t{1} << 32;
  struct Segment {
    uint64_t t0;    // ticks of the Clock record that starts it
    uint64_t m0;    // its monotonic ns
    uint64_t mult;  // ns per tick, 32.32 fixed point
  };

  // The rate between two records with increasing ticks; offset only when it is not a clock.
  static uint64_t Rate(const Segment& a, const Segment& b) {
    if (b.m0 <= a.m0) return kOne;
    uint64_t dt = b.t0 - a.t0, dm = b.m0 - a.m0;
    if (dt == dm) return kOne;
    unsigned __int128 m = (static_cast<unsigned __int128>(dm) << 32) / dt;
    // Beyond 2^30 ns per tick (or a rate that rounds to 0) the calibration is not a clock.
    if (m > 0 && m < (static_cast<unsigned __int128>(1) << 62)) return static_cast<uint64_t>(m);
    return kOne;
  }

  static uint64_t Convert(const Segment& s, uint64_t ticks) {
    __int128 d = static_cast<__int128>(ticks) - static_cast<__int128>(s.t0);
    __int128 scaled = s.mult != kOne ? (d * static_cast<__int128>(s.mult)) / (static_cast<__int128>(1) << 32) : d;
    __int128 ns = static_cast<__int128>(s.m0) + scaled;
    if (ns < 0) return 0;
    if (ns > static_cast<__int128>(UINT64_MAX)) return UINT64_MAX;
    return static_cast<uint64_t>(ns);
  }

  // Buckets of 2^bucket_shift_ ticks from the first record's, at least twice as many as the
  // segments (at most 2^20) and together covering the last record's ticks; first_segment_[b] is
  // the segment of bucket b's first tick, and first_segment_[buckets] the last segment.
  void IndexBuckets() {
    first_segment_.clear();
    bucket_shift_ = 0;
    if (segments_.size() < 2) return;
    const size_t buckets = std::min<size_t>(size_t{1} << 20, std::max<size_t>(2, 2 * segments_.size()));
    const uint64_t span = segments_.back().t0 - segments_.front().t0;
    while (bucket_shift_ < 63 && (span >> bucket_shift_) >= buckets) ++bucket_shift_;
    const size_t used = static_cast<size_t>(span >> bucket_shift_) + 1;
    first_segment_.resize(used + 1);
    size_t i = 0;
    for (size_t b = 0; b < used; ++b) {
      const uint64_t first_tick = segments_.front().t0 + (static_cast<uint64_t>(b) << bucket_shift_);
      while (i + 1 < segments_.size() && segments_[i + 1].t0 <= first_tick) ++i;
      first_segment_[b] = static_cast<uint32_t>(i);
    }
    first_segment_[used] = static_cast<uint32_t>(segments_.size() - 1);
  }

  bool identity_ = true;
  std::vector<Segment> segments_;
  int bucket_shift_ = 0;
  std::vector<uint32_t> first_segment_;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_TICK_CONVERTER_H_
