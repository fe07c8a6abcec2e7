// The GPU clock fit: units on synthetic bounds (plugin/export/gpu_clock_fit), domains through
// the export of a built spool (two communicators of one device share one fit), and end to end:
// katrace-sim emulating each GPU clock model drives the real plugin, and every KernelCh of the
// trace is compared with where it truly ran (the sim's report states the model's truth).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "plugin/export/exporter.h"
#include "plugin/export/gpu_clock_fit.h"
#include "plugin/export/gpu_placement.h"
#include "plugin/export/rank_identity.h"
#include "plugin/export/spool_index.h"
#include "test/support/plugin_harness.h"
#include "test/support/plugin_test.h"
#include "test/support/spool_builder.h"
#include "test/support/subprocess.h"
#include "test/support/trace_validation.h"

namespace {

namespace fs = std::filesystem;
using katrace::Kind;
using katrace::exporting::ClockBound;
using katrace::exporting::ClockBoundCollector;
using katrace::exporting::ClockFit;
using katrace::exporting::FitGpuClock;
using nlohmann::json;

// ---- the fit on synthetic bounds ----

// A run of |n| observations over |span_ns| of host time, with a true offset |truth(x)|: each GPU
// event is launched, starts |launch| later and is seen by the host |seen| after that.
struct Synthetic {
  std::vector<ClockBound> upper, lower;
};

template <typename Truth>
Synthetic Observe(Truth truth, uint64_t x0, uint64_t span_ns, int n, uint64_t seed, int64_t noise_ns = 0) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> seen(1.0 / 2000), launch(1.0 / 20000);
  std::uniform_int_distribution<int64_t> jitter(-noise_ns, noise_ns);
  Synthetic s;
  for (int i = 0; i < n; ++i) {
    uint64_t start = x0 + span_ns * static_cast<uint64_t>(i) / static_cast<uint64_t>(n);  // true host time
    int64_t off = truth(start);
    int64_t stamp = static_cast<int64_t>(start) - off + (noise_ns ? jitter(rng) : 0);
    uint64_t host_seen = start + 100 + static_cast<uint64_t>(seen(rng));
    uint64_t launched = start - 3000 - static_cast<uint64_t>(launch(rng));
    s.upper.push_back(ClockBound{host_seen, static_cast<int64_t>(host_seen) - stamp});
    s.lower.push_back(ClockBound{host_seen, static_cast<int64_t>(launched) - stamp});
  }
  return s;
}

// The largest |fit − truth| over the run.
template <typename Truth>
int64_t WorstError(const ClockFit& fit, Truth truth, uint64_t x0, uint64_t span_ns) {
  int64_t worst = 0;
  for (uint64_t x = x0; x <= x0 + span_ns; x += span_ns / 1000) {
    worst = std::max<int64_t>(worst, std::llabs(fit.OffsetAt(x) - truth(x)));
  }
  return worst;
}

constexpr uint64_t kX0 = 1000000000000ull;      // host monotonic ns at the run's start
constexpr int64_t kRealtimeOffset = -1764000000000000000ll;  // host − globaltimer when seeded from realtime

TEST(GpuClockFit, ConstantOffsetIsFoundWithinItsBound) {
  const int64_t truth = kRealtimeOffset + 5000000;  // a GPU clock 5 ms behind realtime
  auto f = [&](uint64_t) { return truth; };
  Synthetic s = Observe(f, kX0, 1000000000ull, 20000, 1);
  ClockFit fit = FitGpuClock(s.upper, s.lower, kRealtimeOffset, 1);
  ASSERT_TRUE(fit.observed);
  EXPECT_EQ(fit.segments.size(), 1u);
  EXPECT_FALSE(fit.band_empty);
  EXPECT_FALSE(fit.segments[0].prior);  // the prior is 5 ms off: outside the band
  int64_t err = WorstError(fit, f, kX0, 1000000000ull);
  EXPECT_LE(err, 300);  // the fastest of 20000 observations is seen within ~100 ns
  EXPECT_GE(fit.error_ns, err);
  EXPECT_LE(fit.error_ns, 6000);  // the band: fastest launch-to-start plus fastest start-to-seen
}

TEST(GpuClockFit, DriftIsFollowed) {
  auto f = [&](uint64_t x) { return kRealtimeOffset - static_cast<int64_t>(std::llround(200e-6 * static_cast<double>(x - kX0))); };
  Synthetic s = Observe(f, kX0, 2000000000ull, 20000, 2);
  ClockFit fit = FitGpuClock(s.upper, s.lower, kRealtimeOffset, 1);
  ASSERT_EQ(fit.segments.size(), 1u);
  EXPECT_NEAR(fit.segments[0].drift * 1e6, -200, 1);
  int64_t err = WorstError(fit, f, kX0, 2000000000ull);
  EXPECT_LE(err, 1000);
  EXPECT_GE(fit.error_ns, err);
}

