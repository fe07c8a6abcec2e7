// The numbers katrace-stats and the plugin's summary print, checked against values worked out by
// hand from the definitions: bandwidth as nccl-tests computes it (AllGather and ReduceScatter
// carry one rank's share in `bytes`), the halves of an incomplete KernelStep left out with it,
// the text showing the rounding the JSON carries, and durations past 2^63 ns in the text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/activity_summary.h"
#include "common/summary_table.h"
#include "test/support/host_capture.h"
#include "test/support/rank_header.h"
#include "test/support/tool_runner.h"
#include "tools/stats/bandwidth_table.h"
#include "tools/stats/comm_sizes.h"

namespace katrace {
namespace {

using Json = nlohmann::json;
using katrace_test::RunTool;

constexpr uint64_t kComm = 0x6b61747261636572;
constexpr const char* kCommText = "6b61747261636572";

// A katrace JSON trace of one rank, written by hand: the header event, then |events|, then a
// footer declaring the communicator's size when |nranks| > 0.
class TraceFile {
 public:
  explicit TraceFile(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               ("katrace-stats-numbers-" + std::to_string(getpid()) + "-" + name))
                  .string()) {}
  ~TraceFile() { std::remove(path_.c_str()); }

  void Write(int rank, const std::vector<Json>& events, int nranks) const {
    Json header = katrace_test::KatraceRankHeader(rank);
    Json trace = {{"traceEvents", Json::array({header})}};
    for (const Json& e : events) trace["traceEvents"].push_back(e);
    if (nranks > 0) {
      trace["otherData"] = {{"katrace", {{"communicators", Json::array({{{"comm", kCommText}, {"nranks", nranks}}})}}}};
    }
    std::ofstream(path_) << trace.dump();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Json Slice(const std::string& cat, const std::string& name, double ts_us, double dur_us, Json args) {
  return {{"name", name}, {"cat", cat}, {"ph", "X"}, {"pid", 0}, {"tid", 1}, {"ts", ts_us}, {"dur", dur_us},
          {"args", std::move(args)}};
}

Json Stats(const std::string& reports, const std::string& path) {
  const auto run = RunTool("katrace-stats", "--format json --report " + reports + " " + path, false);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  return Json::parse(run.output);
}

std::string StatsText(const std::string& reports, const std::string& path) {
  const auto run = RunTool("katrace-stats", "--report " + reports + " " + path, false);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  return run.output;
}

// nccl-tests: AlgBW = size / time with size the whole buffer (nranks x the per-rank count for
// all_gather, reduce_scatter, alltoall, gather and scatter), BusBW = AlgBW x (n-1)/n for those.
// NCCL's Coll count, and so the trace's `bytes`, is one rank's share for them: AllGather's
// sendcount, ReduceScatter's recvcount, AlltoAll's count per peer, Gather's and Scatter's count
// per rank. Broadcast and Reduce move the whole buffer once (factor 1).
TEST(StatsNumbersTest, TheCollectivesThatCountOneShareHaveTheirBandwidthOfTheWholeBuffer) {
  tools::BandwidthTable table;
  const uint64_t share = 256 << 10;  // one rank's 256 KiB of a 1 MiB buffer over 4 ranks
  const std::set<std::string> one_share = {"AllGather", "ReduceScatter", "AlltoAll", "Gather", "Scatter"};
  for (const std::string& func : one_share) {
    table.Add(func, share, kComm, 40000);
    table.Add(func, share, kComm, 60000);  // mean 50 us
  }
  for (const char* func : {"AllReduce", "Broadcast", "Reduce"}) table.Add(func, 1 << 20, kComm, 50000);
  table.Add("Send", share, kComm, 50000);
  tools::CommSizes sizes;
  sizes.SetFromFooter(kComm, 4);
  const auto rows = table.Rows(sizes);
  ASSERT_EQ(rows.size(), one_share.size() + 4);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.func);
    const bool counts_share = one_share.count(row.func) != 0;
    const double whole = counts_share ? 4.0 * share : static_cast<double>(row.bytes);
    ASSERT_TRUE(row.has_algbw);
    ASSERT_TRUE(row.has_busbw);
    EXPECT_DOUBLE_EQ(row.algbw_gbps, whole / 50000);
    const double factor = row.func == "AllReduce" ? 2.0 * 3 / 4 : counts_share ? 3.0 / 4 : 1.0;
    EXPECT_DOUBLE_EQ(row.busbw_gbps, whole / 50000 * factor);
  }
  // Without the communicator's size an AllGather's size is unknown: no number rather than a
  // wrong one. A zero GPU time gives no bandwidth either (it would be infinite, not 0).
  tools::BandwidthTable unknown;
  unknown.Add("AllGather", share, kComm, 50000);
  unknown.Add("AllReduce", 1 << 20, kComm, 0);
  for (const auto& row : unknown.Rows(tools::CommSizes())) {
    SCOPED_TRACE(row.func);
    EXPECT_FALSE(row.has_algbw);
    EXPECT_FALSE(row.has_busbw);
  }
}

// The same through katrace-stats on a trace: JSON and text carry the nccl-tests numbers.
TEST(StatsNumbersTest, StatsPrintsNcclTestsBandwidthForAllGather) {
  TraceFile file("allgather.json");
  std::vector<Json> events;
  for (int i = 0; i < 2; ++i) {
    events.push_back(Slice("Coll", "AllGather", 100.0 * i, 80.0,
                           {{"id", i + 1}, {"comm", kCommText}, {"rank", 0}, {"func", "AllGather"},
                            {"seq", i}, {"bytes", 262144}, {"algo", "RING"}, {"proto", "SIMPLE"},
                            {"gpu_start", 100.0 * i + 10}, {"gpu_end", 100.0 * i + 10 + 65.536}}));
  }
  file.Write(0, events, 4);
  const Json stats = Stats("bw", file.path());
  ASSERT_EQ(stats["bandwidth"].size(), 1u) << stats.dump();
  const Json& row = stats["bandwidth"][0];
  EXPECT_EQ(row["nranks"], 4);
  // 1 MiB in 65,536 ns: 16 GB/s; busbw x 3/4.
  EXPECT_DOUBLE_EQ(row["algbw_gbps"].get<double>(), 16.0);
  EXPECT_DOUBLE_EQ(row["busbw_gbps"].get<double>(), 12.0);
  const std::string text = StatsText("bw", file.path());
  EXPECT_NE(text.find("16.00         12.00"), std::string::npos) << text;
}

// Regression: each duration column of the bandwidth table chose its own unit, so an average of
// 2 us printed as "Avg (us) 2.033" beside "Med (ns) 600"; the two now share one. The formulas
// are under the title (in CSV as comment lines), not in a title line of 270 characters.
TEST(StatsNumbersTest, TheBandwidthTablesTimesShareOneUnitAndItsFormulasFollowTheTitle) {
  TraceFile file("allgather-units.json");
  std::vector<Json> events;
  const double gpu_us[] = {0.5, 0.6, 5.0};
  for (int i = 0; i < 3; ++i) {
    events.push_back(Slice("Coll", "AllGather", 100.0 * i, 80.0,
                           {{"id", i + 1}, {"comm", kCommText}, {"rank", 0}, {"func", "AllGather"},
                            {"seq", i}, {"bytes", 262144}, {"algo", "RING"}, {"proto", "SIMPLE"},
                            {"gpu_start", 100.0 * i + 10}, {"gpu_end", 100.0 * i + 10 + gpu_us[i]}}));
  }
  file.Write(0, events, 4);
  const std::string text = StatsText("bw", file.path());
  EXPECT_NE(text.find("Avg (ns)  Med (ns)"), std::string::npos) << text;
  EXPECT_NE(text.find("2,033  "), std::string::npos) << "the mean, 2,033 ns: " << text;
  EXPECT_NE(text.find("as nccl-tests computes it\n AlgBW = size / mean GPU time"), std::string::npos) << text;
  const auto csv = RunTool("katrace-stats", "--format csv --report bw " + file.path(), false);
  EXPECT_NE(csv.output.find("as nccl-tests computes it\n# AlgBW = size / mean GPU time"), std::string::npos)
      << csv.output;
  EXPECT_NE(csv.output.find("\n# BusBW = AlgBW x 2(n-1)/n"), std::string::npos) << csv.output;
}

// A collective whose GPU time is 0 has no bandwidth: "n/a" in the text, null in JSON and an empty
// cell in CSV (the CSV had the word null in it).
TEST(StatsNumbersTest, ABandwidthWithoutANumberIsAnEmptyCsvCell) {
  TraceFile file("allgather-no-time.json");
  file.Write(0,
             {Slice("Coll", "AllGather", 0.0, 80.0,
                    {{"id", 1}, {"comm", kCommText}, {"rank", 0}, {"func", "AllGather"}, {"seq", 0},
                     {"bytes", 262144}, {"algo", "RING"}, {"proto", "SIMPLE"}, {"gpu_start", 10.0},
                     {"gpu_end", 10.0}})},
             4);
  const Json stats = Stats("bw", file.path());
  ASSERT_EQ(stats["bandwidth"].size(), 1u) << stats.dump();
  EXPECT_TRUE(stats["bandwidth"][0]["algbw_gbps"].is_null()) << stats.dump();
  const auto run = RunTool("katrace-stats", "--format csv --report bw " + file.path(), false);
  EXPECT_EQ(run.output.find("null"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(",,"), std::string::npos) << run.output;
}

// NCCL's KernelStep whose stop never came (a hang, a job killed): the exporter marks the step
// incomplete and draws its halves right after it, without the flag. The per-channel and per-peer
// tables leave out both halves; the GPU-side table must too, or it counts one more transfer than
// steps, with a zero-length one dragging Min and Med down.
TEST(StatsNumbersTest, HalvesOfAnIncompleteKernelStepAreLeftOutWithIt) {
  auto step = [](int id, double ts, bool incomplete) {
    Json args = {{"id", id},       {"parent", 100}, {"comm", kCommText},     {"rank", 0},
                 {"channel", 0},   {"send", true},  {"peer", 1},             {"step", id},
                 {"size", 65536},  {"gpu_start_ns", 1700000000000000000 + int64_t(ts * 1000)},
                 {"gpu_ready_ns", 1700000000000000000 + int64_t(ts * 1000) + 1000}};
    if (incomplete) {
      args["incomplete"] = true;
    } else {
      args["gpu_stop_ns"] = 1700000000000000000 + int64_t(ts * 1000) + 3000;
    }
    return std::vector<Json>{
        Slice("KernelStep", "Send", ts, incomplete ? 1.0 : 3.0, args),
        Slice("KernelStepWait", "Send wait", ts, 1.0, {{"kernel_step", id}}),
        Slice("KernelStepTransfer", "Send transfer", ts + 1, incomplete ? 0.0 : 2.0, {{"kernel_step", id}})};
  };
  TraceFile file("incomplete-step.json");
  std::vector<Json> events;
  for (int i = 0; i < 3; ++i) {
    for (const Json& e : step(10 + i, 10.0 * i, i == 2)) events.push_back(e);
  }
  file.Write(0, events, 2);
  const Json stats = Stats("gpu,channel", file.path());
  std::map<std::string, Json> gpu;
  for (const Json& row : stats["gpu"]) gpu[row["name"]] = row;
  ASSERT_EQ(gpu.size(), 3u) << stats["gpu"].dump();
  EXPECT_EQ(gpu["KernelStep Send"]["instances"], 2);
  EXPECT_EQ(gpu["KernelStep Send wait"]["instances"], 2);
  EXPECT_EQ(gpu["KernelStep Send transfer"]["instances"], 2);
  EXPECT_EQ(gpu["KernelStep Send transfer"]["min_ns"], 2000);
  // The GPU-side halves and the per-channel tables count the same steps.
  ASSERT_EQ(stats["kernelstep_transfer_per_channel"].size(), 1u);
  EXPECT_EQ(stats["kernelstep_transfer_per_channel"][0]["instances"], 2);
  EXPECT_EQ(stats["kernelstep_wait_per_channel"][0]["instances"], 2);

  // The summary alone, as the plugin feeds it: a half only follows its own step.
  ActivitySummary summary;
  ActivitySlice incomplete;
  incomplete.category = "KernelStep";
  incomplete.name = "Send";
  incomplete.incomplete = true;
  incomplete.id = 7;
  ActivitySlice half;
  half.category = "KernelStepTransfer";
  half.name = "Send transfer";
  half.duration_ns = 5;
  half.owner = 7;
  summary.Add(incomplete);
  summary.Add(half);
  ActivitySlice other;
  other.category = "Coll";
  other.name = "AllReduce";
  other.duration_ns = 9;
  summary.Add(other);
  summary.Add(half);  // owner 7 again, but not after its step: counted
  summary.Finish();
  const Json rows = Json::parse(summary.gpu.ToJson());
  ASSERT_EQ(rows.size(), 1u) << rows.dump();
  EXPECT_EQ(rows[0]["instances"], 1);
}

// The slowest-link share was rounded twice: to_chars in the text (a tie to even: 6.25 -> 6.2) and
// std::round in the JSON (6.3). One of 16 instances is 6.25 %: both must say the same.
TEST(StatsNumbersTest, SlowestLinkShareTextEqualsJson) {
  TraceFile file("links.json");
  std::vector<Json> events;
  int id = 1000;
  for (int instance = 0; instance < 16; ++instance) {
    const int coll = instance + 1;
    const double t = 100.0 * instance;
    for (int ch = 0; ch < 2; ++ch) {
      // Channel 1 is slower in the first instance only.
      const int64_t transfer = (ch == 1) == (instance == 0) ? 3000 : 2000;
      const int64_t start = 1700000000000000000 + static_cast<int64_t>(t * 1000);
      events.push_back(Slice("KernelStep", "Send", t, transfer / 1000.0,
                             {{"id", id++}, {"parent", coll}, {"comm", kCommText}, {"rank", 0},
                              {"channel", ch}, {"send", true}, {"peer", 1}, {"step", 0},
                              {"size", 4096}, {"gpu_start_ns", 0}, {"gpu_ready_ns", start},
                              {"gpu_stop_ns", start + transfer}}));
    }
    events.push_back(Slice("Coll", "AllReduce", t, 50.0,
                           {{"id", coll}, {"comm", kCommText}, {"rank", 0}, {"func", "AllReduce"},
                            {"seq", instance}, {"bytes", 4096}, {"algo", "RING"}, {"proto", "LL"}}));
  }
  file.Write(0, events, 2);
  const Json stats = Stats("straggler", file.path());
  const Json* ch1 = nullptr;
  for (const Json& row : stats["slowest_channels"]) {
    if (row["link"] == "rank 0 send ch 1") ch1 = &row;
  }
  ASSERT_NE(ch1, nullptr) << stats["slowest_channels"].dump();
  EXPECT_EQ((*ch1)["instances"], 16);
  EXPECT_DOUBLE_EQ((*ch1)["slowest_share"].get<double>(), 6.3);
  const std::string text = StatsText("straggler", file.path());
  const size_t line = text.find("rank 0 send ch 1");
  ASSERT_NE(line, std::string::npos) << text;
  std::istringstream row(text.substr(text.rfind('\n', line) + 1));
  std::string first_cell;
  row >> first_cell;
  EXPECT_EQ(first_cell, "6.3") << text;
}

// --align-hosts: host beta's clock is 3 ms behind alpha's, and every collective starts at the same
// true time on both ranks. As recorded, beta's rank seems to arrive 3 ms early at each, alpha's a
// 3 ms straggler (and a note says the hosts' clocks were compared as they are); aligned on the
// collectives' GPU ends, neither is late.
TEST(StatsNumbersTest, AlignHostsComparesTheRanksOfTwoHostsOnOneClock) {
  const std::string dir = ::testing::TempDir() + "/katrace-stats-align-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::vector<int> seqs = {0, 1, 2, 3, 4, 5};
  auto none = [](int) { return int64_t{0}; };
  katrace_test::WriteHostCapture(dir + "/a.json", 1700000000000000000, "alpha", 0, 0, kCommText, seqs, none);
  katrace_test::WriteHostCapture(dir + "/b.json", 1700000000000000000, "beta", 1, 3000000, kCommText, seqs, none);
  const std::string files = " " + dir + "/a.json " + dir + "/b.json";

  const auto recorded = RunTool("katrace-stats", "--report straggler --format json" + files, false);
  ASSERT_EQ(recorded.exit_code, 0) << recorded.output;
  const Json as_recorded = Json::parse(recorded.output);
  ASSERT_EQ(as_recorded["straggler_delay_per_rank"].size(), 1u) << as_recorded.dump();
  EXPECT_EQ(as_recorded["straggler_delay_per_rank"][0]["name"], "rank 0");
  EXPECT_EQ(as_recorded["straggler_delay_per_rank"][0]["avg_ns"], 3000000.0);
  const auto noted = RunTool("katrace-stats", "--report straggler" + files);  // stdout and stderr
  EXPECT_NE(noted.output.find("compares ranks of 2 hosts, each on its own clock"), std::string::npos) << noted.output;

  const auto aligned = RunTool("katrace-stats", "--report straggler --format json --align-hosts" + files, false);
  ASSERT_EQ(aligned.exit_code, 0) << aligned.output;
  const Json stats = Json::parse(aligned.output);
  for (const Json& row : stats["straggler_delay_per_rank"]) EXPECT_EQ(row["avg_ns"], 0.0) << row.dump();
  for (const Json& instance : stats["worst_instances"]) EXPECT_EQ(instance["delay_ns"], 0) << instance.dump();
  const auto said = RunTool("katrace-stats", "--report straggler --align-hosts" + files);
  EXPECT_NE(said.output.find("host beta moved by +3.000 ms onto the clock of alpha"), std::string::npos) << said.output;
  EXPECT_EQ(said.output.find("each on its own clock"), std::string::npos) << said.output;
  std::filesystem::remove_all(dir);
}

// Files whose clock bases lie further apart than an int64_t of ns (hostile headers): a straggler
// delay between them is held at INT64_MAX ns instead of overflowing (the sanitizer builds run
// the tool), with or without --align-hosts, which cannot align them.
TEST(StatsNumbersTest, ArrivalsFurtherApartThanAnInt64HoldTheirDelayAtItsMaximum) {
  const std::string dir = ::testing::TempDir() + "/katrace-stats-far-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::vector<int> seqs = {0, 1, 2};
  auto none = [](int) { return int64_t{0}; };
  katrace_test::WriteHostCapture(dir + "/a.json", 4000000000000000000, "alpha", 0, -5000000000000000000, kCommText,
                                 seqs, none);
  katrace_test::WriteHostCapture(dir + "/b.json", 4000000000000000000, "beta", 1, 9000000000000000000, kCommText,
                                 seqs, none);
  for (const std::string align : {"", " --align-hosts"}) {
    const auto run =
        RunTool("katrace-stats", "--report straggler --format json" + align + " " + dir + "/a.json " + dir + "/b.json",
                false);
    ASSERT_EQ(run.exit_code, align.empty() ? 0 : 1) << align << ": " << run.output;
    const Json stats = Json::parse(run.output);
    ASSERT_FALSE(stats["worst_instances"].empty()) << stats.dump();
    EXPECT_EQ(stats["worst_instances"][0]["delay_ns"], INT64_MAX) << align;
  }
  std::filesystem::remove_all(dir);
}

// A sum of durations past 2^63 ns (two garbage slices of 8e18 ns) is beyond llround: the text
// printed INT64_MAX where CSV and JSON had the true total.
TEST(StatsNumbersTest, DurationsPastInt64PrintTheirTrueValue) {
  const DurationUnit seconds = UnitForColumn({1e9});
  ASSERT_STREQ(seconds.name, "s");
  EXPECT_EQ(FormatInUnit(1.6e19, seconds), "16,000,000,000.000");
  EXPECT_EQ(FormatInUnit(1.8446744073709552e19, seconds), "18,446,744,073.710");
  EXPECT_EQ(FormatInUnit(1e30, seconds), "18,446,744,073.710");  // held at UINT64_MAX ns
  // Ordinary values round half up at the unit's thousandth, as before.
  const DurationUnit us = UnitForColumn({1000});
  EXPECT_EQ(FormatInUnit(1234.5, us), "1.235");
  EXPECT_EQ(FormatInUnit(1999999.5, us), "2,000.000");
  EXPECT_EQ(FormatInUnit(0.4, UnitForColumn({0.4})), "0");
  SummaryTable table("t", TimeShare::kOfSpan);
  table.Add("AllReduce", 0, 8000000000000000000);
  table.Add("AllReduce", 1000, 8000000000000000000);
  EXPECT_NE(table.ToText().find("16,000,000,000.000"), std::string::npos) << table.ToText();
}

}  // namespace
}  // namespace katrace
