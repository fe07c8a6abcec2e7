// DurationStats and SummaryTable: exact moments, median within 1%, merge = one pass, and the
// Nsight-shaped text/CSV/JSON layout and sort order; BusyTime's union against a direct count;
// ActivitySummary's row names, left-out slices and GPU work shared by several tasks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/activity_summary.h"
#include "common/busy_time.h"
#include "common/summary_table.h"

namespace katrace {
namespace {

double ExactMedian(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (n % 2 == 1) return static_cast<double>(v[n / 2]);
  return (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0;
}

double ExactStddev(const std::vector<uint64_t>& v) {
  if (v.size() < 2) return 0.0;
  long double mean = 0;
  for (uint64_t x : v) mean += x;
  mean /= v.size();
  long double sum = 0;
  for (uint64_t x : v) sum += (x - mean) * (x - mean);
  return static_cast<double>(std::sqrt(sum / (v.size() - 1)));
}

std::vector<uint64_t> RandomDurations(uint32_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  // Log-uniform from 1 ns to ~10 s, the span real slices cover.
  std::uniform_real_distribution<double> exponent(0.0, 10.0);
  std::vector<uint64_t> v;
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<uint64_t>(std::pow(10.0, exponent(rng))));
  return v;
}

TEST(DurationStatsTest, EmptyIsAllZero) {
  DurationStats s;
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.total_ns(), 0u);
  EXPECT_EQ(s.min_ns(), 0u);
  EXPECT_EQ(s.max_ns(), 0u);
  EXPECT_EQ(s.mean_ns(), 0.0);
  EXPECT_EQ(s.stddev_ns(), 0.0);
  EXPECT_EQ(s.median_ns(), 0.0);
}

TEST(DurationStatsTest, ExactCountTotalMinMaxMeanStddev) {
  DurationStats s;
  for (uint64_t x : {2u, 4u, 4u, 4u, 5u, 5u, 7u, 9u}) s.Add(x);
  EXPECT_EQ(s.count(), 8u);
  EXPECT_EQ(s.total_ns(), 40u);
  EXPECT_EQ(s.min_ns(), 2u);
  EXPECT_EQ(s.max_ns(), 9u);
  EXPECT_DOUBLE_EQ(s.mean_ns(), 5.0);
  // Population variance 4, sample variance 32/7.
  EXPECT_DOUBLE_EQ(s.stddev_ns(), std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(s.median_ns(), 4.5);
}

TEST(DurationStatsTest, OneInstanceHasZeroStddevAndExactMedian) {
  DurationStats s;
  s.Add(123456789);
  EXPECT_EQ(s.stddev_ns(), 0.0);
  EXPECT_EQ(s.median_ns(), 123456789.0);
}

TEST(DurationStatsTest, StddevStaysExactWhenMeanDwarfsSpread) {
  // A naive sum-of-squares in double would cancel catastrophically here.
  DurationStats s;
  const uint64_t base = uint64_t{1} << 40;
  for (uint64_t i = 0; i < 1000; ++i) s.Add(base + (i % 2));
  EXPECT_NEAR(s.stddev_ns(), std::sqrt(0.25 * 1000.0 / 999.0), 1e-9);
  EXPECT_DOUBLE_EQ(s.mean_ns(), static_cast<double>(base) + 0.5);
}

TEST(DurationStatsTest, MomentsMatchDirectComputation) {
  const std::vector<uint64_t> v = RandomDurations(7, 5000);
  DurationStats s;
  for (uint64_t x : v) s.Add(x);
  long double sum = 0;
  for (uint64_t x : v) sum += x;
  EXPECT_EQ(s.count(), v.size());
  EXPECT_EQ(s.min_ns(), *std::min_element(v.begin(), v.end()));
  EXPECT_EQ(s.max_ns(), *std::max_element(v.begin(), v.end()));
  EXPECT_NEAR(s.mean_ns(), static_cast<double>(sum / v.size()), 1e-6 * s.mean_ns());
  EXPECT_NEAR(s.stddev_ns(), ExactStddev(v), 1e-9 * ExactStddev(v));
}

TEST(DurationStatsTest, MedianWithinOnePercent) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    const std::vector<uint64_t> v = RandomDurations(seed, 1 + seed * 37);
    DurationStats s;
    for (uint64_t x : v) s.Add(x);
    const double exact = ExactMedian(v);
    EXPECT_LE(std::fabs(s.median_ns() - exact), 0.01 * exact) << "seed " << seed;
  }
}

