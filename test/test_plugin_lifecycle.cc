// The life of a capture through the real .so: in-flight events in the spool, a job killed with
// SIGKILL or SIGTERM and its spool exported afterwards, fork, communicator churn, unload and
// reload, output paths, what the user sees on stderr, and the buffer policies. Scenarios that need
// a process of their own run test/fixtures/capture_driver.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test/support/now_ms.h"
#include "test/support/plugin_test.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  FILE* p = popen(("ls -1 " + dir).c_str(), "r");
  char line[1024];
  while (p != nullptr && fgets(line, sizeof(line), p) != nullptr) {
    std::string s(line);
    s.erase(s.find_last_not_of('\n') + 1);
    names.push_back(s);
  }
  if (p != nullptr) pclose(p);
  return names;
}

std::set<uint64_t> CollSeqs(const nlohmann::json& trace) {
  std::set<uint64_t> seqs;
  for (const auto& e : Slices(trace, "Coll")) seqs.insert(e["args"]["seq"].get<uint64_t>());
  return seqs;
}

class LifecycleTest : public PluginTest {
 protected:
  std::string Driver() { return BuildPath("test/capture_driver"); }
  std::vector<std::string> Env(const std::string& trace, std::vector<std::string> extra = {}) {
    extra.push_back("KATRACE_OUTPUT=" + trace);
    extra.push_back("KATRACE_SUMMARY=0");
    return extra;
  }

  // Runs the driver collecting collectives until |kill_after_ms|, then sends |sig|. Returns how
  // many collectives the driver had reported done 1 s before the signal.
  uint64_t RunAndKill(const std::string& trace, int sig, uint64_t kill_after_ms) {
    int out[2];
    if (pipe(out) != 0) return 0;
    pid_t pid = fork();
    if (pid == 0) {
      dup2(out[1], 1);
      close(out[0]);
      setenv("KATRACE_OUTPUT", trace.c_str(), 1);
      setenv("KATRACE_SUMMARY", "0", 1);
      // Sanitized runs pace the driver slower: the export and the check of the trace are the slow part.
      std::string rate = std::to_string(TestScaled(20000, 1000));
      execl(Driver().c_str(), Driver().c_str(), PluginPath().c_str(), "run", "0", rate.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    FILE* in = fdopen(out[0], "r");
    uint64_t start = NowMs();
    std::vector<std::pair<uint64_t, uint64_t>> seen;  // (ms since start, collectives done)
    char line[256];
    while (fgets(line, sizeof(line), in) != nullptr) {
      unsigned long long n = 0;
      if (sscanf(line, "colls %llu", &n) == 1) seen.push_back({NowMs() - start, n});
      if (NowMs() - start >= kill_after_ms) break;
    }
    uint64_t killed_at = NowMs() - start;
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    fclose(in);
    EXPECT_TRUE(WIFSIGNALED(status)) << "the driver was killed";
    uint64_t done_before = 0;
    for (const auto& s : seen) {
      if (s.first + 1000 <= killed_at) done_before = s.second;
    }
    return done_before;
  }

  void ExpectRecovered(const std::string& trace, int sig) {
    uint64_t before = RunAndKill(trace, sig, 2500);
    ASSERT_GT(before, 0u) << "the driver ran for at least 1.5 s";
    std::string spool = trace + ".kspool";
    ASSERT_TRUE(Exists(spool)) << "a killed job leaves its spool";
    EXPECT_FALSE(Exists(trace)) << "nothing exported it";
    ProcessOutput r = RunProcess(ToolPath("katrace-export"), {spool}, {}, dir_);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("cut"), std::string::npos) << "says where the spool was cut: " << r.out << r.err;
    nlohmann::json t = ExpectValidTrace(trace);
    std::set<uint64_t> seqs = CollSeqs(t);
    // Everything captured up to 1 s before the kill is in the trace, collective by collective.
    for (uint64_t seq = 0; seq < before; ++seq) {
      ASSERT_TRUE(seqs.count(seq)) << "collective " << seq << " of " << before << " is missing";
    }
  }
};

TEST_F(LifecycleTest, SigkillLeavesASpoolThatKatraceExportRecovers) {
  ExpectRecovered(dir_ + "/killed.json", SIGKILL);
}

TEST_F(LifecycleTest, SigtermLeavesAWholeSpoolUpToTheLastFlush) {
  ExpectRecovered(dir_ + "/terminated.json", SIGTERM);
}

TEST_F(LifecycleTest, InFlightEventsAreInTheSpoolBeforeTheyEnd) {
  Comm c = InitComm(0x1f, 0, 1);
  void* coll = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 42, 1024, 0);
  v6().startEvent(c.ctx, &coll, &d);
  // Within a flush interval (100 ms) the running job's spool holds the started event.
  usleep(400 * 1000);
  std::string copy = dir_ + "/snapshot.kspool";
  ASSERT_EQ(system(("cp " + trace_path_ + ".kspool " + copy).c_str()), 0);
  ProcessOutput r = RunProcess(ToolPath("katrace-export"), {copy, "-o", dir_ + "/snapshot.json", "--quiet"}, {}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json snap = ExpectValidTrace(dir_ + "/snapshot.json");
  auto colls = Slices(snap, "Coll");
  ASSERT_EQ(colls.size(), 1u);
  EXPECT_EQ(colls[0]["args"]["seq"], 42);
  EXPECT_TRUE(colls[0]["args"].value("incomplete", false)) << "still running when the snapshot was taken";
  v6().stopEvent(coll);
  v6().finalize(c.ctx);
  nlohmann::json t = ExpectValidTrace(trace_path_);
  EXPECT_FALSE(Slices(t, "Coll")[0]["args"].value("incomplete", false));
}

TEST_F(LifecycleTest, ParentsReportedOnlyForADescendantAreNotRecorded) {
  setenv("KATRACE_MASK", "coll,kernelch", 1);
  Comm c = InitComm(0x2f, 0, 1);
  void* group = nullptr;
  auto g = GroupApiDescr();
  v6().startEvent(c.ctx, &group, &g);
  ASSERT_NE(group, nullptr) << "NCCL still gets a handle to pass as a parent";
  void* api = nullptr;
  auto a = CollApiDescr(group, "AllReduce", 8);
  v6().startEvent(c.ctx, &api, &a);
  v6().stopEvent(api);
  CollWithChannels(c.ctx, api, 3, 2);
  v6().recordEventState(group, ncclProfilerGroupEndApiStart, nullptr);
  v6().stopEvent(group);
  v6().finalize(c.ctx);
  nlohmann::json t = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(t)["events"]["GroupApi"], 0);
  EXPECT_EQ(Footer(t)["events"]["CollApi"], 0);
  EXPECT_EQ(Footer(t)["events"]["Coll"], 1);
  EXPECT_EQ(Footer(t)["events"]["KernelCh"], 2);
  for (const auto& k : Slices(t, "KernelCh")) {
    EXPECT_EQ(k["args"]["parent"], Slices(t, "Coll")[0]["args"]["id"]) << "GPU work still links to its Coll";
    EXPECT_EQ(k["name"], "AllReduce") << "and carries its func";
  }
}

