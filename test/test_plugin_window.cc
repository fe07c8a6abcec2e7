// The capture window through the real .so: KATRACE_DELAY / KATRACE_DURATION by collectives and
// by time, KATRACE_SAMPLE, the control file and the toggle signal. Each test is one session (the
// configuration is read at the first init, the trace built at the last finalize) replaying
// NCCL's order for one collective per group: GroupApi > CollApi (both stopped before the Coll
// starts, so the Coll's parent slot may already hold another event) > Coll > KernelCh and
// ProxyOp children on a "proxy" pass afterwards.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
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

using nlohmann::json;

const char* const kWindowVars[] = {"KATRACE_DELAY",  "KATRACE_DURATION",   "KATRACE_SAMPLE",
                                   "KATRACE_CONTROL", "KATRACE_SIGNAL",    "KATRACE_KEEP_SPOOL",
                                   "KATRACE_MODE",    "KATRACE_FLIGHT_AT_EXIT"};

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// The handles one collective left for its proxy pass.
struct Issued {
  void* coll = nullptr;
  uint64_t seq = 0;
};

class WindowTest : public PluginTest {
 protected:
  void SetUp() override {
    for (const char* v : kWindowVars) unsetenv(v);
    PluginTest::SetUp();
  }
  void TearDown() override {
    for (const char* v : kWindowVars) unsetenv(v);
  }

  // One group with one collective, NCCL's order; its KernelCh and ProxyOp children come later
  // (Children), as from the proxy thread.
  Issued Group(void* ctx, uint64_t seq) {
    void* g = nullptr;
    auto gd = GroupApiDescr();
    v6().startEvent(ctx, &g, &gd);
    void* api = nullptr;
    auto ad = CollApiDescr(g, "AllReduce", 1024);
    v6().startEvent(ctx, &api, &ad);
    v6().stopEvent(api);
    v6().stopEvent(g);
    Issued out;
    out.seq = seq;
    auto cd = CollDescr(api, "AllReduce", seq, 1024, kChannels);
    v6().startEvent(ctx, &out.coll, &cd);
    v6().stopEvent(out.coll);
    return out;
  }
  void Children(void* ctx, const Issued& i) {
    void* op = nullptr;
    auto od = ProxyOpDescr(i.coll, 0, 1, true, getpid());
    v6().startEvent(ctx, &op, &od);
    v6().stopEvent(op);
    for (int ch = 0; ch < kChannels; ++ch) KernelCh(ctx, i.coll, ch);
  }
  void Groups(void* ctx, uint64_t from, uint64_t to) {
    for (uint64_t s = from; s < to; ++s) Children(ctx, Group(ctx, s));
  }

  json Finish(void* ctx) {
    v6().finalize(ctx);
    return ExpectValidTrace(trace_path_);
  }