TEST(DurationStatsTest, MedianIsExactForSmallValues) {
  DurationStats s;
  for (uint64_t x : {3u, 100u, 17u, 127u, 50u}) s.Add(x);
  EXPECT_EQ(s.median_ns(), 50.0);
}

TEST(DurationStatsTest, MergeEqualsAddingAll) {
  const std::vector<uint64_t> v = RandomDurations(11, 3001);
  DurationStats all;
  DurationStats parts[3];
  for (size_t i = 0; i < v.size(); ++i) {
    all.Add(v[i]);
    parts[i % 3].Add(v[i]);
  }
  DurationStats merged;
  merged.Merge(parts[2]);
  merged.Merge(parts[0]);
  merged.Merge(DurationStats());
  merged.Merge(parts[1]);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.total_ns(), all.total_ns());
  EXPECT_EQ(merged.min_ns(), all.min_ns());
  EXPECT_EQ(merged.max_ns(), all.max_ns());
  // Integer moments make the result independent of order, bit for bit.
  EXPECT_EQ(merged.mean_ns(), all.mean_ns());
  EXPECT_EQ(merged.stddev_ns(), all.stddev_ns());
  EXPECT_EQ(merged.median_ns(), all.median_ns());
}

TEST(DurationStatsTest, MedianIsDeterministicAcrossInsertionOrder) {
  std::vector<uint64_t> v = RandomDurations(5, 999);
  DurationStats forward;
  for (uint64_t x : v) forward.Add(x);
  std::reverse(v.begin(), v.end());
  DurationStats backward;
  for (uint64_t x : v) backward.Add(x);
  EXPECT_EQ(forward.median_ns(), backward.median_ns());
}

TEST(SummaryTableTest, SortsByTotalThenInstancesThenName) {
  SummaryTable t("Host-side activity");
  t.Add("b", 500);
  t.Add("b", 500);          // b: total 1000, 2 instances
  t.Add("a", 1000);         // a: total 1000, 1 instance
  t.Add("c", 1000);         // c: total 1000, 1 instance
  t.Add("z", 3000);         // z: biggest total
  const std::string csv = t.ToCsv();
  const size_t z = csv.find(",z\n"), b = csv.find(",b\n"), a = csv.find(",a\n"),
               c = csv.find(",c\n");
  ASSERT_NE(z, std::string::npos);
  EXPECT_LT(z, b);
  EXPECT_LT(b, a);
  EXPECT_LT(a, c);
}

TEST(SummaryTableTest, CsvHasRawNanoseconds) {
  SummaryTable t("GPU-side activity");
  t.Add("KernelCh AllReduce", 1000);
  t.Add("KernelCh AllReduce", 3000);
  t.Add("CollGpu AllReduce", 4000);
  EXPECT_EQ(t.ToCsv(),
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),"
            "Name\n"
            "50.0,4000,2,2000.0,2000.0,1000,3000,1414.2,KernelCh AllReduce\n"
            "50.0,4000,1,4000.0,4000.0,4000,4000,0.0,CollGpu AllReduce\n");
}

TEST(SummaryTableTest, CsvQuotesNamesThatNeedIt) {
  SummaryTable t("x");
  t.Add("a,\"b\"", 1);
  EXPECT_NE(t.ToCsv().find(",\"a,\"\"b\"\"\"\n"), std::string::npos);
}

