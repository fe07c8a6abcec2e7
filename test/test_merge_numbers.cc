// katrace-merge's output checked against values worked out by hand on small hand-written traces:
// every argument the kind schema types as a time moves with ts (JSON and .pftrace alike), a
// --ranks selection gives the ranks it leaves out no pid, the ranks of one capture split with
// --ranks merge back onto their own pids with the capture's footer counted once, and a merged
// file merged again keeps its spool list.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/support/host_capture.h"
#include "test/support/tool_runner.h"

namespace katrace {
namespace {

using Json = nlohmann::json;
using katrace_test::RunTool;

constexpr int64_t kBase = 1700000000000000000;
constexpr const char* kComm = "6b61747261636572";

class MergeNumbersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("katrace-merge-numbers-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // One capture (one OS process) holding |pids|, its clock base |base|: per rank a header, a
  // GroupApi with its two state times, a ProxyOp with in_progress and a Coll with its GPU extent;
  // a footer with per-kind counts and a spool.
  std::string Capture(const std::string& name, int64_t os_pid, int64_t base, const std::vector<int>& pids) {
    Json ranks = Json::array();
    for (int pid : pids) ranks.push_back({{"pid", pid}, {"world_rank", pid}});
    Json header = {{"format", "katrace-trace"}, {"version", 1},        {"rank", pids.front()},
                   {"host", "h"},               {"os_pid", os_pid},   {"base_realtime_ns", base},
                   {"base_monotonic_ns", 5000}, {"ranks", ranks}};
    Json events = Json::array();
    for (int pid : pids) {
      Json h = header;
      h["rank"] = pid;
      events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                        {"args", {{"name", "rank " + std::to_string(pid)}, {"katrace", h}}}});
      const Json common = {{"comm", kComm}, {"rank", pid}};
      Json group = common;
      group.update({{"id", 1}, {"depth", 1}, {"group_start_done", 10.5}, {"group_end_entered", 20.25}});
      events.push_back({{"name", "Group"}, {"cat", "GroupApi"}, {"ph", "X"}, {"pid", pid}, {"tid", 1},
                        {"ts", 10.0}, {"dur", 30.0}, {"args", group}});
      Json coll = common;
      coll.update({{"id", 2}, {"func", "AllReduce"}, {"gpu_start", 50.0}, {"gpu_end", 60.0}});
      events.push_back({{"name", "AllReduce"}, {"cat", "Coll"}, {"ph", "X"}, {"pid", pid}, {"tid", 2},
                        {"ts", 40.0}, {"dur", 10.0}, {"args", coll}});
      Json op = common;
      op.update({{"id", 3}, {"parent", 2}, {"channel", 0}, {"peer", 1}, {"in_progress", 45}});
      events.push_back({{"name", "Send"}, {"cat", "ProxyOp"}, {"ph", "X"}, {"pid", pid}, {"tid", 3},
                        {"ts", 42.0}, {"dur", 8.0}, {"args", op}});
    }
    Json footer = header;
    footer.update({{"events", {{"GroupApi", pids.size()}, {"Coll", pids.size()}, {"ProxyOp", pids.size()}}},
                   {"drops", {{"Coll", 1}}},
                   {"waits", 3},
                   {"spool", {{"blocks", 2}, {"bytes", 100}, {"clean_end", true}, {"cut_offset", 0}}}});
    const std::string path = Path(name);
    std::ofstream(path) << Json{{"traceEvents", events}, {"otherData", {{"katrace", footer}}}}.dump();
    return path;
  }

