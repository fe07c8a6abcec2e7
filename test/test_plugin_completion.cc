// Completion through the real .so: a Coll/P2p is done when the GPU work NCCL's mask for that task
// announced is done, a dropped child releases what it was expected to hold, `late` means the
// parent's work was retired first, and events left open at the end are written as incomplete.
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "test/support/plugin_test.h"

namespace katrace_test {
namespace {

class CompletionTest : public PluginTest {
 protected:
  int PoolWarnings(const std::string& env) {
    int n = 0;
    for (const std::string& w : CapturedWarnings()) n += w.find(env) != std::string::npos;
    return n;
  }
  static int64_t Sum(const nlohmann::json& counts) {
    int64_t n = 0;
    for (const auto& kv : counts.items()) n += kv.value().get<int64_t>();
    return n;
  }
};

// What the application thread hands the proxy thread: the Coll and the mask its task took.
struct Task {
  void* coll;
  int mask;
};

class TaskQueue {
 public:
  void Push(Task t) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return items_.size() < 4; });
    items_.push_back(t);
    not_empty_.notify_one();
  }
  bool Pop(Task* t) {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    *t = items_.front();
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Task> items_;
  bool closed_ = false;
};

// The mask-toggle run: the application switches KernelCh and ProxyOp on and off while
// collectives run, also between an API call (where NCCL reads the mask into the task) and the
// Coll's start. NCCL emits each task's children by the task's snapshot; the plugin must follow
// that snapshot, so no Coll waits for KernelCh that never come, no pool fills, nothing is late.
TEST_F(CompletionTest, MaskToggleRunHasNoFalseIncompleteNoDropsNoLate) {
  setenv("KATRACE_POOL_COLL", "16", 1);  // a Coll left waiting would fill this within the run
  setenv("KATRACE_POOL_KERNEL_CH", "64", 1);
  constexpr int kChannels = 2;
  const int kColls = static_cast<int>(TestScaled(3000, 300));
  Comm c = InitComm(0xC0FFEE, 0, 2);
  int* mask = NcclMask();
  auto toggle = [&](int bit) { __atomic_fetch_xor(mask, bit, __ATOMIC_RELAXED); };
  TaskQueue queue;
  int64_t kernel_ch = 0, proxy_ops = 0;
  std::thread proxy([&] {
    Task t;
    while (queue.Pop(&t)) {
      for (int ch = 0; ch < kChannels; ++ch) {
        if (t.mask & ncclProfileProxyOp) {
          void* op = nullptr;
          auto d = ProxyOpDescr(t.coll, static_cast<uint8_t>(ch), 1, true, getpid());
          v6().startEvent(c.ctx, &op, &d);
          if (op != nullptr) v6().stopEvent(op);
          ++proxy_ops;
        }
      }
      if (t.mask & ncclProfileKernelCh) {
        // The channels run at once; each stamp is seen by the host after the GPU took it.
        void* k[kChannels] = {};
        const uint64_t gpu_start = GpuNow();
        for (int ch = 0; ch < kChannels; ++ch) {
          auto kd = KernelChDescr(t.coll, static_cast<uint8_t>(ch), gpu_start);
          v6().startEvent(c.ctx, &k[ch], &kd);
        }
        ncclProfilerEventStateArgs_v6_t a{};
        a.kernelCh.pTimer = GpuNow();
        for (void* h : k) {
          v6().recordEventState(h, ncclProfilerKernelChStop, &a);
          v6().stopEvent(h);
        }
        kernel_ch += kChannels;
      }
    }
  });
  for (int i = 0; i < kColls; ++i) {
    const int snapshot = __atomic_load_n(mask, __ATOMIC_RELAXED);  // NCCL's read at the API call
    void* api = nullptr;
    auto a = CollApiDescr(nullptr, "AllReduce", 1024);
    v6().startEvent(c.ctx, &api, &a);
    v6().stopEvent(api);
    if (i % 3 == 1) toggle(ncclProfileKernelCh);  // after the task took its mask
    void* coll = nullptr;
    auto d = CollDescr(api, "AllReduce", static_cast<uint64_t>(i), 1024, kChannels);
    v6().startEvent(c.ctx, &coll, &d);
    ASSERT_NE(coll, nullptr) << "Coll " << i << " dropped: the pool filled with Colls left waiting";
    v6().stopEvent(coll);
    if (i % 5 == 2) toggle(ncclProfileProxyOp);
    queue.Push({coll, snapshot});
  }
  queue.Close();
  proxy.join();
  v6().finalize(c.ctx);
  ASSERT_GT(kernel_ch, 0);
  ASSERT_LT(kernel_ch, int64_t{kColls} * kChannels) << "the run toggles KernelCh";

  auto trace = ExpectValidTrace(trace_path_);
  const auto& footer = Footer(trace);
  EXPECT_EQ(footer["incomplete"], 0);
  EXPECT_EQ(footer["late_children"], 0);
  EXPECT_EQ(Sum(footer["drops"]), 0) << footer["drops"].dump();
  EXPECT_EQ(footer["events"]["Coll"], kColls);
  EXPECT_EQ(footer["events"]["KernelCh"], kernel_ch) << "every KernelCh of a task that had the bit";
  EXPECT_EQ(footer["events"].value("ProxyOp", 0), proxy_ops);
  EXPECT_EQ(PoolWarnings("KATRACE_POOL_"), 0);
}