TEST(SummaryTableTest, JsonRowsParseAndCarryRawNumbers) {
  SummaryTable t("x");
  t.Add("Coll AllReduce", 812);
  t.Add("Coll AllReduce", 1188);
  t.Add("weird \"name\"\n", 10);
  const auto rows = nlohmann::json::parse(t.ToJson());
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["name"], "Coll AllReduce");
  EXPECT_EQ(rows[0]["total_ns"], 2000);
  EXPECT_EQ(rows[0]["instances"], 2);
  EXPECT_EQ(rows[0]["min_ns"], 812);
  EXPECT_EQ(rows[0]["max_ns"], 1188);
  EXPECT_DOUBLE_EQ(rows[0]["avg_ns"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(rows[0]["time_percent"].get<double>(), 99.5);
  EXPECT_EQ(rows[1]["name"], "weird \"name\"\n");
  EXPECT_EQ(nlohmann::json::parse(SummaryTable("e").ToJson()), nlohmann::json::array());
}

// The lines of |text|.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

TEST(SummaryTableTest, TextHasOneUnitPerColumnAlignedColumnsAndThousands) {
  SummaryTable t("Host-side activity", TimeShare::kOfSpan);
  for (int i = 0; i < 1234; ++i) t.Add("Coll AllReduce", i * 20000, 12345);  // 15.233730 ms total
  t.Add("CollApi AllReduce", 0, 812);
  t.Add("Group", 0, 1500000000);
  const std::string text = t.ToText();
  EXPECT_EQ(text.rfind("Host-side activity\n", 0), 0u) << text;
  const std::vector<std::string> lines = Lines(text);
  ASSERT_EQ(lines.size(), 8u) << text;
  // Title, two lines saying what Time (%) and Total mean, header, rule, rows.
  EXPECT_NE(lines[1].find("Time (%) = Busy / span (1.500 s, first start to last end)"), std::string::npos) << text;
  EXPECT_NE(lines[2].find("Total Time = sum of durations"), std::string::npos) << text;
  const std::string& header = lines[3];
  // The column's smallest value picks its unit: Total 812 ns -> ns, Max 812 ns -> ns too.
  EXPECT_NE(header.find("Busy (ns)"), std::string::npos) << text;
  EXPECT_NE(header.find("Total Time (ns)"), std::string::npos) << text;
  EXPECT_NE(header.find("Avg (ns)"), std::string::npos) << text;
  EXPECT_NE(text.find("1,500,000,000"), std::string::npos) << text;
  EXPECT_NE(text.find("15,233,730"), std::string::npos) << text;
  EXPECT_NE(text.find("1,234"), std::string::npos) << text;
  // No unit inside a cell: units are named once, in the header.
  for (size_t i = 5; i < lines.size(); ++i) {
    for (const char* unit : {" ns", " us", " ms", " s "}) {
      EXPECT_EQ(lines[i].find(unit), std::string::npos) << lines[i];
    }
  }
  const size_t name_column = header.find("Name");
  EXPECT_EQ(lines[5].find("Group"), name_column) << text;
  EXPECT_EQ(lines[6].find("Coll AllReduce"), name_column) << text;
  EXPECT_EQ(lines[7].find("CollApi AllReduce"), name_column) << text;
  EXPECT_EQ(header.find("Time (%)"), 1u) << text;
  EXPECT_NE(lines[4].find("--------"), std::string::npos) << text;
}

// Regression: each column picked its own unit, so one row read "Avg (us) 87.643" beside
// "Med (ns) 82,432". The five columns of one instance share the unit of the smallest of them;
// Busy and Total, sums, keep their own.
TEST(SummaryTableTest, TheColumnsOfOneInstanceShareOneUnit) {
  SummaryTable t("GPU-side activity", TimeShare::kOfSpan);
  for (int i = 0; i < 100; ++i) t.Add("KernelCh AllReduce", i * 1000000, 80000 + (i == 0 ? 140000 : 0));
  t.Add("KernelStep Send", 0, 360);  // its Min alone is below a microsecond
  t.Add("KernelStep Send", 2000, 9000);
  const std::vector<std::string> lines = Lines(t.ToText());
  ASSERT_GE(lines.size(), 6u);
  const std::string& header = lines[3];
  for (const char* column : {"Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << " in " << header;
  }
  EXPECT_NE(header.find("Busy (us)"), std::string::npos) << header;  // the KernelStep's 9.36 us
  EXPECT_NE(header.find("Total Time (us)"), std::string::npos) << header;
  EXPECT_NE(lines[5].find("81,400"), std::string::npos) << "the KernelCh's Avg, in ns: " << lines[5];
}

TEST(SummaryTableTest, ColumnUnitFollowsItsSmallestValue) {
  EXPECT_STREQ(UnitForColumn({999.0, 5e9}).name, "ns");
  EXPECT_STREQ(UnitForColumn({1000.0, 5e9}).name, "us");
  EXPECT_STREQ(UnitForColumn({0.0, 2.5e6}).name, "ms");  // zero does not pick the unit
  EXPECT_STREQ(UnitForColumn({1.5e9}).name, "s");
  EXPECT_STREQ(UnitForColumn({}).name, "ns");
  const DurationUnit us = UnitForColumn({1000.0});
  EXPECT_EQ(FormatInUnit(999999, us), "999.999");
  EXPECT_EQ(FormatInUnit(1234567890, us), "1,234,567.890");
  EXPECT_EQ(FormatInUnit(0, us), "0.000");
  const DurationUnit ms = UnitForColumn({1e6});
  EXPECT_EQ(FormatInUnit(999999600, ms), "1,000.000");  // 999.9996 ms, to the nearest us
  EXPECT_EQ(FormatInUnit(1234567890123, ms), "1,234,567.890");
  EXPECT_EQ(FormatInUnit(1499, ms), "0.001");  // rounded to the nearest thousandth
  EXPECT_EQ(FormatInUnit(812.4, UnitForColumn({812})), "812");
}

// The case: five ProxyOps in flight at once over most of a 150 ms run. Summed they make
// 500 ms, yet at most 100 % of the run can have one running.
TEST(SummaryTableTest, ConcurrentSlicesCountOnceInBusyAndTimePercent) {
  SummaryTable t("x", TimeShare::kOfSpan);
  for (int i = 0; i < 5; ++i) t.Add("ProxyOp Recv", i * 1000000, 100000000);
  t.Add("Coll AllReduce", 140000000, 10000000);  // the last 10 ms: span = 0 .. 150 ms
  const auto rows = nlohmann::json::parse(t.ToJson());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["name"], "ProxyOp Recv");
  EXPECT_EQ(rows[0]["total_ns"], 500000000);
  EXPECT_EQ(rows[0]["busy_ns"], 104000000);  // 0 .. 104 ms
  EXPECT_DOUBLE_EQ(rows[0]["time_percent"].get<double>(), 69.3);
  EXPECT_DOUBLE_EQ(rows[1]["time_percent"].get<double>(), 6.7);
  EXPECT_EQ(t.span_ns(), 150000000u);
  EXPECT_NE(t.ToCsv().find("Time (%),Busy (ns),Total Time (ns)"), std::string::npos);
}

TEST(SummaryTableTest, PlainDurationTablesShareTheSumAndSaySo) {
  SummaryTable t("delays");
  t.Add("rank 5", 3000);
  t.Add("rank 1", 1000);
  const std::string text = t.ToText();
  EXPECT_NE(text.find("Time (%) = Total Time / the sum of every row's Total Time"), std::string::npos) << text;
  EXPECT_EQ(text.find("Busy"), std::string::npos) << text;
  const auto rows = nlohmann::json::parse(t.ToJson());
  EXPECT_DOUBLE_EQ(rows[0]["time_percent"].get<double>(), 75.0);
  EXPECT_FALSE(rows[0].contains("busy_ns"));
}

TEST(SummaryTableTest, AddStatsMergesWholeRows) {
  DurationStats s;
  s.Add(10);
  s.Add(30);
  SummaryTable a("x"), b("x");
  a.AddStats("row", s);
  a.Add("row", 20);
  b.Add("row", 10);
  b.Add("row", 30);
  b.Add("row", 20);
  EXPECT_EQ(a.ToCsv(), b.ToCsv());
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(SummaryTable("y").empty());
  EXPECT_NE(SummaryTable("y").ToText().find("(no events)"), std::string::npos);
}

// The union by brute force: every ns of [0, horizon) that some interval covers.
uint64_t DirectUnion(const std::vector<std::pair<int64_t, uint64_t>>& intervals, int64_t horizon) {
  std::vector<bool> covered(static_cast<size_t>(horizon), false);
  for (const auto& [start, dur] : intervals) {
    for (int64_t t = start; t < start + static_cast<int64_t>(dur) && t < horizon; ++t) covered[t] = true;
  }
  return static_cast<uint64_t>(std::count(covered.begin(), covered.end(), true));
}

TEST(BusyTimeTest, UnionMatchesADirectCountInAnyOrder) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    std::vector<std::pair<int64_t, uint64_t>> intervals;
    for (int i = 0; i < 300; ++i) {
      intervals.push_back({static_cast<int64_t>(rng() % 20000), rng() % 200});
    }
    // Sorted by start, then locally shuffled (completion order), then fully shuffled.
    std::sort(intervals.begin(), intervals.end());
    for (int order = 0; order < 3; ++order) {
      if (order == 1) {
        for (size_t i = 0; i + 8 < intervals.size(); i += 8) std::shuffle(intervals.begin() + i, intervals.begin() + i + 8, rng);
      } else if (order == 2) {
        std::shuffle(intervals.begin(), intervals.end(), rng);
      }
      BusyTime busy;
      for (const auto& [start, dur] : intervals) busy.Add(start, dur);
      EXPECT_EQ(busy.busy_ns(), DirectUnion(intervals, 20200)) << "seed " << seed << " order " << order;
      EXPECT_EQ(busy.reached_back(), 0u);
    }
  }
}

