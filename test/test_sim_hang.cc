// The hang watchdog end to end: katrace-sim stops one rank's channel after N operations
// (--hang), the real plugin with KATRACE_HANG_TIMEOUT=1s writes one report naming that rank,
// channel and peer and nothing else, within the timeout plus 1 s of the last completion; a run
// with steady progress gets none; katrace-stats --hang merges the reports of two ranks and
// survives hostile files.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test/support/plugin_harness.h"
#include "test/support/plugin_test.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

using nlohmann::json;

class SimHangTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }

  // One sim run of 4 ranks x 4 channels; |hang| empty for none. Returns its output.
  ProcessOutput RunSim(const std::string& trace, const std::string& hang, const std::string& timeout,
                       std::vector<std::string> extra = {}, const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = {"--plugin", PluginPath(), "--ranks", "4", "--channels", "4", "--quiet"};
    if (!hang.empty()) {
      args.insert(args.end(), {"--iters", "10", "--hang", hang, "--hang-for", "2500ms"});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<std::string> vars = {"KATRACE_OUTPUT=" + trace, "KATRACE_HANG_TIMEOUT=" + timeout, "KATRACE_SUMMARY=0",
                                     "KATRACE_MASK=coll,p2p,kernelch,kernelstep,proxyop,proxystep"};
    vars.insert(vars.end(), env.begin(), env.end());
    return RunProcess(ToolPath("katrace-sim"), args, vars, dir_);
  }
  static int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string dir_;
};

