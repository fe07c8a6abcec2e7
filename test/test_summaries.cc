// The plugin's finalize summary on real traces (the .so driven by katrace-sim with every kind on):
// Time (%) is busy time over the span, so no row passes 100 % however many slices overlap; each
// duration column has one unit, named in its header; no row name says a word twice; GPU work
// that several tasks report (the Send and Recv of one kernel) is one row; katrace-stats prints
// the same tables from the trace. Then rank identity on real multi-rank files: a process running
// two ranks writes two pids, and two such files merge into four ranks without dropping either.
#include <stdlib.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/support/plugin_harness.h"
#include "test/support/subprocess.h"
#include "test/support/trace_validation.h"

namespace katrace_test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// One parsed table: its header cells and, per row, the cells before the name and the name.
struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> names;
  std::string text;  // title to the last row, as printed
};

// The table titled |title| in |text|: title, meaning lines, header, rule, rows up to a blank line.
Table ParseTable(const std::string& text, const std::string& title) {
  Table t;
  const std::vector<std::string> lines = Lines(text);
  size_t i = 0;
  while (i < lines.size() && lines[i].rfind(title, 0) != 0) ++i;
  if (i == lines.size()) return t;
  t.title = lines[i];
  t.text = lines[i];
  size_t rule = i + 1;
  while (rule < lines.size() && lines[rule].find("--------") == std::string::npos) ++rule;
  if (rule >= lines.size()) return t;
  for (size_t j = i + 1; j <= rule; ++j) t.text += "\n" + lines[j];
  // Header cells are separated by two spaces or more.
  const std::string& header = lines[rule - 1];
  for (size_t at = 0; at < header.size();) {
    while (at < header.size() && header[at] == ' ') ++at;
    size_t end = header.find("  ", at);
    if (end == std::string::npos) end = header.size();
    if (end > at) t.header.push_back(header.substr(at, end - at));
    at = end;
  }
  for (size_t j = rule + 1; j < lines.size() && !lines[j].empty(); ++j) {
    t.text += "\n" + lines[j];
    const std::vector<std::string> words = Words(lines[j]);
    const size_t numbers = t.header.size() - 1;
    if (words.size() <= numbers) continue;
    t.cells.emplace_back(words.begin(), words.begin() + static_cast<long>(numbers));
    std::string name;
    for (size_t w = numbers; w < words.size(); ++w) name += (name.empty() ? "" : " ") + words[w];
    t.names.push_back(name);
  }
  return t;
}

double Number(std::string cell) {
  std::string digits;
  for (char c : cell) {
    if (c != ',') digits += c;
  }
  return strtod(digits.c_str(), nullptr);
}

// Nanoseconds per unit of a duration column, from its header ("Busy (us)"); Busy and Total each
// pick their own unit, so their cells compare only after scaling.
double NsPerUnit(const std::string& header) {
  if (header.find("(s)") != std::string::npos) return 1e9;
  if (header.find("(ms)") != std::string::npos) return 1e6;
  if (header.find("(us)") != std::string::npos) return 1e3;
  return 1;
}

class SummariesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }

  // One simulated job through the real plugin; returns the trace path.
  std::string Simulate(const std::string& name, const std::vector<std::string>& extra) {
    const std::string trace = dir_ + "/" + name;
    std::vector<std::string> args = {"--plugin", PluginPath(), "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessOutput run = RunProcess(ToolPath("katrace-sim"), args,
                                   {"KATRACE_OUTPUT=" + trace, "KATRACE_SUMMARY=1"}, dir_);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return trace;
  }

  std::string dir_;
};