TEST(GpuClockFit, LongRunsArePiecewiseAndEachPieceHolds) {
  // 100 s whose drift changes sign halfway: one line cannot follow it, segments do.
  const uint64_t span = 100000000000ull;
  auto f = [&](uint64_t x) {
    double t = static_cast<double>(x - kX0);
    double half = static_cast<double>(span) / 2;
    double d = t < half ? 50e-6 * t : 50e-6 * half - 50e-6 * (t - half);
    return kRealtimeOffset + static_cast<int64_t>(std::llround(d));
  };
  Synthetic s = Observe(f, kX0, span, 40000, 3);
  ClockFit fit = FitGpuClock(s.upper, s.lower, kRealtimeOffset, 1);
  EXPECT_GE(fit.segments.size(), 3u);
  EXPECT_LE(fit.segments.size(), 4u);
  for (const katrace::exporting::ClockSegment& seg : fit.segments) {
    EXPECT_GE(seg.error_ns, 0);
    for (uint64_t x = seg.from_ns; x < seg.to_ns; x += (seg.to_ns - seg.from_ns) / 200) {
      // Inside a piece the truth is linear except at the turn (in the piece holding t = 50 s).
      if (x - kX0 > span / 2 - span / 10 && x - kX0 < span / 2 + span / 10) continue;
      EXPECT_LE(std::llabs(fit.OffsetAt(x) - f(x)), seg.error_ns) << "at " << (x - kX0);
    }
  }
}

TEST(GpuClockFit, RealtimePriorIsUsedOnlyInsideTheBand) {
  auto f = [&](uint64_t) { return kRealtimeOffset; };
  Synthetic s = Observe(f, kX0, 1000000000ull, 5000, 4);
  ClockFit in = FitGpuClock(s.upper, s.lower, kRealtimeOffset, 1);
  EXPECT_TRUE(in.segments[0].prior);
  EXPECT_EQ(in.OffsetAt(kX0), kRealtimeOffset);
  EXPECT_EQ(in.segments[0].drift, 0);
  // A prior 1 ms below every lower bound is not used.
  ClockFit out = FitGpuClock(s.upper, s.lower, kRealtimeOffset - 1000000, 1);
  EXPECT_FALSE(out.segments[0].prior);
  EXPECT_LE(std::llabs(out.OffsetAt(kX0) - kRealtimeOffset), out.error_ns);
}

TEST(GpuClockFit, GarbageStampsAreCountedNotFollowed) {
  auto f = [&](uint64_t) { return kRealtimeOffset; };
  Synthetic s = Observe(f, kX0, 1000000000ull, 5000, 5);
  // Stamps of 1, of 2^64 − 1, of a boot-based clock: bounds 57 years or 2^63 ns away.
  for (uint64_t i = 0; i < 20; ++i) {
    uint64_t x = kX0 + i * 40000000;
    s.upper.push_back(ClockBound{x, INT64_MIN});
    s.upper.push_back(ClockBound{x + 7, static_cast<int64_t>(x) - 1});
    s.lower.push_back(ClockBound{x + 9, INT64_MAX});
  }
  ClockFit fit = FitGpuClock(s.upper, s.lower, kRealtimeOffset - 1000000, 1);
  EXPECT_EQ(fit.outliers, 40u);  // the upper bounds far below and the lower ones far above
  EXPECT_FALSE(fit.band_empty);
  int64_t err = WorstError(fit, f, kX0, 1000000000ull);
  EXPECT_LE(err, 1000);
  EXPECT_GE(fit.error_ns, err);
}

TEST(GpuClockFit, StampNoiseBeyondTheBandIsReportedAsEmpty) {
  // Launch-to-seen of 100 ns, noise of ±5 µs: the bounds contradict each other.
  auto f = [&](uint64_t) { return kRealtimeOffset; };
  std::vector<ClockBound> up, low;
  std::mt19937_64 rng(6);
  std::uniform_int_distribution<int64_t> noise(-5000, 5000);
  for (int i = 0; i < 2000; ++i) {
    uint64_t x = kX0 + static_cast<uint64_t>(i) * 500000;
    up.push_back(ClockBound{x + 50, kRealtimeOffset + 50 + noise(rng)});
    low.push_back(ClockBound{x + 50, kRealtimeOffset - 50 + noise(rng)});
  }
  ClockFit fit = FitGpuClock(up, low, kRealtimeOffset + 1000000, 1);
  EXPECT_TRUE(fit.band_empty);
  int64_t err = WorstError(fit, f, kX0, 1000000000ull);
  EXPECT_GE(fit.error_ns, err);  // the bound counts the contradiction
  EXPECT_GE(fit.error_ns, 9000);
}

