// katrace-check, katrace-merge and katrace-stats run as programs, the way users and the test
// suite run them, on hand-made traces (test/data, plus broken variants made by editing them) and
// on synthetic multi-rank traces (test/support/synthetic_trace) with fixed durations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/ends_with.h"
#include "common/output_file.h"
#include "common/summary_table.h"
#include "test/support/subprocess.h"
#include "test/support/synthetic_trace.h"
#include "test/support/tool_runner.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {
namespace {

namespace fs = std::filesystem;
using katrace_test::ReadWholeFile;
using katrace_test::RunTool;
using katrace_test::SyntheticRankOptions;
using katrace_test::SyntheticTiming;
using katrace_test::SyntheticTraceText;
using katrace_test::TestDataDir;
using katrace_test::ToolResult;
using katrace_test::WriteSyntheticTraceFile;
using T = SyntheticTiming;

// ---------------------------------------------------------------------------------------------
// Helpers

void WriteText(const fs::path& path, const std::string& text) {
  OutputFile out;
  std::string error;
  ASSERT_TRUE(out.Open(path.string(), EndsWith(path.string(), ".gz"), &error)) << error;
  out.Write(text);
  ASSERT_TRUE(out.Commit(&error)) << error;
}

// Replaces the single occurrence of |from| (the test fails if it is not there exactly once).
std::string Edit(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no '" << from << "' to edit";
  if (at == std::string::npos) return text;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "'" << from << "' is not unique";
  return text.replace(at, from.size(), to);
}

// The whole line holding |needle|, newline included.
std::string LineWith(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at) + 1;
  return text.substr(begin, text.find('\n', at) + 1 - begin);
}

struct ReadBack : TraceVisitor {
  std::vector<Json> events;
  Json other_data;
  bool OnEvent(const TraceEvent& event) override {
    events.push_back(event.json);
    return true;
  }
  void OnOtherData(const Json& other) override { other_data = other; }
};

ReadBack ReadTraceFile(const fs::path& path) {
  ReadBack back;
  const ReadResult result = ReadTrace(path.string(), &back);
  EXPECT_EQ(result.status, ReadStatus::kOk) << result.message;
  return back;
}

int64_t Ns(const Json& us) { return std::llround(us.get<double>() * 1000.0); }

Json StatsJson(const std::string& args);

class TraceToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/katrace-tools-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    valid_ = ReadWholeFile(TestDataDir() / "valid_rank0.json");
    ASSERT_FALSE(valid_.empty()) << "test/data/valid_rank0.json not found";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Put(const std::string& name, const std::string& text) {
    WriteText(dir_ / name, text);
    return (dir_ / name).string();
  }

  // Checks |text| and expects failure with |message| in the output.
  void ExpectCheckFails(const std::string& text, const std::string& message) {
    const ToolResult r = RunTool("katrace-check", Put("broken.json", text));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos)
        << "expected '" << message << "' in:\n" << r.output;
  }

  // Eight ranks of one job, clock bases up to ~1 s apart, rank 5 arriving 50 us late and rank 3
  // with a slow channel 1.
  std::vector<std::string> WriteJob(int nranks, const std::string& suffix = ".json") {
    std::vector<std::string> paths;
    for (int r = 0; r < nranks; ++r) {
      SyntheticRankOptions o = JobRank(r, nranks);
      const std::string path = (dir_ / ("rank" + std::to_string(r) + suffix)).string();
      std::string error;
      EXPECT_TRUE(WriteSyntheticTraceFile(path, o, &error)) << error;
      paths.push_back(path);
    }
    return paths;
  }

  static SyntheticRankOptions JobRank(int r, int nranks) {
    SyntheticRankOptions o;
    o.rank = r;
    o.nranks = nranks;
    o.host = "node" + std::to_string(r / 4);
    o.os_pid = 1000 + r;
    o.base_realtime_ns = 1700000000000000000 + (r * 7919 % 8) * 123456789 + r;
    o.base_monotonic_ns = 1000000000LL * (r + 1) + 17 * r;
    o.num_colls = 6;
    o.channels = 2;
    o.steps = 3;
    o.arrival_delay_ns = r == 5 ? 50000 : 100 * r;
    o.max_arrival_delay_ns = 50000;
    o.gpu_offset_ns = 1000 + r;
    if (r == 3) {
      o.slow_channel = 1;
      o.slow_channel_extra_ns = 700;
    }
    return o;
  }

  static std::string Join(const std::vector<std::string>& paths) {
    std::string out;
    for (const std::string& p : paths) out += " " + p;
    return out;
  }

  fs::path dir_;
  std::string valid_;
};

// ---------------------------------------------------------------------------------------------
// katrace-check

TEST_F(TraceToolsTest, CheckPassesValidTraces) {
  ToolResult r = RunTool("katrace-check", (TestDataDir() / "valid_rank0.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OK: 19 events, 0 warnings"), std::string::npos) << r.output;
  const std::vector<std::string> job = WriteJob(3, ".json.gz");
  r = RunTool("katrace-check", Join(job));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("error"), std::string::npos) << r.output;
}

TEST_F(TraceToolsTest, CheckCatchesPartialOverlap) {
  ExpectCheckFails(Edit(valid_, "\"ts\":41.000,\"dur\":2.000", "\"ts\":41.000,\"dur\":2.500"),
                   "partially overlaps event #7");
}

TEST_F(TraceToolsTest, CheckCatchesSameStartChildBeforeParent) {
  const std::string wait = LineWith(valid_, "\"cat\":\"KernelStepWait\"");
  const std::string step = LineWith(valid_, "\"cat\":\"KernelStep\"");
  ExpectCheckFails(Edit(valid_, step + wait, wait + step), "comes first in the file");
}

TEST_F(TraceToolsTest, CheckCatchesTruncation) {
  const std::string cut = valid_.substr(0, valid_.find("\"cat\":\"Coll\"") + 30);
  ExpectCheckFails(cut, "truncated: input ends inside traceEvents after 15 complete events");
}

TEST_F(TraceToolsTest, CheckCatchesMissingClosingBracket) {
  ExpectCheckFails(valid_.substr(0, valid_.find("\n],") + 1), "no closing ']'");
}

TEST_F(TraceToolsTest, CheckCatchesEmptyObjectSentinel) {
  ExpectCheckFails(Edit(valid_, "\n],", ",\n{}\n],"), "empty {} event");
}

TEST_F(TraceToolsTest, CheckCatchesBadFieldTypes) {
  ExpectCheckFails(Edit(valid_, "\"ts\":10.000", "\"ts\":\"10.000\""),
                   "field 'ts' must be a number of microseconds, not string");
  ExpectCheckFails(Edit(valid_, "\"ts\":10.000", "\"ts\":1e400"),
                   "field 'ts' must be a number of microseconds within +-9e15 (the range the tools compute in), "
                   "not infinity");
  ExpectCheckFails(Edit(valid_, "\"ts\":10.000", "\"ts\":1e16"),
                   "field 'ts' must be a number of microseconds within +-9e15 (the range the tools compute in), "
                   "not 1e+16");
  ExpectCheckFails(Edit(valid_, "\"tid\":1,\"ts\":13.000", "\"tid\":\"1\",\"ts\":13.000"),
                   "field 'tid' must be an integer, not string");
  ExpectCheckFails(Edit(valid_, "\"send\":true", "\"send\":1"),
                   "field 'args.send' must be a boolean, not integer");
  ExpectCheckFails(Edit(valid_, "\"seq\":0,", ""), "missing field 'args.seq'");
  ExpectCheckFails(Edit(valid_, "\"comm\":\"9a3c0f1e12345678\",\"rank\":0,\"depth\"",
                        "\"comm\":\"nothex\",\"rank\":0,\"depth\""),
                   "'args.comm' must be 16 hex digits");
  ExpectCheckFails(Edit(valid_, "\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":10.000",
                        "\"ph\":\"B\",\"pid\":0,\"tid\":1,\"ts\":10.000"),
                   "phase 'B' is not one katrace writes");
}

