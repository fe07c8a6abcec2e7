// FlightRecorder suite: KATRACE_MODE=flight through the real .so, each run in a process of its
// own (test/fixtures/flight_driver): nothing reaches the disk while the session runs, the dump
// at exit holds the newest collectives and passes every check even after eviction, a fatal
// signal leaves a crash spool that katrace-export turns into a trace while the process still dies
// of that signal, and the handlers are installed only when asked and put back afterwards.
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/support/plugin_test.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

// A sanitizer runtime handles fatal signals itself; the crash tests tell it to leave them to the
// application, as a plain process would.
std::vector<std::string> LeaveFatalSignalsAlone() {
  std::vector<std::string> env;
  for (const char* var : {"TSAN_OPTIONS", "ASAN_OPTIONS", "UBSAN_OPTIONS"}) {
    const char* now = getenv(var);
    std::string value = now != nullptr && *now != '\0' ? std::string(now) + ":" : "";
    env.push_back(std::string(var) + "=" + value + "handle_segv=0:handle_sigbus=0:handle_abort=0");
  }
  return env;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::set<uint64_t> CollSeqs(const nlohmann::json& trace) {
  std::set<uint64_t> seqs;
  for (const auto& e : Slices(trace, "Coll")) seqs.insert(e["args"]["seq"].get<uint64_t>());
  return seqs;
}

// The footer's spool.flight (null when the trace is not of a flight dump).
nlohmann::json FlightFooter(const nlohmann::json& trace) {
  const nlohmann::json& spool = Footer(trace).value("spool", nlohmann::json::object());
  return spool.is_object() ? spool.value("flight", nlohmann::json()) : nlohmann::json();
}

std::set<std::string> CommNames(const nlohmann::json& trace) {
  std::set<std::string> names;
  for (const auto& c : Footer(trace)["communicators"]) names.insert(c["name"].get<std::string>());
  return names;
}

class FlightRecorderTest : public PluginTest {
 protected:
  // Collectives that surely overflow a 1 MiB ring, with the environment that makes them do so:
  // uncompressed 64 KiB blocks, about 260 bytes a collective, so the ring keeps about 3,600 and
  // 10,000 evict more than half, however the writer cuts its blocks. (Compressed, about 44 bytes
  // a collective, it took 40,000: over ten seconds a test under ThreadSanitizer. Eviction of
  // compressed blocks is still driven by AnEvictedSimulatedRunOfEveryKindPassesTheChecks.)
  static constexpr long kEvictingCollectives = 10000;
  static std::vector<std::string> SmallUncompressedBlocks() {
    return {"KATRACE_FLIGHT_MB=1", "KATRACE_SPOOL_COMPRESS=none", "KATRACE_THREAD_BUFFER_KB=64"};
  }

  void SetUp() override {
    PluginTest::SetUp();
    out_ = dir_ + "/out";
    mkdir(out_.c_str(), 0755);
  }

  // |before|: what the driver does just before |end| (flight_driver.cc: "take:PATH", "rmdir").
  ProcessOutput Drive(long colls, const std::string& end, std::vector<std::string> env, const std::string& before = "") {
    env.push_back("KATRACE_OUTPUT=" + out_ + "/trace.json");
    env.push_back("KATRACE_SUMMARY=0");
    env.push_back("KATRACE_MODE=flight");
    std::vector<std::string> args = {PluginPath(), "run", std::to_string(colls), out_, end};
    if (!before.empty()) args.push_back(before);
    return RunProcess(BuildPath("test/flight_driver"), args, env, dir_);
  }

  // The newest collectives are there, as one unbroken run ending with the last one.
  void ExpectNewestCollectives(const nlohmann::json& t, long colls, bool evicted) {
    std::set<uint64_t> seqs = CollSeqs(t);
    ASSERT_FALSE(seqs.empty());
    EXPECT_EQ(*seqs.rbegin(), static_cast<uint64_t>(colls - 1)) << "the last collective is in the dump";
    uint64_t first = *seqs.begin();
    EXPECT_EQ(seqs.size(), colls - first) << "no gap from the oldest kept to the newest";
    if (evicted) {
      EXPECT_GT(first, 0u) << "the oldest collectives were evicted";
    }
    EXPECT_EQ(CommNames(t), (std::set<std::string>{"world", "pipeline"})) << "both communicators are named";
    // The dump starts after its cut: what it holds is whole, none left waiting for evicted records.
    EXPECT_EQ(Footer(t)["incomplete"].get<uint64_t>(), 0u);
  }

  void ExpectCrashDump(const std::string& end, int sig) {
    const long colls = kEvictingCollectives;
    std::vector<std::string> env = LeaveFatalSignalsAlone();
    for (const std::string& v : SmallUncompressedBlocks()) env.push_back(v);
    ProcessOutput r = Drive(colls, end, env);
    EXPECT_EQ(r.exit_code, 128 + sig) << "the signal proceeds: " << r.err;
    std::string spool = out_ + "/trace.crash.json.kspool";
    ASSERT_TRUE(Exists(spool)) << r.err;
    EXPECT_NE(r.err.find("katrace-export " + spool), std::string::npos) << "says how to build the trace: " << r.err;
    ProcessOutput x = RunProcess(ToolPath("katrace-export"), {spool, "--quiet"}, {}, dir_);
    ASSERT_EQ(x.exit_code, 0) << x.out << x.err;
    std::string trace = out_ + "/trace.crash.json";
    ASSERT_TRUE(Exists(trace)) << "the crash spool names its own trace: " << x.out << x.err;
    ASSERT_TRUE(Exists(out_ + "/trace.json") == false) << "the run's own trace name is left alone";
    nlohmann::json t = ExpectValidTrace(trace);
    ExpectNewestCollectives(t, colls, true);
    const nlohmann::json flight = FlightFooter(t);
    ASSERT_TRUE(flight.is_object());
    EXPECT_EQ(flight["signal"].get<int>(), sig);
    EXPECT_GT(flight["evicted_blocks"].get<uint64_t>(), 0u);
  }

  std::string out_;
};

TEST_F(FlightRecorderTest, NothingIsWrittenWhileTheSessionRunsNorAtItsEnd) {
  ProcessOutput r = Drive(2000, "finalize", {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("files_in_dir 0"), std::string::npos) << "no spool while it runs: " << r.out;
  EXPECT_EQ(RunProcess("/bin/ls", {"-A", out_}, {}, dir_).out, "") << "nothing at the end either";
  EXPECT_NE(r.err.find("nothing written"), std::string::npos) << "and it says so: " << r.err;
  EXPECT_NE(r.err.find("KATRACE_FLIGHT_AT_EXIT=1"), std::string::npos) << r.err;
}

TEST_F(FlightRecorderTest, TheDumpAtExitHoldsTheNewestCollectivesAfterEviction) {
  const long colls = kEvictingCollectives;
  std::vector<std::string> env = SmallUncompressedBlocks();
  env.push_back("KATRACE_FLIGHT_AT_EXIT=1");
  ProcessOutput r = Drive(colls, "finalize", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("files_in_dir 0"), std::string::npos) << "no spool while it runs: " << r.out;
  std::string trace = out_ + "/trace.flight-1.json";
  ASSERT_TRUE(Exists(trace)) << r.err;
  EXPECT_FALSE(Exists(trace + ".kspool")) << "the dump's spool goes once exported";
  EXPECT_NE(r.err.find("flight recorder trace " + trace), std::string::npos) << r.err;
  nlohmann::json t = ExpectValidTrace(trace);
  ExpectNewestCollectives(t, colls, true);
  const nlohmann::json flight = FlightFooter(t);
  ASSERT_TRUE(flight.is_object()) << "the footer says it is a flight dump";
  EXPECT_EQ(flight["reason"].get<std::string>(), "exit");
  EXPECT_GT(flight["evicted_blocks"].get<uint64_t>(), 0u);
  EXPECT_EQ(flight["sticky_dropped"].get<uint64_t>(), 0u);
  // Nothing is lost: what the ring let go is counted as such, not as drops.
  for (const auto& d : Footer(t)["drops"].items()) EXPECT_EQ(d.value().get<uint64_t>(), 0u) << d.key();
}

// Every kind katrace-sim drives but KernelStep (proxy ops and steps, KernelCh, P2p, API events)
// with a ring far smaller than the run: eviction leaves steps without their op, channels without
// their collective, stops without their start, and the trace must still pass every check.
// (KernelStep is left out: a slice the drain reports after its collective was retained is drawn
// late, outside the collective's GPU extent, which the validation flags in any mode.)
TEST_F(FlightRecorderTest, AnEvictedSimulatedRunOfEveryKindPassesTheChecks) {
  // Not below 200 iterations: 100 evicted only 3 blocks, too near the edge.
  const std::string iters = std::to_string(TestScaled(300, 200));
  ProcessOutput r = RunProcess(ToolPath("katrace-sim"),
                               {"--plugin", PluginPath(), "--ranks", "2", "--iters", iters, "--mask", "all,-kernelstep", "--quiet"},
                               {"KATRACE_OUTPUT=" + out_ + "/sim.json", "KATRACE_MODE=flight", "KATRACE_FLIGHT_MB=1",
                                "KATRACE_FLIGHT_AT_EXIT=1"},
                               dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json t = ExpectValidTrace(out_ + "/sim.flight-1.json");
  const nlohmann::json flight = FlightFooter(t);
  ASSERT_TRUE(flight.is_object());
  EXPECT_GT(flight["evicted_blocks"].get<uint64_t>(), 0u);
  EXPECT_GT(flight["cut_records"].get<uint64_t>(), 0u) << "eviction cut some events from their start or parent";
  EXPECT_EQ(Footer(t)["incomplete"].get<uint64_t>(), 0u) << "every event after the cut is whole";
  EXPECT_EQ(Footer(t)["communicators"].size(), 2u) << "both ranks' communicators are named";
  EXPECT_FALSE(Slices(t, "Coll").empty());
  EXPECT_FALSE(Slices(t, "KernelCh").empty());
  EXPECT_FALSE(Slices(t, "ProxyStep").empty());
}

TEST_F(FlightRecorderTest, AJobThatExitsWithoutFinalizeIsDumpedToo) {
  ProcessOutput r = Drive(3000, "exit", {"KATRACE_FLIGHT_AT_EXIT=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json t = ExpectValidTrace(out_ + "/trace.flight-1.json");
  ExpectNewestCollectives(t, 3000, false);
  EXPECT_EQ(CollSeqs(t).size(), 3000u) << "a ring large enough keeps the whole run";
}

TEST_F(FlightRecorderTest, RaisedSigsegvLeavesACrashSpoolAndStillKills) { ExpectCrashDump("segv", SIGSEGV); }

TEST_F(FlightRecorderTest, ARealFaultLeavesACrashSpoolAndStillKills) { ExpectCrashDump("fault", SIGSEGV); }

TEST_F(FlightRecorderTest, AbortLeavesACrashSpoolAndStillKills) { ExpectCrashDump("abort", SIGABRT); }

// Regression: the crash spool's name is chosen at the session's start, when in flight mode no
// file of the run exists yet, so two processes given the same KATRACE_OUTPUT choose the same one,
// and they tend to crash together. The second found the name taken (O_EXCL) and wrote nothing,
// without a word. Now it writes under its pid beside it, naming a trace of its own.
TEST_F(FlightRecorderTest, ACrashDumpWhoseNameWasTakenGoesUnderThePid) {
  std::vector<std::string> env = LeaveFatalSignalsAlone();
  const std::string taken = out_ + "/trace.crash.json.kspool";
  ProcessOutput r = Drive(2000, "segv", env, "take:" + taken);
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.err;
  std::vector<std::string> spools;
  for (const auto& e : std::filesystem::directory_iterator(out_)) {
    const std::string name = e.path().filename().string();
    if (name.compare(0, 12, "trace.crash-") == 0) spools.push_back(e.path().string());
  }
  ASSERT_EQ(spools.size(), 1u) << "one dump beside the taken name: " << r.err;
  const std::string spool = spools[0];
  ASSERT_EQ(spool.substr(spool.size() - strlen(".json.kspool")), ".json.kspool") << spool;
  EXPECT_NE(r.err.find("katrace-export " + spool), std::string::npos) << "says where it went: " << r.err;
  ProcessOutput x = RunProcess(ToolPath("katrace-export"), {spool, "--quiet"}, {}, dir_);
  ASSERT_EQ(x.exit_code, 0) << x.out << x.err;
  const std::string trace = spool.substr(0, spool.size() - strlen(".kspool"));
  ASSERT_TRUE(Exists(trace)) << "the dump names a trace of its own, not the other process's: " << x.out << x.err;
  nlohmann::json t = ExpectValidTrace(trace);
  ExpectNewestCollectives(t, 2000, false);
  EXPECT_EQ(FlightFooter(t)["signal"].get<int>(), SIGSEGV);
}

// Regression: the trace's directory gone by the time of the crash (a cleanup, a lost mount)
// lost the dump without a word. It goes to $TMPDIR, and when nothing can take it, one line says so.
TEST_F(FlightRecorderTest, ACrashDumpWhoseDirectoryIsGoneGoesToTmpdirOrSaysItCouldNot) {
  const std::string tmp = dir_ + "/tmp";
  ASSERT_EQ(mkdir(tmp.c_str(), 0755), 0);
  std::vector<std::string> env = LeaveFatalSignalsAlone();
  env.push_back("TMPDIR=" + tmp);
  ProcessOutput r = Drive(2000, "abort", env, "rmdir");
  EXPECT_EQ(r.exit_code, 128 + SIGABRT) << r.err;
  const std::string spool = tmp + "/trace.crash.json.kspool";
  ASSERT_TRUE(Exists(spool)) << r.err;
  EXPECT_NE(r.err.find("katrace-export " + spool), std::string::npos) << r.err;
  ProcessOutput x = RunProcess(ToolPath("katrace-export"), {spool, "-o", dir_ + "/crash.json", "--quiet"}, {}, dir_);
  ASSERT_EQ(x.exit_code, 0) << x.out << x.err;
  ExpectNewestCollectives(ExpectValidTrace(dir_ + "/crash.json"), 2000, false);

  ASSERT_EQ(mkdir(out_.c_str(), 0755), 0);
  env = LeaveFatalSignalsAlone();
  env.push_back("TMPDIR=" + dir_ + "/no-such-dir");
  r = Drive(2000, "segv", env, "rmdir");
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.err;
  EXPECT_NE(r.err.find("the flight recorder could not be written to " + out_ + "/trace.crash.json.kspool (No such file or directory)"),
            std::string::npos)
      << "no dump, and it says so: " << r.err;
}

// Regression: a ring smaller than one thread's block (a small KATRACE_FLIGHT_MB with a large
// KATRACE_THREAD_BUFFER_KB, uncompressed) refused every such block without a word, and the dump's
// one line read "0 events, 0 lost" after a run of 40000 collectives. It is said, once.
TEST_F(FlightRecorderTest, ABlockLargerThanTheRingIsSaidOnce) {
  ProcessOutput r = Drive(40000, "finalize",
                          {"KATRACE_FLIGHT_MB=1", "KATRACE_THREAD_BUFFER_KB=65536", "KATRACE_SPOOL_COMPRESS=none",
                           "KATRACE_FLIGHT_AT_EXIT=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json t = ExpectValidTrace(out_ + "/trace.flight-1.json");
  const nlohmann::json flight = FlightFooter(t);
  ASSERT_TRUE(flight.is_object());
  // The writer cuts a block at least every 100 ms: a run slowed down (a sanitizer) may never
  // make one larger than the ring.
  if (flight["refused_blocks"].get<uint64_t>() == 0) GTEST_SKIP() << "no block outgrew the ring in this run";
  size_t said = 0;
  for (size_t at = r.err.find("larger than its whole ring"); at != std::string::npos;
       at = r.err.find("larger than its whole ring", at + 1)) {
    ++said;
  }
  EXPECT_EQ(said, 1u) << r.err;
  EXPECT_NE(r.err.find("KATRACE_FLIGHT_MB"), std::string::npos) << r.err;
  // The dump's export says so too: a dump holding none of them read as a run with no events.
  EXPECT_NE(r.err.find(" blocks were refused (larger than the ring"), std::string::npos) << r.err;
}

TEST_F(FlightRecorderTest, CrashHandlersAreInstalledOnlyInFlightModeAndPutBack) {
  auto handlers = [&](std::vector<std::string> env) {
    env.push_back("KATRACE_OUTPUT=" + out_ + "/trace.json");
    env.push_back("KATRACE_SUMMARY=0");
    ProcessOutput r = RunProcess(BuildPath("test/flight_driver"), {PluginPath(), "handlers"}, env, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  std::string flight = handlers({"KATRACE_MODE=flight"});
  EXPECT_NE(flight.find("during SEGV=changed BUS=changed ABRT=changed"), std::string::npos) << flight;
  EXPECT_NE(flight.find("after SEGV=same BUS=same ABRT=same"), std::string::npos) << "put back: " << flight;
  std::string off = handlers({"KATRACE_MODE=flight", "KATRACE_FLIGHT_ON_CRASH=0"});
  EXPECT_NE(off.find("during SEGV=same BUS=same ABRT=same"), std::string::npos) << off;
  std::string trace_mode = handlers({});
  EXPECT_NE(trace_mode.find("during SEGV=same BUS=same ABRT=same"), std::string::npos) << trace_mode;
}

TEST_F(FlightRecorderTest, WithoutCrashDumpsAFatalSignalLeavesNothing) {
  std::vector<std::string> env = LeaveFatalSignalsAlone();
  env.push_back("KATRACE_FLIGHT_ON_CRASH=0");
  ProcessOutput r = Drive(2000, "segv", env);
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
  EXPECT_EQ(RunProcess("/bin/ls", {"-A", out_}, {}, dir_).out, "");
}

}  // namespace
}  // namespace katrace_test