// Regression: with the trace written in place (/dev/null, /dev/stdout) the report was named
// "<trace>.hang.json" all the same, so a job run as root made /dev/null.hang.json, a new file in
// /dev. It goes to $TMPDIR under the trace's name, where the spool went.
TEST_F(SimHangTest, TheReportOfATraceWrittenInPlaceGoesToTmpdir) {
  const std::string in_dev = "/dev/null.hang.json";
  const bool was_there = access(in_dev.c_str(), F_OK) == 0;
  ProcessOutput r = RunSim("/dev/null", "2:1:7", "300ms", {}, {"TMPDIR=" + dir_});
  const bool made = !was_there && access(in_dev.c_str(), F_OK) == 0;
  if (made) unlink(in_dev.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(made) << "a file was made in /dev: " << r.err;
  const std::string report = dir_ + "/null.hang.json";
  EXPECT_NE(r.err.find("report " + report), std::string::npos) << r.err;
  json parsed = ParseJson(ReadWholeFile(report), false);
  ASSERT_TRUE(parsed.is_object()) << r.err;
  EXPECT_EQ(parsed["communicators"].size(), 1u);
}

// Regression: in flight mode, a hang whose dump could not be written anywhere got one line,
// "a hang was detected but its report could not be built (cannot open '': ...)": not how long,
// nor how much was in flight, which the watchdog knew without any file.
TEST_F(SimHangTest, AHangWhoseDumpCannotBeWrittenIsStillSaid) {
  ProcessOutput r = RunSim("/proc/katrace-no-such-dir/t.json", "2:1:7", "300ms", {},
                           {"TMPDIR=/proc/katrace-no-such-dir", "KATRACE_MODE=flight"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.err, "katrace: HANG: no event completed for "), 1) << r.err;
  EXPECT_NE(r.err.find(" collectives in flight; no report ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cannot open ''"), std::string::npos) << r.err;
}

TEST_F(SimHangTest, ReportNamesOnlyTheInjectedRankChannelAndPeer) {
  const std::string trace = dir_ + "/hang.json";
  ProcessOutput r = RunSim(trace, "2:1:7", "1s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.err, "katrace: HANG"), 1) << "once per hang: " << r.err;

  struct stat st;
  ASSERT_EQ(stat((trace + ".hang.json").c_str(), &st), 0) << r.err;
  json report = ParseJson(ReadWholeFile(trace + ".hang.json"), false);
  ASSERT_TRUE(report.is_object());
  // Within the timeout plus 1 s of the last completion: the file's own write time says when.
  const uint64_t last = report["last_progress_realtime_ns"];
  const uint64_t written = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + static_cast<uint64_t>(st.st_mtim.tv_nsec);
  EXPECT_GE(written, last + 990000000ull);
  EXPECT_LE(written, last + 2000000000ull) << "reported within the timeout plus 1 s";

  ASSERT_EQ(report["communicators"].size(), 1u) << report.dump(1);
  const json& comm = report["communicators"][0];
  EXPECT_EQ(comm["rank"], 2);
  EXPECT_EQ(comm["nranks"], 4);
  EXPECT_EQ(comm["name"], "katrace-sim");
  EXPECT_TRUE(comm["oldest_in_flight"].is_object());
  ASSERT_EQ(comm["open_channels"].size(), 1u) << comm.dump(1);
  EXPECT_EQ(comm["open_channels"][0]["channel"], 1);
  ASSERT_EQ(comm["open_kernel_steps"].size(), 1u) << comm.dump(1);
  const json& step = comm["open_kernel_steps"][0];
  EXPECT_EQ(step["channel"], 1);
  const int peer = step["peer"];
  EXPECT_NE(peer, 2);
  EXPECT_GE(peer, 0);
  EXPECT_LT(peer, 4);
  ASSERT_EQ(comm["proxy_steps"].size(), 1u) << comm.dump(1);
  EXPECT_EQ(comm["proxy_steps"][0]["peer"], peer) << "the ProxyStep towards the same peer";
  EXPECT_EQ(comm["proxy_steps"][0]["channel"], 1);
  EXPECT_EQ(comm["proxy_steps"][0]["direction"], step["direction"]);
  // The other ranks went on and finished: listed as quiet, naming nothing.
  EXPECT_EQ(report["quiet_communicators"].size(), 3u) << report.dump(1);
  // The job went on: the trace is built at the end.
  EXPECT_EQ(stat(trace.c_str(), &st), 0) << r.err;
}

TEST_F(SimHangTest, NoReportWhileTheRunProgresses) {
  const std::string trace = dir_ + "/steady.json";
  // About 2 s of steady work against a 250 ms timeout (sanitized runs: fewer iterations, as slow).
  ProcessOutput r = RunSim(trace, "", "250ms", {"--iters", std::to_string(TestScaled(200, 60)), "--bandwidth", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st;
  EXPECT_NE(stat((trace + ".hang.json").c_str(), &st), 0) << "no report without a hang: " << r.err;
  EXPECT_EQ(Count(r.err, "HANG"), 0) << r.err;
  EXPECT_EQ(Count(r.err, "hang is over"), 0) << "no end of a hang that was not reported: " << r.err;
}

TEST_F(SimHangTest, BadHangOptionsGetOneClearLine) {
  for (const char* bad : {"9:0:1", "1:0", "a:b:c", "1:99:1", "-1:0:0"}) {
    ProcessOutput r = RunProcess(ToolPath("katrace-sim"), {"--plugin", PluginPath(), "--hang", bad}, {}, dir_);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--hang"), std::string::npos) << r.err;
    EXPECT_EQ(Count(r.err, "\n"), 1) << r.err;
  }
  ProcessOutput r = RunProcess(ToolPath("katrace-sim"), {"--plugin", PluginPath(), "--hang-for", "-2s"}, {}, dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--hang-for"), std::string::npos) << r.err;
}

TEST_F(SimHangTest, StatsMergesTheReportsOfTwoRanksOldestFirst) {
  // Two processes, one hung rank each: rank 1 first, rank 3 a few seconds later.
  const std::string a = dir_ + "/a.json", b = dir_ + "/b.json";
  ASSERT_EQ(RunSim(a, "1:0:3", "1s").exit_code, 0);
  ASSERT_EQ(RunSim(b, "3:2:5", "1s").exit_code, 0);
  json ra = ParseJson(ReadWholeFile(a + ".hang.json"), false);
  const int peer_a = ra["communicators"][0]["open_kernel_steps"][0]["peer"];
  ProcessOutput r = RunProcess(ToolPath("katrace-stats"), {"--hang", b + ".hang.json", a + ".hang.json"}, {}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t first = r.out.find("rank 1 waits on peer " + std::to_string(peer_a) + " on channel 0 since ");
  const size_t second = r.out.find("rank 3 waits on peer ");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_LT(first, second) << "oldest first, whatever the order of the files: " << r.out;
  EXPECT_NE(r.out.find("on channel 2 since", second), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: rank 1 stopped first, waiting on peer " + std::to_string(peer_a) + " on channel 0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2 ranks wait in all"), std::string::npos) << r.out;
  EXPECT_EQ(Count(r.out, "\n"), 4) << "a header, two waits, the verdict: " << r.out;
}

TEST_F(SimHangTest, StatsSurvivesHostileReports) {
  std::vector<std::string> bad = {
      Write("empty.json", ""),
      Write("binary.json", std::string("\x00\xff\x7f{[\"", 7)),
      Write("array.json", "[1,2,3]"),
      Write("newer.json", "{\"katrace_hang_report\":99,\"communicators\":[]}"),
      Write("nolist.json", "{\"katrace_hang_report\":1,\"communicators\":\"x\"}"),
      Write("cut.json", "{\"katrace_hang_report\":1,\"communicators\":[{\"rank\":1,"),
      dir_,
      dir_ + "/missing.json",
  };
  // Readable, but every field of the wrong type or absent: merged without a crash.
  const std::string odd = Write("odd.json",
                                "{\"katrace_hang_report\":1,\"communicators\":[7,{\"rank\":\"x\",\"nranks\":1e300,"
                                "\"open_kernel_steps\":[1,{\"peer\":\"a\",\"since_realtime_ns\":-5}],"
                                "\"open_channels\":{},\"proxy_steps\":[null]}],\"quiet_communicators\":3}");
  std::vector<std::string> args = {"--hang"};
  args.insert(args.end(), bad.begin(), bad.end());
  args.push_back(odd);
  ProcessOutput r = RunProcess(ToolPath("katrace-stats"), args, {}, dir_);
  EXPECT_EQ(r.exit_code, 1) << "some files left out: " << r.err;
  EXPECT_EQ(Count(r.err, "left out\n"), static_cast<int>(bad.size())) << r.err;
  for (const std::string& path : bad) EXPECT_NE(r.err.find(path + " "), std::string::npos) << path << ": " << r.err;
  EXPECT_NE(r.err.find("newer than this katrace-stats"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("hang reports: 1 read, 8 left out"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: "), std::string::npos) << r.out;
  // Regression: the wait's invalid since_realtime_ns was shown as 1970.
  EXPECT_EQ(r.out.find("1970"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("since an unknown time"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace katrace_test
