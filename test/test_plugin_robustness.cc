// Everything NCCL (or a confused caller) can throw at the callbacks: NULL and garbage values,
// stale handles and double stops, foreign-process proxy ops, concurrent init and finalize in any
// order, a mask changed while running, and many threads at once. None may crash, hang, leak a
// slot or corrupt another event.
#include <fcntl.h>
#include <string.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "test/support/plugin_test.h"
#include "test/support/scoped_env.h"

namespace katrace_test {
namespace {

class RobustnessTest : public PluginTest {};

TEST_F(RobustnessTest, NullEverything) {
  ncclProfiler_v6_t& p = v6();
  EXPECT_EQ(p.init(nullptr, 1, nullptr, nullptr, 0, 0, 0, nullptr), ncclSuccess);
  void* h = reinterpret_cast<void*>(0x1234);
  auto d = CollDescr(nullptr, "AllReduce", 0, 1, 1);
  EXPECT_EQ(p.startEvent(nullptr, &h, &d), ncclSuccess);
  EXPECT_EQ(h, nullptr) << "*eHandle must always be written";
  Comm c = InitComm(2, 0, 1);
  ASSERT_NE(c.ctx, nullptr);
  h = reinterpret_cast<void*>(0x1234);
  EXPECT_EQ(p.startEvent(c.ctx, &h, nullptr), ncclSuccess);
  EXPECT_EQ(h, nullptr);
  EXPECT_EQ(p.startEvent(c.ctx, nullptr, &d), ncclSuccess);
  EXPECT_EQ(p.stopEvent(nullptr), ncclSuccess);
  EXPECT_EQ(p.recordEventState(nullptr, ncclProfilerProxyStepSendWait, nullptr), ncclSuccess);
  // NULL args for every state on a live event of each kind.
  void* group = nullptr;
  auto g = GroupApiDescr();
  p.startEvent(c.ctx, &group, &g);
  for (int s = 0; s <= 30; ++s) p.recordEventState(group, static_cast<ncclProfilerEventState_v6_t>(s), nullptr);
  void* k = nullptr;
  auto kd = KernelChDescr(nullptr, 0, GpuNow());
  p.startEvent(c.ctx, &k, &kd);
  p.recordEventState(k, ncclProfilerKernelChStop, nullptr);
  p.stopEvent(k);
  p.stopEvent(group);
  EXPECT_EQ(p.finalize(nullptr), ncclSuccess);
  p.finalize(c.ctx);
  ExpectValidTrace(trace_path_);
}

TEST_F(RobustnessTest, GarbageHandlesAndContextsAreRejectedWithoutDereference) {
  Comm c = InitComm(3, 0, 1);
  int on_stack = 0;
  std::vector<void*> garbage = {&on_stack, reinterpret_cast<void*>(0x1), reinterpret_cast<void*>(~0ull),
                                reinterpret_cast<void*>(0xA000000000000000ull),
                                reinterpret_cast<void*>(0xAFFFFFFFFFFFFFFFull),
                                reinterpret_cast<void*>(0xB3FFFFFFFFFFFFFFull), malloc(16)};
  for (void* g : garbage) {
    v6().stopEvent(g);
    v6().recordEventState(g, ncclProfilerKernelChStop, nullptr);
    void* h = reinterpret_cast<void*>(0x99);
    auto d = CollDescr(g, "AllReduce", 0, 1, 0);
    v6().startEvent(g, &h, &d);  // garbage context
    EXPECT_EQ(h, nullptr);
    v6().startEvent(c.ctx, &h, &d);  // garbage parent: recorded without a parent
    EXPECT_NE(h, nullptr);
    v6().stopEvent(h);
    v6().finalize(g);
  }
  free(garbage.back());
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], garbage.size());
}