TEST_F(TraceToolsTest, CheckCatchesMissingMetadata) {
  const std::string thread_name = LineWith(valid_, "ch 0 send peer 1\"");
  ExpectCheckFails(Edit(valid_, thread_name, ""),
                   "track pid 0 tid 4 has no thread_name metadata (3 events on it)");
  ExpectCheckFails(Edit(valid_, "\"base_realtime_ns\":1700000000000000000,\"base_monotonic_ns\":"
                                "5000000000}}},",
                        "\"base_monotonic_ns\":5000000000}}},"),
                   "header lacks 'base_realtime_ns' (the clock base)");
  const std::string header = LineWith(valid_, "\"process_name\"");
  const std::string next = LineWith(valid_, "\"host 4243\"");
  const std::string swapped = Edit(valid_, header + next, next + header);
  ExpectCheckFails(swapped, "traceEvents[0] is not the katrace header");
  ExpectCheckFails(Edit(valid_, header, ""), "pid 0 has no process_name metadata");
}

// A thread_name without args (found by fuzz_trace_tools): katrace-check took the missing args as
// an object and crashed; it reports the field and goes on.
TEST_F(TraceToolsTest, CheckReportsAThreadNameWithoutArgs) {
  const std::string thread_name = LineWith(valid_, "ch 0 send peer 1\"");
  const std::string bare = thread_name.substr(0, thread_name.find(",\"args\"")) + "},\n";
  ExpectCheckFails(Edit(valid_, thread_name, bare), "(M thread_name): missing field 'args'");
}

TEST_F(TraceToolsTest, CheckCatchesFlowsToNowhere) {
  ExpectCheckFails(Edit(valid_, "\"bp\":\"e\",\"id\":3", "\"bp\":\"e\",\"id\":99"),
                   "flow 99 has no start (s)");
  ExpectCheckFails(Edit(valid_, "\"bp\":\"e\",\"id\":3,\"pid\":0,\"tid\":2,\"ts\":40.000",
                        "\"bp\":\"e\",\"id\":3,\"pid\":0,\"tid\":2,\"ts\":45.000"),
                   "flow endpoint at 45.000 us has no enclosing slice on track pid 0 tid 2");
  ExpectCheckFails(Edit(valid_, "\"ph\":\"f\",\"bp\":\"e\",", "\"ph\":\"f\","),
                   "flow end without \"bp\":\"e\"");
}

TEST_F(TraceToolsTest, CheckCatchesKernelStepOutsideCollGpuExtent) {
  ExpectCheckFails(Edit(valid_, "\"gpu_end\":44.000", "\"gpu_end\":42.000"),
                   "event #7 (KernelStep) [40.000, 43.000] us lies outside its Coll's GPU "
                   "extent [40.000, 42.000] us");
  // A late child (it started after its parent's work was retired) is not held to the extent
  // that was final before it ran.
  const std::string longer = Edit(valid_, "\"ts\":40.000,\"dur\":3.000,\"args\":{\"id\":5,",
                                  "\"ts\":40.000,\"dur\":5.000,\"args\":{\"id\":5,");
  ExpectCheckFails(longer, "event #7 (KernelStep) [40.000, 45.000] us lies outside its Coll's GPU extent");
  const std::string late = Edit(longer, "{\"id\":5,\"parent\":3,", "{\"id\":5,\"parent\":3,\"late\":true,");
  ToolResult r = RunTool("katrace-check", Put("late.json", late));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ExpectCheckFails(Edit(valid_, ",\"gpu_start\":40.000,\"gpu_end\":44.000", ""),
                   "has no GPU extent (args.gpu_start/gpu_end) although it has GPU work");
  ExpectCheckFails(Edit(valid_, "{\"id\":6,\"parent\":3", "{\"id\":6,\"parent\":77"),
                   "args.parent 77 names no event of this process");
}

TEST_F(TraceToolsTest, CheckCatchesStopBeforeStart) {
  ExpectCheckFails(Edit(valid_, "\"gpu_stop_ns\":5000044000", "\"gpu_stop_ns\":5000030000"),
                   "GPU stop before start (gpu_stop_ns 5000030000 < gpu_start_ns 5000040000)");
  ExpectCheckFails(Edit(valid_, "\"gpu_stop_ns\":5000043000", "\"gpu_stop_ns\":5000040500"),
                   "GPU stop before start (gpu_stop_ns 5000040500 < gpu_ready_ns 5000041000)");
  ExpectCheckFails(Edit(valid_, "\"dur\":20.000", "\"dur\":-20.000"),
                   "negative dur -20.000 (stop before start)");
}

TEST_F(TraceToolsTest, CheckCatchesFooterProblems) {
  ExpectCheckFails(Edit(valid_, "\"drops\":{\"GroupApi\":0,\"CollApi\":0,\"KernelLaunch\":0,"
                                "\"Coll\":0,\"KernelCh\":0,\"KernelStep\":0},",
                        ""),
                   "footer lacks 'drops' (the drop counters)");
  ExpectCheckFails(valid_.substr(0, valid_.find("\"otherData\"") - 2) + "}\n",
                   "no footer (otherData.katrace)");
  ExpectCheckFails(Edit(valid_, "\"io_errors\":0", "\"io_errors\":2"),
                   "the writer reported 2 write errors");
  ExpectCheckFails(Edit(valid_, "{\"id\":4,", "{\"id\":2,"), "id 2 is already used by event #");
}

