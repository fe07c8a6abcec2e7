// Negative tests of katrace-check, run as a program: each rule it claims is broken once in a copy
// of the valid hand-made trace (test/data/valid_rank0.json) and must be reported with its code on
// the line of the event at fault; valid but unusual traces must pass. Plus the regressions of
// messages that named the wrong problem (a header, a spool count, a parent, a cut file's flows).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/tool_runner.h"

namespace {

namespace fs = std::filesystem;
using katrace_test::RunTool;
using katrace_test::TestDataDir;
using katrace_test::ToolResult;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Replaces the single occurrence of |from| (the test fails if it is not there exactly once).
std::string Edit(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no '" << from << "' to edit";
  if (at == std::string::npos) return text;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "'" << from << "' is not unique";
  return text.replace(at, from.size(), to);
}

// One problem line of katrace-check: "FILE:LINE: error: ... [code]" (LINE 0: the whole file).
struct Problem {
  uint64_t line = 0;
  std::string severity;
  std::string code;
  std::string text;
};

std::vector<Problem> Problems(const std::string& output) {
  static const std::regex kLine(R"(^\S+?:(?:(\d+):)? (error|warning): (.*) \[(\S+)\]$)");
  std::vector<Problem> out;
  std::istringstream lines(output);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (!std::regex_match(line, m, kLine)) continue;
    out.push_back({m[1].matched ? std::stoull(m[1].str()) : 0, m[2], m[4], m[3]});
  }
  return out;
}

class CheckRules : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/katrace-check-rules-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    valid_ = ReadFile(TestDataDir() / "valid_rank0.json");
    ASSERT_FALSE(valid_.empty());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes |text| and checks it; |options| go before the file.
  ToolResult Check(const std::string& text, const std::string& options = "") {
    const fs::path path = dir_ / ("t" + std::to_string(++files_) + ".json");
    std::ofstream(path, std::ios::binary) << text;
    return RunTool("katrace-check", options + " " + path.string());
  }

  // The trace with |from| edited to |to| must fail with exactly the problems of |code|, the first
  // on |line|, and nothing else.
  void ExpectOnly(const std::string& from, const std::string& to, const std::string& code,
                  uint64_t line, const char* severity = "error") {
    const ToolResult r = Check(Edit(valid_, from, to));
    const std::vector<Problem> problems = Problems(r.output);
    ASSERT_FALSE(problems.empty()) << "no problem reported for '" << to << "':\n" << r.output;
    EXPECT_EQ(problems[0].code, code) << r.output;
    EXPECT_EQ(problems[0].line, line) << r.output;
    EXPECT_EQ(problems[0].severity, severity) << r.output;
    for (const Problem& p : problems) EXPECT_EQ(p.code, code) << r.output;
    EXPECT_EQ(r.exit_code, std::string(severity) == "error" ? 1 : 0) << r.output;
  }

  fs::path dir_;
  std::string valid_;
  int files_ = 0;
};

// Lines of test/data/valid_rank0.json: 9 KernelStep id 5, 12 KernelCh id 6, 13 CollGpu, 14 the
// flow's end, 16 KernelLaunch id 4, 17 Coll id 3 (GPU extent [40, 44] us), 18 the flow's start.

TEST_F(CheckRules, ValidTraceIsClean) {
  const ToolResult r = Check(valid_, "--strict");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Problems(r.output).empty()) << r.output;
  EXPECT_NE(r.output.find(": OK: 19 events, 0 warnings"), std::string::npos) << r.output;
}

TEST_F(CheckRules, NestingPartialOverlap) {
  // KernelLaunch [13, 16] against Coll [12, 15] on the host track.
  ExpectOnly(R"("ts":13.000,"dur":1.000)", R"("ts":13.000,"dur":3.000)", "nesting", 16);
}

