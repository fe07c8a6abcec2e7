#include "plugin/export/gpu_clock_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace katrace {
namespace exporting {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A bound relative to the fit's origin: x = host ns − x0, y = offset − y_ref.
struct Point {
  double x, y;
};

// The highest value at |at| of a line of slope |b| below every upper bound: min(y − b·(x − at)).
double UpperAt(const std::vector<Point>& up, double b, double at) {
  double m = kInf;
  for (const Point& p : up) m = std::min(m, p.y - b * (p.x - at));
  return m;
}

// The lowest value at |at| of a line of slope |b| above every lower bound.
double LowerAt(const std::vector<Point>& low, double b, double at) {
  double m = -kInf;
  for (const Point& p : low) m = std::max(m, p.y - b * (p.x - at));
  return m;
}

// The maximum of a concave function on [lo, hi], by ternary search (ties keep the middle third,
// which holds a maximum of a concave function).
template <typename F>
double ArgMax(F f, double lo, double hi) {
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (f(m1) < f(m2)) {
      lo = m1;
    } else {
      hi = m2;
    }
  }
  return (lo + hi) / 2;
}

// The edge of {b : ok(b)} between |inside| (ok) and |outside| (not), on the inside.
template <typename F>
double Edge(F ok, double inside, double outside) {
  for (int i = 0; i < 100; ++i) {
    double mid = (inside + outside) / 2;
    if (ok(mid)) {
      inside = mid;
    } else {
      outside = mid;
    }
  }
  return inside;
}