TEST(BusyTimeTest, TouchingAndNestedIntervalsMergeAndZeroLengthAddsNothing) {
  BusyTime busy;
  busy.Add(100, 50);   // [100, 150)
  busy.Add(150, 50);   // touches: [100, 200)
  busy.Add(120, 10);   // nested
  busy.Add(300, 0);    // nothing
  busy.Add(50, 300);   // covers everything: [50, 350)
  EXPECT_EQ(busy.busy_ns(), 300u);
  busy.Add(-100, 50);  // before the base: negative starts are times too
  EXPECT_EQ(busy.busy_ns(), 350u);
  busy.Add(INT64_MAX - 10, UINT64_MAX);  // a garbage end is cut at INT64_MAX
  EXPECT_EQ(busy.busy_ns(), 360u);
}

// Memory stays bounded however many slices come: in time order, the union is still exact after
// millions of gaps; a slice reaching back past the kept intervals is measured against the
// settled spill, so it is exact too and nothing is counted as unmeasured.
TEST(BusyTimeTest, MillionsOfSlicesInTimeOrderStayExactAndBounded) {
  BusyTime busy;
  const int64_t n = 3000000;
  for (int64_t i = 0; i < n; ++i) busy.Add(i * 100, 60);  // a 40 ns gap after each
  EXPECT_EQ(busy.busy_ns(), static_cast<uint64_t>(n) * 60);
  EXPECT_EQ(busy.reached_back(), 0u);
  busy.Add(0, 100);  // reaches back over the first gap, settled long ago
  EXPECT_EQ(busy.reached_back(), 0u);
  EXPECT_EQ(busy.deferred(), 1u);
  EXPECT_EQ(busy.busy_ns(), static_cast<uint64_t>(n) * 60 + 40);
  busy.Add(50, 1000000);  // [50, 1000050): the gaps after the 2nd to the 10,000th interval at once
  EXPECT_EQ(busy.busy_ns(), static_cast<uint64_t>(n) * 60 + 40 + 9999 * 40);
}