TEST_F(RobustnessTest, DoubleStopAndStaleHandlesNeverTouchTheSlotsNewOccupant) {
  setenv("KATRACE_POOL_COLL", "1", 1);  // one slot: the stale handle's slot is reused at once
  Comm c = InitComm(4, 0, 1);
  void* first = nullptr;
  auto d1 = CollDescr(nullptr, "AllReduce", 1, 1, 0);
  v6().startEvent(c.ctx, &first, &d1);
  v6().stopEvent(first);
  v6().stopEvent(first);  // double stop of a completed event
  void* second = nullptr;
  auto d2 = CollDescr(nullptr, "Broadcast", 2, 1, 0);
  v6().startEvent(c.ctx, &second, &d2);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, first) << "a recycled slot gets a new generation";
  v6().stopEvent(first);  // stale: must not stop "second"
  ncclProfilerEventStateArgs_v6_t a{};
  v6().recordEventState(first, ncclProfilerKernelChStop, &a);
  usleep(2000);
  v6().stopEvent(second);
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  auto colls = Slices(trace, "Coll");
  ASSERT_EQ(colls.size(), 2u);
  EXPECT_EQ(Footer(trace)["drops"]["Coll"], 0);
  for (const auto& e : colls) {
    if (e["name"] == "Broadcast") {
      EXPECT_GE(e["dur"].get<double>(), 1900.0 / 1000) << "stopped by the stale handle";
    }
  }
}

TEST_F(RobustnessTest, ForeignProcessProxyOpNeverTouchesItsContextOrParent) {
  Comm c = InitComm(5, 0, 1);
  __atomic_fetch_or(NcclMask(), ncclProfileProxyStep, __ATOMIC_RELAXED);
  int foreign_pid = getpid() + 1;
  // Under PXN both pointers are another process's: unmapped here.
  void* foreign_ctx = reinterpret_cast<void*>(0x7f0000001000ull);
  void* foreign_parent = reinterpret_cast<void*>(0x7f0000002000ull);
  void* op = nullptr;
  auto od = ProxyOpDescr(foreign_parent, 3, 1, false, foreign_pid);
  v6().startEvent(foreign_ctx, &op, &od);
  ASSERT_NE(op, nullptr) << "foreign proxy ops are still recorded";
  void* step = nullptr;
  auto sd = ProxyStepDescr(op, 0);
  v6().startEvent(foreign_ctx, &step, &sd);
  v6().recordEventState(step, ncclProfilerProxyStepRecvWait, nullptr);
  v6().stopEvent(step);
  v6().stopEvent(op);
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  auto ops = Slices(trace, "ProxyOp");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_FALSE(ops[0]["args"].contains("parent"));
  EXPECT_EQ(ops[0]["args"]["channel"], 3);
  EXPECT_EQ(Slices(trace, "ProxyStep").size(), 1u);
}

TEST_F(RobustnessTest, ConcurrentInitAndFinalizeInAnyOrder) {
  constexpr int kComms = 24;
  std::vector<void*> ctx(kComms);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kComms; i += 4) {
        ctx[i] = InitComm(100 + i, i % 8, 8).ctx;
        CollWithChannels(ctx[i], nullptr, 0, 2);
      }
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();
  for (void* c : ctx) ASSERT_NE(c, nullptr);
  // Finalize from several threads, interleaved, some twice.
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = kComms - 1 - t; i >= 0; i -= 3) {
        v6().finalize(ctx[i]);
        v6().finalize(ctx[i]);
      }
    });
  }
  for (auto& th : threads) th.join();
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], kComms);
  EXPECT_EQ(Footer(trace)["communicators"].size(), static_cast<size_t>(kComms));
  // After the last finalize the plugin is idle: callbacks with old values are harmless.
  void* h = reinterpret_cast<void*>(1);
  auto d = CollDescr(nullptr, "AllReduce", 0, 1, 0);
  v6().startEvent(ctx[0], &h, &d);
  EXPECT_EQ(h, nullptr);
}

