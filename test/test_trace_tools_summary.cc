// DurationStats and SummaryTable: exact moments, median within 1%, merge = one pass, and the
// Nsight-shaped text/CSV/JSON layout and sort order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

TEST(SummaryTableTest, TextUsesReadableUnitsAlignedColumnsAndThousands) {
  SummaryTable t("Host-side activity");
  for (int i = 0; i < 1234; ++i) t.Add("Coll AllReduce", 12345);  // 15.233730 ms total
  t.Add("CollApi AllReduce", 812);
  t.Add("Group Group", 1500000000);
  const std::string text = t.ToText();
  EXPECT_EQ(text.rfind("Host-side activity\n", 0), 0u) << text;
  EXPECT_NE(text.find("1,234"), std::string::npos) << text;
  EXPECT_NE(text.find("12.345 us"), std::string::npos) << text;
  EXPECT_NE(text.find("15.234 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("812 ns"), std::string::npos) << text;
  EXPECT_NE(text.find("1.500 s"), std::string::npos) << text;
  // Every line after the title has the Name column starting at the same offset.
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), 6u) << text;
  const size_t name_column = lines[1].find("Name");
  EXPECT_EQ(lines[3].find("Group Group"), name_column) << text;
  EXPECT_EQ(lines[4].find("Coll AllReduce"), name_column) << text;
  EXPECT_EQ(lines[5].find("CollApi AllReduce"), name_column) << text;
  EXPECT_EQ(lines[1].find("Time (%)"), 1u) << text;
  EXPECT_NE(lines[2].find("--------"), std::string::npos) << text;
}

TEST(SummaryTableTest, UnitSwitchNeverPrintsAThousand) {
  SummaryTable t("x");
  t.Add("a", 999999);     // 999.999 us
  t.Add("b", 999999600);  // rounds up to 1.000 s, not 1000.000 ms
  t.Add("c", 999);        // 999 ns
  const std::string text = t.ToText();
  EXPECT_NE(text.find("999.999 us"), std::string::npos) << text;
  EXPECT_NE(text.find("1.000 s"), std::string::npos) << text;
  EXPECT_NE(text.find("999 ns"), std::string::npos) << text;
  EXPECT_EQ(text.find("1000.000"), std::string::npos) << text;
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

}  // namespace
}  // namespace katrace
