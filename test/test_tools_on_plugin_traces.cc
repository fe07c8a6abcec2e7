// The trace tools on traces written by the real plugin through katrace-sim: the check passes,
// katrace-stats prints the same host and GPU tables as the plugin's own finalize summary, and
// traces of separate processes (different clock bases) merge into one valid trace.
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

#include "test/support/plugin_harness.h"
#include "test/support/subprocess.h"
#include "test/support/trace_validation.h"

namespace katrace_test {
namespace {

// The text from |title| up to the next blank line: one summary table.
std::string Table(const std::string& text, const std::string& title) {
  size_t at = text.find(title);
  if (at == std::string::npos) return "";
  size_t end = text.find("\n\n", at);
  std::string table = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
  while (!table.empty() && table.back() == '\n') table.pop_back();
  return table;
}

class ToolsOnPluginTraces : public ::testing::Test {
 protected:
  // One simulated job through the real plugin; returns the trace path.
  std::string Simulate(const std::string& dir, const std::string& name, std::vector<std::string> extra = {},
                       int global_rank = 0) {
    std::string trace = dir + "/" + name;
    std::vector<std::string> args = {"--plugin", PluginPath(), "--ranks", "4", "--channels", "2",
                                     "--iters",  "5",          "--size",  "256K", "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessOutput run = RunProcess(ToolPath("katrace-sim"), args,
                                   // --quiet silences the plugin's summary unless it is asked for: the
                                   // summary file is compared with katrace-stats below.
                                   {"RANK=" + std::to_string(global_rank), "KATRACE_OUTPUT=" + trace,
                                    "KATRACE_SUMMARY=1"},
                                   dir);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return trace;
  }
};

TEST_F(ToolsOnPluginTraces, StatsPrintsThePluginsOwnSummaryNumbers) {
  std::string dir = MakeTempDir();
  std::string trace = Simulate(dir, "sim.json");
  ExpectValidTrace(trace);
  std::string plugin_summary = ReadWholeFile(trace + ".summary.txt");
  ProcessOutput run = RunProcess(ToolPath("katrace-stats"), {"--report", "host,gpu", trace}, {}, dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string& stats = run.out;
  for (const char* title : {"katrace host-side summary", "katrace GPU-side summary"}) {
    std::string expected = Table(plugin_summary, title);
    ASSERT_FALSE(expected.empty()) << title << " missing from the plugin summary:\n" << plugin_summary;
    EXPECT_EQ(Table(stats, title), expected);
  }
  EXPECT_NE(plugin_summary.find("KernelCh AllReduce"), std::string::npos);
}

// The check knows the footer the exporter writes (waits, strings_unnamed, spool): a clean run
// gives no footer warning.
TEST_F(ToolsOnPluginTraces, CheckKnowsTheExportersFooter) {
  std::string dir = MakeTempDir();
  std::string trace = Simulate(dir, "sim.json");
  ProcessOutput run = RunProcess(ToolPath("katrace-check"), {trace}, {}, dir);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.out.find("[footer]"), std::string::npos) << run.out;
  EXPECT_EQ(run.err.find("[footer]"), std::string::npos) << run.err;
}

TEST_F(ToolsOnPluginTraces, SeparateProcessesMergeIntoOneValidTimeline) {
  std::string dir = MakeTempDir();
  std::string a = Simulate(dir, "a.json");
  std::string b = Simulate(dir, "b.json.gz", {"--ops", "allreduce"}, 1);
  std::string merged = dir + "/merged.json";
  ProcessOutput run = RunProcess(ToolPath("katrace-merge"), {"-o", merged, a, b}, {}, dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json trace = ExpectValidTrace(merged);
  size_t colls = Slices(trace, "Coll").size();
  EXPECT_EQ(colls, Slices(LoadTrace(a), "Coll").size() + Slices(LoadTrace(b), "Coll").size());
}

}  // namespace
}  // namespace katrace_test