// Slices of a second file start again at its beginning: every one reaches back, and the union
// is still counted exactly, with no slice reported as unmeasured.
TEST(BusyTimeTest, ASecondFileReachingBackIsExact) {
  std::vector<std::pair<int64_t, uint64_t>> intervals;
  for (int file = 0; file < 2; ++file) {
    for (int64_t i = 0; i < 20000; ++i) intervals.push_back({i * 100 + file * 30, 50});
  }
  BusyTime busy;
  for (const auto& [start, dur] : intervals) busy.Add(start, dur);
  EXPECT_EQ(busy.busy_ns(), DirectUnion(intervals, 20000 * 100));
  EXPECT_EQ(busy.busy_ns(), 20000u * 80);
  EXPECT_EQ(busy.reached_back(), 0u);
}

TEST(RowNameTest, NoWordTwice) {
  EXPECT_EQ(RowName("Group", "Group"), "Group");
  EXPECT_EQ(RowName("GroupApi", "Group"), "GroupApi");
  EXPECT_EQ(RowName("KernelLaunch", "KernelLaunch"), "KernelLaunch");
  EXPECT_EQ(RowName("NetPlugin", "NetPlugin"), "NetPlugin");
  EXPECT_EQ(RowName("ProxyStep", "RecvStep"), "ProxyStep Recv");
  EXPECT_EQ(RowName("ProxyStep", "Step"), "ProxyStep");
  EXPECT_EQ(RowName("ProxyOp", "ProxySend"), "ProxyOp Send");
  EXPECT_EQ(RowName("KernelStepWait", "Send wait"), "KernelStep Send wait");
  EXPECT_EQ(RowName("KernelStepTransfer", "Recv transfer"), "KernelStep Recv transfer");
  // Names that only look alike stay whole.
  EXPECT_EQ(RowName("Coll", "AllReduce"), "Coll AllReduce");
  EXPECT_EQ(RowName("CollApi", "AllGather"), "CollApi AllGather");
  EXPECT_EQ(RowName("ProxyCtrl", "Sleep"), "ProxyCtrl Sleep");
  EXPECT_EQ(RowName("P2p", "Send"), "P2p Send");
  EXPECT_EQ(RowName("GroupApi", "Grouped"), "GroupApi Grouped");
  EXPECT_EQ(RowName("Coll", ""), "Coll");
}