TEST_F(RobustnessTest, MaskChangedWhileRunningAndTheStaleCollApiDoubleStop) {
  int mask = 0;
  void* ctx = nullptr;
  v6().init(&ctx, 6, &mask, "m", 1, 1, 0, CapturingLogger);
  ASSERT_NE(mask & ncclProfileKernelCh, 0);
  void* api = nullptr;
  auto a = CollApiDescr(nullptr, "AllReduce", 8);
  v6().startEvent(ctx, &api, &a);
  v6().stopEvent(api);
  // The application switches KernelCh off between the API call and the Coll (NCCL rereads the
  // mask per call): the Coll's GPU children never come.
  __atomic_store_n(&mask, ncclProfileColl | ncclProfileCollApi, __ATOMIC_RELAXED);
  CollWithChannels(ctx, api, 1, 0);
  // NCCL never resets its CollApi handle slot: after the mask loses CollApi bits the next call
  // stops the old handle again.
  v6().stopEvent(api);
  // Back on: a Coll announcing 2 channels whose KernelCh never arrive stays open.
  __atomic_store_n(&mask, kDefaultMaskForTest(), __ATOMIC_RELAXED);
  void* leaked = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 2, 1, 2);
  v6().startEvent(ctx, &leaked, &d);
  v6().stopEvent(leaked);
  v6().finalize(ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 2);
  EXPECT_EQ(Footer(trace)["incomplete"], 1) << "the Coll whose KernelCh never came is closed at finalize";
  EXPECT_EQ(Footer(trace)["events"]["CollApi"], 1);
}

TEST_F(RobustnessTest, ManyThreadsAtOnceOnOneCommunicator) {
  Comm c = InitComm(7, 0, 1);
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) CollWithChannels(c.ctx, nullptr, static_cast<uint64_t>(t * kPerThread + i), 1 + i % 3);
    });
  }
  for (auto& th : threads) th.join();
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], kThreads * kPerThread);
  EXPECT_EQ(Footer(trace)["incomplete"], 0);
  uint64_t kernel_ch = 0;
  for (int i = 0; i < kPerThread; ++i) kernel_ch += 1 + i % 3;
  EXPECT_EQ(Footer(trace)["events"]["KernelCh"], kThreads * kernel_ch);
}