  Json Merge(const std::string& out, const std::string& args, std::string* output = nullptr) {
    const auto result = RunTool("katrace-merge", "-q -o " + out + " " + args);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    if (output != nullptr) *output = result.output;
    return out.size() > 8 && out.compare(out.size() - 8, 8, ".pftrace") == 0 ? Json() : Read(out);
  }
  static Json Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return Json::parse(text.str());
  }
  static const Json* Find(const Json& trace, const std::string& cat, int pid) {
    for (const Json& e : trace["traceEvents"]) {
      if (e.value("cat", "") == cat && e.value("pid", -1) == pid) return &e;
    }
    return nullptr;
  }
  static std::set<int64_t> Pids(const Json& trace) {
    std::set<int64_t> pids;
    for (const Json& e : trace["traceEvents"]) pids.insert(e["pid"].get<int64_t>());
    return pids;
  }

  template <typename Jitter>
  std::string HostCapture(const std::string& name, const std::string& host, int pid, int64_t behind_ns,
                          const std::string& comm, const std::vector<int>& seqs, Jitter&& jitter_ns) {
    katrace_test::WriteHostCapture(Path(name), kBase, host, pid, behind_ns, comm, seqs, jitter_ns);
    return Path(name);
  }
  // Each Coll's gpu_end in the merged trace (absolute ns: the merged base plus the µs), by pid and seq.
  static std::map<std::pair<int64_t, int64_t>, double> GpuEnds(const Json& trace) {
    std::map<std::pair<int64_t, int64_t>, double> ends;
    for (const Json& e : trace["traceEvents"]) {
      if (e.value("cat", "") != "Coll") continue;
      ends[{e["pid"].get<int64_t>(), e["args"]["seq"].get<int64_t>()}] = e["args"]["gpu_end"].get<double>();
    }
    return ends;
  }

  std::filesystem::path dir_;
};

// --align-hosts: host beta's clock is 3 ms behind alpha's. Merged as recorded, beta's ranks end
// every collective 3 ms before alpha's; aligned, they end together (to the jitter of each end),
// beta moved by the median difference, which one collective that ended 50 µs apart does not
// pull. JSON and .pftrace outputs alike, and the footer says what each input moved by.
TEST_F(MergeNumbersTest, AlignHostsMovesAHostByTheMedianDifferenceOfItsCollectivesEnds) {
  const std::vector<int> seqs = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  auto no_jitter = [](int) { return int64_t{0}; };
  auto jitter = [](int seq) { return seq == 4 ? int64_t{50000} : int64_t{(seq % 3 - 1) * 200}; };
  const std::string a = HostCapture("a.json", "alpha", 0, 0, kComm, seqs, no_jitter);
  const std::string b = HostCapture("b.json", "beta", 1, 3000000, kComm, seqs, jitter);

  const auto recorded = GpuEnds(Merge(Path("recorded.json"), a + " " + b));
  EXPECT_NEAR(recorded.at({0, 1}) - recorded.at({1, 1}), 3000.0, 0.001) << "beta ends 3 ms early as recorded";

  const auto result = RunTool("katrace-merge", "-o " + Path("aligned.json") + " --align-hosts " + a + " " + b);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("host beta moved by +3.000 ms onto the clock of alpha (the median difference of "
                               "9 collectives' GPU ends with alpha"),
            std::string::npos)
      << result.output;
  const Json aligned = Read(Path("aligned.json"));
  const auto ends = GpuEnds(aligned);
  for (int seq : seqs) {
    SCOPED_TRACE(seq);
    EXPECT_NEAR(ends.at({1, seq}) - ends.at({0, seq}), static_cast<double>(jitter(seq)) / 1000, 0.001);
  }
  const Json& inputs = aligned["otherData"]["katrace"]["inputs"];
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0]["host_shift_ns"], 0);
  EXPECT_EQ(inputs[1]["host_shift_ns"], 3000000);
  EXPECT_EQ(inputs[1]["rebased_ns"].get<int64_t>() - inputs[0]["rebased_ns"].get<int64_t>(), 0)
      << "both captures began at the same true time";

  // The protobuf output carries the same times: read back through a merge of it alone.
  const auto pf = RunTool("katrace-merge", "-q -o " + Path("aligned.pftrace") + " --align-hosts " + a + " " + b);
  ASSERT_EQ(pf.exit_code, 0) << pf.output;
  const auto from_protobuf = GpuEnds(Merge(Path("back.json"), Path("aligned.pftrace")));
  for (int seq : seqs) {
    EXPECT_NEAR(from_protobuf.at({1, seq}) - from_protobuf.at({0, seq}), static_cast<double>(jitter(seq)) / 1000,
                0.001)
        << seq;
  }
}