TEST_F(SummariesTest, PluginSummaryIsBusyTimeOneUnitPerColumnNoRepeatsNoDuplicates) {
  const std::string trace = Simulate("all.json", {"--ranks", "4", "--channels", "2", "--iters", "5",
                                                  "--size", "256K", "--mask", "all"});
  const std::string summary = ReadWholeFile(trace + ".summary.txt");
  ASSERT_FALSE(summary.empty());
  const ProcessOutput stats = RunProcess(ToolPath("katrace-stats"), {"--report", "host,gpu", trace}, {}, dir_);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  bool concurrent = false;
  for (const char* title : {"katrace host-side summary", "katrace GPU-side summary"}) {
    const Table t = ParseTable(summary, title);
    ASSERT_GE(t.names.size(), 5u) << title << "\n" << summary;
    EXPECT_EQ(ParseTable(stats.out, title).text, t.text) << "katrace-stats differs from the plugin";
    ASSERT_EQ(t.header.front(), "Time (%)") << t.text;
    EXPECT_EQ(t.header[1].rfind("Busy (", 0), 0u) << t.text;
    EXPECT_EQ(t.header.back(), "Name");
    // Every duration column names its unit; no cell carries one.
    for (size_t c = 1; c + 1 < t.header.size(); ++c) {
      if (t.header[c] == "Instances") continue;
      const std::string& h = t.header[c];
      EXPECT_TRUE(h.find("(ns)") != std::string::npos || h.find("(us)") != std::string::npos ||
                  h.find("(ms)") != std::string::npos || h.find("(s)") != std::string::npos)
          << h;
    }
    std::set<std::string> names, numbers;
    for (size_t r = 0; r < t.names.size(); ++r) {
      const double percent = Number(t.cells[r][0]);
      EXPECT_LE(percent, 100.0) << t.names[r] << "\n" << t.text;
      // Cells are rounded to three decimals of their column's unit: allow half a step of each.
      const double busy_ns = Number(t.cells[r][1]) * NsPerUnit(t.header[1]);
      const double total_ns = Number(t.cells[r][2]) * NsPerUnit(t.header[2]);
      const double rounding_ns = (NsPerUnit(t.header[1]) + NsPerUnit(t.header[2])) / 2000;
      EXPECT_LE(busy_ns, total_ns + rounding_ns)
          << "Busy > Total: " << t.names[r] << " (" << t.header[1] << ", " << t.header[2] << ")";
      if (total_ns > busy_ns * 1.5) concurrent = true;
      for (const std::string& cell : t.cells[r]) {
        EXPECT_EQ(cell.find_first_not_of("0123456789,."), std::string::npos) << cell << " in " << t.names[r];
      }
      // No word twice in a name: "Group Group", "KernelStepWait Send wait".
      const std::vector<std::string> words = Words(t.names[r]);
      for (size_t a = 0; a < words.size(); ++a) {
        for (size_t b = a + 1; b < words.size(); ++b) {
          EXPECT_NE(words[a], words[b]) << t.names[r];
        }
      }
      EXPECT_TRUE(names.insert(t.names[r]).second) << t.names[r];
      // Two rows with every number the same are one thing counted twice.
      std::string all;
      for (const std::string& cell : t.cells[r]) all += cell + " ";
      EXPECT_TRUE(numbers.insert(all).second) << t.names[r] << " repeats another row: " << all;
    }
    for (const char* repeated : {"Group Group", "KernelLaunch KernelLaunch", "NetPlugin NetPlugin",
                                 "KernelStepWait", "KernelStepTransfer", "RecvStep", "SendStep"}) {
      EXPECT_EQ(t.text.find(repeated), std::string::npos) << repeated << "\n" << t.text;
    }
  }
  // The run does overlap slices (the sum of durations passes the busy time), and the one kernel
  // of a send/recv group is one row.
  EXPECT_TRUE(concurrent);
  const Table gpu = ParseTable(summary, "katrace GPU-side summary");
  const std::set<std::string> gpu_names(gpu.names.begin(), gpu.names.end());
  EXPECT_EQ(gpu_names.count("KernelCh Send+Recv"), 1u) << gpu.text;
  EXPECT_EQ(gpu_names.count("KernelCh Send"), 0u) << gpu.text;
  EXPECT_EQ(gpu_names.count("CollGpu Recv"), 0u) << gpu.text;
}