TEST(GpuClockFit, WithoutLowerBoundsTheErrorIsUnbounded) {
  auto f = [&](uint64_t) { return kRealtimeOffset + 77; };
  Synthetic s = Observe(f, kX0, 1000000000ull, 1000, 7);
  ClockFit fit = FitGpuClock(s.upper, {}, kRealtimeOffset - 1000000, 1);
  EXPECT_TRUE(fit.observed);
  EXPECT_EQ(fit.error_ns, -1);
  EXPECT_LE(WorstError(fit, f, kX0, 1000000000ull), 1000);
  // Nothing at all: the prior, unbounded.
  ClockFit none = FitGpuClock({}, {}, kRealtimeOffset, 1);
  EXPECT_FALSE(none.observed);
  EXPECT_EQ(none.OffsetAt(kX0), kRealtimeOffset);
}

// Sparse bounds over many 30 s pieces: the pieces short of two upper bounds are joined, and
// every bound lands in exactly one segment, the one at the very end included.
TEST(GpuClockFit, SparseBoundsFillSegmentsOfTwoAndNoneIsLeftOut) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::vector<ClockBound> up;
    const int n = 2 + static_cast<int>(rng() % 40);
    const uint64_t span = (1 + rng() % 4000) * 1000000000ull;
    for (int i = 0; i < n; ++i) up.push_back(ClockBound{kX0 + rng() % span, kRealtimeOffset + static_cast<int64_t>(rng() % 500)});
    ClockFit fit = FitGpuClock(up, {}, kRealtimeOffset, 1);
    uint64_t in_segments = 0;
    for (const auto& seg : fit.segments) {
      in_segments += seg.upper;
      if (fit.segments.size() > 1) {
        EXPECT_GE(seg.upper, 2u) << "round " << round;
      }
    }
    EXPECT_EQ(in_segments + fit.outliers, up.size()) << "round " << round;
  }
}

// A hostile spool's host times span 2^64 ns: some 6 * 10^11 pieces of 30 s, which were listed
// one by one (and merged in quadratic time) before; the fit takes a moment, not minutes.
TEST(GpuClockFit, BoundsSpanningTheWholeClockFitAtOnce) {
  std::vector<ClockBound> up{{1, kRealtimeOffset}, {2, kRealtimeOffset}, {UINT64_MAX - 1, kRealtimeOffset},
                             {UINT64_MAX, kRealtimeOffset}};
  std::vector<ClockBound> low{{0, kRealtimeOffset - 10}, {UINT64_MAX, kRealtimeOffset - 10}};
  ClockFit fit = FitGpuClock(up, low, kRealtimeOffset, 1);
  ASSERT_FALSE(fit.segments.empty());
  EXPECT_LE(fit.segments.size(), 2u);
  uint64_t in_segments = 0;
  for (const auto& seg : fit.segments) in_segments += seg.upper;
  EXPECT_EQ(in_segments + fit.outliers, up.size());
}

TEST(GpuClockFit, CollectorKeepsTheTightestPerBucketAndMeasuresTheTick) {
  ClockBoundCollector c(kX0, kX0 + 1000000000ull);
  for (uint64_t i = 0; i < 100000; ++i) {
    uint64_t host = kX0 + i * 10000;
    uint64_t stamp = (host - 5000) & ~uint64_t{1023};  // a 1024 ns tick
    c.AddUpper(host, stamp);
    c.AddLower(host, host - 9000, stamp);
  }
  EXPECT_EQ(c.upper_count(), 100000u);
  EXPECT_EQ(c.QuantumNs(), 1024u);
  std::vector<ClockBound> up = c.Uppers(), low = c.Lowers();
  EXPECT_LE(up.size(), static_cast<size_t>(ClockBoundCollector::kBuckets));
  EXPECT_GE(up.size(), static_cast<size_t>(ClockBoundCollector::kBuckets) - 1);
  for (const ClockBound& b : up) EXPECT_GE(b.offset_ns, 5000);
  for (const ClockBound& b : low) EXPECT_LE(b.offset_ns, -4000 + 1023 - 1024);  // lowered by the tick
  // Out-of-range and extreme values land in the end buckets and saturate.
  c.AddUpper(0, UINT64_MAX);
  c.AddUpper(UINT64_MAX, 0);
  c.AddLower(UINT64_MAX, UINT64_MAX, 0);
  EXPECT_EQ(c.Uppers().front().offset_ns, INT64_MIN);
  EXPECT_EQ(c.upper_count(), 100002u);
}

// ---- domains through the export ----

class GpuClockExportTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = katrace_test::MakeTempDir(); }
  void TearDown() override { fs::remove_all(dir_); }
  static katrace::ExportReport ExportQuietly(const std::string& spool, const std::string& trace) {
    katrace::ExportOptions o;
    o.output = trace;
    o.summary = false;
    o.progress = false;
    return katrace::ExportSpool(spool, o);
  }
  std::string dir_;
};

katrace::spool::KernelChFields KernelCh(uint8_t channel, uint64_t gpu_start) {
  katrace::spool::KernelChFields k{};
  k.gpu_start = gpu_start;
  k.channel = channel;
  return k;
}

katrace::spool::CollFields OneChannelColl() {
  katrace::spool::CollFields c{};
  c.nchannels = 1;
  return c;
}

// A Comm record naming its CUDA device (the builder's Comm leaves it 0).
void CommOnDevice(katrace_test::SpoolBuilder* s, uint16_t slot, uint64_t hash, uint64_t ticks, int rank, int device) {
  std::string body(sizeof(katrace::spool::CommBody), '\0');
  katrace::spool::CommBody c{};
  c.comm_hash = hash;
  c.ticks = ticks;
  c.rank = rank;
  c.nranks = 2;
  c.nnodes = 1;
  c.abi_version = 6;
  c.cuda_device = device;
  memcpy(&body[0], &c, sizeof(c));
  katrace::spool::RecordHeader h{};
  h.type = katrace::spool::RecordType::kComm;
  h.context = slot;
  s->Raw(0, h, body.data(), body.size());
}

TEST_F(GpuClockExportTest, CommunicatorsOfOneDeviceShareOneFit) {
  const std::string spool = dir_ + "/t.kspool", trace = dir_ + "/t.json";
  const uint64_t base_mono = 5000000000ull, base_rt = 1764000000000000000ull;
  const int64_t truth = static_cast<int64_t>(base_mono) - static_cast<int64_t>(base_rt) - 3000000;  // 3 ms behind
  {
    katrace_test::SpoolBuilder s(spool);
    s.Process(0, 4242, "host", trace, 0xffff, base_rt, base_mono);
    s.Clock(base_mono, base_mono, base_rt);
    CommOnDevice(&s, 1, 0xaaaa, base_mono, 0, 3);
    CommOnDevice(&s, 2, 0xbbbb, base_mono, 0, 3);
    CommOnDevice(&s, 3, 0xcccc, base_mono, 0, 5);
    uint64_t id = 1;
    // Comm 1 sees its stamps 200 ns late, comm 2 only 20 µs late: sharing the fit, comm 2's
    // slices are placed as tightly as comm 1's.
    for (int i = 0; i < 200; ++i) {
      for (uint16_t slot = 1; slot <= 3; ++slot) {
        uint64_t launch = base_mono + 100000 + static_cast<uint64_t>(i) * 50000 + slot * 1000;
        uint64_t start = launch + 5000;
        uint64_t gpu = static_cast<uint64_t>(static_cast<int64_t>(start) - truth);
        uint64_t seen = start + (slot == 2 ? 20000 : 200);
        uint64_t coll = id++, kch = id++;
        s.Start(0, Kind::kColl, slot, coll, 0, launch, OneChannelColl(), katrace::spool::kStartAwaitsKernelCh);
        s.Stop(0, Kind::kColl, slot, coll, launch + 100);
        s.Start(1, Kind::kKernelCh, slot, kch, coll, seen, KernelCh(0, gpu));
        s.State(1, Kind::kKernelCh, slot, kch, seen + 3000, ncclProfilerKernelChStop, gpu + 2000);
        s.Stop(1, Kind::kKernelCh, slot, kch, seen + 3100);
      }
    }
    s.End();
  }
  katrace::ExportReport r = ExportQuietly(spool, trace);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.message.find("GPU clock"), std::string::npos) << r.message;
  json tr = katrace_test::ExpectValidTrace(trace);
  const json& f = katrace_test::Footer(tr);
  ASSERT_EQ(f["gpu_clocks"].size(), 2u) << f.dump();
  const json& d3 = f["gpu_clocks"][0];
  EXPECT_EQ(d3["cuda_device"], 3);
  EXPECT_EQ(d3["comms"].size(), 2u);
  EXPECT_EQ(f["gpu_clocks"][1]["cuda_device"], 5);
  EXPECT_EQ(f["communicators"][0]["gpu_clock"], f["communicators"][1]["gpu_clock"]);
  EXPECT_NE(f["communicators"][0]["gpu_clock"], f["communicators"][2]["gpu_clock"]);
  EXPECT_LE(std::llabs(d3["offset_ns"].get<int64_t>() - truth), 300) << d3.dump();
  EXPECT_GE(d3["error_ns"].get<int64_t>(), std::llabs(d3["offset_ns"].get<int64_t>() - truth));
  EXPECT_EQ(d3["upper_bounds"], 400);
  EXPECT_EQ(d3["lower_bounds"], 400);
  // Every KernelCh at its true start (base + launch + 5 µs), within the fit's error.
  for (const json& e : tr["traceEvents"]) {
    if (e.value("cat", "") != "KernelCh") continue;
    int64_t gpu = e["args"]["gpu_start_ns"].get<int64_t>();
    int64_t true_ts = gpu + truth - static_cast<int64_t>(base_mono);
    int64_t ts = std::llround(e["ts"].get<double>() * 1000);
    EXPECT_LE(std::llabs(ts - true_ts), 300) << e.dump();
  }
}