  static std::vector<uint64_t> Seqs(const json& trace) {
    std::vector<uint64_t> out;
    for (const json& c : Slices(trace, "Coll")) out.push_back(c["args"]["seq"].get<uint64_t>());
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
    std::vector<uint64_t> out;
    for (uint64_t s = from; s < to; ++s) out.push_back(s);
    return out;
  }
  // "name (reason)" of every marker, in time order.
  static std::vector<std::string> Markers(const json& trace) {
    std::vector<std::pair<double, std::string>> found;
    for (const json& e : trace.at("traceEvents")) {
      if (e.value("ph", "") != "i" || e.value("cat", "") != "katrace") continue;
      EXPECT_EQ(e.value("s", ""), "p") << "a marker is process-scoped";
      found.push_back({e["ts"].get<double>(), e["name"].get<std::string>() + " (" +
                                                  e["args"]["reason"].get<std::string>() + ")"});
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (const auto& f : found) out.push_back(f.second);
    return out;
  }
  // Every recorded event of the task tree hangs under a Coll the trace holds, and each such Coll
  // has all its children: the window keeps collectives whole.
  static void ExpectWhole(const json& trace, size_t colls) {
    std::set<uint64_t> coll_ids, api_ids, group_ids;
    for (const json& c : Slices(trace, "Coll")) {
      coll_ids.insert(c["args"]["id"].get<uint64_t>());
      api_ids.insert(c["args"]["parent"].get<uint64_t>());
    }
    EXPECT_EQ(coll_ids.size(), colls);
    for (const json& a : Slices(trace, "CollApi")) {
      EXPECT_EQ(api_ids.count(a["args"]["id"].get<uint64_t>()), 1u) << "a CollApi without its Coll: " << a.dump();
      group_ids.insert(a["args"]["parent"].get<uint64_t>());
    }
    EXPECT_EQ(Slices(trace, "CollApi").size(), colls);
    EXPECT_EQ(Slices(trace, "GroupApi").size(), colls);
    for (const json& g : Slices(trace, "GroupApi")) EXPECT_EQ(group_ids.count(g["args"]["id"].get<uint64_t>()), 1u);
    for (const char* cat : {"KernelCh", "ProxyOp"}) {
      for (const json& k : Slices(trace, cat)) {
        EXPECT_EQ(coll_ids.count(k["args"]["parent"].get<uint64_t>()), 1u) << cat << " outside the window: " << k.dump();
      }
    }
    EXPECT_EQ(Slices(trace, "KernelCh").size(), colls * kChannels);
    EXPECT_EQ(Slices(trace, "ProxyOp").size(), colls);
    EXPECT_EQ(Footer(trace)["incomplete"].get<uint64_t>(), 0u);
  }

  static constexpr int kChannels = 2;
};

// How many of the plugin's warnings so far contain |text|.
int WarningsContaining(const std::string& text) {
  int n = 0;
  for (const std::string& w : CapturedWarnings()) n += w.find(text) != std::string::npos;
  return n;
}

// How many of the plugin's log lines (any level) so far contain |text|.
int LogLinesContaining(const std::string& text) {
  int n = 0;
  for (const std::string& line : CapturedLines()) n += line.find(text) != std::string::npos;
  return n;
}

// Runs |trigger| (a write to the control file, a signal) and waits until the plugin logs one more
// line holding |logged|: the writer acted on it. The writer looks at the file about every 100 ms
// and for the signal every millisecond; a fixed sleep was a guess that a loaded machine (a
// sanitizer run beside two builds) could lose. False after 30 s.
template <typename Trigger>
bool DoAndWaitForLog(Trigger&& trigger, const std::string& logged) {
  const int before = LogLinesContaining(logged);
  trigger();
  for (int i = 0; i < 3000; ++i) {
    if (LogLinesContaining(logged) > before) return true;
    SleepMs(10);
  }
  return false;
}

// Appends |word| to the control file at |path|, as a script would, and waits for |logged|.
bool SayAndWait(const std::string& path, const std::string& word, const std::string& logged) {
  return DoAndWaitForLog([&] { std::ofstream(path, std::ios::app) << word << "\n"; }, logged);
}

// DELAY=20colls DURATION=10colls: the roots that start after 20 collectives started are
// admitted, 10 collectives of them, whole; the last one's children arrive after the window has
// closed and are still kept.
TEST_F(WindowTest, CollectiveCountWindowHoldsExactlyThoseCollectivesWhole) {
  setenv("KATRACE_DELAY", "20colls", 1);
  setenv("KATRACE_DURATION", "10colls", 1);
  Comm c = InitComm(0x3100, 0, 2);
  Groups(c.ctx, 0, 29);
  Issued last = Group(c.ctx, 29);
  Groups(c.ctx, 30, 60);
  Children(c.ctx, last);
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), Range(20, 30));
  ExpectWhole(trace, 10);
  EXPECT_EQ(Markers(trace), (std::vector<std::string>{"capture on (KATRACE_DELAY)", "capture off (KATRACE_DURATION)"}));
  for (const auto& d : Footer(trace)["drops"].items()) EXPECT_EQ(d.value().get<uint64_t>(), 0u) << d.key();
}