// A hung channel leaves KernelSteps that never stop: the exporter marks each incomplete and draws
// its wait and transfer halves right after it, without the flag. The plugin's summary left out
// the step but counted its halves (one more transfer than steps, a zero-length one among them);
// no half may outnumber its steps, and katrace-stats agrees with the plugin.
TEST_F(SummariesTest, HalvesOfIncompleteKernelStepsAreLeftOutWithThem) {
  const std::string trace = Simulate("hang.json", {"--ranks", "4", "--channels", "2", "--iters", "5",
                                                   "--hang", "1:0:3", "--hang-for", "300ms"});
  const std::string summary = ReadWholeFile(trace + ".summary.txt");
  const Table gpu = ParseTable(summary, "katrace GPU-side summary");
  ASSERT_FALSE(gpu.names.empty()) << summary;
  const ProcessOutput stats = RunProcess(ToolPath("katrace-stats"), {"--report", "gpu", trace}, {}, dir_);
  EXPECT_EQ(ParseTable(stats.out, "katrace GPU-side summary").text, gpu.text) << "katrace-stats differs";
  ASSERT_NE(LoadTrace(trace).dump().find("\"incomplete\":true"), std::string::npos) << "no hang in the trace";
  const size_t instances = 3;  // Time (%), Busy, Total Time, Instances
  ASSERT_EQ(gpu.header[instances], "Instances") << gpu.text;
  auto count = [&](const std::string& name) {
    for (size_t r = 0; r < gpu.names.size(); ++r) {
      if (gpu.names[r] == name) return Number(gpu.cells[r][instances]);
    }
    return 0.0;
  };
  for (const std::string dir : {"Send", "Recv"}) {
    const double steps = count("KernelStep " + dir);
    ASSERT_GT(steps, 0) << gpu.text;
    EXPECT_LE(count("KernelStep " + dir + " wait"), steps) << gpu.text;
    EXPECT_LE(count("KernelStep " + dir + " transfer"), steps) << gpu.text;
  }
}

// The simulator runs every rank in one process: each rank is its own pid, so one file is two
// ranks to katrace-stats, and two such files (two processes, the same pids) merge into four.
TEST_F(SummariesTest, RealTwoRankFilesCountAndMergeByPid) {
  const std::vector<std::string> job = {"--ranks", "2", "--channels", "2", "--iters", "3", "--size", "64K"};
  const std::string a = Simulate("a.json", job), b = Simulate("b.json", job);
  const ProcessOutput one = RunProcess(ToolPath("katrace-stats"), {"--report", "straggler", a}, {}, dir_);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("1 file (0 with problems), 2 ranks,"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("comm rank"), std::string::npos) << one.out;
  const std::string merged = dir_ + "/m.json";
  const ProcessOutput merge = RunProcess(ToolPath("katrace-merge"), {"-o", merged, a, b}, {}, dir_);
  EXPECT_EQ(merge.exit_code, 0) << merge.err;
  EXPECT_EQ(merge.err.find("left out"), std::string::npos) << merge.err;
  EXPECT_NE(merge.err.find("pid 0 is in " + a), std::string::npos) << merge.err;
  EXPECT_NE(merge.err.find("pid 1 is in " + a), std::string::npos) << merge.err;
  const nlohmann::json trace = LoadTrace(merged);
  std::set<int64_t> pids;
  for (const auto& e : trace["traceEvents"]) pids.insert(e["pid"].get<int64_t>());
  EXPECT_EQ(pids, (std::set<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(Slices(trace, "Coll").size(), Slices(LoadTrace(a), "Coll").size() + Slices(LoadTrace(b), "Coll").size());
  const ProcessOutput check = RunProcess(ToolPath("katrace-check"), {merged}, {}, dir_);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  const ProcessOutput four = RunProcess(ToolPath("katrace-stats"), {merged}, {}, dir_);
  EXPECT_NE(four.out.find("1 file (0 with problems), 4 ranks,"), std::string::npos) << four.out;
}

}  // namespace
}  // namespace katrace_test