// A host that shares no collective with an aligned one cannot be moved: it is said, its times
// stay as recorded and the exit status is 1; a host reached only through another is moved by
// the sum of the two differences.
TEST_F(MergeNumbersTest, AlignHostsReachesAHostThroughAnotherAndSaysWhichItCannotAlign) {
  const std::vector<int> seqs = {0, 1, 2, 3};
  auto none = [](int) { return int64_t{0}; };
  const std::string other_comm = "00000000000000aa";
  const std::string a = HostCapture("a.json", "alpha", 0, 0, kComm, seqs, none);
  const std::string b1 = HostCapture("b1.json", "beta", 1, 2000000, kComm, seqs, none);
  const std::string b2 = HostCapture("b2.json", "beta", 2, 2000000, other_comm, seqs, none);
  const std::string c = HostCapture("c.json", "gamma", 3, -500000, other_comm, seqs, none);
  const std::string d = HostCapture("d.json", "delta", 4, 7000000, "00000000000000bb", seqs, none);
  const auto result = RunTool("katrace-merge", "-o " + Path("m.json") + " --align-hosts " + a + " " + b1 + " " +
                                                   b2 + " " + c + " " + d);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("host beta moved by +2.000 ms onto the clock of alpha"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("host gamma moved by -500.0 µs onto the clock of alpha (the median difference of 4 "
                               "collectives' GPU ends with beta"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("host delta shares fewer than 3 complete collectives"), std::string::npos)
      << result.output;
  const auto ends = GpuEnds(Read(Path("m.json")));
  for (int seq : seqs) {
    for (int pid : {1, 2, 3}) EXPECT_NEAR(ends.at({pid, seq}), ends.at({0, seq}), 0.001) << pid << " " << seq;
    EXPECT_NEAR(ends.at({0, seq}) - ends.at({4, seq}), 7000.0, 0.001) << "delta as recorded";
  }
}

// Hostile clock bases: two hosts whose recorded clocks lie further apart than an int64_t of ns
// holds are not aligned (no difference can be taken), and nothing overflows; said, exit 1.
TEST_F(MergeNumbersTest, AlignHostsWithClockBasesAnInt64ApartAlignsNothing) {
  const std::vector<int> seqs = {0, 1, 2, 3};
  auto none = [](int) { return int64_t{0}; };
  const std::string a = Path("a.json"), b = Path("b.json");
  katrace_test::WriteHostCapture(a, 4000000000000000000, "alpha", 0, -5000000000000000000, kComm, seqs, none);
  katrace_test::WriteHostCapture(b, 4000000000000000000, "beta", 1, 9000000000000000000, kComm, seqs, none);
  const auto result = RunTool("katrace-merge", "-o " + Path("m.json") + " --align-hosts " + a + " " + b);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("host beta shares fewer than 3 complete collectives"), std::string::npos)
      << result.output;
  // Nor can the two share one timeline: one is left out, said (with or without --align-hosts).
  EXPECT_NE(result.output.find("lies further from the other inputs' than one timeline of int64 ns holds; left out"),
            std::string::npos)
      << result.output;
  const auto plain = RunTool("katrace-merge", "-o " + Path("p.json") + " " + a + " " + b);
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_EQ(Pids(Read(Path("p.json"))).size(), 1u);
}

// Inputs of one host share its clock: nothing is moved, and that is said.
TEST_F(MergeNumbersTest, AlignHostsLeavesInputsOfOneHostAsTheyAre) {
  const std::vector<int> seqs = {0, 1, 2};
  auto none = [](int) { return int64_t{0}; };
  const std::string a = HostCapture("a.json", "alpha", 0, 0, kComm, seqs, none);
  const std::string b = HostCapture("b.json", "alpha", 1, 0, kComm, seqs, none);
  const auto result = RunTool("katrace-merge", "-o " + Path("m.json") + " --align-hosts " + a + " " + b);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("every input is of host alpha; nothing to align"), std::string::npos) << result.output;
  const Json merged = Read(Path("m.json"));
  for (const Json& input : merged["otherData"]["katrace"]["inputs"]) EXPECT_EQ(input["host_shift_ns"], 0);
}