// Outside the window events keep their slots working like masked-out ones: a small Coll pool
// never fills although every Coll announces KernelCh children, and stale, doubled and NULL
// calls on outside handles change nothing.
TEST_F(WindowTest, OutsideWindowHandlesAreHarmless) {
  setenv("KATRACE_DELAY", "1000000colls", 1);
  setenv("KATRACE_POOL_COLL", "4", 1);
  Comm c = InitComm(0x3101, 0, 2);
  const uint64_t n = TestScaled(2000, 200);
  for (uint64_t s = 0; s < n; ++s) {
    Issued i = Group(c.ctx, s);
    ASSERT_NE(i.coll, nullptr) << "an outside event still gets a handle";
    Children(c.ctx, i);
    v6().stopEvent(i.coll);  // double stop, and a stale handle once its slot is reused
    v6().recordEventState(i.coll, ncclProfilerKernelChStop, nullptr);
  }
  v6().stopEvent(nullptr);
  v6().recordEventState(nullptr, ncclProfilerKernelChStop, nullptr);
  json trace = Finish(c.ctx);
  EXPECT_TRUE(Seqs(trace).empty());
  EXPECT_TRUE(Slices(trace, "GroupApi").empty());
  EXPECT_TRUE(Slices(trace, "KernelCh").empty());
  for (const auto& d : Footer(trace)["drops"].items()) EXPECT_EQ(d.value().get<uint64_t>(), 0u) << d.key();
  EXPECT_TRUE(Markers(trace).empty());
  unsetenv("KATRACE_POOL_COLL");
  // Regression: an empty trace was all the user got; the reason is said.
  int said = 0;
  for (const auto& w : CapturedWarnings()) {
    said += w.find("the job ended before KATRACE_DELAY had passed") != std::string::npos;
  }
  EXPECT_EQ(said, 1);
}

// DELAY=250ms DURATION=250ms: only groups that started in [250 ms, 500 ms] after the first init
// (give or take the writer's millisecond poll) are kept, one contiguous run, whole.
TEST_F(WindowTest, TimeWindowKeepsOneContiguousRunInsideTheEdges) {
  setenv("KATRACE_DELAY", "250ms", 1);
  setenv("KATRACE_DURATION", "250ms", 1);
  const uint64_t t0 = NowMs();
  Comm c = InitComm(0x3102, 0, 2);
  std::vector<uint64_t> started;  // ms after init, by seq
  for (uint64_t s = 0; NowMs() - t0 < 800; ++s) {
    started.push_back(NowMs() - t0);
    Children(c.ctx, Group(c.ctx, s));
    SleepMs(4);
  }
  json trace = Finish(c.ctx);
  std::vector<uint64_t> seqs = Seqs(trace);
  ASSERT_FALSE(seqs.empty());
  EXPECT_EQ(seqs, Range(seqs.front(), seqs.back() + 1)) << "one contiguous run";
  EXPECT_GE(started[seqs.front()] + 2, 250u) << "nothing before the delay";
  EXPECT_LE(started[seqs.back()], 500u + 40) << "nothing after the duration";
  ExpectWhole(trace, seqs.size());
  EXPECT_EQ(Markers(trace), (std::vector<std::string>{"capture on (KATRACE_DELAY)", "capture off (KATRACE_DURATION)"}));
}

// SAMPLE=4: one group in four, with everything under it.
TEST_F(WindowTest, SampleKeepsOneRootInN) {
  setenv("KATRACE_SAMPLE", "4", 1);
  Comm c = InitComm(0x3103, 0, 2);
  Groups(c.ctx, 0, 40);
  json trace = Finish(c.ctx);
  std::vector<uint64_t> expected;
  for (uint64_t s = 0; s < 40; s += 4) expected.push_back(s);
  EXPECT_EQ(Seqs(trace), expected);
  ExpectWhole(trace, 10);
  EXPECT_TRUE(Markers(trace).empty());
}

// Sampling and a collective-count duration together: only the groups sampling keeps count
// against the duration.
TEST_F(WindowTest, SampleWithinACollectiveCountDuration) {
  setenv("KATRACE_SAMPLE", "3", 1);
  setenv("KATRACE_DURATION", "5colls", 1);
  Comm c = InitComm(0x310a, 0, 2);
  Groups(c.ctx, 0, 40);
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), (std::vector<uint64_t>{0, 3, 6, 9, 12}));
  ExpectWhole(trace, 5);
  EXPECT_EQ(Markers(trace), (std::vector<std::string>{"capture off (KATRACE_DURATION)"}));
}