ActivitySlice Slice(const char* cat, const char* name, int64_t start, uint64_t dur, int64_t channel = -1) {
  ActivitySlice s;
  s.category = cat;
  s.name = name;
  s.start_ns = start;
  s.duration_ns = dur;
  s.comm = 0x1234;
  s.rank = 0;
  s.channel = channel;
  return s;
}

nlohmann::json Rows(const SummaryTable& table) { return nlohmann::json::parse(table.ToJson()); }

const nlohmann::json* FindRow(const nlohmann::json& rows, const std::string& name) {
  for (const auto& row : rows) {
    if (row["name"] == name) return &row;
  }
  return nullptr;
}

// NCCL reports the one kernel of a send/recv group for both its tasks: one row, one instance.
TEST(ActivitySummaryTest, GpuWorkSharedByTasksIsCountedOnce) {
  ActivitySummary summary;
  for (int i = 0; i < 10; ++i) {
    for (int ch = 0; ch < 2; ++ch) {
      summary.Add(Slice("KernelCh", "Recv", i * 10000, 4000, ch));  // the Recv's callback first
      summary.Add(Slice("KernelCh", "Send", i * 10000, 4000, ch));
    }
    summary.Add(Slice("CollGpu", "Send", i * 10000, 4000));
    summary.Add(Slice("CollGpu", "Recv", i * 10000, 4000));
    summary.Add(Slice("KernelCh", "AllReduce", i * 10000 + 5000, 3000, 0));  // alone: its own row
  }
  summary.Finish();
  const auto rows = Rows(summary.gpu);
  ASSERT_EQ(rows.size(), 3u) << rows.dump();
  const auto* kernel = FindRow(rows, "KernelCh Send+Recv");
  const auto* extent = FindRow(rows, "CollGpu Send+Recv");
  const auto* allreduce = FindRow(rows, "KernelCh AllReduce");
  ASSERT_TRUE(kernel && extent && allreduce) << rows.dump();
  EXPECT_EQ((*kernel)["instances"], 20);  // 10 kernels x 2 channels, not 40
  EXPECT_EQ((*kernel)["total_ns"], 80000);
  EXPECT_EQ((*extent)["instances"], 10);
  EXPECT_EQ((*allreduce)["instances"], 10);
  // Different stamps are different work, even with the same names.
  ActivitySummary apart;
  apart.Add(Slice("KernelCh", "Send", 0, 4000, 0));
  apart.Add(Slice("KernelCh", "Recv", 1, 4000, 0));
  apart.Finish();
  EXPECT_EQ(Rows(apart.gpu).size(), 2u);
}