// The spool-era footer (waits, strings_unnamed, spool) is what valid_rank0.json has; a footer
// of the plugin before the spool (writer_stalls, no spool) is still accepted without warnings.
TEST_F(TraceToolsTest, CheckKnowsTheSpoolFooterAndTheOneBeforeIt) {
  const std::string kSpool =
      ",\"spool\":{\"blocks\":1,\"bytes\":2048,\"clean_end\":true,\"cut_offset\":0}";
  const std::string older = Edit(Edit(valid_, "\"waits\":0,\"io_errors\":0,\"strings_unnamed\":0,",
                                      "\"writer_stalls\":0,\"io_errors\":0,"),
                                 kSpool, "");
  ToolResult r = RunTool("katrace-check", Put("older.json", older));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OK: 19 events, 0 warnings"), std::string::npos) << r.output;

  r = RunTool("katrace-check", Put("nowaits.json", Edit(valid_, "\"waits\":0,", "")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: footer lacks 'waits'"), std::string::npos) << r.output;
  r = RunTool("katrace-check", Put("nospool.json", Edit(valid_, kSpool, "")));
  EXPECT_NE(r.output.find("warning: footer lacks 'spool'"), std::string::npos) << r.output;

  r = RunTool("katrace-check",
              Put("cut.json", Edit(valid_, "\"clean_end\":true,\"cut_offset\":0",
                                   "\"clean_end\":false,\"cut_offset\":1064")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: the spool was not closed cleanly (cut at offset 1064)"),
            std::string::npos)
      << r.output;
  r = RunTool("katrace-check", Put("unnamed.json", Edit(valid_, "\"strings_unnamed\":0",
                                                        "\"strings_unnamed\":3")));
  EXPECT_NE(r.output.find("warning: 3 strings could not be interned"), std::string::npos)
      << r.output;

  ExpectCheckFails(Edit(valid_, "\"clean_end\":true", "\"clean_end\":1"),
                   "footer 'spool.clean_end' must be a boolean, not integer");
  ExpectCheckFails(Edit(valid_, "\"blocks\":1,", ""),
                   "footer 'spool.blocks' must be a count, not absent");
}

// waits and strings_unnamed are summed (an older input's writer_stalls counts as waits); the
// spools are listed per rank, since cut offsets and clean ends do not add up.
// --gzip on a name without .gz wrote gzip under the plain name (m.json held gzip bytes); like
// KATRACE_GZIP, it now adds .gz, and the file's name says what it holds.
TEST_F(TraceToolsTest, MergeGzipAddsGzToTheOutputsName) {
  const std::vector<std::string> job = WriteJob(2);
  const std::string out = (dir_ / "m.json").string();
  const ToolResult r = RunTool("katrace-merge", "--gzip -o " + out + Join(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(out));
  ASSERT_TRUE(fs::exists(out + ".gz")) << r.output;
  EXPECT_EQ(ReadWholeFile(out + ".gz").substr(0, 2), "\x1f\x8b");
  EXPECT_NE(r.output.find("m.json.gz"), std::string::npos) << r.output;
  EXPECT_EQ(RunTool("katrace-check", out + ".gz").exit_code, 0);
}

// Merged onto one timeline, a trace 30 days after another has timestamps past 2^51 ns, where µs
// read as doubles (by the tools, and Perfetto's JSON importer) are no longer exact to the ns:
// katrace-check then saw thousands of overlaps that are not there. The merge says so; traces of
// one job, hours apart at most, merge without a word.
TEST_F(TraceToolsTest, MergeWarnsWhenItsTimelinePassesExactMicroseconds) {
  const std::vector<std::string> job = WriteJob(2);
  const std::string near = (dir_ / "near.json").string();
  const ToolResult quiet = RunTool("katrace-merge", "-q -o " + near + Join(job));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output.find("2^51"), std::string::npos) << quiet.output;

  SyntheticRankOptions later = JobRank(0, 2);
  later.os_pid = 4242;
  later.base_realtime_ns += 30LL * 86400 * 1000000000;
  later.job_origin_realtime_ns += 30LL * 86400 * 1000000000;
  const std::string month = (dir_ / "month-later.json").string();
  std::string error;
  ASSERT_TRUE(WriteSyntheticTraceFile(month, later, &error)) << error;
  const ToolResult far = RunTool("katrace-merge", "-q -o " + (dir_ / "far.json").string() + " " + job[0] + " " + month);
  ASSERT_EQ(far.exit_code, 0) << far.output;
  EXPECT_NE(far.output.find("warning: the inputs' clock bases are 30.0 days apart"), std::string::npos)
      << far.output;
}

TEST_F(TraceToolsTest, MergeSumsWaitsAndListsSpools) {
  const std::vector<std::string> job = WriteJob(3);
  WriteText(job[1], Edit(Edit(ReadWholeFile(job[1]), "\"waits\":0,", "\"waits\":4,"),
                         "\"strings_unnamed\":0,", "\"strings_unnamed\":2,"));
  WriteText(job[2], Edit(Edit(ReadWholeFile(job[2]), "\"waits\":0,", "\"writer_stalls\":3,"),
                         ",\"spool\":{\"blocks\":1,\"bytes\":4096,\"clean_end\":true,"
                         "\"cut_offset\":0}",
                         ""));
  WriteText(job[0], Edit(ReadWholeFile(job[0]), "\"clean_end\":true,\"cut_offset\":0",
                         "\"clean_end\":false,\"cut_offset\":777"));
  const std::string out = (dir_ / "merged.json").string();
  ToolResult r = RunTool("katrace-merge", "-o " + out + Join(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json footer = ReadTraceFile(out).other_data["katrace"];
  EXPECT_EQ(footer["waits"], 7);
  EXPECT_EQ(footer["strings_unnamed"], 2);
  EXPECT_FALSE(footer.contains("writer_stalls"));
  ASSERT_EQ(footer["spool"].size(), 2u) << footer["spool"].dump();
  EXPECT_EQ(footer["spool"][0]["rank"], 0);
  EXPECT_EQ(footer["spool"][0]["clean_end"], false);
  EXPECT_EQ(footer["spool"][0]["cut_offset"], 777);
  EXPECT_EQ(footer["spool"][1]["rank"], 1);
  EXPECT_EQ(footer["spool"][1]["blocks"], 1);
  r = RunTool("katrace-check", out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: rank 0: the spool was not closed cleanly (cut at offset 777)"),
            std::string::npos)
      << r.output;
}

TEST_F(TraceToolsTest, CheckWarnsAboutDropsWithoutFailing) {
  const ToolResult r = RunTool(
      "katrace-check", Put("drops.json", Edit(valid_, "\"KernelCh\":0,\"KernelStep\":0}",
                                              "\"KernelCh\":0,\"KernelStep\":12}")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: 12 events were dropped (a full pool or buffer, or an unwritable spool): KernelStep 12"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(RunTool("katrace-check", "--strict " + Put("drops.json", Edit(valid_,
      "\"KernelCh\":0,\"KernelStep\":0}", "\"KernelCh\":0,\"KernelStep\":12}"))).exit_code, 1);
}

TEST_F(TraceToolsTest, CheckReportsUnreadableFilesAndGoesOn) {
  const std::string good = Put("good.json", valid_);
  const std::string foreign = Put("foreign.json", "{\"hello\":[1,2,3]}");
  const std::string binary = Put("binary.json", std::string("\x7f" "ELF\x01\x02", 6));
  const std::string nvtxt = Put("t.nvtxt", "# katrace NCCL profiler trace, NVTXT\nSetFileDisplayName(t)\n");
  const std::string gz = ReadWholeFile(Put("whole.json.gz", valid_));
  const std::string cut_gz = (dir_ / "cut.json.gz").string();
  std::ofstream(cut_gz, std::ios::binary) << gz.substr(0, gz.size() / 2);
  const ToolResult r = RunTool("katrace-check", good + " " + (dir_ / "missing.json").string() +
                                                    " " + foreign + " " + binary + " " + cut_gz + " " + nvtxt);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("good.json: OK"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("missing.json: error: cannot open: No such file or directory"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("foreign.json: error: not a Chrome trace: no traceEvents array"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("binary.json:1: error: invalid JSON"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("t.nvtxt: error: an NVTXT file (Nsight Systems' text annotations, for its "
                          "ImportNvtxt)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("cut.json.gz"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gzip stream is truncated"), std::string::npos) << r.output;
}

// zlib's gzread stops silently at bytes after the last gzip member; such bytes may be what is left
// of a second trace written over the first. Two members are one gzip file, though.
TEST_F(TraceToolsTest, BytesAfterAGzipStreamAreReportedNotIgnored) {
  const std::string gz = ReadWholeFile(Put("whole.json.gz", valid_));
  const std::string tail = (dir_ / "tail.json.gz").string();
  std::ofstream(tail, std::ios::binary) << gz << "garbage!";
  const ToolResult whole = RunTool("katrace-check", (dir_ / "whole.json.gz").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const ToolResult r = RunTool("katrace-check", tail);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("tail.json.gz: error: 8 bytes after the end of the gzip stream (from byte " +
                          std::to_string(gz.size()) + ") are not gzip"),
            std::string::npos)
      << r.output;
  // Every event was still read and checked.
  const size_t ok = whole.output.find("OK: ");
  ASSERT_NE(ok, std::string::npos) << whole.output;
  const std::string events = whole.output.substr(ok + 4, whole.output.find(',', ok) - ok - 4);
  EXPECT_NE(r.output.find("1 error, 0 warnings in " + events), std::string::npos) << r.output;
  EXPECT_EQ(RunTool("katrace-stats", tail).exit_code, 1);

  const size_t half = valid_.size() / 2;
  const std::string first = ReadWholeFile(Put("first.json.gz", valid_.substr(0, half)));
  const std::string second = ReadWholeFile(Put("second.json.gz", valid_.substr(half)));
  const std::string members = (dir_ / "members.json.gz").string();
  std::ofstream(members, std::ios::binary) << first << second;
  const ToolResult joined = RunTool("katrace-check", members);
  EXPECT_EQ(joined.exit_code, 0) << joined.output;
}

TEST_F(TraceToolsTest, CheckGivesTheSameAnswerWhenItsSortsSpillToDisk) {
  SyntheticRankOptions o = JobRank(0, 2);
  o.num_colls = 40;
  std::string text = SyntheticTraceText(o);
  // One partial overlap deep in the file.
  text = Edit(text, "\"ts\":1000.000,\"dur\":5.000", "\"ts\":1000.000,\"dur\":1001.500");
  const std::string path = Put("spill.json", text);
  const ToolResult in_memory = RunTool("katrace-check", path);
  const ToolResult spilled = RunTool("katrace-check", "--sort-mem 1K " + path);
  EXPECT_EQ(in_memory.exit_code, 1);
  EXPECT_EQ(spilled.exit_code, 1);
  EXPECT_NE(in_memory.output.find("partially overlaps"), std::string::npos) << in_memory.output;
  EXPECT_EQ(spilled.output, in_memory.output);
}

TEST_F(TraceToolsTest, CheckRejectsASlackPastAnHourInsteadOfWrappingIt) {
  const std::string path = Put("v.json", valid_);
  // 2^64 - 1 was taken as -1 ns and INT64_MAX wrapped the extent's end: false errors either way.
  for (const char* slack : {"18446744073709551615", "9223372036854775807", "3600000000001"}) {
    const ToolResult r = RunTool("katrace-check", std::string("--slack-ns ") + slack + " " + path);
    EXPECT_EQ(r.exit_code, 2) << slack << ": " << r.output;
    EXPECT_NE(r.output.find("katrace-check: --slack-ns " + std::string(slack) +
                            " is more than an hour"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("gpu-extent"), std::string::npos) << r.output;
  }
  const ToolResult hour = RunTool("katrace-check", "--slack-ns 3600000000000 " + path);
  EXPECT_EQ(hour.exit_code, 0) << hour.output;
  // The slack still widens the extent: the KernelCh and the CollGpu end 2 us past it.
  const std::string late_end =
      Put("late.json", Edit(valid_, "\"gpu_end\":44.000", "\"gpu_end\":42.000"));
  EXPECT_EQ(RunTool("katrace-check", "--slack-ns 1999 " + late_end).exit_code, 1);
  EXPECT_EQ(RunTool("katrace-check", "--slack-ns 2000 " + late_end).exit_code, 0);
}

TEST_F(TraceToolsTest, ToolsPrintHelp) {
  for (const char* tool : {"katrace-check", "katrace-merge", "katrace-stats"}) {
    const ToolResult r = RunTool(tool, "--help");
    EXPECT_EQ(r.exit_code, 0) << tool;
    EXPECT_NE(r.output.find(std::string("usage: ") + tool), std::string::npos) << r.output;
    EXPECT_EQ(RunTool(tool, "--no-such-option x").exit_code, 2) << tool;
  }
}

// ---------------------------------------------------------------------------------------------
// katrace-merge

TEST_F(TraceToolsTest, MergeLinesUpTheSameCollectiveAcrossRanks) {
  const std::vector<std::string> job = WriteJob(8);
  // Inputs in scrambled order, half of them gzip: the output still lists ranks in order.
  std::string error;
  ASSERT_TRUE(WriteSyntheticTraceFile(job[6] + ".gz", JobRank(6, 8), &error));
  const std::string out = (dir_ / "merged.json").string();
  ToolResult r = RunTool("katrace-merge", "-o " + out + " " + job[7] + " " + job[6] + ".gz " +
                                              job[0] + " " + job[5] + " " + job[4] + " " +
                                              job[3] + " " + job[2] + " " + job[1]);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunTool("katrace-check", out);
  EXPECT_EQ(r.exit_code, 0) << r.output;

  const ReadBack merged = ReadTraceFile(out);
  std::map<int64_t, std::set<int64_t>> collgpu_ts_by_seq;  // k-th CollGpu on each rank
  std::map<int64_t, int> collgpu_count;
  std::vector<int64_t> pid_order;
  std::set<int64_t> flow_ids;
  for (const Json& e : merged.events) {
    const int64_t pid = e["pid"].get<int64_t>();
    if (pid_order.empty() || pid_order.back() != pid) pid_order.push_back(pid);
    if (e.value("cat", "") == "CollGpu") {
      collgpu_ts_by_seq[collgpu_count[pid]++].insert(Ns(e["ts"]));
    }
    if (e.value("ph", "") == "s") {
      EXPECT_TRUE(flow_ids.insert(e["id"].get<int64_t>()).second) << "flow ids must be unique";
    }
    if (e.value("name", "") == "process_name") {
      const Json& h = e["args"]["katrace"];
      EXPECT_EQ(h["base_realtime_ns"].get<int64_t>(),
                1700000000000000000 + 0 /* the earliest base: rank 0 */);
    }
  }
  EXPECT_EQ(pid_order, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  ASSERT_EQ(collgpu_ts_by_seq.size(), 6u);
  for (const auto& [k, ts] : collgpu_ts_by_seq) {
    EXPECT_EQ(ts.size(), 1u) << "collective " << k << " starts at " << ts.size()
                             << " different times across ranks";
    // The job's t = 0 is 1 ms after the earliest base; GPU work starts 60 us into each period.
    EXPECT_EQ(*ts.begin(), 1000000 + k * 200000 + 50000 + T::kGpuAfterLastArrivalNs);
  }
  EXPECT_EQ(flow_ids.size(), 8u * 6u);
  const Json& footer = merged.other_data["katrace"];
  EXPECT_EQ(footer["format"], "katrace-merged");
  EXPECT_EQ(footer["inputs"].size(), 8u);
  EXPECT_EQ(footer["events"]["Coll"].get<int>(), 8 * 6);
}

TEST_F(TraceToolsTest, MergeKeepsHostClockRelationsPerRank) {
  const std::vector<std::string> job = WriteJob(2);
  const std::string out = (dir_ / "m.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-q -o " + out + Join(job)).exit_code, 0);
  const ReadBack merged = ReadTraceFile(out);
  // realtime = base_realtime_ns + ts must give the same instant before and after the merge.
  for (int r = 0; r < 2; ++r) {
    const ReadBack original = ReadTraceFile(job[r]);
    int64_t original_realtime = 0, merged_realtime = 0;
    for (const Json& e : original.events) {
      if (e.value("cat", "") == "Coll") {
        original_realtime = JobRank(r, 2).base_realtime_ns + Ns(e["ts"]);
        break;
      }
    }
    int64_t merged_base = 0;
    for (const Json& e : merged.events) {
      if (e["pid"] != r) continue;
      if (e.value("name", "") == "process_name") {
        merged_base = e["args"]["katrace"]["base_realtime_ns"].get<int64_t>();
      }
      if (e.value("cat", "") == "Coll") {
        merged_realtime = merged_base + Ns(e["ts"]);
        break;
      }
    }
    EXPECT_EQ(merged_realtime, original_realtime) << "rank " << r;
  }
}

TEST_F(TraceToolsTest, MergeSelectsRanksTimeAndKinds) {
  const std::vector<std::string> job = WriteJob(8);
  const std::string by_rank = (dir_ / "ranks.json").string();
  ASSERT_EQ(RunTool("katrace-merge", "-q --ranks 0-2,5 -o " + by_rank + Join(job)).exit_code, 0);
  std::set<int64_t> pids;
  for (const Json& e : ReadTraceFile(by_rank).events) pids.insert(e["pid"].get<int64_t>());
  EXPECT_EQ(pids, (std::set<int64_t>{0, 1, 2, 5}));

  // A window around the third collective only (1 ms + 2 * 200 us on the merged timeline).
  const std::string window = (dir_ / "window.json").string();
  ToolResult r = RunTool("katrace-merge",
                         "-q --from 1390us --to 1470us -o " + window + Join(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunTool("katrace-check", window);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  int colls = 0, starts = 0, ends = 0;
  for (const Json& e : ReadTraceFile(window).events) {
    if (e.value("ph", "") == "X") {
      const int64_t start = Ns(e["ts"]), end = start + Ns(e["dur"]);
      EXPECT_LE(start, 1470000);
      EXPECT_GE(end, 1390000);
      colls += e.value("cat", "") == "Coll";
    }
    starts += e.value("ph", "") == "s";
    ends += e.value("ph", "") == "f";
  }
  EXPECT_EQ(colls, 8);
  EXPECT_EQ(starts, ends);

  const std::string kinds = (dir_ / "kinds.json").string();
  // KATRACE_MASK's words, in any case; a kind keeps the slices derived from it (Coll's CollGpu).
  r = RunTool("katrace-merge", "-q --kinds coll,KernelCh -o " + kinds + Join(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> phases, cats;
  for (const Json& e : ReadTraceFile(kinds).events) {
    phases.insert(e.value("ph", ""));
    if (e.value("ph", "") == "X") cats.insert(e.value("cat", ""));
  }
  EXPECT_EQ(cats, (std::set<std::string>{"Coll", "CollGpu", "KernelCh"}));
  EXPECT_EQ(phases, (std::set<std::string>{"M", "X"}));
  r = RunTool("katrace-check", kinds);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(RunTool("katrace-merge", "--kinds Bogus -o x.json" + Join(job)).exit_code, 2);
}

// --kinds keeps a CollGpu slice with its collective's kind (a P2p's, named Send or Recv, with
// p2p), and JSON drops an arrow whose slice at one end was left out, both halves, as protobuf
// does: a lone half would bind to whatever slice is open at its time.
TEST_F(TraceToolsTest, MergeKindsKeepAP2psGpuExtentWithP2pAndArrowsOnlyWithBothSlices) {
  const fs::path spool = dir_ / "sim_all_kinds.kspool";
  fs::copy_file(TestDataDir() / "spools/sim_all_kinds.kspool", spool);
  const std::string in = (dir_ / "all.json").string();
  ToolResult r = RunTool("katrace-export", "--keep-spool --quiet " + spool.string() + " -o " + in);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  struct Kept {
    std::set<std::string> coll_gpu;  // names of the CollGpu slices
    int starts = 0, ends = 0;
  };
  int merges = 0;
  auto merge = [&](const std::string& kinds) {
    const std::string out = (dir_ / ("kinds" + std::to_string(++merges) + ".json")).string();
    ToolResult m = RunTool("katrace-merge", "-q --kinds " + kinds + " -o " + out + " " + in);
    EXPECT_EQ(m.exit_code, 0) << kinds << ": " << m.output;
    ToolResult check = RunTool("katrace-check", out);
    EXPECT_EQ(check.exit_code, 0) << kinds << ": " << check.output;
    EXPECT_EQ(check.output.find("[flow]"), std::string::npos) << kinds << ": " << check.output;
    Kept k;
    for (const Json& e : ReadTraceFile(out).events) {
      if (e.value("cat", "") == "CollGpu") k.coll_gpu.insert(e.value("name", ""));
      k.starts += e.value("ph", "") == "s";
      k.ends += e.value("ph", "") == "f";
    }
    return k;
  };
  const Kept coll = merge("coll,flow");
  EXPECT_EQ(coll.coll_gpu, (std::set<std::string>{"AllGather", "AllReduce", "ReduceScatter"}));
  EXPECT_EQ(coll.starts, 18);  // one arrow per Coll, none of the P2ps'
  EXPECT_EQ(coll.ends, 18);
  const Kept p2p = merge("p2p,flow");
  EXPECT_EQ(p2p.coll_gpu, (std::set<std::string>{"Send", "Recv"}));
  EXPECT_EQ(p2p.starts, 24);
  EXPECT_EQ(p2p.ends, 24);
  // The GPU ends alone: no arrow has its host slice.
  const Kept gpu_only = merge("collgpu,flow");
  EXPECT_EQ(gpu_only.starts, 0);
  EXPECT_EQ(gpu_only.ends, 0);
}

TEST_F(TraceToolsTest, MergeReadsAndWritesGzip) {
  const std::vector<std::string> job = WriteJob(3, ".json.gz");
  const std::string out = (dir_ / "merged.json.gz").string();
  ToolResult r = RunTool("katrace-merge", "-q -o " + out + Join(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadWholeFile(out).substr(0, 2), "\x1f\x8b");
  r = RunTool("katrace-check", out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << "left behind: " << entry.path();
  }
}

TEST_F(TraceToolsTest, MergeWarnsAboutSizeAndRemergesMergedTraces) {
  const std::vector<std::string> job = WriteJob(4);
  const std::string first = (dir_ / "first.json").string();
  ToolResult r = RunTool("katrace-merge", "--warn-mb 0 -o " + first + " " + job[0] + " " + job[1]);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the output has passed"), std::string::npos) << r.output;
  const std::string second = (dir_ / "second.json").string();
  r = RunTool("katrace-merge", "-q --ranks 1-3 -o " + second + " " + first + " " + job[2] + " " +
                                   job[3]);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<int64_t> pids;
  for (const Json& e : ReadTraceFile(second).events) pids.insert(e["pid"].get<int64_t>());
  EXPECT_EQ(pids, (std::set<int64_t>{1, 2, 3}));
  r = RunTool("katrace-check", second);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Stats read merged traces too: every rank's collectives line up as before.
  const Json stats = StatsJson("--report straggler " + second);
  EXPECT_EQ(stats["straggler_instances"]["seen_on_2_or_more_ranks"], 6);
}

TEST_F(TraceToolsTest, MergeLeavesOutBadInputsAndGoesOn) {
  std::vector<std::string> job = WriteJob(3);
  const std::string text = ReadWholeFile(job[2]);
  const std::string cut = Put("rank2cut.json", text.substr(0, text.size() / 2));
  const std::string dup = Put("rank1again.json", ReadWholeFile(job[1]));
  const std::string foreign = Put("foreign.json", "[{\"name\":\"x\",\"ph\":\"X\"}]");
  const std::string out = (dir_ / "m.json").string();
  ToolResult r = RunTool("katrace-merge", "-o " + out + " " + job[0] + " " + job[1] + " " + cut +
                                              " " + dup + " " + foreign + " " +
                                              (dir_ / "nope.json").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nope.json: cannot open"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("foreign.json: traceEvents[0] is not a process_name event with the "
                          "katrace header; left out"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("rank1again.json: rank 1 is already in"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("rank2cut.json: truncated"), std::string::npos) << r.output;
  // The output is whole JSON anyway; the cut rank's events up to the cut are in it.
  const ReadBack merged = ReadTraceFile(out);
  std::set<int64_t> pids;
  for (const Json& e : merged.events) pids.insert(e["pid"].get<int64_t>());
  EXPECT_EQ(pids, (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(merged.other_data["katrace"]["inputs"][2]["problem"].get<std::string>().rfind(
                "truncated", 0),
            0u);
}

TEST_F(TraceToolsTest, MergeRefusesToOverwriteItsInput) {
  const std::string input = Put("in.json", valid_);
  for (const std::string& out : {input, (dir_ / "." / "in.json").string()}) {
    const ToolResult r = RunTool("katrace-merge", "-o " + out + " " + input);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("is also an input"), std::string::npos) << r.output;
  }
  EXPECT_EQ(ReadWholeFile(input), valid_);
}

TEST_F(TraceToolsTest, MergeTakesTheCompleteOneOfTwoFilesForARank) {
  std::vector<std::string> job = WriteJob(2);
  const std::string text = ReadWholeFile(job[1]);
  const std::string cut = Put("rank1cut.json", text.substr(0, text.size() / 2));
  const std::string out = (dir_ / "m.json").string();
  // The cut copy comes first on the command line and would win by order alone.
  const ToolResult r = RunTool("katrace-merge", "-o " + out + " " + cut + " " + job[0] + " " +
                                                    job[1]);
  EXPECT_NE(r.output.find("warning: rank 1 is in " + cut + " and " + job[1]), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("so " + job[1] + " is merged"), std::string::npos) << r.output;
  const ReadBack merged = ReadTraceFile(out);
  ASSERT_TRUE(merged.other_data["katrace"]["inputs"].is_array());
  for (const Json& input : merged.other_data["katrace"]["inputs"]) {
    EXPECT_EQ(input.dump().find("rank1cut"), std::string::npos) << input.dump();
  }
  // Both complete: the first stays, the other is left out as before.
  const ToolResult again = RunTool("katrace-merge", "-o " + out + " " + job[1] + " " +
                                                        Put("rank1copy.json", text));
  EXPECT_NE(again.output.find("rank1copy.json: rank 1 is already in"), std::string::npos)
      << again.output;
}

TEST_F(TraceToolsTest, CountsAgreeWithTheirNouns) {
  const ToolResult one_error = RunTool(
      "katrace-check", Put("one.json", Edit(valid_, "\"algo\":\"Ring\"", "\"algo\":7")));
  EXPECT_NE(one_error.output.find("FAILED: 1 error, 0 warnings in 19 events"), std::string::npos)
      << one_error.output;
  const std::string out = (dir_ / "m.json").string();
  const ToolResult merge = RunTool("katrace-merge", "-o " + out + " " + Put("v.json", valid_));
  EXPECT_NE(merge.output.find("events from 1 file, "), std::string::npos) << merge.output;
}

TEST_F(TraceToolsTest, CheckSaysWhyAnIntegerAboveInt64MaxIsRejected) {
  const ToolResult r = RunTool("katrace-check",
                               Put("big.json", Edit(valid_, "\"step\":0", "\"step\":9223372036854775808")));
  EXPECT_EQ(r.exit_code, 1);
  // A KernelStep's step is a signed integer (kind_schema.h); a Coll's seq would take it (unsigned).
  EXPECT_NE(r.output.find("field 'args.step' must be at most 9223372036854775807 (INT64_MAX), not "
                          "9223372036854775808"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("not integer"), std::string::npos) << r.output;
}

TEST_F(TraceToolsTest, CheckAcceptsHostTimedKernelChAndKernelStepWithoutStop) {
  // A KernelCh stopped with NULL args: no stop stamp, placed at host times, which need not lie
  // inside its Coll's GPU extent.
  std::string kernel_ch = Edit(valid_, ",\"gpu_start_ns\":5000040000,\"gpu_stop_ns\":5000044000}}",
                               ",\"gpu_start_ns\":5000040000,\"host_timed\":true}}");
  kernel_ch = Edit(kernel_ch, "\"cat\":\"KernelCh\",\"ph\":\"X\",\"pid\":0,\"tid\":3,\"ts\":40.000",
                   "\"cat\":\"KernelCh\",\"ph\":\"X\",\"pid\":0,\"tid\":3,\"ts\":12.000");
  ToolResult r = RunTool("katrace-check", Put("kch.json", kernel_ch));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // A KernelStep that never saw a stop state: no gpu_stop_ns, not marked abandoned.
  r = RunTool("katrace-check",
              Put("kstep.json", Edit(valid_, ",\"gpu_stop_ns\":5000043000,\"abandoned\":false}}",
                                     "}}")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// ---------------------------------------------------------------------------------------------
// katrace-stats

TEST_F(TraceToolsTest, StatsOnNothingReadablePrintsOneErrorAndNoTables) {
  for (const std::string& input : {(dir_ / "missing.json").string(),
                                   Put("cut.json", valid_.substr(0, 40))}) {
    const ToolResult r = RunTool("katrace-stats", input);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_EQ(r.output.rfind("katrace-stats: " + input + ": ", 0), 0u) << r.output;
  }
}

// The JSON report, on stdout alone: notes and warnings go to stderr.
Json StatsJson(const std::string& args) {
  const ToolResult r = RunTool("katrace-stats", "--format json " + args, false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return Json::parse(r.output);
}

const Json& Row(const Json& table, const std::string& name) {
  for (const Json& row : table) {
    if (row["name"] == name) return row;
  }
  static const Json kMissing;
  ADD_FAILURE() << "no row '" << name << "' in " << table.dump();
  return kMissing;
}

TEST_F(TraceToolsTest, StatsMatchHandComputation) {
  const int n = 4;
  const std::vector<std::string> job = WriteJob(n);
  const Json stats = StatsJson(Join(job));
  const int colls = n * 6;  // 6 collectives per rank
  const Json& coll_api = Row(stats["host"], "CollApi AllReduce");
  EXPECT_EQ(coll_api["instances"], colls);
  EXPECT_EQ(coll_api["total_ns"], colls * T::kCollApiNs);
  EXPECT_EQ(coll_api["stddev_ns"], 0.0);
  EXPECT_EQ(Row(stats["host"], "Coll AllReduce")["total_ns"], colls * T::kCollNs);
  EXPECT_EQ(Row(stats["host"], "KernelLaunch")["min_ns"], T::kLaunchNs);
  // Host total: CollApi + Coll + KernelLaunch + ProxyOps (2 channels x 2 directions).
  const int64_t step = T::kStepWaitNs + T::kStepTransferNs;
  const int64_t slow_step = step + 700;  // rank 3, channel 1
  const int64_t proxy_total = (n * 6 * 2 * 2 * 3 * step) + 6 * 2 * 3 * 700;
  EXPECT_EQ(Row(stats["host"], "ProxyOp Send")["total_ns"].get<int64_t>() +
                Row(stats["host"], "ProxyOp Recv")["total_ns"].get<int64_t>(),
            proxy_total);
  // Busy is the union: the ranks' CollApi of one collective overlap (arrivals 0..300 ns apart),
  // so each collective counts kCollApiNs + 300 once, not 4 x kCollApiNs.
  EXPECT_EQ(coll_api["busy_ns"], 6 * (T::kCollApiNs + 300));
  EXPECT_LE(coll_api["time_percent"].get<double>(), 100.0);

  // GPU side: per rank and collective 2 channels x 2 directions x 3 steps.
  const Json& transfer = Row(stats["gpu"], "KernelStep transfer");
  EXPECT_EQ(transfer["instances"], colls * 12);
  EXPECT_EQ(transfer["max_ns"], T::kStepTransferNs + 700);
  EXPECT_EQ(transfer["min_ns"], T::kStepTransferNs);
  EXPECT_EQ(transfer["total_ns"], colls * 12 * T::kStepTransferNs + 6 * 6 * 700);
  // CollGpu: 3 steps of the slowest channel; rank 3's collectives take longer.
  const Json& collgpu = Row(stats["gpu"], "CollGpu AllReduce");
  EXPECT_EQ(collgpu["total_ns"], (n - 1) * 6 * 3 * step + 6 * 3 * slow_step);
  EXPECT_NEAR(collgpu["med_ns"].get<double>(), 3 * step, 0.01 * 3 * step);
  EXPECT_EQ(Row(stats["collectives"], "AllReduce 1 MiB Ring/Simple")["instances"], colls);

  // Per channel: rank 3's channel 1 is the only slow one.
  EXPECT_EQ(Row(stats["kernelstep_transfer_per_channel"], "ch 1 send")["max_ns"],
            T::kStepTransferNs + 700);
  EXPECT_EQ(Row(stats["kernelstep_transfer_per_channel"], "ch 0 send")["max_ns"],
            T::kStepTransferNs);
  EXPECT_EQ(Row(stats["kernelstep_wait_per_peer"], "send peer 1")["instances"], 6 * 2 * 3);

  // Bandwidth: bytes / mean GPU time, bus factor 2(n-1)/n for AllReduce.
  ASSERT_EQ(stats["bandwidth"].size(), 1u);
  const Json& bw = stats["bandwidth"][0];
  const double mean_ns = static_cast<double>(collgpu["total_ns"].get<int64_t>()) / colls;
  EXPECT_EQ(bw["nranks"], n);
  EXPECT_NEAR(bw["algbw_gbps"].get<double>(), (1 << 20) / mean_ns, 1e-3);
  EXPECT_NEAR(bw["busbw_gbps"].get<double>(), (1 << 20) / mean_ns * 2.0 * (n - 1) / n, 1e-3);
}

TEST_F(TraceToolsTest, StatsHostTableEqualsOneBuiltLikeThePluginSummary) {
  // The plugin's finalize summary adds each slice (start, duration) to its row; the same adds on
  // the same events must print the same CSV.
  const std::string path = Put("v.json", valid_);
  SummaryTable host("katrace host-side summary (callback start to stop)", TimeShare::kOfSpan);
  host.Add("GroupApi", 10000, 20000);
  host.Add("CollApi AllReduce", 11000, 5000);
  host.Add("KernelLaunch", 13000, 1000);
  host.Add("Coll AllReduce", 12000, 3000);
  SummaryTable gpu("katrace GPU-side summary (%globaltimer)", TimeShare::kOfSpan);
  gpu.Add("KernelStep Send", 40000, 3000);
  gpu.Add("KernelStep wait", 40000, 1000);
  gpu.Add("KernelStep transfer", 41000, 2000);
  gpu.Add("KernelCh AllReduce", 40000, 4000);
  gpu.Add("CollGpu AllReduce", 40000, 4000);
  const ToolResult csv = RunTool("katrace-stats", "--format csv --report host,gpu " + path);
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_NE(csv.output.find("# katrace host-side summary (callback start to stop)\n" +
                            host.ToCsv()),
            std::string::npos)
      << csv.output;
  EXPECT_NE(csv.output.find("# katrace GPU-side summary (%globaltimer)\n" + gpu.ToCsv()),
            std::string::npos)
      << csv.output;
  const ToolResult text = RunTool("katrace-stats", "--report host " + path);
  EXPECT_NE(text.output.find(host.ToText()), std::string::npos) << text.output;
}

TEST_F(TraceToolsTest, StatsLeaveOutIncompleteEvents) {
  const std::string text = Edit(valid_, "\"rank\":0,\"depth\":1", "\"rank\":0,\"incomplete\":true,\"depth\":1");
  const Json stats = StatsJson(Put("inc.json", text));
  for (const Json& row : stats["host"]) EXPECT_NE(row["name"], "GroupApi");
  EXPECT_EQ(stats["inputs"]["incomplete_left_out"], 1);
}

TEST_F(TraceToolsTest, StragglerReportNamesTheSlowRankAndChannel) {
  const std::vector<std::string> job = WriteJob(8, ".json.gz");
  const Json stats = StatsJson("--report straggler --top 3 --sort-mem 2K" + Join(job));
  const Json& delay = stats["straggler_delay_per_rank"];
  ASSERT_EQ(delay.size(), 1u) << delay.dump();
  EXPECT_EQ(delay[0]["name"], "rank 5");
  EXPECT_EQ(delay[0]["instances"], 6);
  EXPECT_EQ(delay[0]["avg_ns"], 50000.0);  // rank 5 at +50 us, rank 0 first at +0
  const Json& worst = stats["worst_instances"];
  ASSERT_EQ(worst.size(), 3u);
  EXPECT_EQ(worst[0]["last"], "rank 5");
  EXPECT_EQ(worst[0]["first"], "rank 0");
  EXPECT_EQ(worst[0]["next"], "rank 7");
  EXPECT_EQ(worst[0]["delay_ns"], 50000);
  EXPECT_EQ(worst[0]["lead_ns"], 50000 - 700);
  EXPECT_EQ(worst[0]["ranks"], 8);
  EXPECT_EQ(Row(stats["arrival_lag_per_rank"], "rank 3")["avg_ns"], 300.0);
  const Json& channels = stats["slowest_channels"];
  ASSERT_GE(channels.size(), 2u) << channels.dump();
  std::set<std::string> links = {channels[0]["link"], channels[1]["link"]};
  EXPECT_EQ(links, (std::set<std::string>{"rank 3 send ch 1", "rank 3 recv ch 1"}));
  EXPECT_EQ(channels[0]["slowest_share"], 100.0);
  EXPECT_EQ(channels[0]["instances"], 6);
  EXPECT_EQ(stats["straggler_instances"]["seen_on_2_or_more_ranks"], 6);

  const ToolResult text = RunTool("katrace-stats", "--report straggler" + Join(job));
  EXPECT_NE(text.output.find("rank 5"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("rank 3 send ch 1"), std::string::npos) << text.output;
}

TEST_F(TraceToolsTest, StatsReportUnreadableFilesAndSummariseTheRest) {
  const std::vector<std::string> job = WriteJob(2);
  const std::string foreign = Put("foreign.json", "{\"traceEvents\":[{\"name\":\"x\"}]}");
  const ToolResult r = RunTool("katrace-stats", "--format csv --report host" + Join(job) + " " +
                                                    foreign + " " +
                                                    (dir_ / "missing.json.gz").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("foreign.json: traceEvents[0] is not the katrace header"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("missing.json.gz: cannot open"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(",12,5000.0,5000.0,5000,5000,0.0,CollApi AllReduce"),
            std::string::npos)
      << r.output;
}

TEST_F(TraceToolsTest, StatsRefusesToOverwriteItsInput) {
  const std::string input = Put("in.json", valid_);
  const fs::path symlink = dir_ / "link.json";
  const fs::path hardlink = dir_ / "hard.json";
  fs::create_symlink(input, symlink);
  fs::create_hard_link(input, hardlink);
  for (const std::string& out : {input, (dir_ / "." / "in.json").string(), symlink.string(),
                                 hardlink.string()}) {
    for (const char* mode : {"", "--hang "}) {
      const ToolResult r =
          RunTool("katrace-stats", std::string(mode) + "-o " + out + " " + input);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_NE(r.output.find("katrace-stats: the output " + out + " is also an input (" +
                              input + "); refusing to overwrite it"),
                std::string::npos)
          << r.output;
    }
  }
  EXPECT_EQ(ReadWholeFile(input), valid_);
  // The merge says it in the same words, for a link too.
  const ToolResult merge = RunTool("katrace-merge", "-o " + symlink.string() + " " + input);
  EXPECT_EQ(merge.exit_code, 2) << merge.output;
  EXPECT_NE(merge.output.find("katrace-merge: the output " + symlink.string() +
                              " is also an input"),
            std::string::npos)
      << merge.output;
  EXPECT_EQ(ReadWholeFile(input), valid_);
}

// The 1-based line of the first |needle| in |text|.
uint64_t LineOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(at, text.size()));
  return 1 + static_cast<uint64_t>(std::count(text.begin(), end, '\n'));
}

TEST_F(TraceToolsTest, MergeAndStatsCountEventsWithUnusableTimes) {
  const std::string launch = "\"cat\":\"KernelLaunch\",\"ph\":\"X\",\"pid\":0,\"tid\":1,";
  const std::string times = "\"ts\":13.000,\"dur\":1.000";
  const uint64_t line = LineOf(valid_, launch);
  const std::string clean = (dir_ / "clean.json").string();
  const ToolResult clean_merge =
      RunTool("katrace-merge", "-o " + clean + " " + Put("v.json", valid_));
  ASSERT_EQ(clean_merge.exit_code, 0) << clean_merge.output;
  const size_t clean_events = ReadTraceFile(clean).events.size();
  struct Case {
    std::string times;
    std::string why;
  };
  const Case cases[] = {
      {"\"ts\":\"abc\",\"dur\":1.000", "ts \"abc\" is not a number"},
      {"\"ts\":13.000,\"dur\":-5", "dur -5 is negative"},
      {"\"ts\":13.000,\"dur\":1e308", "dur 1e+308 is out of range"},
      {"\"ts\":1e300,\"dur\":1.000", "ts 1e+300 is out of range"},
      {"\"dur\":1.000", "no ts"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.times);
    const std::string path = Put("bad.json", Edit(valid_, launch + times, launch + c.times));
    const std::string said = path +
                             ": warning: 1 event with unusable times left out, the first at line " +
                             std::to_string(line) + " (event #14 'KernelLaunch': " + c.why + ")";
    for (const char* format : {"json", "perfetto"}) {
      const std::string out = (dir_ / (std::string("m.") + format)).string();
      const ToolResult merge =
          RunTool("katrace-merge", std::string("--format ") + format + " -o " + out + " " + path);
      EXPECT_EQ(merge.exit_code, 1) << merge.output;
      EXPECT_NE(merge.output.find("katrace-merge: " + said), std::string::npos) << merge.output;
      const ReadBack merged = ReadTraceFile(out);
      EXPECT_EQ(merged.events.size(), clean_events - 1);
      for (const Json& e : merged.events) EXPECT_NE(e.value("cat", ""), "KernelLaunch") << e.dump();
    }
    const ToolResult stats = RunTool("katrace-stats", "--format json " + path, false);
    EXPECT_EQ(stats.exit_code, 1) << stats.output;
    const Json report = Json::parse(stats.output);
    EXPECT_EQ(report["inputs"]["files_with_problems"], 1);
    EXPECT_EQ(report["inputs"]["unusable_times_left_out"], 1);
    for (const Json& row : report["host"]) EXPECT_NE(row["name"], "KernelLaunch");
    const ToolResult text = RunTool("katrace-stats", "--report host " + path);
    EXPECT_EQ(text.exit_code, 1) << text.output;
    EXPECT_NE(text.output.find("katrace-stats: " + said), std::string::npos) << text.output;
    EXPECT_NE(text.output.find("1 file (1 with problems)"), std::string::npos) << text.output;
    EXPECT_NE(text.output.find(", 1 event with unusable times"), std::string::npos) << text.output;
  }
  // Many in one file: one warning with the count and the first.
  std::string text = Edit(valid_, launch + times, launch + "\"ts\":\"x\",\"dur\":1.000");
  text = Edit(text, "\"ts\":10.000,\"dur\":20.000", "\"ts\":10.000,\"dur\":-20.000");
  const std::string two = Put("two.json", text);
  for (const char* tool : {"katrace-merge", "katrace-stats"}) {
    const std::string args = std::string(tool) == "katrace-merge" ? "-o " + clean + " " + two : two;
    const ToolResult r = RunTool(tool, args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    const std::string said = "warning: 2 events with unusable times left out, the first at line " +
                             std::to_string(line) + " (event #14 'KernelLaunch'";
    EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("times left out"), r.output.rfind("times left out")) << r.output;
  }
}

TEST_F(TraceToolsTest, StatsFailsWhenItsStragglerSortCannotSpill) {
  // More arrivals than the smallest sort buffer holds (64 records), so that it must spill.
  std::string job;
  for (int r = 0; r < 4; ++r) {
    SyntheticRankOptions o = JobRank(r, 4);
    o.num_colls = 20;
    const std::string path = (dir_ / ("rank" + std::to_string(r) + ".json")).string();
    std::string error;
    ASSERT_TRUE(WriteSyntheticTraceFile(path, o, &error)) << error;
    job += " " + path;
  }
  const std::string out = (dir_ / "st.json").string();
  const char* saved = std::getenv("TMPDIR");
  const std::string saved_tmpdir = saved == nullptr ? "" : saved;
  setenv("TMPDIR", (dir_ / "no-such-folder").c_str(), 1);
  const ToolResult straggler = RunTool(
      "katrace-stats", "--report straggler --sort-mem 1K --format json -o " + out + job);
  // A report that needs no sort does not fail for one it cannot make.
  const ToolResult host = RunTool("katrace-stats", "--report host --sort-mem 1K" + job);
  if (saved == nullptr) {
    unsetenv("TMPDIR");
  } else {
    setenv("TMPDIR", saved_tmpdir.c_str(), 1);
  }
  EXPECT_EQ(straggler.exit_code, 1) << straggler.output;
  EXPECT_NE(straggler.output.find("katrace-stats: straggler report incomplete: cannot create sort "
                                  "spill file in " + (dir_ / "no-such-folder").string()),
            std::string::npos)
      << straggler.output;
  const Json report = Json::parse(ReadWholeFile(out));
  EXPECT_NE(report["straggler_instances"].value("error", "").find("cannot create sort spill file"),
            std::string::npos)
      << report.dump();
  EXPECT_EQ(host.exit_code, 0) << host.output;
}

TEST_F(TraceToolsTest, StatsWriteCsvAndJsonFiles) {
  const std::vector<std::string> job = WriteJob(2);
  const std::string csv = (dir_ / "s.csv").string();
  ASSERT_EQ(RunTool("katrace-stats", "--format csv -o " + csv + Join(job)).exit_code, 0);
  const std::string text = ReadWholeFile(csv);
  EXPECT_NE(text.find("# Bandwidth per collective size"), std::string::npos);
  EXPECT_NE(text.find("Function,Size (B),Ranks,Instances"), std::string::npos) << text;
  EXPECT_NE(text.find("AllReduce,1048576,2,12,"), std::string::npos) << text;
}

}  // namespace
}  // namespace katrace::tools