// The control file: it says "stop" before the job starts, so capture starts off; "start" and
// "stop" switch it within about 100 ms; "dump" makes everything captured readable in the spool
// now; an unknown word is named in one warning and changes nothing.
TEST_F(WindowTest, ControlFileStartsStopsAndDumps) {
  const std::string control = dir_ + "/control";
  std::ofstream(control) << "stop\n";
  setenv("KATRACE_CONTROL", control.c_str(), 1);
  Comm c = InitComm(0x3104, 0, 2);
  Groups(c.ctx, 0, 10);
  ASSERT_TRUE(SayAndWait(control, "start", "capture on (control file"));
  Groups(c.ctx, 10, 20);
  ASSERT_TRUE(SayAndWait(control, "stop", "capture off (control file"));
  Groups(c.ctx, 20, 30);
  ASSERT_TRUE(SayAndWait(control, "frobnicate", "unknown word 'frobnicate'"));
  Groups(c.ctx, 30, 40);
  ASSERT_TRUE(SayAndWait(control, "dump", "dump requested (control file"));
  // What the dump made readable: the spool as it is now, exported on its own.
  const std::string copy = dir_ + "/dumped.kspool";
  std::filesystem::copy_file(trace_path_ + ".kspool", copy);
  ProcessOutput r = RunProcess(ToolPath("katrace-export"), {copy, "-o", dir_ + "/dumped.json"}, {}, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Seqs(LoadTrace(dir_ + "/dumped.json")), Range(10, 20));
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), Range(10, 20));
  ExpectWhole(trace, 10);
  EXPECT_EQ(Markers(trace), (std::vector<std::string>{"capture off (control file)", "capture on (control file)",
                                                      "capture off (control file)", "dump (control file)"}));
  EXPECT_EQ(WarningsContaining("unknown word 'frobnicate'"), 1);
}

// A rewrite of the control file with the same size inside one mtime tick of the file system (a
// jiffy on ext4: a script's `echo` right after another) leaves everything stat shows alike; the
// mtime is put back by hand here to make that tick certain. The word is acted on all the same.
TEST_F(WindowTest, AControlFileRewrittenAlikeToStatIsStillRead) {
  const std::string control = dir_ + "/control";
  std::ofstream(control) << "start\n";
  setenv("KATRACE_CONTROL", control.c_str(), 1);
  Comm c = InitComm(0x3105, 0, 2);
  Groups(c.ctx, 0, 10);
  struct stat before {};
  ASSERT_EQ(stat(control.c_str(), &before), 0);
  ASSERT_TRUE(DoAndWaitForLog(
      [&] {
        std::ofstream(control) << " stop\n";  // the same 6 bytes, the same inode
        const struct timespec times[2] = {before.st_atim, before.st_mtim};
        ASSERT_EQ(utimensat(AT_FDCWD, control.c_str(), times, 0), 0);
      },
      "capture off (control file"));
  Groups(c.ctx, 10, 20);
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), Range(0, 10));
  EXPECT_EQ(Markers(trace), (std::vector<std::string>{"capture off (control file)"}));
}

// A `start` while KATRACE_DURATION's window is open keeps capture on past it (a trigger sets
// capture from then on): that is said, not done silently.
TEST_F(WindowTest, AStartInsideTheDurationWindowSaysTheDurationNoLongerApplies) {
  const std::string control = dir_ + "/control";
  std::ofstream(control) << "\n";
  setenv("KATRACE_CONTROL", control.c_str(), 1);
  setenv("KATRACE_DURATION", "15colls", 1);
  Comm c = InitComm(0x3106, 0, 2);
  Groups(c.ctx, 0, 5);
  ASSERT_TRUE(SayAndWait(control, "start", "'start' while capture was already on"));
  Groups(c.ctx, 5, 30);
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), Range(0, 30));
  EXPECT_EQ(WarningsContaining("'start' while capture was already on: KATRACE_DURATION no longer applies"), 1);
}

// A `stop` while KATRACE_DELAY still holds capture off keeps it off for good: said as well.
TEST_F(WindowTest, AStopBeforeTheDelayPassedSaysTheDelayNoLongerApplies) {
  const std::string control = dir_ + "/control";
  std::ofstream(control) << "\n";
  setenv("KATRACE_CONTROL", control.c_str(), 1);
  setenv("KATRACE_DELAY", "5colls", 1);
  Comm c = InitComm(0x3107, 0, 2);
  Groups(c.ctx, 0, 2);
  ASSERT_TRUE(SayAndWait(control, "stop", "'stop' while capture was already off"));
  Groups(c.ctx, 2, 20);
  json trace = Finish(c.ctx);
  EXPECT_TRUE(Seqs(trace).empty());
  EXPECT_EQ(WarningsContaining("'stop' while capture was already off: KATRACE_DELAY no longer applies"), 1);
}

