// Rank identity in the tools: each rank is its own Perfetto process (pid = its global rank), one
// file may hold several (two ranks in one OS process), and merged files hold many. katrace-stats
// counts and names ranks by pid, with the communicator rank only where it differs; katrace-merge
// never drops a file of another process for a pid it shares with an earlier input: it moves that
// rank to a free pid and says so, one line per move, naming both files. Hand-made traces from
// test/support/synthetic_trace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/support/subprocess.h"
#include "test/support/synthetic_trace.h"
#include "test/support/tool_runner.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {
namespace {

namespace fs = std::filesystem;
using katrace_test::RunTool;
using katrace_test::SyntheticRankOptions;
using katrace_test::ToolResult;
using katrace_test::WriteSyntheticProcessTraceFile;

struct Events : TraceVisitor {
  std::vector<Json> all;
  Json other;
  bool OnEvent(const TraceEvent& event) override {
    all.push_back(event.json);
    return true;
  }
  void OnOtherData(const Json& other_data) override { other = other_data; }
  std::set<int64_t> Pids() const {
    std::set<int64_t> pids;
    for (const Json& e : all) pids.insert(e["pid"].get<int64_t>());
    return pids;
  }
  size_t Count(const std::string& cat) const {
    size_t n = 0;
    for (const Json& e : all) n += e.value("cat", "") == cat;
    return n;
  }
};

Events Read(const std::string& path) {
  Events events;
  const ReadResult r = ReadTrace(path, &events);
  EXPECT_EQ(r.status, ReadStatus::kOk) << path << ": " << r.message;
  return events;
}

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class IdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/katrace-identity-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Rank |rank| of an |nranks|-rank job, in a process of its own on its own host.
  static SyntheticRankOptions Rank(int64_t rank, int64_t nranks) {
    SyntheticRankOptions o;
    o.rank = rank;
    o.nranks = nranks;
    o.host = "node" + std::to_string(rank);
    o.os_pid = 1000 + rank;
    o.base_realtime_ns = 1700000000000000000 + rank * 1000;
    o.num_colls = 3;
    o.channels = 1;
    o.steps = 1;
    o.arrival_delay_ns = rank == 1 ? 7000 : 0;
    o.max_arrival_delay_ns = 7000;
    return o;
  }

  // Ranks 0 and 1 of one process (one host, OS pid and clock base), pids 0 and 1.
  static std::vector<SyntheticRankOptions> OneProcessOfTwoRanks() {
    SyntheticRankOptions r0 = Rank(0, 2), r1 = Rank(1, 2);
    r1.host = r0.host;
    r1.os_pid = r0.os_pid;
    r1.base_realtime_ns = r0.base_realtime_ns;
    r0.pid = 0;
    r1.pid = 1;
    return {r0, r1};
  }

  // Rank 1 of another process and communicator: its pid is that of OneProcessOfTwoRanks's rank 1.
  static SyntheticRankOptions StrayRankOne() {
    SyntheticRankOptions stray = Rank(1, 2);
    stray.comm_hash = 0x5555666677778888;
    return stray;
  }

  std::string Write(const std::string& name, const std::vector<SyntheticRankOptions>& ranks) {
    const std::string path = (dir_ / name).string();
    std::string error;
    EXPECT_TRUE(WriteSyntheticProcessTraceFile(path, ranks, &error)) << error;
    return path;
  }

  Json Stats(const std::string& args) {  // the JSON report on stdout; notes go to stderr
    const ToolResult r = RunTool("katrace-stats", "--format json " + args, false);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return Json::parse(r.output, nullptr, false);
  }

  fs::path dir_;
};

// Two ranks of one OS process in one file: two pids, "2 ranks", and the straggler report names
// them by pid, without a comm rank that only repeats it.
TEST_F(IdentityTest, StatsNamesTheRanksOfOneProcessFile) {
  SyntheticRankOptions second = Rank(1, 2);
  SyntheticRankOptions first = Rank(0, 2);
  second.host = first.host;
  second.os_pid = first.os_pid;
  second.base_realtime_ns = first.base_realtime_ns;
  second.comm_hash = first.comm_hash;
  first.pid = 0;
  second.pid = 1;
  const std::string path = Write("both.json", {first, second});
  EXPECT_EQ(Read(path).Pids(), (std::set<int64_t>{0, 1}));
  const ToolResult text = RunTool("katrace-stats", "--report straggler " + path);
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("1 file (0 with problems), 2 ranks,"), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find("comm rank"), std::string::npos) << text.output;
  const Json stats = Stats("--report straggler " + path);
  EXPECT_EQ(stats["inputs"]["ranks"], Json::array({0, 1}));
  EXPECT_EQ(stats["straggler_instances"]["seen_on_2_or_more_ranks"], 3);
  ASSERT_EQ(stats["worst_instances"].size(), 3u);
  EXPECT_EQ(stats["worst_instances"][0]["last"], "rank 1");
  EXPECT_EQ(stats["worst_instances"][0]["first"], "rank 0");
}