template <typename T>
T Median(std::vector<T> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct SegmentFit {
  double a = 0, b = 0;  // value at the middle and slope, relative
  double error = -1;
  bool band_empty = false, prior = false;
};

// Fits one segment [from, to] (relative host ns, middle c) from its bounds.
SegmentFit FitSegment(const std::vector<Point>& up, std::vector<Point> low, double from, double to,
                      double prior, double quantum) {
  const double c = (from + to) / 2;
  const double B = kClockMaxDrift;
  auto hi = [&](double b) { return UpperAt(up, b, c); };
  auto lo = [&](double b) { return LowerAt(low, b, c); };
  auto gap = [&](double b) { return hi(b) - lo(b); };
  SegmentFit f;
  // The highest line below every upper bound at their centroid: the one nearest them all
  // (it minimizes the summed distance to them), so the bounds seen soonest after their stamps
  // hold it and loose ones (a busy host) do not; among equals, the flattest.
  double centroid = 0;
  for (const Point& p : up) centroid += p.x / static_cast<double>(up.size());
  double b_star = ArgMax([&](double b) { return UpperAt(up, b, centroid) - std::fabs(b); }, -B, B);
  // A drift the bounds cannot tell from their own scatter is none: tilting the line by b moves
  // its ends by b·span/2, so below twice the bounds' typical distance from the line over that, a
  // tilt follows noise (a busy host seeing stamps late), not the clock.
  {
    double lo_x = kInf, hi_x = -kInf;
    std::vector<double> above;
    const double at_c = UpperAt(up, b_star, centroid);
    for (const Point& p : up) {
      lo_x = std::min(lo_x, p.x);
      hi_x = std::max(hi_x, p.x);
      above.push_back(p.y - (at_c + b_star * (p.x - centroid)));
    }
    const double scatter = Median(above);
    if (hi_x <= lo_x || std::fabs(b_star) * (hi_x - lo_x) / 2 < 2 * scatter) b_star = 0;
  }
  double b = b_star;
  double delta = 0;  // how far the band is empty
  if (!low.empty() && gap(b_star) < 0) {
    const double b_gap = ArgMax(gap, -B, B);
    if (gap(b_gap) >= 0) {
      b = Edge([&](double s) { return gap(s) >= 0; }, b_gap, b_star);
    } else {
      f.band_empty = true;
      delta = -gap(b_gap);
    }
  }
  f.b = b;
  f.a = hi(b);
  if (!low.empty() && !f.band_empty && hi(0) >= prior && lo(0) <= prior) {
    f.a = prior;
    f.b = 0;
    f.prior = true;
  }
  if (low.empty() || up.empty()) return f;  // one side unbounded: no error bound
  // Every line inside the band (the lower bounds lowered by how far they contradicted the upper
  // ones): its slopes form [bl, br]; at each end of the segment, the farthest such line from ours.
  for (Point& p : low) p.y -= delta;
  const double tiny = 1e-6;
  auto feasible = [&](double s) { return gap(s) >= -tiny; };
  const double b_gap = ArgMax(gap, -B, B);
  const double bl = feasible(-B) ? -B : Edge(feasible, b_gap, -B);
  const double br = feasible(B) ? B : Edge(feasible, b_gap, B);
  double worst = 0;
  for (double x : {from, to}) {
    const double ours = f.a + f.b * (x - c);
    double highest = UpperAt(up, ArgMax([&](double s) { return UpperAt(up, s, x); }, bl, br), x);
    double lowest = LowerAt(low, ArgMax([&](double s) { return -LowerAt(low, s, x); }, bl, br), x);
    worst = std::max({worst, highest - ours, ours - lowest});
  }
  // Plus how far the bounds disagreed, a tick (a stamp is floored to it) and the rounding.
  f.error = worst + delta + quantum + 2;
  return f;
}

// The edges of the fit's segments over [first, last]: the range cut into equal pieces of at most
// kClockSegmentNs, then, from the left, each piece with fewer than two of the upper bounds |up|
// (sorted by x) joined to the next, and a last one still short joined to the one before. The
// pieces are never listed: a hostile spool's bounds may span 2^64 ns, some 10^11 pieces. Each
// kept edge is found from the bound that completes its segment, so the work is linear in the
// bounds (at most the collector's 4096).
std::vector<double> SegmentEdges(const std::vector<Point>& up, double first, double last) {
  const size_t n = std::max<size_t>(1, static_cast<size_t>(std::ceil((last - first) / static_cast<double>(kClockSegmentNs))));
  // The last edge is |last| itself: computed, it may round below it and leave the last bound out.
  auto edge = [&](size_t i) {
    return i == n ? last : first + (last - first) * static_cast<double>(i) / static_cast<double>(n);
  };
  // The piece holding x: [edge(k), edge(k + 1)), the last one closed.
  auto piece = [&](double x) {
    const double guess = (x - first) / (last - first) * static_cast<double>(n);
    size_t k = guess > 0 ? std::min(static_cast<size_t>(guess), n - 1) : 0;
    while (k > 0 && x < edge(k)) --k;
    while (k + 1 < n && x >= edge(k + 1)) ++k;
    return k;
  };
  std::vector<size_t> cuts{0};  // piece indices where a kept segment starts
  size_t at = 0;                // the first bound not yet in a closed segment
  for (;;) {
    while (at < up.size() && up[at].x < edge(cuts.back())) ++at;
    if (up.size() - at < 2) break;  // what is left is the last segment
    const size_t end = piece(up[at + 1].x) + 1;
    if (end >= n) break;
    cuts.push_back(end);
    at += 2;
  }
  // The last segment, from the last cut to the end, short of two bounds: joined to the one before.
  if (cuts.size() > 1 && up.size() - at < 2) cuts.pop_back();
  std::vector<double> edges;
  for (size_t c : cuts) edges.push_back(edge(c));
  edges.push_back(edge(n));
  return edges;
}

}  // namespace

int64_t SaturatingOffset(__int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(v);
}

const ClockSegment& ClockFit::SegmentAt(uint64_t host_ns) const {
  auto it = std::upper_bound(segments.begin(), segments.end(), host_ns,
                             [](uint64_t t, const ClockSegment& s) { return t < s.from_ns; });
  return it == segments.begin() ? segments.front() : *(it - 1);
}

int64_t ClockFit::OffsetAt(uint64_t host_ns) const {
  const ClockSegment& s = SegmentAt(host_ns);
  uint64_t x = std::min(std::max(host_ns, s.from_ns), s.to_ns);
  double d = s.drift * static_cast<double>(x - s.from_ns);
  return SaturatingOffset(static_cast<__int128>(s.offset_ns) + static_cast<__int128>(std::llround(d)));
}

ClockBoundCollector::ClockBoundCollector(uint64_t first_ns, uint64_t last_ns)
    : first_ns_(first_ns), buckets_(kBuckets) {
  uint64_t span = last_ns > first_ns ? last_ns - first_ns : 0;
  width_ns_ = span / kBuckets + 1;
}

size_t ClockBoundCollector::BucketOf(uint64_t host_ns) const {
  if (host_ns <= first_ns_) return 0;
  return static_cast<size_t>(std::min<uint64_t>((host_ns - first_ns_) / width_ns_, kBuckets - 1));
}