// In flight mode `dump` writes the ring as a dump of its own, exported in the background, markers
// included (the writer's own blocks go through the ring like the callbacks'); the job goes on
// and the dump at exit holds the rest.
TEST_F(WindowTest, InFlightModeTheControlFileDumpsTheRing) {
  const std::string control = dir_ + "/control";
  std::ofstream(control) << "\n";
  setenv("KATRACE_CONTROL", control.c_str(), 1);
  setenv("KATRACE_MODE", "flight", 1);
  setenv("KATRACE_FLIGHT_AT_EXIT", "1", 1);
  const std::string stem = trace_path_.substr(0, trace_path_.size() - strlen(".json"));
  Comm c = InitComm(0x3110, 0, 2);
  Groups(c.ctx, 0, 10);
  ASSERT_TRUE(SayAndWait(control, "stop", "capture off (control file"));
  Groups(c.ctx, 10, 20);
  ASSERT_TRUE(SayAndWait(control, "start", "capture on (control file"));
  Groups(c.ctx, 20, 30);
  ASSERT_TRUE(SayAndWait(control, "dump", "dump requested (control file"));
  const std::string dumped = stem + ".flight-1.json";
  for (int i = 0; i < 100 && access(dumped.c_str(), F_OK) != 0; ++i) SleepMs(50);
  ASSERT_EQ(access(dumped.c_str(), F_OK), 0) << "the dump is exported while the job runs";
  EXPECT_NE(access(trace_path_.c_str(), F_OK), 0) << "the flight recorder writes no trace of its own";
  std::vector<uint64_t> kept = Range(0, 10);
  for (uint64_t s = 20; s < 30; ++s) kept.push_back(s);
  json first = ExpectValidTrace(dumped);
  EXPECT_EQ(Seqs(first), kept);
  EXPECT_EQ(Markers(first), (std::vector<std::string>{"capture off (control file)", "capture on (control file)",
                                                      "dump (control file)"}));
  Groups(c.ctx, 30, 35);
  v6().finalize(c.ctx);
  json last = ExpectValidTrace(stem + ".flight-2.json");
  for (uint64_t s = 30; s < 35; ++s) kept.push_back(s);
  EXPECT_EQ(Seqs(last), kept);
  EXPECT_EQ(Markers(last).size(), 3u);
}

// A control file that is a pipe is never read (it could block the writer thread): one warning,
// and capture goes on as configured.
TEST_F(WindowTest, AControlPipeIsIgnoredWithOneWarning) {
  const std::string control = dir_ + "/pipe";
  ASSERT_EQ(mkfifo(control.c_str(), 0600), 0);
  setenv("KATRACE_CONTROL", control.c_str(), 1);
  Comm c = InitComm(0x3111, 0, 2);
  Groups(c.ctx, 0, 5);
  SleepMs(250);  // the writer's looks at it in the meantime warn once, and read nothing
  Groups(c.ctx, 5, 10);
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), Range(0, 10));
  int warned = 0;
  for (const std::string& w : CapturedWarnings()) warned += w.find("is not a regular file") != std::string::npos;
  EXPECT_EQ(warned, 1);
}

// A control file that does not exist yet is normal: capture runs, and the file is picked up once
// it appears.
TEST_F(WindowTest, ControlFileMayAppearLater) {
  const std::string control = dir_ + "/later";
  setenv("KATRACE_CONTROL", control.c_str(), 1);
  Comm c = InitComm(0x3105, 0, 2);
  Groups(c.ctx, 0, 5);
  ASSERT_TRUE(DoAndWaitForLog([&] { std::ofstream(control) << "stop\n"; }, "capture off (control file"));
  Groups(c.ctx, 5, 10);
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), Range(0, 5));
  EXPECT_EQ(Markers(trace), (std::vector<std::string>{"capture off (control file)"}));
  EXPECT_TRUE(CapturedWarnings().empty()) << CapturedWarnings().front();
}

// A "start" left in the control file by an earlier run does not switch the window's edges off.
TEST_F(WindowTest, StaleStartInTheControlFileKeepsTheDelay) {
  const std::string control = dir_ + "/stale";
  std::ofstream(control) << "start\n";
  setenv("KATRACE_CONTROL", control.c_str(), 1);
  setenv("KATRACE_DELAY", "5colls", 1);
  Comm c = InitComm(0x3109, 0, 2);
  Groups(c.ctx, 0, 10);
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), Range(5, 10));
  EXPECT_EQ(Markers(trace), (std::vector<std::string>{"capture on (KATRACE_DELAY)"}));
}