// The pool-of-1 run: every pool holds one live event. The four KernelCh of each Coll start
// before any stops (the proxy sees all channels start), so three of them are dropped each time;
// the Coll must still complete when the one recorded finishes, and the advice names the pool
// that really overflowed.
TEST_F(CompletionTest, PoolOfOneRunDropsOnlyKernelChAndNamesThatPool) {
  setenv("KATRACE_POOL_SIZE", "1", 1);
  constexpr int kChannels = 4;
  const int kColls = static_cast<int>(TestScaled(500, 100));
  Comm c = InitComm(0x1, 0, 2);
  for (int i = 0; i < kColls; ++i) {
    void* api = nullptr;
    auto a = CollApiDescr(nullptr, "AllReduce", 1024);
    v6().startEvent(c.ctx, &api, &a);
    v6().stopEvent(api);
    void* coll = nullptr;
    auto d = CollDescr(api, "AllReduce", static_cast<uint64_t>(i), 1024, kChannels);
    v6().startEvent(c.ctx, &coll, &d);
    ASSERT_NE(coll, nullptr) << "Coll " << i << " dropped: the previous one never completed";
    v6().stopEvent(coll);
    void* op = nullptr;
    auto od = ProxyOpDescr(coll, 0, 1, true, getpid());
    v6().startEvent(c.ctx, &op, &od);
    v6().stopEvent(op);
    void* k[kChannels] = {};
    const uint64_t t0 = GpuNow();
    for (int ch = 0; ch < kChannels; ++ch) {
      auto kd = KernelChDescr(coll, static_cast<uint8_t>(ch), t0);
      v6().startEvent(c.ctx, &k[ch], &kd);
    }
    for (int ch = 0; ch < kChannels; ++ch) {
      if (k[ch] == nullptr) continue;
      ncclProfilerEventStateArgs_v6_t s{};
      s.kernelCh.pTimer = t0 + 1000;
      v6().recordEventState(k[ch], ncclProfilerKernelChStop, &s);
      v6().stopEvent(k[ch]);
    }
  }
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  const auto& footer = Footer(trace);
  EXPECT_EQ(footer["incomplete"], 0);
  EXPECT_EQ(footer["late_children"], 0);
  EXPECT_EQ(footer["drops"]["KernelCh"], int64_t{kColls} * (kChannels - 1));
  EXPECT_EQ(Sum(footer["drops"]), int64_t{kColls} * (kChannels - 1)) << footer["drops"].dump();
  EXPECT_EQ(footer["events"]["Coll"], kColls);
  EXPECT_EQ(footer["events"]["KernelCh"], kColls);
  EXPECT_EQ(Slices(trace, "CollGpu").size(), static_cast<size_t>(kColls));
  EXPECT_EQ(PoolWarnings("KATRACE_POOL_KERNEL_CH"), 1);
  EXPECT_EQ(PoolWarnings("KATRACE_POOL_COLL"), 0) << "the Coll pool never overflowed";
}