// A sub-communicator's rank differs from the global one: the label gives both, the pid first.
TEST_F(IdentityTest, StragglerLabelGivesTheCommRankOnlyWhereItDiffers) {
  SyntheticRankOptions a = Rank(0, 2), b = Rank(1, 2);
  a.pid = 4;  // global ranks 4 and 5 are ranks 0 and 1 of this communicator
  b.pid = 5;
  const std::string pa = Write("r4.json", {a}), pb = Write("r5.json", {b});
  const Json stats = Stats("--report straggler " + pa + " " + pb);
  EXPECT_EQ(stats["inputs"]["ranks"], Json::array({4, 5}));
  EXPECT_EQ(stats["worst_instances"][0]["last"], "rank 5 (comm rank 1)");
  EXPECT_EQ(stats["worst_instances"][0]["first"], "rank 4 (comm rank 0)");
}

// The merged file of two separate ranks is still two ranks.
TEST_F(IdentityTest, StatsCountsTheRanksOfAMergedFile) {
  const std::string a = Write("a.json", {Rank(0, 2)}), b = Write("b.json", {Rank(1, 2)});
  const std::string merged = (dir_ / "m.json").string();
  const ToolResult merge = RunTool("katrace-merge", "-o " + merged + " " + a + " " + b);
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  const ToolResult text = RunTool("katrace-stats", merged);
  EXPECT_NE(text.output.find("1 file (0 with problems), 2 ranks,"), std::string::npos) << text.output;
  EXPECT_EQ(Stats("--report straggler " + merged)["straggler_instances"]["seen_on_2_or_more_ranks"], 3);
}