// The second capture's clock base is 1 s after the first's, so its times move by 1e6 µs; the
// arguments that are times (trace µs) must move with them, or a GroupApi's state times and a
// ProxyOp's in_progress land outside their own slice on the merged timeline.
TEST_F(MergeNumbersTest, EveryTimeArgumentMovesWithTs) {
  const std::string a = Capture("a.json", 100, kBase, {0});
  const std::string b = Capture("b.json", 200, kBase + 1000000000, {1});
  for (const std::string& out : {Path("m.json"), Path("m.pftrace")}) {
    Merge(out, a + " " + b);
    // The .pftrace read back through the JSON merge (one input: nothing moves again).
    const Json merged = out == Path("m.json") ? Read(out) : Merge(Path("back.json"), out);
    SCOPED_TRACE(out);
    const Json* group = Find(merged, "GroupApi", 1);
    const Json* coll = Find(merged, "Coll", 1);
    const Json* op = Find(merged, "ProxyOp", 1);
    ASSERT_TRUE(group != nullptr && coll != nullptr && op != nullptr);
    EXPECT_DOUBLE_EQ((*group)["ts"].get<double>(), 1000010.0);
    EXPECT_DOUBLE_EQ((*group)["args"]["group_start_done"].get<double>(), 1000010.5);
    EXPECT_DOUBLE_EQ((*group)["args"]["group_end_entered"].get<double>(), 1000020.25);
    EXPECT_DOUBLE_EQ((*coll)["args"]["gpu_start"].get<double>(), 1000050.0);
    EXPECT_DOUBLE_EQ((*coll)["args"]["gpu_end"].get<double>(), 1000060.0);
    // Written as a whole number of µs, and still a time.
    EXPECT_DOUBLE_EQ((*op)["args"]["in_progress"].get<double>(), 1000045.0);
    // The first capture's base is the merged start: its times stay.
    EXPECT_DOUBLE_EQ((*Find(merged, "GroupApi", 0))["args"]["group_start_done"].get<double>(), 10.5);
    EXPECT_DOUBLE_EQ((*Find(merged, "ProxyOp", 0))["args"]["in_progress"].get<double>(), 45.0);
  }
}

// Two processes both holding pids 0 and 1; --ranks 1 keeps one rank of each. The ranks left out
// are listed in the kept ranks' headers, but they are in nothing of the merged trace: they must
// not take pids (pid 0 is free), be reported as moved, or appear in the footer.
TEST_F(MergeNumbersTest, RanksLeftOutTakeNoPid) {
  const std::string a = Capture("a.json", 100, kBase, {0, 1});
  const std::string b = Capture("b.json", 200, kBase + 1000, {0, 1});
  std::string said;
  const Json merged = Merge(Path("m.json"), "--ranks 1 " + a + " " + b, &said);
  EXPECT_EQ(said.find("pid 0 is in"), std::string::npos) << said;
  const Json& footer = merged["otherData"]["katrace"];
  const std::set<int64_t> pids = Pids(merged);
  EXPECT_EQ(footer["ranks"], Json(std::vector<int64_t>(pids.begin(), pids.end())));
  ASSERT_EQ(footer["inputs"].size(), 2u);
  EXPECT_EQ(footer["inputs"][0]["pids"], Json::array({1}));
  EXPECT_EQ(footer["inputs"][0].count("pid_remap"), 0u);
  // b's rank 1 collides with a's and moves, to the lowest pid nothing holds: 2 (0 and 1 are
  // declared by the inputs' headers).
  EXPECT_EQ(footer["inputs"][1]["pid_remap"], Json::parse(R"([{"from":1,"to":2}])"));
  EXPECT_EQ(pids, (std::set<int64_t>{1, 2}));
  // Each kept rank's header lists the ranks of the merged trace it holds, with their merged pids.
  for (const Json& e : merged["traceEvents"]) {
    if (e["name"] != "process_name") continue;
    const Json& h = e["args"]["katrace"];
    ASSERT_EQ(h["ranks"].size(), 1u) << h.dump();
    EXPECT_EQ(h["ranks"][0]["pid"], e["pid"]);
    EXPECT_EQ(h["rank"], e["pid"]);
  }
}