// NCCL's normal order is no reason for `late`: ProxyOps start after their Coll's stop (with
// KernelCh off the Coll is then already complete). A ProxyStep after its ProxyOp stopped, or a
// KernelCh replayed after its Coll's GPU work was all seen, really is late.
TEST_F(CompletionTest, LateOnlyWhenTheParentsWorkWasRetired) {
  Comm c = InitComm(0x1a7e, 0, 2);
  int* mask = NcclMask();
  const int saved = __atomic_load_n(mask, __ATOMIC_RELAXED);
  __atomic_store_n(mask, (saved & ~ncclProfileKernelCh) | ncclProfileProxyStep, __ATOMIC_RELAXED);
  void* coll = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 1, 1024, 2);
  v6().startEvent(c.ctx, &coll, &d);
  v6().stopEvent(coll);  // nothing awaited: complete now
  void* op = nullptr;
  auto od = ProxyOpDescr(coll, 0, 1, true, getpid());
  v6().startEvent(c.ctx, &op, &od);
  v6().stopEvent(op);  // its steps are done
  void* step = nullptr;
  auto sd = ProxyStepDescr(op, 0);
  v6().startEvent(c.ctx, &step, &sd);  // late: after its op's work
  v6().stopEvent(step);
  __atomic_store_n(mask, saved, __ATOMIC_RELAXED);
  void* coll2 = nullptr;
  auto d2 = CollDescr(nullptr, "AllReduce", 2, 1024, 1);
  v6().startEvent(c.ctx, &coll2, &d2);
  v6().stopEvent(coll2);
  // Its announced KernelCh (the Coll's GPU work is then done), and a replay of the same stamps
  // under the retired parent: late.
  const uint64_t t0 = GpuNow();
  for (int replay = 0; replay < 2; ++replay) {
    void* k = nullptr;
    auto kd = KernelChDescr(coll2, 0, t0);
    v6().startEvent(c.ctx, &k, &kd);
    ncclProfilerEventStateArgs_v6_t ka{};
    ka.kernelCh.pTimer = t0 + 2048;
    v6().recordEventState(k, ncclProfilerKernelChStop, &ka);
    v6().stopEvent(k);
  }
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["late_children"], 2);
  EXPECT_EQ(Footer(trace)["incomplete"], 0);
  auto late = [](const nlohmann::json& e) { return e["args"].value("late", false); };
  for (const auto& e : Slices(trace, "ProxyOp")) EXPECT_FALSE(late(e)) << e.dump();
  for (const auto& e : Slices(trace, "ProxyStep")) EXPECT_TRUE(late(e)) << e.dump();
  int late_kernel_ch = 0;
  for (const auto& e : Slices(trace, "KernelCh")) late_kernel_ch += late(e);
  EXPECT_EQ(late_kernel_ch, 1);
}

// At the last finalize every communicator's open events are in the trace as incomplete: those of
// a communicator finalized earlier as much as the last one's.
TEST_F(CompletionTest, OpenEventsOfEveryCommunicatorAreWrittenIncompleteAtTheLastFinalize) {
  Comm a = InitComm(0xa, 0, 2);
  Comm b = InitComm(0xb, 1, 2);
  void* never_stopped = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 1, 1024, 0);
  v6().startEvent(a.ctx, &never_stopped, &d);
  void* gpu_never_done = nullptr;
  auto d2 = CollDescr(nullptr, "AllGather", 2, 1024, 2);
  v6().startEvent(a.ctx, &gpu_never_done, &d2);
  v6().stopEvent(gpu_never_done);
  KernelCh(a.ctx, gpu_never_done, 0);  // channel 1 never reports
  v6().finalize(a.ctx);
  void* open_b = nullptr;
  auto d3 = CollDescr(nullptr, "ReduceScatter", 1, 1024, 0);
  v6().startEvent(b.ctx, &open_b, &d3);
  v6().finalize(b.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 3);
  EXPECT_EQ(Footer(trace)["incomplete"], 3);
  int incomplete = 0;
  for (const auto& e : Slices(trace, "Coll")) incomplete += e["args"].value("incomplete", false);
  EXPECT_EQ(incomplete, 3);
}