TEST_F(RobustnessTest, UnwritableOutputFallsBackAndSaysSo) {
  setenv("KATRACE_OUTPUT", "/proc/katrace-cannot-write-here/trace.json", 1);
  // The fallback directory is this test's own, so suites running side by side never share it.
  {
    ScopedEnv tmpdir("TMPDIR", dir_);
    Comm c = InitComm(8, 0, 1);
    CollWithChannels(c.ctx, nullptr, 0, 1);
    v6().finalize(c.ctx);
  }
  auto warnings = CapturedWarnings();
  auto said = [&](const std::string& text) {
    for (const std::string& w : warnings) {
      if (w.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(said("cannot create a spool in '/proc/katrace-cannot-write-here'")) << "the capture falls back too";
  EXPECT_TRUE(said("cannot write the trace to '/proc/katrace-cannot-write-here/trace.json'"));
  std::string fallback = dir_ + "/trace.json";
  auto trace = ExpectValidTrace(fallback);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 1);
  unlink(fallback.c_str());
  unlink((fallback + ".summary.txt").c_str());
}

TEST_F(RobustnessTest, FullDiskIsReportedAndTheJobGoesOn) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full on this machine";
  setenv("KATRACE_OUTPUT", "/dev/full", 1);
  {
    ScopedEnv tmpdir("TMPDIR", dir_);  // a device has no directory to spool in: $TMPDIR is used
    Comm c = InitComm(9, 0, 1);
    for (int i = 0; i < 20000; ++i) CollWithChannels(c.ctx, nullptr, static_cast<uint64_t>(i), 1);
    v6().finalize(c.ctx);
  }
  bool reported = false;
  for (const auto& w : CapturedWarnings()) {
    if (w.find("No space left on device") == std::string::npos) continue;
    reported = true;
    EXPECT_NE(w.find("'/dev/full'"), std::string::npos) << "names the file that exists: " << w;
    EXPECT_EQ(w.find(".tmp"), std::string::npos) << w;
  }
  EXPECT_TRUE(reported);
  EXPECT_EQ(access((dir_ + "/full.kspool").c_str(), F_OK), 0) << "the capture is kept when the trace cannot be written";
  EXPECT_NE(access("/dev/full.kspool", F_OK), 0) << "nothing is spooled into /dev";
}

// A directory that exists when the plugin starts is where the trace goes, under its default name.
TEST_F(RobustnessTest, ExistingDirectoryAsOutputHoldsTheTraceUnderTheDefaultName) {
  std::string out = dir_ + "/traces";
  ASSERT_EQ(mkdir(out.c_str(), 0755), 0);
  setenv("KATRACE_OUTPUT", out.c_str(), 1);
  Comm c = InitComm(14, 0, 1);
  CollWithChannels(c.ctx, nullptr, 0, 1);
  v6().finalize(c.ctx);
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  const std::string trace = out + "/katrace-" + host + "-" + std::to_string(getpid()) + ".json";
  EXPECT_EQ(Footer(ExpectValidTrace(trace))["events"]["Coll"], 1);
}

// Regression: a trace path that is a pipe whose reader stops early (a FIFO, or /dev/stdout into
// `| head`) killed the application with SIGPIPE at finalize. The trace fails with EPIPE, said
// once, the spool is kept and named, and the process goes on.
TEST_F(RobustnessTest, APipeReaderThatLeavesEarlyCostsTheTraceNotTheProcess) {
  std::string fifo = dir_ + "/trace.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  setenv("KATRACE_OUTPUT", fifo.c_str(), 1);
  ScopedEnv tmpdir("TMPDIR", dir_);  // a trace written in place spools in $TMPDIR
  Comm c = InitComm(15, 0, 1);
  // Far more trace than a pipe holds, so the writer must meet the closed end.
  for (int i = 0; i < 3000; ++i) CollWithChannels(c.ctx, nullptr, i, 1);
  // The reader opens without waiting for a writer and waits for data at most 60 s, so that a
  // plugin that never writes fails this test instead of hanging it.
  const int fd = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::thread reader([&] {
    char first[16];
    size_t got = 0;
    for (int waited_ms = 0; got < sizeof(first) && waited_ms < 60000; waited_ms += 10) {
      const ssize_t n = read(fd, first + got, sizeof(first) - got);
      if (n > 0) {
        got += static_cast<size_t>(n);
        continue;
      }
      usleep(10000);
    }
    EXPECT_EQ(got, sizeof(first));
    close(fd);
  });
  v6().finalize(c.ctx);
  reader.join();
  bool reported = false;
  for (const auto& w : CapturedWarnings()) reported |= w.find("Broken pipe") != std::string::npos;
  EXPECT_TRUE(reported) << "no warning named the broken pipe";
  const std::string kept = dir_ + "/trace.json.kspool";
  const std::string kept_with_pid = dir_ + "/trace.json." + std::to_string(getpid()) + ".kspool";
  EXPECT_TRUE(access(kept.c_str(), F_OK) == 0 || access(kept_with_pid.c_str(), F_OK) == 0) << "the spool was not kept";
}

// NCCL's logger, as a callback reaches it: the one warning this test causes holds its thread
// inside the plugin until released.
std::atomic<bool> g_logger_entered{false}, g_logger_release{false};
void PausingLogger(ncclDebugLogLevel level, unsigned long, const char*, int, const char* fmt, ...) {
  char message[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  if (level != NCCL_LOG_WARN || strstr(message, "pool") == nullptr) return;
  g_logger_entered.store(true);
  for (int i = 0; i < 5000 && !g_logger_release.load(); ++i) usleep(1000);
}

// Regression: the last finalize freed the session while a callback on another thread (NCCL's
// proxy thread may still report then) was inside the plugin with it: a use after free (ASan
// names it; a plain build read freed memory). The session now outlives such a callback.
TEST_F(RobustnessTest, ACallbackStillInsideWhenTheLastFinalizeComesUsesNoFreedSession) {
  setenv("KATRACE_POOL_KERNEL_CH", "1", 1);
  void* ctx = nullptr;
  int mask = 0;
  ASSERT_EQ(v6().init(&ctx, 17, &mask, "pause", 1, 1, 0, PausingLogger), ncclSuccess);
  unsetenv("KATRACE_POOL_KERNEL_CH");
  void* coll = nullptr;
  auto cd = CollDescr(nullptr, "AllReduce", 0, 1024, 2);
  v6().startEvent(ctx, &coll, &cd);
  v6().stopEvent(coll);
  void* first = nullptr;
  auto k0 = KernelChDescr(coll, 0, GpuNow());
  v6().startEvent(ctx, &first, &k0);  // takes the pool's one slot
  std::thread proxy([&] {
    void* second = nullptr;
    auto k1 = KernelChDescr(coll, 1, GpuNow());
    v6().startEvent(ctx, &second, &k1);  // the pool is full: warns, and the logger holds it here
  });
  for (int i = 0; i < 5000 && !g_logger_entered.load(); ++i) usleep(1000);
  ASSERT_TRUE(g_logger_entered.load()) << "the full pool's warning never reached the logger";
  v6().finalize(ctx);  // the last communicator: the session ends while the callback is inside
  g_logger_release.store(true);
  proxy.join();
  EXPECT_EQ(Footer(ExpectValidTrace(trace_path_))["drops"]["KernelCh"], 1);
}

// Regression: each init beyond the live communicators the plugin holds waited 400 ms behind the
// plugin's lock (holding every other init and finalize), and the events of such a communicator
// vanished uncounted ("0 lost"). It is refused at once and its events are counted as dropped.
TEST_F(RobustnessTest, ACommunicatorBeyondTheLiveOnesHeldIsCountedNotLost) {
  std::vector<void*> held;
  for (uint64_t i = 0; i < 1023; ++i) held.push_back(InitComm(0x10000 + i, 0, 1).ctx);
  const auto before = std::chrono::steady_clock::now();
  Comm extra = InitComm(0x20000, 0, 1);
  const auto waited = std::chrono::steady_clock::now() - before;
  // It waited 40 rounds of 10 ms; now it waits for nothing (the bound leaves room for a slow run).
  EXPECT_LT(waited, std::chrono::milliseconds(350)) << "an init with every slot live waits for nothing";
  ASSERT_NE(extra.ctx, nullptr);
  CollWithChannels(extra.ctx, nullptr, 0, 1);
  CollWithChannels(held[0], nullptr, 1, 1);
  v6().finalize(extra.ctx);
  for (void* ctx : held) v6().finalize(ctx);
  const auto footer = Footer(ExpectValidTrace(trace_path_));
  EXPECT_EQ(footer["events"]["Coll"], 1);
  EXPECT_EQ(footer["drops"]["Coll"], 1);
  EXPECT_EQ(footer["drops"]["KernelCh"], 1);
}

// Regression: a summary file that could not be written was said only when the trace failed too.
TEST_F(RobustnessTest, ASummaryFileThatCannotBeWrittenIsSaid) {
  setenv("KATRACE_OUTPUT", (dir_ + "/t.json").c_str(), 1);
  setenv("KATRACE_SUMMARY_FILE", dir_.c_str(), 1);  // a directory
  Comm c = InitComm(16, 0, 1);
  CollWithChannels(c.ctx, nullptr, 0, 1);
  v6().finalize(c.ctx);
  unsetenv("KATRACE_SUMMARY_FILE");
  bool reported = false;
  for (const auto& w : CapturedWarnings()) {
    reported |= w.find("the summary file was not written") != std::string::npos && w.find(dir_) != std::string::npos;
  }
  EXPECT_TRUE(reported) << "no warning named the summary file";
  EXPECT_EQ(Footer(ExpectValidTrace(dir_ + "/t.json"))["events"]["Coll"], 1);
}

// A directory made under the trace's name while the job ran: the rename cannot replace it.
TEST_F(RobustnessTest, DirectoryAsOutputSaysTheWholeTraceIsInTheTemporaryFile) {
  std::string out = dir_ + "/a-directory.json";
  setenv("KATRACE_OUTPUT", out.c_str(), 1);
  Comm c = InitComm(13, 0, 1);
  ASSERT_EQ(mkdir(out.c_str(), 0755), 0);
  CollWithChannels(c.ctx, nullptr, 0, 1);
  v6().finalize(c.ctx);
  std::string tmp = out + ".tmp." + std::to_string(getpid());
  bool reported = false;
  for (const auto& w : CapturedWarnings()) {
    if (w.find("renaming") == std::string::npos) continue;
    reported = true;
    EXPECT_NE(w.find("the complete trace is in '" + tmp + "'"), std::string::npos) << w;
    EXPECT_EQ(w.find("lost"), std::string::npos) << w;
  }
  EXPECT_TRUE(reported);
  EXPECT_EQ(Footer(ExpectValidTrace(tmp))["events"]["Coll"], 1);
}

TEST_F(RobustnessTest, BadEnvironmentValuesWarnOnceThroughNcclsLogger) {
  setenv("KATRACE_MASK", "coll,bogus", 1);
  setenv("KATRACE_POOL_COLL", "lots", 1);
  Comm c = InitComm(10, 0, 1);
  EXPECT_EQ(c.mask, kDefaultMaskForTest());
  CollWithChannels(c.ctx, nullptr, 0, 1);
  v6().finalize(c.ctx);
  auto warnings = CapturedWarnings();
  ASSERT_GE(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("KATRACE_MASK='coll,bogus'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("KATRACE_POOL_COLL='lots'"), std::string::npos) << warnings[1];
  ExpectValidTrace(trace_path_);
}

}  // namespace
}  // namespace katrace_test

namespace katrace_test {
namespace {

// Jobs often exit without destroying their communicators: the trace must still be complete.
TEST_F(RobustnessTest, ProcessExitWithoutFinalizeStillCommitsTheTrace) {
  fflush(nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Comm c = InitComm(11, 0, 1);
    CollWithChannels(c.ctx, nullptr, 0, 2);
    void* open_coll = nullptr;
    auto d = CollDescr(nullptr, "AllGather", 1, 8, 0);
    v6().startEvent(c.ctx, &open_coll, &d);  // never stopped, never finalized
    exit(0);  // static destructors run, as at the end of a job
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 2);
  EXPECT_EQ(Footer(trace)["events"]["KernelCh"], 2);
  EXPECT_EQ(Footer(trace)["incomplete"], 1);
}

TEST_F(RobustnessTest, NamesThatAreNotUtf8BecomeReplacementCharacters) {
  int mask = 0;
  void* ctx = nullptr;
  // A communicator name and an NCCL string with bytes that are not UTF-8.
  v6().init(&ctx, 12, &mask, "sub\xff\xfe-group\xc3", 1, 1, 0, CapturingLogger);
  auto d = CollDescr(nullptr, "AllReduce\x80", 0, 8, 0);
  void* coll = nullptr;
  v6().startEvent(ctx, &coll, &d);
  v6().stopEvent(coll);
  v6().finalize(ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["communicators"][0]["name"], "sub\uFFFD\uFFFD-group\uFFFD");
  EXPECT_EQ(Slices(trace, "Coll")[0]["name"], "AllReduce\uFFFD");
  // The file as written, before any decompression, is strict JSON too.
  EXPECT_EQ(StrictJsonError(trace_path_), "");
  // ...which the same check refuses when one raw byte is not UTF-8.
  const std::string bad = trace_path_ + ".bad.json";
  FILE* f = fopen(bad.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  fputs("{\"name\":\"AllReduce\x80\"}", f);
  fclose(f);
  EXPECT_NE(StrictJsonError(bad).find("UTF-8"), std::string::npos) << StrictJsonError(bad);
}

}  // namespace
}  // namespace katrace_test