TEST_F(CheckRules, NestingSameStartChildFirst) {
  // CollApi moved to the Group's start: the shorter one comes first in the file.
  ExpectOnly(R"("ts":11.000,"dur":5.000)", R"("ts":10.000,"dur":5.000)", "nesting", 15);
}

TEST_F(CheckRules, ParentThatNamesNothing) {
  ExpectOnly(R"("id":4,"parent":1)", R"("id":4,"parent":99)", "parent", 16);
}

TEST_F(CheckRules, DuplicateId) {
  ExpectOnly(R"("id":4,"parent":1)", R"("id":2,"parent":1)", "ids", 16);
}

TEST_F(CheckRules, GpuChildOutsideItsCollectivesExtent) {
  ExpectOnly(R"("ts":40.000,"dur":4.000,"args":{"id":6)", R"("ts":39.000,"dur":4.000,"args":{"id":6)",
             "gpu-extent", 12);
  ExpectOnly(R"("ts":40.000,"dur":3.000,"args":{"id":5)", R"("ts":40.000,"dur":5.000,"args":{"id":5)",
             "gpu-extent", 9);
  ExpectOnly(R"("ts":40.000,"dur":4.000,"args":{"func")", R"("ts":40.000,"dur":5.000,"args":{"func")",
             "gpu-extent", 13);
}

TEST_F(CheckRules, SlackWidensTheExtentByExactlyItsNanoseconds) {
  const std::string early =
      Edit(valid_, R"("ts":40.000,"dur":4.000,"args":{"id":6)", R"("ts":39.000,"dur":4.000,"args":{"id":6)");
  EXPECT_EQ(Check(early, "--slack-ns 1000").exit_code, 0);
  const ToolResult r = Check(early, "--slack-ns 999");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(Problems(r.output).size(), 1u) << r.output;
  EXPECT_EQ(Problems(r.output)[0].code, "gpu-extent");
  EXPECT_EQ(Check(early, "--slack-ns 3600000000001").exit_code, 2);
}

TEST_F(CheckRules, GpuChildOfCollectiveWithoutExtent) {
  const ToolResult r = Check(Edit(valid_, R"(,"gpu_start":40.000,"gpu_end":44.000)", ""));
  const std::vector<Problem> problems = Problems(r.output);
  ASSERT_EQ(problems.size(), 3u) << r.output;  // the KernelStep, the KernelCh, the CollGpu
  for (const Problem& p : problems) EXPECT_EQ(p.code, "gpu-extent") << r.output;
  EXPECT_NE(r.output.find("FAILED: 3 errors, 0 warnings in 19 events"), std::string::npos) << r.output;
}

TEST_F(CheckRules, GpuChildOfNonCollective) {
  ExpectOnly(R"("id":6,"parent":3)", R"("id":6,"parent":2)", "parent", 12);
}

TEST_F(CheckRules, ContainmentWithoutAncestry) {
  // The KernelCh moved onto the KernelStep's track, inside its wait half.
  const std::string text = Edit(
      Edit(valid_, R"("ph":"X","pid":0,"tid":3,"ts":40.000,"dur":4.000)",
           R"("ph":"X","pid":0,"tid":4,"ts":40.000,"dur":0.500)"),
      R"("gpu_stop_ns":5000044000)", R"("gpu_stop_ns":5000040500)");
  const ToolResult r = Check(text);
  const std::vector<Problem> problems = Problems(r.output);
  ASSERT_EQ(problems.size(), 1u) << r.output;
  EXPECT_EQ(problems[0].code, "ancestry");
  EXPECT_EQ(problems[0].line, 12u);
}

TEST_F(CheckRules, Flows) {
  ExpectOnly(R"({"name":"launch","cat":"flow","ph":"s","id":3,"pid":0,"tid":1,"ts":12.000},)" "\n", "",
             "flow", 14);  // an end without a start
  ExpectOnly(R"("f","bp":"e")", R"("f")", "flow", 14);
  ExpectOnly(R"("tid":2,"ts":40.000})", R"("tid":2,"ts":45.000})", "flow", 14);  // to nowhere
}