// The README's way to split a capture of two ranks: --ranks 0 and --ranks 1. Merged back, each
// rank is on its own pid again (no move), and the capture's footer, which each part carries
// whole, counts once: the same totals and spool list as the capture merged alone.
TEST_F(MergeNumbersTest, RanksSplitWithRanksMergeBackOntoTheirPids) {
  const std::string capture = Capture("c.json", 100, kBase, {0, 1});
  const Json whole = Merge(Path("whole.json"), capture);
  Merge(Path("r0.json"), "--ranks 0 " + capture);
  Merge(Path("r1.json"), "--ranks 1 " + capture);
  std::string said;
  const Json back = Merge(Path("back.json"), Path("r0.json") + " " + Path("r1.json"), &said);
  EXPECT_EQ(said.find(" is in "), std::string::npos) << said;
  EXPECT_EQ(Pids(back), (std::set<int64_t>{0, 1}));
  const Json& footer = back["otherData"]["katrace"];
  EXPECT_EQ(footer["inputs"][0]["pids"], Json::array({0}));
  EXPECT_EQ(footer["inputs"][1]["pids"], Json::array({1}));
  EXPECT_EQ(footer["inputs"][1].count("pid_remap"), 0u);
  for (const char* key : {"events", "drops", "waits", "spool", "ranks"}) {
    EXPECT_EQ(footer[key], whole["otherData"]["katrace"][key]) << key;
  }
  EXPECT_EQ(footer["events"]["Coll"], 2);
  EXPECT_EQ(footer["waits"], 3);
}

// A merged trace merged again (alone, or with another capture) keeps every spool its inputs
// were made of, and sums each capture's counts once.
TEST_F(MergeNumbersTest, AMergeMergedAgainKeepsItsSpoolsAndTotals) {
  const std::string a = Capture("a.json", 100, kBase, {0});
  const std::string b = Capture("b.json", 200, kBase + 1000, {1});
  const std::string c = Capture("c.json", 300, kBase + 2000, {2});
  const Json ab = Merge(Path("ab.json"), a + " " + b);
  ASSERT_EQ(ab["otherData"]["katrace"]["spool"].size(), 2u);
  const Json again = Merge(Path("again.json"), Path("ab.json"));
  EXPECT_EQ(again["otherData"]["katrace"]["spool"], ab["otherData"]["katrace"]["spool"]);
  EXPECT_EQ(again["otherData"]["katrace"]["events"], ab["otherData"]["katrace"]["events"]);
  const Json abc = Merge(Path("abc.json"), Path("ab.json") + " " + c);
  const Json& footer = abc["otherData"]["katrace"];
  EXPECT_EQ(footer["spool"].size(), 3u);
  EXPECT_EQ(footer["events"]["Coll"], 3);
  EXPECT_EQ(footer["drops"]["Coll"], 3);
  EXPECT_EQ(footer["waits"], 9);
}


// --ranks on a merged input sums the footers of the captures it keeps only: ranks 0 and 2 of a
// merge of three per-rank captures count as those two captures merged alone, not as all three.
TEST_F(MergeNumbersTest, RanksOfAMergedInputSumOnlyTheirCaptures) {
  const std::string a = Capture("a.json", 100, kBase, {0});
  const std::string b = Capture("b.json", 200, kBase + 1000, {1});
  const std::string c = Capture("c.json", 300, kBase + 2000, {2});
  Merge(Path("abc.json"), a + " " + b + " " + c);
  const Json picked = Merge(Path("picked.json"), "--ranks 0,2 " + Path("abc.json"));
  const Json alone = Merge(Path("ac.json"), a + " " + c);
  const Json& footer = picked["otherData"]["katrace"];
  for (const char* key : {"events", "drops", "waits", "spool", "ranks"}) {
    EXPECT_EQ(footer[key], alone["otherData"]["katrace"][key]) << key;
  }
  EXPECT_EQ(footer["events"]["Coll"], 2);
  EXPECT_EQ(Pids(picked), (std::set<int64_t>{0, 2}));
}

// A --ranks that matches no rank of a merged input fails as it does for per-rank files (exit
// 2, nothing written), instead of writing an empty trace.
TEST_F(MergeNumbersTest, RanksMatchingNothingInAMergedInputWriteNothing) {
  const std::string a = Capture("a.json", 100, kBase, {0});
  const std::string b = Capture("b.json", 200, kBase + 1000, {1});
  Merge(Path("ab.json"), a + " " + b);
  for (const std::string& input : {Path("ab.json"), a}) {
    const std::string out = Path("none.json");
    const auto result = RunTool("katrace-merge", "-q -o " + out + " --ranks 7 " + input);
    EXPECT_EQ(result.exit_code, 2) << input << ": " << result.output;
    EXPECT_NE(result.output.find("no input matches --ranks"), std::string::npos) << result.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << input;
  }
}

}  // namespace
}  // namespace katrace
