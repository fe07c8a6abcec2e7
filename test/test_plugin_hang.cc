// The hang watchdog through the real .so (KATRACE_HANG_TIMEOUT): a job that stops completing
// events while collectives are in flight gets "<trace>.hang.json" naming what is open, within
// the timeout plus 1 s, once per hang; steady progress, an idle job, or the watchdog left off
// (the default) get no report.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "test/support/plugin_test.h"
#include "test/support/subprocess.h"

namespace katrace_test {
namespace {

using Clock = std::chrono::steady_clock;

class HangTest : public PluginTest {
 protected:
  void SetUp() override {
    PluginTest::SetUp();
    unsetenv("KATRACE_HANG_TIMEOUT");
    setenv("KATRACE_MASK", "coll,kernelch,kernelstep,proxyop,proxystep", 1);
    setenv("KATRACE_SUMMARY", "0", 1);
    report_ = trace_path_ + ".hang.json";
  }
  void TearDown() override {
    unsetenv("KATRACE_HANG_TIMEOUT");
    unsetenv("KATRACE_MASK");
    unsetenv("KATRACE_MODE");
  }

  bool ReportExists() const {
    struct stat st;
    return stat(report_.c_str(), &st) == 0;
  }
  // Waits up to |limit| for the report; returns how long it took from |since|, or -1.
  double WaitForReport(Clock::time_point since, std::chrono::milliseconds limit) const {
    while (Clock::now() - since < limit) {
      if (ReportExists()) return std::chrono::duration<double>(Clock::now() - since).count();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }
  nlohmann::json Report() const { return ParseJson(ReadWholeFile(report_), false); }

  void CompleteKernelCh(void* ctx, void* coll, int channel) { KernelCh(ctx, coll, channel); }

  // A Coll of 2 channels: channel 0 completes, channel 1 starts its KernelCh, a KernelStep
  // towards |peer|, and a ProxyOp whose step 3 waits in SendWait, and none of them stop.
  // Returns when the last event completed.
  Clock::time_point StartHungColl(void* ctx, uint64_t seq, int peer) {
    void* coll = nullptr;
    auto d = CollDescr(nullptr, "AllReduce", seq, 1 << 18, 2);
    v6().startEvent(ctx, &coll, &d);
    v6().stopEvent(coll);
    void* ch = nullptr;
    auto kd = KernelChDescr(coll, 1, GpuNow());
    v6().startEvent(ctx, &ch, &kd);
    void* step = nullptr;
    const uint64_t t = GpuNow();
    auto sd = KernelStepDescr(coll, 1, true, peer, 7, t, t + 1);
    v6().startEvent(ctx, &step, &sd);
    void* op = nullptr;
    auto od = ProxyOpDescr(coll, 1, peer, true, getpid());
    v6().startEvent(ctx, &op, &od);
    void* pstep = nullptr;
    auto pd = ProxyStepDescr(op, 3);
    v6().startEvent(ctx, &pstep, &pd);
    ncclProfilerEventStateArgs_v6_t a{};
    a.proxyStep.transSize = 4096;
    v6().recordEventState(pstep, ncclProfilerProxyStepSendWait, &a);
    CompleteKernelCh(ctx, coll, 0);
    return Clock::now();
  }

  std::string report_;
};

TEST_F(HangTest, ReportNamesTheOpenChannelStepAndPeerOnly) {
  setenv("KATRACE_HANG_TIMEOUT", "1s", 1);
  Comm c = InitComm(0xabcdef12345678ull, 1, 4);
  CollWithChannels(c.ctx, nullptr, 1, 2);  // done: not in the report
  Clock::time_point last = StartHungColl(c.ctx, 2, 2);
  const double took = WaitForReport(last, std::chrono::milliseconds(3000));
  ASSERT_GT(took, 0) << "a report within 3 s";
  EXPECT_GE(took, 0.99) << "not before the timeout";
  EXPECT_LE(took, 2.0) << "within the timeout plus 1 s";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // written atomically; let the summary out
  nlohmann::json r = Report();
  ASSERT_TRUE(r.is_object()) << ReadWholeFile(report_);
  EXPECT_EQ(r["katrace_hang_report"], 1);
  EXPECT_EQ(r["process"]["pid"], getpid());
  EXPECT_FALSE(r["process"]["host"].get<std::string>().empty());
  EXPECT_EQ(r["tasks_in_flight"], 1);
  EXPECT_GE(r["seconds_without_progress"].get<double>(), 0.99);
  ASSERT_EQ(r["communicators"].size(), 1u) << r.dump(1);
  const nlohmann::json& comm = r["communicators"][0];
  EXPECT_EQ(comm["comm_hash"], "00abcdef12345678");
  EXPECT_EQ(comm["rank"], 1);
  EXPECT_EQ(comm["nranks"], 4);
  EXPECT_EQ(comm["oldest_in_flight"]["func"], "AllReduce");
  EXPECT_EQ(comm["oldest_in_flight"]["seq"], 2);
  EXPECT_GE(comm["oldest_in_flight"]["seconds_before_report"].get<double>(), 0.99);
  const uint64_t since = comm["oldest_in_flight"]["since_realtime_ns"];
  const uint64_t at = r["report_realtime_ns"];
  EXPECT_LT(since, at);
  EXPECT_GT(since + 3000000000ull, at);
  ASSERT_EQ(comm["open_channels"].size(), 1u) << comm.dump(1);
  EXPECT_EQ(comm["open_channels"][0]["channel"], 1);
  ASSERT_EQ(comm["open_kernel_steps"].size(), 1u) << comm.dump(1);
  EXPECT_EQ(comm["open_kernel_steps"][0]["channel"], 1);
  EXPECT_EQ(comm["open_kernel_steps"][0]["direction"], "send");
  EXPECT_EQ(comm["open_kernel_steps"][0]["peer"], 2);
  EXPECT_EQ(comm["open_kernel_steps"][0]["step"], 7);
  EXPECT_EQ(comm["open_kernel_steps"][0]["size"], 1 << 17);
  ASSERT_EQ(comm["proxy_steps"].size(), 1u) << comm.dump(1);
  EXPECT_EQ(comm["proxy_steps"][0]["peer"], 2);
  EXPECT_EQ(comm["proxy_steps"][0]["channel"], 1);
  EXPECT_EQ(comm["proxy_steps"][0]["step"], 3);
  EXPECT_EQ(comm["proxy_steps"][0]["state"], "SendWait");

  // Once per hang: still hung, no second report.
  ASSERT_EQ(unlink(report_.c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(ReportExists()) << "one report per hang";

  // Completions resume (a KernelCh of another collective), then the job hangs again: a new report.
  void* coll = nullptr;
  auto d = CollDescr(nullptr, "AllGather", 3, 1024, 1);
  v6().startEvent(c.ctx, &coll, &d);
  v6().stopEvent(coll);
  void* ch = nullptr;
  auto kd = KernelChDescr(coll, 0, GpuNow());
  v6().startEvent(c.ctx, &ch, &kd);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  v6().stopEvent(ch);
  last = Clock::now();
  EXPECT_GT(WaitForReport(last, std::chrono::milliseconds(3000)), 0.99) << "re-armed once completions resumed";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  r = Report();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["communicators"][0]["oldest_in_flight"]["seq"], 2) << "the first hung collective is still the oldest";
  v6().finalize(c.ctx);
  // The job went on: the trace is built at the end as usual, the hung events in it incomplete.
  nlohmann::json trace = ExpectValidTrace(trace_path_);
  EXPECT_GE(Footer(trace)["incomplete"].get<int64_t>(), 4) << "the hung Coll, KernelCh, KernelStep, ProxyStep";
}

// With the flight recorder the hang dumps the ring, the report is read from that dump, and the
// dump becomes a trace of what led to the hang, the hung events in it incomplete.
TEST_F(HangTest, InFlightModeTheReportComesFromTheRingsDump) {
  setenv("KATRACE_HANG_TIMEOUT", "500ms", 1);
  setenv("KATRACE_MODE", "flight", 1);
  Comm c = InitComm(0x7711, 0, 2);
  for (uint64_t seq = 1; seq <= 20; ++seq) CollWithChannels(c.ctx, nullptr, seq, 2);
  Clock::time_point last = StartHungColl(c.ctx, 21, 1);
  ASSERT_GT(WaitForReport(last, std::chrono::milliseconds(3000)), 0.49) << "a report within 3 s";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  nlohmann::json r = Report();
  ASSERT_TRUE(r.is_object()) << ReadWholeFile(report_);
  ASSERT_EQ(r["communicators"].size(), 1u) << r.dump(1);
  EXPECT_EQ(r["communicators"][0]["oldest_in_flight"]["seq"], 21);
  ASSERT_EQ(r["communicators"][0]["open_kernel_steps"].size(), 1u);
  EXPECT_EQ(r["communicators"][0]["open_kernel_steps"][0]["peer"], 1);
  const std::string dumped = trace_path_.substr(0, trace_path_.size() - strlen(".json")) + ".flight-1.json";
  for (int i = 0; i < 100 && access(dumped.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  nlohmann::json trace = ExpectValidTrace(dumped);
  EXPECT_EQ(Slices(trace, "Coll").size(), 21u) << "the collectives before the hang and the hung one";
  EXPECT_GE(Footer(trace)["incomplete"].get<int64_t>(), 4) << "the hung Coll, KernelCh, KernelStep, ProxyStep";
  v6().finalize(c.ctx);
  EXPECT_NE(access(trace_path_.c_str(), F_OK), 0) << "a flight session writes no trace at its end unless asked";
}

// Where the trace cannot be written the spool goes to $TMPDIR, and the report follows it.
TEST_F(HangTest, AnUnwritableTraceDirectorySendsTheReportWhereTheSpoolWent) {
  const std::string fallback = dir_ + "/fallback";
  ASSERT_EQ(mkdir(fallback.c_str(), 0755), 0);
  const char* tmpdir = getenv("TMPDIR");
  const std::string saved_tmpdir = tmpdir != nullptr ? tmpdir : "";
  setenv("TMPDIR", fallback.c_str(), 1);
  setenv("KATRACE_OUTPUT", "/proc/katrace-no-such-dir/trace.json", 1);
  setenv("KATRACE_EXPORT", "off", 1);
  setenv("KATRACE_HANG_TIMEOUT", "300ms", 1);
  Comm c = InitComm(0x7712, 0, 2);
  if (saved_tmpdir.empty()) {
    unsetenv("TMPDIR");
  } else {
    setenv("TMPDIR", saved_tmpdir.c_str(), 1);
  }
  StartHungColl(c.ctx, 1, 1);
  report_ = fallback + "/trace.json.hang.json";
  ASSERT_GT(WaitForReport(Clock::now(), std::chrono::milliseconds(3000)), 0) << "no report in " << fallback;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  nlohmann::json r = Report();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["communicators"][0]["open_channels"][0]["channel"], 1);
  v6().finalize(c.ctx);
  unsetenv("KATRACE_EXPORT");
}

// What the plugin prints on stderr while it lives, read back from a file standing in for fd 2.
class StderrCapture {
 public:
  explicit StderrCapture(const std::string& path) : path_(path) {
    fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~StderrCapture() { Restore(); }
  std::string Text() const { return ReadWholeFile(path_); }
  void Restore() {
    if (saved_ < 0) return;
    fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }

 private:
  std::string path_;
  int saved_ = -1;
};

// Regression: once the stuck work moved again, the report stayed on disk reading like a hang
// that never ended (and katrace-stats --hang merges it as one), and nothing said it had ended.
// One line says so, once, after the report's.
TEST_F(HangTest, AHangThatEndsIsSaidToHaveEnded) {
  setenv("KATRACE_HANG_TIMEOUT", "300ms", 1);
  StderrCapture err(dir_ + "/stderr.txt");
  Comm c = InitComm(0x7713, 0, 2);
  void* coll = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 1, 1024, 1);
  v6().startEvent(c.ctx, &coll, &d);
  v6().stopEvent(coll);
  void* ch = nullptr;
  auto kd = KernelChDescr(coll, 0, GpuNow());
  v6().startEvent(c.ctx, &ch, &kd);
  ASSERT_GT(WaitForReport(Clock::now(), std::chrono::milliseconds(3000)), 0) << err.Text();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(err.Text().find("the hang is over"), std::string::npos) << "still hung: " << err.Text();
  ncclProfilerEventStateArgs_v6_t a{};
  a.kernelCh.pTimer = GpuNow();
  v6().recordEventState(ch, ncclProfilerKernelChStop, &a);
  v6().stopEvent(ch);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string text = err.Text();
  v6().finalize(c.ctx);
  err.Restore();
  const size_t hang = text.find("katrace: HANG: ");
  const size_t over = text.find("katrace: the hang is over after ");
  ASSERT_NE(over, std::string::npos) << text;
  EXPECT_LT(hang, over) << text;
  EXPECT_EQ(text.find("the hang is over", over + strlen("katrace: the hang is over")), std::string::npos) << "once: " << text;
  EXPECT_NE(text.find("(" + report_ + " describes the stall)", over), std::string::npos) << text;
}

TEST_F(HangTest, NoReportWhileStepsKeepCompleting) {
  setenv("KATRACE_HANG_TIMEOUT", "300ms", 1);
  Comm c = InitComm(0x1234, 0, 2);
  // One collective in flight for 1 s whose KernelSteps complete all along: slow, not hung.
  void* coll = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 1, 1 << 20, 1);
  v6().startEvent(c.ctx, &coll, &d);
  v6().stopEvent(coll);
  void* ch = nullptr;
  auto kd = KernelChDescr(coll, 0, GpuNow());
  v6().startEvent(c.ctx, &ch, &kd);
  const Clock::time_point begin = Clock::now();
  for (uint32_t i = 0; Clock::now() - begin < std::chrono::milliseconds(1000); ++i) {
    void* step = nullptr;
    auto sd = KernelStepDescr(coll, 0, true, 1, i, GpuNow(), 0);
    v6().startEvent(c.ctx, &step, &sd);
    v6().stopEvent(step);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  v6().stopEvent(ch);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(ReportExists()) << "steady progress is no hang";
  v6().finalize(c.ctx);
}

TEST_F(HangTest, NoReportWhenNothingIsInFlight) {
  setenv("KATRACE_HANG_TIMEOUT", "300ms", 1);
  Comm c = InitComm(0x1234, 0, 2);
  CollWithChannels(c.ctx, nullptr, 1, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(900));  // idle for three timeouts
  EXPECT_FALSE(ReportExists()) << "an idle job does not hang";
  // Work arriving after the idle spell starts the clock afresh: no report at once.
  void* coll = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 2, 1024, 1);
  v6().startEvent(c.ctx, &coll, &d);
  v6().stopEvent(coll);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(ReportExists()) << "the idle time before the collective was no hang";
  KernelCh(c.ctx, coll, 0);
  v6().finalize(c.ctx);
}

TEST_F(HangTest, OffByDefault) {
  Comm c = InitComm(0x1234, 0, 2);
  StartHungColl(c.ctx, 1, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_FALSE(ReportExists()) << "no watchdog unless KATRACE_HANG_TIMEOUT is set";
  v6().finalize(c.ctx);
}

}  // namespace
}  // namespace katrace_test
