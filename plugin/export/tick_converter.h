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
  }

  bool identity() const { return identity_; }

  uint64_t Ns(uint64_t ticks) const {
    if (identity_) return ticks;
    // The segment that starts at or before |ticks|; before the first, the first (extrapolated).
    size_t i = 0;
    if (segments_.size() > 1) {
      auto it = std::upper_bound(segments_.begin(), segments_.end(), ticks,
                                 [](uint64_t t, const Segment& s) { return t < s.t0; });
      i = it == segments_.begin() ? 0 : static_cast<size_t>(it - segments_.begin()) - 1;
    }
    return Convert(segments_[i], ticks);
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

  bool identity_ = true;
  std::vector<Segment> segments_;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_TICK_CONVERTER_H_