// A spool of |launches| collectives on one communicator, their KernelCh (when |with_stamps|)
// on a second stream whose block reaches the file after every launch, each seen 1 µs after its
// launch on a clock seeded from realtime.
void WriteLaunchesThenStamps(const std::string& spool, const std::string& trace, int launches, bool with_stamps) {
  const uint64_t base_mono = 5000000000ull, base_rt = 1764000000000000000ull;
  katrace_test::SpoolBuilder s(spool);
  s.Process(0, 4242, "host", trace, 0xffff, base_rt, base_mono);
  s.Clock(base_mono, base_mono, base_rt);
  s.Comm(1, 0xaaaa, base_mono, 0, 1, "c");
  for (int i = 0; i < launches; ++i) {
    uint64_t launch = base_mono + 100000 + static_cast<uint64_t>(i) * 10000;
    uint64_t coll = 1 + 2 * static_cast<uint64_t>(i);
    s.Start(0, Kind::kColl, 1, coll, 0, launch, OneChannelColl(), with_stamps ? katrace::spool::kStartAwaitsKernelCh : 0);
    s.Stop(0, Kind::kColl, 1, coll, launch + 100);
  }
  s.Flush(0);
  for (int i = 0; with_stamps && i < launches; ++i) {
    uint64_t launch = base_mono + 100000 + static_cast<uint64_t>(i) * 10000;
    uint64_t coll = 1 + 2 * static_cast<uint64_t>(i), kch = coll + 1;
    uint64_t gpu = launch + 500 - base_mono + base_rt;
    s.Start(1, Kind::kKernelCh, 1, kch, coll, launch + 1000, KernelCh(0, gpu));
    s.Stop(1, Kind::kKernelCh, 1, kch, launch + 3000);
  }
  s.End();
}

// Scans |spool| and places its GPU clocks keeping at most |max_launches| launches; returns how
// many blocks the placement read again.
size_t PlaceClocks(const std::string& spool, size_t max_launches, katrace::exporting::SpoolIndex* index,
                   katrace::exporting::GpuClocks* clocks) {
  katrace::exporting::SpoolReader file;
  std::string error;
  EXPECT_TRUE(file.Open(spool, &error)) << error;
  katrace::exporting::ExportProgress progress(false, "t");
  EXPECT_TRUE(katrace::exporting::ScanSpool(file, 2, &progress, index, &error)) << error;
  const katrace::exporting::RankIdentities identities = katrace::exporting::AssignRankIdentities(*index);
  return katrace::exporting::PlaceGpuClocks(file, 2, *index, identities, clocks, max_launches);
}

TEST_F(GpuClockExportTest, ASpoolWithoutGpuStampsIsNotReadAgain) {
  const std::string spool = dir_ + "/t.kspool", trace = dir_ + "/t.json";
  WriteLaunchesThenStamps(spool, trace, 300, false);
  katrace::exporting::SpoolIndex host_only;
  katrace::exporting::GpuClocks host_only_clocks;
  EXPECT_EQ(PlaceClocks(spool, katrace::exporting::kMaxLaunchesKept, &host_only, &host_only_clocks), 0u);
  ASSERT_EQ(host_only_clocks.domains.size(), 1u);
  EXPECT_FALSE(host_only_clocks.domains[0].fit.observed);
  EXPECT_EQ(host_only_clocks.domains[0].fit.OffsetAt(5000000000ull), katrace::exporting::RealtimePrior(host_only));

  WriteLaunchesThenStamps(spool, trace, 300, true);
  katrace::exporting::SpoolIndex stamped;
  katrace::exporting::GpuClocks stamped_clocks;
  EXPECT_GT(PlaceClocks(spool, katrace::exporting::kMaxLaunchesKept, &stamped, &stamped_clocks), 0u);
  ASSERT_EQ(stamped_clocks.domains.size(), 1u);
  EXPECT_TRUE(stamped_clocks.domains[0].fit.observed);
  EXPECT_EQ(stamped_clocks.domains[0].lower_bounds, 300u);
  EXPECT_EQ(stamped_clocks.domains[0].unlaunched, 0u);
}