TEST_F(CheckRules, MetadataHeaderAndFooter) {
  ExpectOnly(R"({"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"host 4243"}},)" "\n", "",
             "metadata", 14);
  ExpectOnly(R"("rank":0,"host":"node0","os_pid":4242,"base_realtime_ns":1700000000000000000,"base_monotonic_ns":5000000000}}},)",
             R"("rank":1,"host":"node0","os_pid":4242,"base_realtime_ns":1700000000000000000,"base_monotonic_ns":5000000000}}},)",
             "header", 2);
  ExpectOnly(R"("incomplete":0,"late_children")", R"("late_children")", "footer", 0);
  ExpectOnly(R"("io_errors":0)", R"("io_errors":2)", "footer", 0);
  ExpectOnly(R"("clean_end":true)", R"("clean_end":false)", "footer", 0, "warning");
  ExpectOnly(R"("drops":{"GroupApi":0)", R"("drops":{"GroupApi":2)", "drops", 0, "warning");
  ExpectOnly(R"("args":{"total":0})", R"("args":{"total":"0"})", "field", 8);
}

TEST_F(CheckRules, EventRules) {
  ExpectOnly(R"("ts":13.000,"dur":1.000)", R"("ts":13.000,"dur":-1.000)", "time", 16);
  ExpectOnly(R"("gpu_stop_ns":5000044000)", R"("gpu_stop_ns":5000039000)", "gpu-time", 12);
  ExpectOnly(R"("gpu_ready_ns":5000041000)", R"("gpu_ready_ns":5000039000)", "gpu-time", 9);
  ExpectOnly(R"("s":"g")", R"("s":"x")", "field", 20);
  ExpectOnly(R"("cat":"KernelLaunch")", R"("cat":"Foo")", "kind", 16, "warning");
}

TEST_F(CheckRules, StrictFailsOnWarningsAndQuietHidesCleanFiles) {
  const std::string warned = Edit(valid_, R"("clean_end":true)", R"("clean_end":false)");
  EXPECT_EQ(Check(warned).exit_code, 0);
  EXPECT_EQ(Check(warned, "--strict").exit_code, 1);
  const ToolResult quiet = Check(valid_, "-q");
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.output, "");
}