void ClockBoundCollector::CountStamp(uint64_t gpu_ns) {
  ++trailing_zeros_[gpu_ns == 0 ? 64 : __builtin_ctzll(gpu_ns)];
}

void ClockBoundCollector::AddUpper(uint64_t host_ns, uint64_t gpu_ns) {
  ++upper_count_;
  CountStamp(gpu_ns);
  int64_t v = SaturatingOffset(static_cast<__int128>(host_ns) - static_cast<__int128>(gpu_ns));
  Bucket& b = buckets_[BucketOf(host_ns)];
  if (!b.has_upper || v < b.upper.offset_ns) b.upper = ClockBound{host_ns, v};
  b.has_upper = true;
}

void ClockBoundCollector::AddLower(uint64_t host_ns, uint64_t launch_ns, uint64_t gpu_ns) {
  ++lower_count_;
  int64_t v = SaturatingOffset(static_cast<__int128>(launch_ns) - static_cast<__int128>(gpu_ns));
  Bucket& b = buckets_[BucketOf(host_ns)];
  if (!b.has_lower || v > b.lower.offset_ns) b.lower = ClockBound{host_ns, v};
  b.has_lower = true;
}

uint64_t ClockBoundCollector::QuantumNs() const {
  uint64_t n = 0;
  for (uint64_t c : trailing_zeros_) n += c;
  if (n == 0) return 1;
  // The most trailing zeros that 99 % of the stamps have, capped at 2^20 (about 1 ms).
  uint64_t at_least = 0;
  for (int k = 64; k >= 0; --k) {
    at_least += trailing_zeros_[k];
    if (at_least * 100 >= n * 99) return uint64_t{1} << std::min(k, 20);
  }
  return 1;
}

std::vector<ClockBound> ClockBoundCollector::Uppers() const {
  std::vector<ClockBound> v;
  for (const Bucket& b : buckets_) {
    if (b.has_upper) v.push_back(b.upper);
  }
  return v;
}

std::vector<ClockBound> ClockBoundCollector::Lowers() const {
  const int64_t q = static_cast<int64_t>(QuantumNs());
  std::vector<ClockBound> v;
  for (const Bucket& b : buckets_) {
    if (b.has_lower) v.push_back(ClockBound{b.lower.host_ns, SaturatingOffset(static_cast<__int128>(b.lower.offset_ns) - q)});
  }
  return v;
}

