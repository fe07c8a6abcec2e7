// The fit of one GPU clock domain (one GPU): host_monotonic_ns = gpu_ns + offset(host time), with
// offset piecewise linear (an offset and a drift per segment of the run), from bounds alone:
//
//  - upper bounds: a stamp first seen by the host at host time T gives offset ≤ T − stamp (the
//    GPU wrote it before the host read it);
//  - lower bounds: a GPU event cannot start before its collective was launched at host time P,
//    so offset ≥ P − stamp (stamps are floored to the clock's tick, so the bound is lowered by a
//    tick).
//
// Within a segment the line is, among the lines below every upper bound, the highest at the
// bounds' centroid, i.e. the nearest to them all (the host sees GPU stamps a poll after they were
// written, so the soonest-seen lie close to the truth, while kernels often start long after their
// launch: the upper side of the band is the tight one), with its drift within ±kClockMaxDrift,
// tilted no more than needed to stay above every lower bound. The realtime prior (%globaltimer
// seeded from CLOCK_REALTIME) is used instead whenever the band is closed (both kinds of bounds)
// and the prior lies inside it. The error bound is how far any line inside the band lies from
// the chosen one at the segment's ends, plus a tick: if the true clock is linear within the
// segment, its error is within the bound.
//
// Garbage stamps are bounds far off every other: the bounds are reduced per time bucket (the
// tightest of each), and a bound that contradicts the other side's tight level (a percentile
// against a robust Theil–Sen tilt) by more than kClockOutlierNs is dropped and counted. A band
// still empty after that (stamp noise larger than the band) is reported: the fit is then the
// upper bounds' alone, and the bound says by how much the bounds disagreed.
//
// Arithmetic on offsets is 128-bit and saturated where it meets int64; the line itself is fitted
// in doubles relative to a reference offset, where every inlier is within milliseconds.
#ifndef KATRACE_PLUGIN_EXPORT_GPU_CLOCK_FIT_H_
#define KATRACE_PLUGIN_EXPORT_GPU_CLOCK_FIT_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace katrace {
namespace exporting {

// A bound on the offset at host time |host_ns|.
struct ClockBound {
  uint64_t host_ns = 0;
  int64_t offset_ns = 0;
};

// One piece of the fit: offset(x) = offset_ns + drift·(x − from_ns) for x in [from_ns, to_ns].
struct ClockSegment {
  uint64_t from_ns = 0, to_ns = 0;
  int64_t offset_ns = 0;
  double drift = 0;        // ns of offset per ns of host time (ppm = drift·1e6)
  int64_t error_ns = -1;   // bound on the placement error inside it; -1 when nothing bounds it
  uint64_t upper = 0, lower = 0;  // the (bucketed) bounds it was fitted from
  bool band_empty = false;        // the bounds contradicted each other (by error_ns at most)
  bool prior = false;             // the realtime prior lay inside the band and was used
};

struct ClockFit {
  bool observed = false;  // some bound was seen; otherwise the fit is the prior
  std::vector<ClockSegment> segments;  // by host time, at least one
  int64_t error_ns = -1;               // the largest segment bound; -1 when one is unbounded
  uint64_t quantum_ns = 1;             // the stamps' tick as measured
  uint64_t outliers = 0;               // bounds dropped as contradicting the others by far
  bool band_empty = false;             // some segment's band was empty

  // The offset at host time |host_ns| (clamped into the fitted range).
  int64_t OffsetAt(uint64_t host_ns) const;
  // The segment that covers |host_ns| (clamped).
  const ClockSegment& SegmentAt(uint64_t host_ns) const;
};

// Keeps, per time bucket of the run, the tightest upper and lower bound, so memory stays bounded
// whatever the run's length; counts what it saw and measures the stamps' tick.
class ClockBoundCollector {
 public:
  static constexpr int kBuckets = 4096;
  // |first_ns|..|last_ns|: the run's host time range (bounds outside it land in the end buckets).
  ClockBoundCollector(uint64_t first_ns, uint64_t last_ns);

  // offset ≤ host_ns − gpu_ns.
  void AddUpper(uint64_t host_ns, uint64_t gpu_ns);
  // offset ≥ launch_ns − gpu_ns, the bound of a GPU event seen at |host_ns|.
  void AddLower(uint64_t host_ns, uint64_t launch_ns, uint64_t gpu_ns);

  std::vector<ClockBound> Uppers() const;
  // Already lowered by the measured tick.
  std::vector<ClockBound> Lowers() const;
  uint64_t upper_count() const { return upper_count_; }
  uint64_t lower_count() const { return lower_count_; }
  // The largest power of two that 99 % of the stamps are multiples of (1 when they are not).
  uint64_t QuantumNs() const;

 private:
  struct Bucket {
    bool has_upper = false, has_lower = false;
    ClockBound upper, lower;
  };
  size_t BucketOf(uint64_t host_ns) const;
  void CountStamp(uint64_t gpu_ns);

  uint64_t first_ns_, width_ns_;
  std::vector<Bucket> buckets_;
  uint64_t upper_count_ = 0, lower_count_ = 0;
  uint64_t trailing_zeros_[65] = {};  // stamps by their number of trailing zero bits
};

// Fits a domain from its bounds; |prior| is the realtime prior, used alone when nothing bounds
// the offset. Deterministic in its inputs.
ClockFit FitGpuClock(std::vector<ClockBound> upper, std::vector<ClockBound> lower, int64_t prior,
                     uint64_t quantum_ns);

// The fit's constants (tests state their expectations in them).
constexpr uint64_t kClockSegmentNs = 30000000000ull;  // a segment of the piecewise fit: 30 s
constexpr double kClockMaxDrift = 2e-3;               // ±2000 ppm: beyond that it is no clock
constexpr int64_t kClockOutlierNs = 1000000;          // a bound 1 ms off the others is garbage
constexpr int64_t kClockLargeErrorNs = 1000000;       // an error bound above 1 ms is warned about

// "a + b" and "a − b" of offsets and times, saturated into int64.
int64_t SaturatingOffset(__int128 v);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_GPU_CLOCK_FIT_H_