// Two processes whose traces both say pid 0 (old traces named the process by its first
// communicator's rank): both are merged, the second moves to a free pid, and the merge says
// which file is which, once.
TEST_F(IdentityTest, MergeMovesACollidingPidInsteadOfDroppingAFile) {
  SyntheticRankOptions other = Rank(0, 2);
  other.host = "node9";
  other.os_pid = 9999;
  other.comm_hash = 0x1111222233334444;
  const std::string a = Write("a.json", {Rank(0, 2)}), b = Write("b.json", {Rank(1, 2)});
  const std::string c = Write("c.json", {other});
  const std::string merged = (dir_ / "m.json").string();
  const ToolResult merge = RunTool("katrace-merge", "-o " + merged + " " + a + " " + b + " " + c);
  EXPECT_EQ(merge.exit_code, 0) << merge.output;
  EXPECT_EQ(merge.output.find("left out"), std::string::npos) << merge.output;
  EXPECT_EQ(Occurrences(merge.output, "pid 0 is in"), 1u) << merge.output;
  EXPECT_NE(merge.output.find("pid 0 is in " + a + " (node0, os pid 1000) and in " + c +
                              " (node9, os pid 9999): " + a + " keeps pid 0; " + c +
                              "'s pid 0 is pid 2 in the merged trace"),
            std::string::npos)
      << merge.output;
  const Events out = Read(merged);
  EXPECT_EQ(out.Pids(), (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(out.Count("Coll"), 9u);
  const Json& inputs = out.other["katrace"]["inputs"];
  ASSERT_EQ(inputs.size(), 3u);
  for (const Json& input : inputs) {
    if (input["file"] == c) {
      EXPECT_EQ(input["pid_remap"], Json::parse(R"([{"from":0,"to":2}])")) << input.dump();
      EXPECT_EQ(input["pids"], Json::array({2}));
    } else {
      EXPECT_FALSE(input.contains("pid_remap")) << input.dump();
    }
  }
  EXPECT_EQ(out.other["katrace"]["ranks"], Json::array({0, 1, 2}));
  // The moved rank's own header says where it went; flows stay paired within each file.
  for (const Json& e : out.all) {
    if (e.value("name", "") == "process_name" && e["args"].contains("katrace") && e["pid"] == 2) {
      EXPECT_EQ(e["args"]["katrace"]["rank"], 2) << e.dump();
    }
  }
  const ToolResult check = RunTool("katrace-check", merged);
  EXPECT_EQ(check.exit_code, 0) << check.output;
  const ToolResult stats = RunTool("katrace-stats", merged);
  EXPECT_NE(stats.output.find("3 ranks,"), std::string::npos) << stats.output;
}

// A file of two ranks against a file that claims one of its pids: only that rank moves, and a
// later merge of the merged file keeps everything apart.
TEST_F(IdentityTest, MergeMovesOnlyTheRankThatCollides) {
  const std::string both = Write("both.json", OneProcessOfTwoRanks());
  const SyntheticRankOptions stray = StrayRankOne();
  const std::string lone = Write("lone.json", {stray});
  const std::string merged = (dir_ / "m.json").string();
  const ToolResult merge = RunTool("katrace-merge", "-o " + merged + " " + both + " " + lone);
  EXPECT_EQ(merge.exit_code, 0) << merge.output;
  EXPECT_EQ(Occurrences(merge.output, " is in "), 1u) << merge.output;
  EXPECT_NE(merge.output.find("pid 1 is in " + both), std::string::npos) << merge.output;
  const Events out = Read(merged);
  EXPECT_EQ(out.Pids(), (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(out.Count("Coll"), 9u);
  // Merging the merged trace with another copy of the lone rank's process moves it again.
  SyntheticRankOptions again = stray;
  again.host = "node7";
  const std::string third = Write("third.json", {again});
  const std::string twice = (dir_ / "m2.json").string();
  const ToolResult merge2 = RunTool("katrace-merge", "-o " + twice + " " + merged + " " + third);
  EXPECT_EQ(merge2.exit_code, 0) << merge2.output;
  const Events out2 = Read(twice);
  EXPECT_EQ(out2.Pids(), (std::set<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(out2.Count("Coll"), 12u);
  EXPECT_NE(merge2.output.find("pid 1 is in " + merged), std::string::npos) << merge2.output;
  const ToolResult check = RunTool("katrace-check", twice);
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

// A merged trace merged again beside one of its own inputs: that input's ranks are already in it
// and are left out (before, they came in a second time, each moved to a free pid), whatever the
// order on the command line, through a pid the first merge moved, through a merge of a merge, from
// a .pftrace, and between two merged traces. A rank the merged trace does not hold still comes in.
TEST_F(IdentityTest, MergeLeavesOutRanksAMergedInputAlreadyHolds) {
  const std::string both = Write("both.json", OneProcessOfTwoRanks());
  const SyntheticRankOptions stray = StrayRankOne();
  const std::string lone = Write("lone.json", {stray});
  const std::string merged = (dir_ / "m.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-o " + merged + " " + both + " " + lone).exit_code, 0);
  ASSERT_EQ(Read(merged).Pids(), (std::set<int64_t>{0, 1, 2}));  // lone's pid 1 moved to 2

  auto merge = [&](const std::string& name, const std::string& args, size_t moves = 0) {
    const std::string out = (dir_ / name).string();
    const ToolResult r = RunTool("katrace-merge", "-o " + out + " " + args);
    EXPECT_EQ(r.exit_code, 1) << "the merged trace is not all of its inputs: " << r.output;
    EXPECT_EQ(Occurrences(r.output, " is in "), moves) << "ranks moved to a free pid: " << r.output;
    return std::make_pair(Read(out), r.output);
  };
  for (const std::string& args : {merged + " " + both, both + " " + merged}) {
    const auto [out, said] = merge("again.json", args);
    EXPECT_EQ(out.Pids(), (std::set<int64_t>{0, 1, 2})) << args;
    EXPECT_EQ(out.Count("Coll"), 9u) << args;
    EXPECT_NE(said.find(both + ": rank 0 (node0, os pid 1000) is already in " + merged + "; left out"),
              std::string::npos)
        << said;
    EXPECT_NE(said.find(both + ": rank 1 (node0, os pid 1000) is already in " + merged + "; left out"),
              std::string::npos)
        << said;
  }
  {
    const auto [out, said] = merge("moved.json", merged + " " + lone);
    EXPECT_EQ(out.Pids(), (std::set<int64_t>{0, 1, 2}));
    EXPECT_EQ(out.Count("Coll"), 9u);
    EXPECT_NE(said.find(lone + ": rank 1 (node1, os pid 1001) is already in"), std::string::npos) << said;
  }
  // A merge of the merged trace, then that beside the lone rank.
  SyntheticRankOptions third = stray;
  third.host = "node7";
  const std::string nested = (dir_ / "nested.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-o " + nested + " " + merged + " " + Write("third.json", {third}))
                .exit_code,
            0);
  {
    const auto [out, said] = merge("deep.json", nested + " " + lone);
    EXPECT_EQ(out.Pids(), (std::set<int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(out.Count("Coll"), 12u);
  }
  // Two merged traces that share the lone rank: the first keeps it, the second's pid of it is
  // left out and the rest of the second comes in.
  const std::string other = (dir_ / "other.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-o " + other + " " + lone + " " + (dir_ / "third.json").string())
                .exit_code,
            0);
  {
    const auto [out, said] = merge("two_merged.json", merged + " " + other, 1);  // node7's rank
    EXPECT_EQ(out.Pids(), (std::set<int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(out.Count("Coll"), 12u);
    EXPECT_NE(said.find(other + ": rank 1 (node1, os pid 1001) is already in " + merged), std::string::npos)
        << said;
    // A merged trace's header names only its first rank's process: the move names none.
    EXPECT_NE(said.find("pid 0 is in " + merged + " (a merged trace) and in " + other + " (a merged trace)"),
              std::string::npos)
        << said;
  }
  // Only rank 0 of the two-rank file was merged: its rank 1 comes in beside it.
  const std::string half = (dir_ / "half.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "--ranks 0 -o " + half + " " + both).exit_code, 0);
  {
    const auto [out, said] = merge("half_again.json", half + " " + both);
    EXPECT_EQ(out.Pids(), (std::set<int64_t>{0, 1}));
    EXPECT_EQ(out.Count("Coll"), 6u);
    EXPECT_EQ(Occurrences(said, "is already in"), 1u) << said;
    const ToolResult check = RunTool("katrace-check", (dir_ / "half_again.json").string());
    EXPECT_EQ(check.exit_code, 0) << check.output;
  }
  // The merged trace as a .pftrace.
  const std::string pftrace = (dir_ / "m.pftrace").string();
  ASSERT_EQ(RunTool("katrace-merge", "-o " + pftrace + " " + both + " " + lone).exit_code, 0);
  {
    const auto [out, said] = merge("from_pftrace.pftrace", pftrace + " " + both);
    EXPECT_EQ(out.Pids(), (std::set<int64_t>{0, 1, 2}));
    EXPECT_EQ(Occurrences(said, "is already in " + pftrace), 2u) << said;
  }
}

// A merged trace that holds one capture's ranks twice, each copy under pids of its own, as a
// merge that did not yet leave the second copy out made it (here made by hand from a merge of
// one file: its events and its footer's input entry repeated under pids 2 and 3). Merged again
// beside another file, and counted by katrace-stats, the second copy is left out and said once
// a rank; the result is what the one copy gives.
TEST_F(IdentityTest, ARankAMergedInputHoldsTwiceComesInOnce) {
  const std::string both = Write("both.json", OneProcessOfTwoRanks());
  const std::string lone = Write("lone.json", {StrayRankOne()});
  const std::string merged = (dir_ / "m.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-o " + merged + " " + both).exit_code, 0);
  Json trace = Json::parse(katrace_test::ReadWholeFile(merged));
  Json copies = Json::array();
  for (const Json& e : trace["traceEvents"]) {
    Json copy = e;
    copy["pid"] = e["pid"].get<int64_t>() + 2;
    copies.push_back(copy);
  }
  for (Json& copy : copies) trace["traceEvents"].push_back(copy);
  Json& inputs = trace["otherData"]["katrace"]["inputs"];
  ASSERT_EQ(inputs.size(), 1u);
  Json second = inputs[0];
  second["pids"] = Json::array({2, 3});
  second["pid_remap"] = Json::array({Json{{"from", 0}, {"to", 2}}, Json{{"from", 1}, {"to", 3}}});
  inputs.push_back(second);
  const std::string twice = (dir_ / "twice.json").string();
  {
    std::ofstream out(twice);
    out << trace.dump();
  }
  ASSERT_EQ(Read(twice).Pids(), (std::set<int64_t>{0, 1, 2, 3}));

  const std::string once = (dir_ / "once.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-o " + once + " " + merged + " " + lone).exit_code, 0);
  const std::string out = (dir_ / "out.json").string();
  const ToolResult r = RunTool("katrace-merge", "-o " + out + " " + twice + " " + lone);
  EXPECT_EQ(r.exit_code, 1) << "the merged trace is not all of its inputs: " << r.output;
  EXPECT_NE(r.output.find(twice + ": rank 0 (node0, os pid 1000) is in it twice, as pids 0 and 2"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(twice + ": rank 1 (node0, os pid 1000) is in it twice, as pids 1 and 3"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(Occurrences(r.output, " twice, "), 2u) << r.output;
  const Events got = Read(out), want = Read(once);
  EXPECT_EQ(got.Pids(), want.Pids());
  EXPECT_EQ(got.Count("Coll"), want.Count("Coll"));
  EXPECT_EQ(got.all.size(), want.all.size());
  const ToolResult check = RunTool("katrace-check", out);
  EXPECT_EQ(check.exit_code, 0) << check.output;

  // katrace-stats: the same events as the one copy, and the same lines.
  auto events = [&](const std::string& args, int exit_code) {
    const ToolResult s = RunTool("katrace-stats", "--report host " + args);
    EXPECT_EQ(s.exit_code, exit_code) << args << ": " << s.output;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(s.output, m, std::regex(" ([0-9]+) events;"))) << s.output;
    EXPECT_EQ(Occurrences(s.output, " twice, "), exit_code == 0 ? 0u : 2u) << s.output;
    return m.size() > 1 ? m[1].str() : "";
  };
  EXPECT_EQ(events(twice + " " + lone, 1), events(merged + " " + lone, 0));
}

// A merged input's footer names the ranks it holds; one that lies (wrong types, a remap that is
// not a list, merges nested past any real depth) names none it cannot read, and the merge goes on
// as for ranks of another capture: it moves them to free pids.
TEST_F(IdentityTest, MergeReadsNoRanksFromAMergedInputsHostileFooter) {
  const std::string both = Write("both.json", OneProcessOfTwoRanks());
  const std::string merged = (dir_ / "m.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-o " + merged + " " + both).exit_code, 0);
  Json trace = Json::parse(katrace_test::ReadWholeFile(merged));
  Json& inputs = trace["otherData"]["katrace"]["inputs"];
  ASSERT_EQ(inputs.size(), 1u);
  Json deep = inputs[0]["footer"];
  for (int i = 0; i < 100; ++i) {  // past the merge's 32, within the reader's 512 levels
    deep = Json{{"format", "katrace-merged"}, {"inputs", Json::array({Json{{"pids", {0, 1}}, {"footer", deep}}})}};
  }
  inputs.push_back(Json{{"pids", "0,1"}, {"footer", inputs[0]["footer"]}});
  inputs.push_back(Json{{"pids", {0, 1}}, {"pid_remap", 7}, {"footer", {{"host", 3}}}});
  inputs.push_back(Json{{"pids", {0, 1}}, {"footer", deep}});
  inputs[0]["pids"] = Json::array({"zero", nullptr});
  const std::string hostile = (dir_ / "hostile.json").string();
  {
    std::ofstream out(hostile);
    out << trace.dump();
  }
  const std::string out = (dir_ / "out.json").string();
  const ToolResult r = RunTool("katrace-merge", "-o " + out + " " + hostile + " " + both);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("already in"), std::string::npos) << r.output;
  EXPECT_EQ(Occurrences(r.output, " is in "), 2u) << r.output;
  EXPECT_EQ(Read(out).Pids(), (std::set<int64_t>{0, 1, 2, 3}));
}

// katrace-stats counts a rank in two inputs once (a file given twice, a merged trace beside one
// of its own inputs, by the same names as katrace-merge): the later input leaves it out, says
// so, and the exit status is 1. Before, its events counted twice without a word.
TEST_F(IdentityTest, StatsCountsARankInTwoInputsOnce) {
  const std::string both = Write("both.json", OneProcessOfTwoRanks());
  const std::string lone = Write("lone.json", {StrayRankOne()});
  const std::string merged = (dir_ / "m.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-o " + merged + " " + both + " " + lone).exit_code, 0);
  // The events the tables count (their first line, "... N events; ..."), and all that was said.
  auto summary = [&](const std::string& args, int exit_code) {
    const ToolResult r = RunTool("katrace-stats", "--report host " + args);
    EXPECT_EQ(r.exit_code, exit_code) << args << ": " << r.output;
    std::smatch events;
    EXPECT_TRUE(std::regex_search(r.output, events, std::regex(" ([0-9]+) events;"))) << r.output;
    return std::make_pair(events.size() > 1 ? events[1].str() : "", r.output);
  };
  const std::string alone = summary(merged, 0).first;
  const std::string two_ranks = summary(both, 0).first;
  {
    const auto [events, said] = summary(both + " " + both, 1);
    EXPECT_EQ(events, two_ranks);
    EXPECT_NE(said.find("2 files (1 with problems)"), std::string::npos) << said;
    EXPECT_EQ(Occurrences(said, "is already in " + both + "; left out"), 2u) << said;
  }
  for (const std::string& args : {merged + " " + both, both + " " + merged, merged + " " + lone}) {
    const auto [events, said] = summary(args, 1);
    EXPECT_EQ(events, alone) << args;
    EXPECT_NE(said.find("is already in " + merged + "; left out"), std::string::npos) << said;
  }
}

}  // namespace
}  // namespace katrace::tools