ClockFit FitGpuClock(std::vector<ClockBound> upper, std::vector<ClockBound> lower, int64_t prior,
                     uint64_t quantum_ns) {
  ClockFit fit;
  fit.quantum_ns = std::max<uint64_t>(quantum_ns, 1);
  auto by_time = [](const ClockBound& a, const ClockBound& b) { return a.host_ns < b.host_ns; };
  std::sort(upper.begin(), upper.end(), by_time);
  std::sort(lower.begin(), lower.end(), by_time);
  ClockSegment whole;
  whole.to_ns = UINT64_MAX;
  whole.offset_ns = prior;
  if (upper.empty()) {
    // Nothing bounds the offset from above: the prior, raised to the lower bounds if below them.
    fit.observed = !lower.empty();
    for (const ClockBound& l : lower) whole.offset_ns = std::max(whole.offset_ns, l.offset_ns);
    whole.lower = lower.size();
    fit.segments.push_back(whole);
    return fit;
  }
  fit.observed = true;

  // A robust line through the upper bounds: the median of pairwise slopes over an even sample.
  // Against it, the tight level of the upper bounds (their 10th percentile: most bounds are
  // loose when the host is busy, garbage is rare) and of the lower ones (their 90th). A bound is
  // garbage when it contradicts the other side's tight level by more than kClockOutlierNs: an
  // upper bound far below the lower ones (or, without lower bounds, far below its own kind's
  // tight level), a lower bound far above the upper ones. Tight bounds are never dropped.
  const uint64_t x0 = std::min(upper.front().host_ns, lower.empty() ? UINT64_MAX : lower.front().host_ns);
  auto rel_x = [&](uint64_t host) { return static_cast<double>(host - x0); };
  std::vector<const ClockBound*> sample;
  const size_t step = std::max<size_t>(1, upper.size() / 64);
  for (size_t i = 0; i < upper.size(); i += step) sample.push_back(&upper[i]);
  std::vector<double> slopes;
  for (size_t i = 0; i < sample.size(); ++i) {
    for (size_t j = i + 1; j < sample.size(); ++j) {
      if (sample[j]->host_ns == sample[i]->host_ns) continue;
      double dy = static_cast<double>(static_cast<__int128>(sample[j]->offset_ns) - sample[i]->offset_ns);
      double s = dy / static_cast<double>(sample[j]->host_ns - sample[i]->host_ns);
      slopes.push_back(std::max(-kClockMaxDrift, std::min(kClockMaxDrift, s)));
    }
  }
  const double rough_b = slopes.empty() ? 0 : Median(slopes);
  auto residual = [&](const ClockBound& b) {  // the bound less the robust line's tilt
    return static_cast<__int128>(b.offset_ns) - static_cast<__int128>(std::llround(rough_b * rel_x(b.host_ns)));
  };
  auto quantile = [](std::vector<__int128> v, size_t percent) {
    size_t k = std::min(v.size() - 1, v.size() * percent / 100);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
  };
  std::vector<__int128> ru, rl;
  for (const ClockBound& u : upper) ru.push_back(residual(u));
  for (const ClockBound& l : lower) rl.push_back(residual(l));
  const __int128 tight_up = quantile(ru, 10);
  const __int128 floor_up = rl.empty() ? tight_up : quantile(rl, 90);
  const int64_t y_ref = SaturatingOffset(tight_up);
  auto rel_y = [&](const ClockBound& b) {
    return static_cast<double>(static_cast<__int128>(b.offset_ns) - y_ref);
  };
  std::vector<Point> up, low;
  for (const ClockBound& u : upper) {
    if (residual(u) < std::min(floor_up, tight_up) - kClockOutlierNs) {
      ++fit.outliers;  // an upper bound far below the others
    } else {
      up.push_back(Point{rel_x(u.host_ns), rel_y(u)});
    }
  }
  for (const ClockBound& l : lower) {
    if (residual(l) > tight_up + kClockOutlierNs) {
      ++fit.outliers;  // a lower bound far above the upper ones
    } else {
      low.push_back(Point{rel_x(l.host_ns), rel_y(l)});
    }
  }
  if (up.empty()) {  // cannot happen (the median survives), but never divide by it
    fit.segments.push_back(whole);
    return fit;
  }

  // Segments of at most kClockSegmentNs over the bounds' range, each with two upper bounds.
  double first = up.front().x, last = up.back().x;
  for (const Point& p : low) {
    first = std::min(first, p.x);
    last = std::max(last, p.x);
  }
  const std::vector<double> edges = SegmentEdges(up, first, last);
  const double prior_rel = static_cast<double>(static_cast<__int128>(prior) - y_ref);
  fit.error_ns = 0;
  for (size_t i = 0; i + 1 < edges.size(); ++i) {
    const bool closed = i + 2 == edges.size();
    auto inside = [&](const Point& p) { return p.x >= edges[i] && (closed ? p.x <= edges[i + 1] : p.x < edges[i + 1]); };
    std::vector<Point> su, sl;
    for (const Point& p : up) {
      if (inside(p)) su.push_back(p);
    }
    for (const Point& p : low) {
      if (inside(p)) sl.push_back(p);
    }
    const SegmentFit f = FitSegment(su, sl, edges[i], edges[i + 1], prior_rel, static_cast<double>(fit.quantum_ns));
    ClockSegment s;
    s.from_ns = x0 + static_cast<uint64_t>(std::llround(edges[i]));
    s.to_ns = x0 + static_cast<uint64_t>(std::llround(edges[i + 1]));
    const double at_from = f.a + f.b * (edges[i] - (edges[i] + edges[i + 1]) / 2);
    s.offset_ns = SaturatingOffset(static_cast<__int128>(y_ref) + static_cast<__int128>(std::llround(at_from)));
    s.drift = f.b;
    s.error_ns = f.error < 0 ? -1 : static_cast<int64_t>(std::min(std::ceil(f.error), 9.2e18));
    s.upper = su.size();
    s.lower = sl.size();
    s.band_empty = f.band_empty;
    s.prior = f.prior;
    fit.band_empty = fit.band_empty || f.band_empty;
    fit.error_ns = fit.error_ns < 0 || s.error_ns < 0 ? -1 : std::max(fit.error_ns, s.error_ns);
    fit.segments.push_back(s);
  }
  return fit;  // outside the fitted range the end segments' values hold (OffsetAt clamps)
}

}  // namespace exporting
}  // namespace katrace