// After one communicator's finalize, an event that still names it (NCCL's shared proxy thread
// can report for it) is counted against its kind, never silently ignored.
TEST_F(CompletionTest, EventsForAnAlreadyFinalizedCommunicatorAreCounted) {
  Comm a = InitComm(0xf1, 0, 2);
  Comm b = InitComm(0xf2, 1, 2);
  v6().finalize(a.ctx);
  void* h = reinterpret_cast<void*>(0x99);
  auto d = ProxyOpDescr(nullptr, 0, 1, true, getpid());
  v6().startEvent(a.ctx, &h, &d);
  EXPECT_EQ(h, nullptr);
  v6().finalize(b.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["drops"]["ProxyOp"], 1);
  int warned = 0;
  for (const std::string& w : CapturedWarnings()) warned += w.find("already finalized") != std::string::npos;
  EXPECT_EQ(warned, 1);
}

// A job that exits without destroying its communicators: the open events of all of them, the
// one finalized before as much as the ones never finalized, are in the trace as incomplete.
TEST_F(CompletionTest, OpenEventsOfEveryCommunicatorAreWrittenIncompleteAtExit) {
  fflush(nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Comm a = InitComm(0xe1, 0, 2);
    Comm b = InitComm(0xe2, 1, 2);
    Comm keep = InitComm(0xe3, 0, 1);
    void* h = nullptr;
    auto d = CollDescr(nullptr, "AllReduce", 1, 8, 0);
    v6().startEvent(a.ctx, &h, &d);  // never stopped
    v6().finalize(a.ctx);
    auto d2 = CollDescr(nullptr, "AllGather", 1, 8, 2);
    v6().startEvent(b.ctx, &h, &d2);
    v6().stopEvent(h);  // its KernelCh never come
    auto d3 = CollDescr(nullptr, "Broadcast", 1, 8, 0);
    v6().startEvent(keep.ctx, &h, &d3);  // never stopped, never finalized
    exit(0);  // static destructors run, as at the end of a job
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 3);
  EXPECT_EQ(Footer(trace)["incomplete"], 3);
}

// A KernelCh whose record is lost (its thread got no capture buffer: the budget is spent) still
// releases its Coll: the capture names it to the export, from the finalizing thread when the
// completing one has no buffer either.
TEST_F(CompletionTest, KernelChLostToTheBufferBudgetLeavesItsCollComplete) {
  setenv("KATRACE_THREAD_BUFFER_KB", "1024", 1);
  setenv("KATRACE_BUFFER_MB", "1", 1);  // one thread buffer in all: the proxy thread gets none
  Comm c = InitComm(0xb0d6e7, 0, 1);
  constexpr int kColls = 5;
  void* coll[kColls] = {};
  for (int i = 0; i < kColls; ++i) {
    auto d = CollDescr(nullptr, "AllReduce", static_cast<uint64_t>(i), 1024, 2);
    v6().startEvent(c.ctx, &coll[i], &d);
    v6().stopEvent(coll[i]);
  }
  std::thread proxy([&] {
    for (void* h : coll) {
      KernelCh(c.ctx, h, 0);
      KernelCh(c.ctx, h, 1);
    }
  });
  proxy.join();
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], kColls);
  EXPECT_EQ(Footer(trace)["drops"]["KernelCh"], 2 * kColls);
  EXPECT_EQ(Footer(trace)["incomplete"], 0);
}

}  // namespace
}  // namespace katrace_test