TEST_F(CheckRules, MaxProblemsCountsWhatItHides) {
  const ToolResult r = Check(Edit(valid_, R"(,"gpu_start":40.000,"gpu_end":44.000)", ""), "--max-problems 1");
  EXPECT_EQ(Problems(r.output).size(), 1u) << r.output;
  EXPECT_NE(r.output.find("... and 2 more [gpu-extent] problems"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FAILED: 3 errors, 0 warnings in 19 events"), std::string::npos) << r.output;
}

// Valid but unusual: a zero-length KernelStep with zero-length halves at one time, a trace with
// GPU events only (no host slices, no parents, no flows), and a flow end at its slice's end.
TEST_F(CheckRules, UnusualValidTracesPass) {
  std::string zero = Edit(valid_, R"("ts":40.000,"dur":3.000,"args":{"id":5)", R"("ts":40.000,"dur":0.000,"args":{"id":5)");
  zero = Edit(zero, R"("gpu_ready_ns":5000041000,"gpu_stop_ns":5000043000)",
              R"("gpu_ready_ns":5000040000,"gpu_stop_ns":5000040000)");
  zero = Edit(zero, R"("ts":40.000,"dur":1.000)", R"("ts":40.000,"dur":0.000)");
  zero = Edit(zero, R"("ts":41.000,"dur":2.000)", R"("ts":40.000,"dur":0.000)");
  ToolResult r = Check(zero, "--strict");
  EXPECT_EQ(r.exit_code, 0) << r.output;

  std::string gpu_only;
  std::istringstream lines(valid_);
  for (std::string line; std::getline(lines, line);) {
    const bool host_or_flow = line.find(R"("tid":1,)") != std::string::npos && line.find(R"("ph":"M")") == std::string::npos;
    if (host_or_flow || line.find(R"("cat":"flow")") != std::string::npos ||
        line.find(R"("cat":"CollGpu")") != std::string::npos) {
      continue;
    }
    gpu_only += line + "\n";
  }
  gpu_only = Edit(Edit(gpu_only, R"("id":5,"parent":3,)", R"("id":5,)"), R"("id":6,"parent":3,)", R"("id":6,)");
  r = Check(gpu_only, "--strict");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OK: 12 events, 0 warnings"), std::string::npos) << r.output;

  r = Check(Edit(valid_, R"("tid":2,"ts":40.000})", R"("tid":2,"ts":44.000})"), "--strict");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// Regressions: messages that named a problem the trace does not have.

// A negative spool count read "must be a count, not integer".
TEST_F(CheckRules, SpoolCountNamesTheValue) {
  const ToolResult r = Check(Edit(valid_, R"("bytes":2048)", R"("bytes":-5)"));
  const std::vector<Problem> problems = Problems(r.output);
  ASSERT_EQ(problems.size(), 1u) << r.output;
  EXPECT_EQ(problems[0].code, "footer");
  EXPECT_EQ(problems[0].text, "footer 'spool.bytes' must be a count, not -5");
}

// A header that is there but lacks the clock base is one problem, at its line: before, the
// checker also said the pid "has no katrace header" and the footer's rank "has no header".
TEST_F(CheckRules, MalformedHeaderIsReportedOnce) {
  const ToolResult r =
      Check(Edit(valid_, R"("os_pid":4242,"base_realtime_ns":1700000000000000000,"base_monotonic_ns":5000000000}}},)",
                 R"("os_pid":4242,"base_monotonic_ns":5000000000}}},)"));
  const std::vector<Problem> problems = Problems(r.output);
  ASSERT_EQ(problems.size(), 1u) << r.output;
  EXPECT_EQ(problems[0].code, "header");
  EXPECT_EQ(problems[0].line, 2u);
  EXPECT_NE(problems[0].text.find("base_realtime_ns"), std::string::npos) << r.output;
}

// A Coll with a bad dur is still its children's parent: before, each child said its parent
// "names no event of this process".
TEST_F(CheckRules, SliceWithBadTimesIsStillAParent) {
  const ToolResult r = Check(Edit(valid_, R"("ts":12.000,"dur":3.000)", R"("ts":12.000,"dur":-3.000)"));
  const std::vector<Problem> problems = Problems(r.output);
  ASSERT_EQ(problems.size(), 1u) << r.output;
  EXPECT_EQ(problems[0].code, "time");
  EXPECT_EQ(problems[0].line, 17u);
}

// A cut file whose flow endpoint comes before its slice (any order is valid JSON; in a .pftrace a
// slice comes only at its end) is truncated, not a flow to nowhere.
TEST_F(CheckRules, CutFileReportsNoFlowToNowhere) {
  const std::string flow_end = R"({"name":"launch","cat":"flow","ph":"f","bp":"e","id":3,"pid":0,"tid":2,"ts":40.000},)";
  std::string text = Edit(valid_, flow_end + "\n", "");
  text = Edit(text, R"({"name":"Send","cat":"KernelStep")", flow_end + "\n" + R"({"name":"Send","cat":"KernelStep")");
  // The whole file is valid in this order.
  ToolResult r = Check(text, "--strict");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Cut after the flow's end, before its CollGpu.
  const size_t cut = text.find(R"({"name":"AllReduce","cat":"KernelCh")");
  ASSERT_NE(cut, std::string::npos);
  r = Check(text.substr(0, cut));
  const std::vector<Problem> problems = Problems(r.output);
  ASSERT_EQ(problems.size(), 1u) << r.output;
  EXPECT_EQ(problems[0].code, "truncated");
}

}  // namespace