// However fast a run launched, the pass keeps a bounded number of launches: the oldest leave
// first and the stamps that needed them are counted unlaunched, never silently lost.
TEST_F(GpuClockExportTest, LaunchesKeptAreBoundedAndTheOverflowIsCounted) {
  const std::string spool = dir_ + "/t.kspool", trace = dir_ + "/t.json";
  WriteLaunchesThenStamps(spool, trace, 300, true);
  katrace::exporting::SpoolIndex index;
  katrace::exporting::GpuClocks clocks;
  PlaceClocks(spool, 200, &index, &clocks);
  ASSERT_EQ(clocks.domains.size(), 1u);
  const katrace::exporting::GpuClockDomain& d = clocks.domains[0];
  EXPECT_EQ(d.upper_bounds, 300u);
  EXPECT_EQ(d.lower_bounds, 200u);
  EXPECT_EQ(d.unlaunched, 100u);
  EXPECT_TRUE(d.fit.observed);
  EXPECT_GE(d.fit.error_ns, 0);
}

// A GPU timer running 17 times faster than the host's clock: no fit follows it, so the stamps
// fall outside the run. Held at the run's edge with zero length, each slice would need a lane
// (a track) of its own; drawn at host times they share a few, and the export says so.
TEST_F(GpuClockExportTest, StampsOutsideTheRunAreDrawnAtHostTimesOnFewTracks) {
  const std::string spool = dir_ + "/t.kspool", trace = dir_ + "/t.json";
  const uint64_t base_mono = 5000000000ull, base_rt = 1764000000000000000ull;
  const int colls = 2000;
  {
    katrace_test::SpoolBuilder s(spool);
    s.Process(0, 4242, "host", trace, 0xffff, base_rt, base_mono);
    s.Clock(base_mono, base_mono, base_rt);
    s.Comm(1, 0xaaaa, base_mono, 0, 1, "c");
    uint64_t gpu = uint64_t{1} << 60;
    for (int i = 0; i < colls; ++i) {
      uint64_t launch = base_mono + 100000 + static_cast<uint64_t>(i) * 10000;
      uint64_t coll = 1 + 2 * static_cast<uint64_t>(i), kch = coll + 1;
      s.Start(0, Kind::kColl, 1, coll, 0, launch, OneChannelColl(), katrace::spool::kStartAwaitsKernelCh);
      s.Stop(0, Kind::kColl, 1, coll, launch + 100);
      s.Start(1, Kind::kKernelCh, 1, kch, coll, launch + 1000, KernelCh(0, gpu));
      s.State(1, Kind::kKernelCh, 1, kch, launch + 2000, ncclProfilerKernelChStop, gpu + 1000);
      s.Stop(1, Kind::kKernelCh, 1, kch, launch + 3000);
      gpu += 170000;
    }
    s.End();
  }
  katrace::ExportReport r = ExportQuietly(spool, trace);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NE(r.message.find("fell outside the run at both ends"), std::string::npos) << r.message;
  json tr = katrace_test::ExpectValidTrace(trace);
  size_t tracks = 0, kernel_chs = 0, outside = 0, coll_gpu = 0;
  for (const json& e : tr["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (e.value("name", "") == "thread_name") ++tracks;
    if (cat == "CollGpu") ++coll_gpu;
    if (cat != "KernelCh") continue;
    ++kernel_chs;
    const json& a = e["args"];
    if (!a.value("host_timed", false)) continue;
    ++outside;
    EXPECT_TRUE(a.value("clamped", false)) << e.dump();
    EXPECT_EQ(a["gpu_start_ns"].get<uint64_t>() + 1000, a["gpu_stop_ns"].get<uint64_t>()) << e.dump();
    EXPECT_GT(e["dur"].get<double>(), 0) << e.dump();  // its host callbacks' 2 µs, not zero at an edge
  }
  EXPECT_EQ(kernel_chs, static_cast<size_t>(colls));
  EXPECT_GT(outside, static_cast<size_t>(colls) / 2);
  EXPECT_LE(coll_gpu, static_cast<size_t>(colls) - outside);
  EXPECT_LE(tracks, 10u);
}

TEST_F(GpuClockExportTest, ContradictingBoundsAreWarnedAbout) {
  const std::string spool = dir_ + "/t.kspool", trace = dir_ + "/t.json";
  const uint64_t base_mono = 5000000000ull, base_rt = 1764000000000000000ull;
  {
    katrace_test::SpoolBuilder s(spool);
    s.Process(0, 4242, "host", trace, 0xffff, base_rt, base_mono);
    s.Clock(base_mono, base_mono, base_rt);
    s.Comm(1, 0xaaaa, base_mono, 0, 1, "c");
    uint64_t id = 1;
    // Each KernelCh is seen before its collective was launched by the stamps' reckoning: the
    // stamps swing ±20 µs around a clock whose launch-to-seen is 1 µs.
    for (int i = 0; i < 100; ++i) {
      uint64_t launch = base_mono + 100000 + static_cast<uint64_t>(i) * 50000;
      int64_t swing = (i % 2 ? 20000 : -20000);
      uint64_t gpu = static_cast<uint64_t>(static_cast<int64_t>(launch + 500 - base_mono + base_rt) + swing);
      uint64_t coll = id++, kch = id++;
      s.Start(0, Kind::kColl, 1, coll, 0, launch, OneChannelColl(), katrace::spool::kStartAwaitsKernelCh);
      s.Stop(0, Kind::kColl, 1, coll, launch + 100);
      s.Start(1, Kind::kKernelCh, 1, kch, coll, launch + 1000, KernelCh(0, gpu));
      s.Stop(1, Kind::kKernelCh, 1, kch, launch + 3000);
    }
    s.End();
  }
  katrace::ExportReport r = ExportQuietly(spool, trace);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NE(r.message.find("GPU clock of cuda device 0: its bounds contradict each other"), std::string::npos) << r.message;
  json tr = katrace_test::ExpectValidTrace(trace);
  const json& g = katrace_test::Footer(tr)["gpu_clocks"][0];
  EXPECT_EQ(g["band_empty"], true);
  EXPECT_GE(g["error_ns"].get<int64_t>(), 39000);
}

// ---- end to end: each GPU clock model of katrace-sim, through the real plugin ----

// The report's "gpu-clock <spec> offset_ns N drift_ppm D origin_realtime_ns N jitter_ns N ...".
struct SimTruth {
  int64_t offset_ns = 0;
  double drift_ppm = 0;
  uint64_t origin_realtime_ns = 0;
  bool found = false;
  // The realtime at which a GPU stamp was written (exact inverse of the model, jitter aside).
  double RealtimeOf(uint64_t gpu) const {
    double d = drift_ppm * 1e-6;
    double g = static_cast<double>(static_cast<int64_t>(gpu - origin_realtime_ns) - offset_ns);
    return static_cast<double>(origin_realtime_ns) + g / (1 + d);
  }
};

SimTruth ParseTruth(const std::string& report) {
  SimTruth t;
  std::istringstream lines(report);
  std::string line;
  while (std::getline(lines, line)) {
    char spec[64];
    long long offset = 0;
    unsigned long long origin = 0;
    if (std::sscanf(line.c_str(), " gpu-clock %63s offset_ns %lld drift_ppm %lf origin_realtime_ns %llu", spec,
                    &offset, &t.drift_ppm, &origin) == 4) {
      t.offset_ns = offset;
      t.origin_realtime_ns = origin;
      t.found = true;
    }
  }
  return t;
}

struct Placement {
  size_t kernel_chs = 0;
  int64_t p99_ns = 0, max_ns = 0;
  int64_t bound_ns = 0;
  std::string footer;
};

class GpuClockSimTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = katrace_test::MakeTempDir(); }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // Runs the sim with |model| (and |jitter| ns), then measures every KernelCh's placement error.
  // KernelCh stamps alone by default (the emulated KernelStep writers spin while they wait for
  // GPU time, which on a small host keeps the proxies from seeing stamps promptly).
  Placement Run(const std::string& model, uint64_t jitter = 0, bool kernel_steps = false) {
    Placement p;
    const std::string trace = (fs::path(dir_) / "trace.json").string();
    std::vector<std::string> args = {"--plugin", katrace_test::PluginPath(), "--ranks", "2", "--iters",
                                     std::to_string(katrace_test::TestScaled(40, 4)), "--size", "256K",
                                     "--gpu-clock", model, "--gpu-jitter", std::to_string(jitter) + "ns",
                                     "--kernel-steps", kernel_steps ? "on" : "off"};
    katrace_test::ProcessOutput run =
        katrace_test::RunProcess(katrace_test::ToolPath("katrace-sim"), args, {"KATRACE_OUTPUT=" + trace, "KATRACE_SUMMARY=0"}, dir_);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    SimTruth truth = ParseTruth(run.out);
    EXPECT_TRUE(truth.found) << run.out;
    EXPECT_EQ(run.err.find("GPU clock of"), std::string::npos) << run.err;
    json tr = katrace_test::ExpectValidTrace(trace);
    const json& f = katrace_test::Footer(tr);
    p.footer = f["gpu_clocks"].dump();
    const double base_rt = static_cast<double>(f["base_realtime_ns"].get<uint64_t>());
    p.bound_ns = f["gpu_offset_error_ns"].get<int64_t>();
    std::vector<int64_t> errors;
    for (const json& e : tr["traceEvents"]) {
      if (e.value("ph", "") != "X") continue;
      const std::string cat = e.value("cat", "");
      int64_t ts = std::llround(e["ts"].get<double>() * 1000);
      if (cat == "KernelCh" || cat == "KernelStep" || cat == "CollGpu") {
        EXPECT_GE(ts, 0) << e.dump();  // never before the run
      }
      if (cat != "KernelCh" || !e["args"].contains("gpu_start_ns")) continue;
      // Where it truly ran: the realtime of its stamp, on the trace's clock (host monotonic −
      // base = realtime − base realtime).
      double true_ts = truth.RealtimeOf(e["args"]["gpu_start_ns"].get<uint64_t>()) - base_rt;
      errors.push_back(std::llabs(ts - std::llround(true_ts)));
    }
    p.kernel_chs = errors.size();
    if (errors.empty()) return p;
    std::sort(errors.begin(), errors.end());
    p.p99_ns = errors[errors.size() * 99 / 100];
    p.max_ns = errors.back();
    return p;
  }

  // The recorded bound always covers the true error. The accuracy targets (p99 within 2 µs,
  // every KernelCh within 20 µs) hold when the host sees stamps promptly, as NCCL's spinning
  // proxy thread does: they are checked where the sim's threads (two per rank and the emulated
  // GPU writers) each have a core; on a smaller host the emulated GPU's writers spin the proxies
  // off the CPU for milliseconds, and the honest fit then says so in its bound.
  void ExpectWithinTargets(const Placement& p) {
    EXPECT_GT(p.kernel_chs, katrace_test::TestScaled(1000, 100));
    // Plus 1 µs for realtime vs monotonic slewing during the run, which the sim's truth cannot see.
    EXPECT_GE(p.bound_ns, 0) << p.footer;
    EXPECT_LE(p.max_ns, p.bound_ns + 1000) << p.footer;
    std::printf("    %zu KernelCh: p99 %lld ns, max %lld ns, bound %lld ns\n", p.kernel_chs,
                static_cast<long long>(p.p99_ns), static_cast<long long>(p.max_ns),
                static_cast<long long>(p.bound_ns));
    if (std::thread::hardware_concurrency() < kCoresForTargets) {
      std::printf("    accuracy targets not checked: %u cores (the sim's threads need %u)\n",
                  std::thread::hardware_concurrency(), kCoresForTargets);
      return;
    }
    EXPECT_LE(p.p99_ns, 2000) << p.footer;
    EXPECT_LE(p.max_ns, 20000) << p.footer;
  }
  static constexpr unsigned kCoresForTargets = 8;

  std::string dir_;
};