std::atomic<int> g_app_signals{0};
void AppHandler(int) { g_app_signals.fetch_add(1); }

void InstallAppHandler(int sig) {
  struct sigaction sa {};
  sa.sa_handler = AppHandler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}
bool AppHandlerInstalled(int sig) {
  struct sigaction cur {};
  sigaction(sig, nullptr, &cur);
  return cur.sa_handler == AppHandler;
}

// KATRACE_SIGNAL=USR2: the signal toggles capture (and never reaches the application's handler
// meanwhile); at the session's end the application's handler is back.
TEST_F(WindowTest, SignalTogglesCaptureAndRestoresTheHandler) {
  InstallAppHandler(SIGUSR2);
  g_app_signals = 0;
  setenv("KATRACE_SIGNAL", "USR2", 1);
  Comm c = InitComm(0x3106, 0, 2);
  EXPECT_FALSE(AppHandlerInstalled(SIGUSR2)) << "katrace took the signal";
  Groups(c.ctx, 0, 10);
  ASSERT_TRUE(DoAndWaitForLog([] { raise(SIGUSR2); }, "capture off (SIGUSR2)"));
  Groups(c.ctx, 10, 20);
  ASSERT_TRUE(DoAndWaitForLog([] { raise(SIGUSR2); }, "capture on (SIGUSR2)"));
  Groups(c.ctx, 20, 30);
  json trace = Finish(c.ctx);
  std::vector<uint64_t> expected = Range(0, 10);
  for (uint64_t s = 20; s < 30; ++s) expected.push_back(s);
  EXPECT_EQ(Seqs(trace), expected);
  ExpectWhole(trace, 20);
  EXPECT_EQ(Markers(trace), (std::vector<std::string>{"capture off (signal)", "capture on (signal)"}));
  EXPECT_EQ(g_app_signals.load(), 0);
  EXPECT_TRUE(AppHandlerInstalled(SIGUSR2)) << "the application's handler is restored";
  raise(SIGUSR2);
  EXPECT_EQ(g_app_signals.load(), 1);
  signal(SIGUSR2, SIG_DFL);
}

// Without KATRACE_SIGNAL the application's signals are left alone.
TEST_F(WindowTest, SignalUntouchedWhenNotEnabled) {
  InstallAppHandler(SIGUSR1);
  InstallAppHandler(SIGUSR2);
  g_app_signals = 0;
  Comm c = InitComm(0x3107, 0, 2);
  EXPECT_TRUE(AppHandlerInstalled(SIGUSR1));
  EXPECT_TRUE(AppHandlerInstalled(SIGUSR2));
  Groups(c.ctx, 0, 5);
  raise(SIGUSR1);
  raise(SIGUSR2);
  SleepMs(20);
  Groups(c.ctx, 5, 10);
  json trace = Finish(c.ctx);
  EXPECT_EQ(g_app_signals.load(), 2);
  EXPECT_EQ(Seqs(trace), Range(0, 10));
  EXPECT_TRUE(Markers(trace).empty());
  signal(SIGUSR1, SIG_DFL);
  signal(SIGUSR2, SIG_DFL);
}

// Bad values: one line naming the variable each, and the job is traced as if it were unset.
TEST_F(WindowTest, BadValuesWarnAndCaptureEverything) {
  setenv("KATRACE_DELAY", "soon", 1);
  setenv("KATRACE_SAMPLE", "0", 1);
  setenv("KATRACE_SIGNAL", "HUP", 1);
  Comm c = InitComm(0x3108, 0, 2);
  Groups(c.ctx, 0, 8);
  json trace = Finish(c.ctx);
  EXPECT_EQ(Seqs(trace), Range(0, 8));
  std::vector<std::string> w = CapturedWarnings();
  for (const char* var : {"KATRACE_DELAY", "KATRACE_SAMPLE", "KATRACE_SIGNAL"}) {
    EXPECT_EQ(std::count_if(w.begin(), w.end(), [&](const std::string& s) { return s.find(var) != std::string::npos; }), 1)
        << var;
  }
}

}  // namespace
}  // namespace katrace_test