// The plugin summarizes slices on its trace's timeline, katrace-stats on realtime: the same slices
// in the same order give the same tables whatever the origin, even when many kernels crowd the
// index: here an alltoall's six tasks per kernel, interleaved over 32 ranks x 4 channels.
TEST(ActivitySummaryTest, TheTablesDoNotDependOnTheTimelinesOrigin) {
  auto run = [](int64_t origin) {
    ActivitySummary summary;
    for (int kernel = 0; kernel < 40; ++kernel) {
      for (int task = 0; task < 6; ++task) {
        for (int rank = 0; rank < 32; ++rank) {
          for (int ch = 0; ch < 4; ++ch) {
            ActivitySlice s = Slice("KernelCh", task % 2 == 0 ? "Send" : "Recv",
                                    origin + kernel * 20000 + ch * 7, 12288 + 1024 * (kernel % 3), ch);
            s.rank = rank;
            summary.Add(s);
          }
        }
      }
    }
    summary.Finish();
    return summary.gpu.ToText();
  };
  const std::string relative = run(0);
  for (int64_t origin : {int64_t{1796139672807797261}, int64_t{123456789}, int64_t{987654321987}}) {
    EXPECT_EQ(run(origin), relative) << "origin " << origin;
  }
  EXPECT_NE(relative.find("KernelCh Send+Recv"), std::string::npos);
}

// The layout may hold one task's lane while others' slices go out: a kernel's two tasks arrive
// thousands of slices apart, and every slice between them must neither hide nor split the pair.
TEST(ActivitySummaryTest, SharersFarApartInTheWindowAreOneInstance) {
  ActivitySummary summary;
  const int between = static_cast<int>(ActivitySummary::kSharedWindow) / 2;
  for (int pair = 0; pair < 8; ++pair) {
    summary.Add(Slice("KernelCh", "Send", pair * 1000000, 48451, 0));
    for (int i = 0; i < between; ++i) {
      ActivitySlice other = Slice("KernelCh", "AllReduce", pair * 1000000 + 100 + i * 10, 7000 + i % 17, i % 8);
      other.rank = i % 5;
      summary.Add(other);
    }
    summary.Add(Slice("KernelCh", "Recv", pair * 1000000, 48451, 0));
  }
  summary.Finish();
  const auto rows = Rows(summary.gpu);
  const auto* pair = FindRow(rows, "KernelCh Send+Recv");
  ASSERT_TRUE(pair != nullptr) << rows.dump();
  EXPECT_EQ((*pair)["instances"], 8);
  EXPECT_EQ(FindRow(rows, "KernelCh Send"), nullptr) << rows.dump();
  EXPECT_EQ(FindRow(rows, "KernelCh Recv"), nullptr) << rows.dump();
  ASSERT_TRUE(FindRow(rows, "KernelCh AllReduce") != nullptr);
  EXPECT_EQ((*FindRow(rows, "KernelCh AllReduce"))["instances"], 8 * between);
}