TEST_F(GpuClockSimTest, RealtimeSeeded) { ExpectWithinTargets(Run("realtime")); }
TEST_F(GpuClockSimTest, CountingFromBoot) { ExpectWithinTargets(Run("boot")); }
TEST_F(GpuClockSimTest, FiveMillisecondsAhead) { ExpectWithinTargets(Run("offset:+5ms")); }
TEST_F(GpuClockSimTest, FiveMillisecondsBehind) { ExpectWithinTargets(Run("offset:-5ms")); }
TEST_F(GpuClockSimTest, Drifting200Ppm) { ExpectWithinTargets(Run("drift:200ppm")); }
TEST_F(GpuClockSimTest, Jitter) { ExpectWithinTargets(Run("offset:+5ms", 300)); }

// A model the sim does not know is one clear line, never a run on some other clock.
TEST_F(GpuClockSimTest, BadModelsAreRefusedByName) {
  for (const char* bad : {"drift:abc", "drift:200", "offset:", "offset:+2h", "offset:+5xs", "tsc", "drift:20000ppm"}) {
    katrace_test::ProcessOutput run = katrace_test::RunProcess(
        katrace_test::ToolPath("katrace-sim"), {"--plugin", katrace_test::PluginPath(), "--gpu-clock", bad}, {}, dir_);
    EXPECT_NE(run.exit_code, 0) << bad;
    EXPECT_NE(run.err.find("--gpu-clock: '" + std::string(bad) + "'"), std::string::npos) << bad << ": " << run.err;
  }
  katrace_test::ProcessOutput run = katrace_test::RunProcess(
      katrace_test::ToolPath("katrace-sim"), {"--plugin", katrace_test::PluginPath(), "--gpu-jitter", "-1"}, {}, dir_);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("--gpu-jitter"), std::string::npos) << run.err;
}

// KernelStep stamps follow the model too: with the writers on, the bound still covers the truth.
TEST_F(GpuClockSimTest, KernelStepsFollowTheModel) {
  Placement p = Run("offset:-5ms", 0, true);
  EXPECT_GT(p.kernel_chs, 100u);
  EXPECT_GE(p.bound_ns, 0) << p.footer;
  EXPECT_LE(p.max_ns, p.bound_ns + 1000) << p.footer;
}

}  // namespace