TEST_F(LifecycleTest, ForkedChildDoesNothingAndNeverHangs) {
  std::string trace = dir_ + "/forked.json";
  // The child makes far more callbacks than any buffer holds.
  ProcessOutput r = RunProcess(Driver(), {PluginPath(), "fork", "300000"}, Env(trace), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("child exited 0"), std::string::npos) << r.out;
  nlohmann::json t = ExpectValidTrace(trace);
  std::set<uint64_t> seqs = CollSeqs(t);
  EXPECT_EQ(seqs.size(), 20u) << "the parent's 20 collectives and none of the child's";
  EXPECT_EQ(*seqs.rbegin(), 19u);
  for (const std::string& f : FilesIn(dir_)) {
    EXPECT_EQ(f.find(".kspool"), std::string::npos) << "the child left a spool: " << f;
    EXPECT_EQ(f.find(".tmp"), std::string::npos) << "the child left a temporary file: " << f;
  }
}

// Regression: a child forked while another thread's finalize exported (holding the plugin's
// lock) hung for good at its own init, finalize or exit: its copy of the lock stayed locked.
TEST_F(LifecycleTest, AChildForkedDuringAnExportNeverHangs) {
  std::string trace = dir_ + "/exporting.json";
#ifdef __SANITIZE_THREAD__
  GTEST_SKIP() << "ThreadSanitizer cannot follow the threads a child forked from a threaded process starts";
#endif
#ifdef __SANITIZE_ADDRESS__
  // Seen in a quarter of the runs: the child waits for good in the sanitizer's own allocator, whose
  // lock the exporting thread held at the fork (gdb: SizeClassAllocator64::GetFromAllocator under
  // the child's first operator new), which the plugin cannot release.
  GTEST_SKIP() << "AddressSanitizer's allocator is not fork-safe: a child forked while another thread "
                  "allocates can wait on its lock for good";
#endif
  ProcessOutput r = RunProcess(Driver(), {PluginPath(), "fork-in-export"}, Env(trace), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("child exited 0"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(CollSeqs(ExpectValidTrace(trace)).size(), 20000u) << "the parent's trace is whole";
}

// Regression: in flight mode a forked child that crashed wrote the parent's crash dump (the
// parent's ring, under the parent's name), which then blocked the parent's own.
TEST_F(LifecycleTest, AForkedChildThatCrashesWritesNoCrashDump) {
  std::string trace = dir_ + "/flight.json";
  ProcessOutput r = RunProcess(Driver(), {PluginPath(), "fork-abort"}, Env(trace, {"KATRACE_MODE=flight"}), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("child ended by signal 6"), std::string::npos) << r.out;
  for (const std::string& f : FilesIn(dir_)) EXPECT_EQ(f.find(".crash"), std::string::npos) << "a crash dump: " << f;
}

TEST_F(LifecycleTest, ChurnedCommunicatorsAreAllProfiledInBoundedMemory) {
  std::string trace = dir_ + "/churn.json";
  ProcessOutput r = RunProcess(Driver(), {PluginPath(), "churn", "1200"}, Env(trace), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  long rss_kib = 0;
  ASSERT_EQ(sscanf(r.out.c_str(), "peak_rss_kib %ld", &rss_kib), 1) << r.out;
  if (!ScaledRun()) {
    EXPECT_LT(rss_kib, 128 * 1024) << "1,200 communicators created and destroyed";
  }
  EXPECT_EQ(r.err.find("not profiled"), std::string::npos) << r.err;
  nlohmann::json t = ExpectValidTrace(trace);
  EXPECT_EQ(Footer(t)["communicators"].size(), 1201u);
  EXPECT_EQ(Footer(t)["events"]["Coll"], 1200 * 4 + 1);
  EXPECT_EQ(Footer(t)["events"]["KernelCh"], (1200 * 4 + 1) * 2);
}

TEST_F(LifecycleTest, ReloadNeverOverwritesAndStaleHandlesNeverMatch) {
  std::string trace = dir_ + "/reload.json";
  ProcessOutput r = RunProcess(Driver(), {PluginPath(), "reload"}, Env(trace), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json first = ExpectValidTrace(trace);
  nlohmann::json second = ExpectValidTrace(dir_ + "/reload.2.json");
  EXPECT_EQ(CollSeqs(first), (std::set<uint64_t>{0}));
  EXPECT_EQ(CollSeqs(second), (std::set<uint64_t>{1}));
  EXPECT_EQ(Footer(second)["incomplete"], 0) << "the stale stop and state touched nothing";
  EXPECT_EQ(Footer(second)["events"]["KernelCh"], 2);
}

// Regression: a reload found its earlier trace by the "os_pid" in its JSON header, which a gzip
// or NVTXT trace does not show, and wrote over it; and a second session's name took its number
// after the extension ("t.nvtxt.2"), which also lost the format (JSON was written).
TEST_F(LifecycleTest, ReloadNeverOverwritesAGzipOrNvtxtTraceAndKeepsTheFormat) {
  for (const std::string ext : {".nvtxt", ".pftrace.gz"}) {
    const std::string trace = dir_ + "/reload" + ext;
    ProcessOutput r = RunProcess(Driver(), {PluginPath(), "reload"}, Env(trace), dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string second = dir_ + "/reload.2" + ext;
    for (const std::string& path : {trace, second}) {
      const std::string bytes = ReadWholeFile(path);
      ASSERT_FALSE(bytes.empty()) << path << " missing: " << r.err;
      if (ext == ".nvtxt") {
        EXPECT_NE(bytes.find("@RangeStartEnd"), std::string::npos) << path << " is not NVTXT";
      } else {
        EXPECT_EQ(bytes.substr(0, 2), "\x1f\x8b") << path << " is not gzip";
      }
    }
  }
}

TEST_F(LifecycleTest, EndOfJobLineOnStderrWithoutNcclDebug) {
  std::string trace = dir_ + "/visible.json";
  ProcessOutput r = RunProcess(Driver(), {PluginPath(), "run", "0.2"}, Env(trace), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long long colls = 0;
  size_t last = r.out.rfind("colls ");
  ASSERT_NE(last, std::string::npos);
  sscanf(r.out.c_str() + last, "colls %llu", &colls);
  std::string line = "katrace: trace " + trace + ": " + std::to_string(colls * 3) + " events, 0 lost";
  EXPECT_NE(r.err.find(line), std::string::npos) << "expected '" << line << "' in:\n" << r.err;
}

TEST_F(LifecycleTest, WarningsReachStderrWhenNcclDebugIsUnset) {
  std::string trace = dir_ + "/warn.json";
  ProcessOutput r = RunProcess(Driver(), {PluginPath(), "run", "0.05"}, Env(trace, {"KATRACE_ON_FULL=sometimes"}), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("KATRACE_ON_FULL='sometimes' is neither 'wait' nor 'drop'"), std::string::npos) << r.err;
}

TEST_F(LifecycleTest, ShmPathIsARegularFileAndRenamedWhenWhole) {
  std::string trace = "/dev/shm/katrace-test-" + std::to_string(getpid()) + ".json";
  setenv("KATRACE_OUTPUT", trace.c_str(), 1);
  Comm c = InitComm(0x3f, 0, 1);
  CollWithChannels(c.ctx, nullptr, 0, 1);
  EXPECT_FALSE(Exists(trace)) << "written under a temporary name first, like any regular file";
  v6().finalize(c.ctx);
  nlohmann::json t = ExpectValidTrace(trace);
  EXPECT_EQ(Footer(t)["events"]["Coll"], 1);
  EXPECT_FALSE(Exists(trace + ".tmp." + std::to_string(getpid())));
  unlink(trace.c_str());
  unlink((trace + ".summary.txt").c_str());
}

TEST_F(LifecycleTest, TwoProcessesFallingBackToOneDirectoryNeverShareAFile) {
  std::string fallback = dir_ + "/fallback";
  ASSERT_EQ(mkdir(fallback.c_str(), 0755), 0);
  std::vector<std::string> env = Env("/proc/katrace-no-such-dir/shared.json", {"TMPDIR=" + fallback, "KATRACE_EXPORT=off"});
  ProcessOutput a = RunProcess(Driver(), {PluginPath(), "run", "0.1"}, env, dir_);
  ProcessOutput b = RunProcess(Driver(), {PluginPath(), "run", "0.1"}, env, dir_);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  std::vector<std::string> spools;
  for (const std::string& f : FilesIn(fallback)) {
    if (f.find(".kspool") != std::string::npos) spools.push_back(f);
  }
  ASSERT_EQ(spools.size(), 2u) << "one spool each, never the other's";
  for (const std::string& s : spools) {
    ProcessOutput r = RunProcess(ToolPath("katrace-export"), {fallback + "/" + s, "-o", fallback + "/" + s + ".json", "--quiet"}, {}, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_GT(Footer(ExpectValidTrace(fallback + "/" + s + ".json"))["events"]["Coll"].get<int>(), 0);
  }
}

TEST_F(LifecycleTest, BufferBudgetSpentDropsAndCountsPerKind) {
  // One thread buffer in all: a second thread gets none, and its events are counted as lost.
  setenv("KATRACE_THREAD_BUFFER_KB", "1024", 1);
  setenv("KATRACE_BUFFER_MB", "1", 1);
  Comm c = InitComm(0x4f, 0, 1);
  CollWithChannels(c.ctx, nullptr, 0, 1);
  std::thread other([&] {
    for (int i = 1; i <= 5; ++i) CollWithChannels(c.ctx, nullptr, static_cast<uint64_t>(i), 0);
  });
  other.join();
  v6().finalize(c.ctx);
  nlohmann::json t = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(t)["events"]["Coll"], 1);
  EXPECT_EQ(Footer(t)["drops"]["Coll"], 5) << "each lost event counted against its kind";
  bool warned = false;
  for (const std::string& w : CapturedWarnings()) warned |= w.find("KATRACE_BUFFER_MB") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST_F(LifecycleTest, SmallBuffersWaitForTheWriterAndLoseNothing) {
  setenv("KATRACE_THREAD_BUFFER_KB", "64", 1);
  Comm c = InitComm(0x5f, 0, 1);
  const int kColls = static_cast<int>(TestScaled(50000, 5000));
  for (int i = 0; i < kColls; ++i) CollWithChannels(c.ctx, nullptr, static_cast<uint64_t>(i), 1);
  v6().finalize(c.ctx);
  nlohmann::json t = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(t)["events"]["Coll"], kColls);
  EXPECT_EQ(Footer(t)["events"]["KernelCh"], kColls);
  EXPECT_EQ(Footer(t)["drops"]["Coll"], 0);
}

}  // namespace
}  // namespace katrace_test