// Many kernels in flight at once, their tasks' slices shuffled within a stretch shorter than the
// window, with slices leaving the window all the while: every kernel is one instance of the row
// that names its tasks, whatever its key's neighbours in the index.
TEST(ActivitySummaryTest, ShuffledSharersAreEachOneInstanceOfTheirTasksRow) {
  static const char* const kTasks[] = {"Send", "Recv", "AllReduce"};
  std::mt19937 random(7);
  std::map<std::string, int> expected;  // row name -> instances
  std::vector<ActivitySlice> slices;
  for (int kernel = 0; kernel < 60000; ++kernel) {
    // Several kernels share a start, on other ranks (two with one key would be one kernel).
    const int rank = kernel % 64, channel = static_cast<int>(random() % 32);
    const int64_t start = kernel / 7 * 1000;
    const uint64_t duration = 1000 + random() % 3;
    const int mask = 1 + static_cast<int>(random() % 7);  // a non-empty subset of the three tasks
    std::string row = "KernelCh ";
    for (int t = 0; t < 3; ++t) {  // the row names them in descending order: "Send+Recv"
      if ((mask & (1 << t)) == 0) continue;
      if (row.back() != ' ') row += '+';
      row += kTasks[t];
      ActivitySlice s = Slice("KernelCh", kTasks[t], start, duration, channel);
      s.rank = rank;
      slices.push_back(s);
    }
    ++expected[row];
  }
  // Each slice moves ahead by less than a quarter of the window (sorted by its index plus that
  // much): fewer than half a window of slices come between a kernel's first and last.
  const size_t reach = ActivitySummary::kSharedWindow / 4;
  std::vector<std::pair<size_t, size_t>> order;  // (new place, index)
  for (size_t i = 0; i < slices.size(); ++i) order.emplace_back(i + random() % reach, i);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ActivitySlice> shuffled;
  for (const auto& [place, index] : order) shuffled.push_back(slices[index]);
  ActivitySummary summary;
  for (const ActivitySlice& s : shuffled) summary.Add(s);
  summary.Finish();
  std::map<std::string, int> counted;
  for (const auto& row : Rows(summary.gpu)) counted[row["name"].get<std::string>()] = row["instances"].get<int>();
  EXPECT_EQ(counted, expected);
}

// Sharers beyond the window are counted apart (bounded memory), never lost.
TEST(ActivitySummaryTest, SharedWorkWindowIsBoundedAndLosesNothing) {
  ActivitySummary summary;
  const int n = static_cast<int>(ActivitySummary::kSharedWindow) * 4;
  for (int i = 0; i < n; ++i) summary.Add(Slice("KernelCh", "Send", i * 100, 50, 0));
  summary.Finish();
  const auto rows = Rows(summary.gpu);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["instances"], n);
  EXPECT_EQ(rows[0]["busy_ns"], n * 50);
}

TEST(ActivitySummaryTest, SlicesWithoutATrueDurationAreLeftOut) {
  ActivitySummary summary;
  ActivitySlice incomplete = Slice("Coll", "AllReduce", 0, 100);
  incomplete.incomplete = true;
  ActivitySlice host_timed = Slice("KernelCh", "AllReduce", 0, 100, 0);
  host_timed.host_timed = true;
  ActivitySlice abandoned = Slice("KernelStep", "Send", 0, 100, 0);
  abandoned.abandoned = true;
  for (const ActivitySlice& s : {incomplete, host_timed, abandoned}) summary.Add(s);
  summary.Add(Slice("ProxyStepState", "SendWait", 0, 100));  // not summarized
  summary.Add(Slice("flow", "launch", 0, 100));              // not an event kind
  summary.Add(Slice("Coll", "AllReduce", 0, 300));
  summary.Add(Slice("KernelStepWait", "Send wait", 0, 40, 0));
  summary.Finish();
  const auto host = Rows(summary.host);
  ASSERT_EQ(host.size(), 1u) << host.dump();
  EXPECT_EQ(host[0]["name"], "Coll AllReduce");
  EXPECT_EQ(host[0]["instances"], 1);
  const auto gpu = Rows(summary.gpu);
  ASSERT_EQ(gpu.size(), 1u) << gpu.dump();
  EXPECT_EQ(gpu[0]["name"], "KernelStep Send wait");
}

}  // namespace
}  // namespace katrace
