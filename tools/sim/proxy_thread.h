// A rank's proxy progress thread ("NCCL Progress"): appends posted work (ProxyCtrl Append /
// AppendEnd, ProxyOp starts), progresses network ProxyOps and KernelCh profiler ops against
// emulated GPU time, reports Idle/Active and Sleep/Wakeup through ProxyCtrl, and calls the
// ProxyPollHooks on every pass.
// Thread safety: Post/WaitUntilIdle/StopAndJoin may be called from any one other thread at a time;
// counters() only after StopAndJoin.
#ifndef KATRACE_TOOLS_SIM_PROXY_THREAD_H_
#define KATRACE_TOOLS_SIM_PROXY_THREAD_H_

#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tools/sim/channel_hang.h"
#include "tools/sim/event_issuer.h"
#include "tools/sim/gpu_clock.h"
#include "tools/sim/net_proxy_op.h"
#include "tools/sim/proxy_poll_hook.h"
#include "tools/sim/proxy_work.h"
#include "tools/sim/work_counter_map.h"

namespace katrace::sim {

struct ProxyThreadConfig {
  int rank = 0;
  void* plugin_context = nullptr;
  ProfilerApi* api = nullptr;
  int* activation_mask = nullptr;  // the process-global mask
  const GpuClock* clock = nullptr;
  bool bench = false;
  bool nccl_quirks = false;
  uint64_t seed = 1;
  size_t max_inflight_works = 32;  // Post blocks beyond this: the stream's depth
  HangSpec hang;                   // applies when hang.rank is this rank
  std::vector<std::unique_ptr<ProxyPollHook>> hooks;
};

class ProxyThread {
 public:
  explicit ProxyThread(ProxyThreadConfig config);
  ~ProxyThread();
  ProxyThread(const ProxyThread&) = delete;
  ProxyThread& operator=(const ProxyThread&) = delete;

  void Start();
  // Hands one plan's work over (NCCL's ncclProxyPost + ncclProxyStart).
  void Post(std::unique_ptr<ProxyWork> work);
  // Blocks until every posted work has finished (all its KernelCh and ProxyOp events stopped).
  void WaitUntilIdle();
  void StopAndJoin();

  const CallCounters& counters() const { return issuer_.counters(); }

 private:
  struct KernelChOp {
    KernelChWork work;
    void* handle = nullptr;
    bool started = false;
    bool completed = false;
  };
  struct ActiveWork {
    uint64_t serial = 0;  // append order
    std::vector<KernelChOp> kernel_chs;
    std::vector<NetProxyOp> net_ops;
  };

  void Run();
  bool ProgressActive(uint64_t gpu_now_ns);
  bool ProgressKernelCh(KernelChOp* op, uint64_t gpu_now_ns);
  // The injected hang (channel_hang.h): what waits on the stuck channel, the KernelStep that
  // stands for the stuck GPU work, and giving up on it all once the hold ran out.
  bool Frozen(const ActiveWork& work, const KernelChOp& op) const;
  bool Frozen(const ActiveWork& work, const NetProxyOp& op) const;
  void GetStuck(ActiveWork* work, KernelChOp* op);
  void StartStuckKernelStep(const KernelChOp& op, uint64_t gpu_now_ns);
  void ReleaseHang();
  void RetireFinished();
  bool FetchPostedWork();  // false: stop was requested and nothing is left
  void AppendWork(std::vector<std::unique_ptr<ProxyWork>>* works);
  void SleepUntilNextDeadline(uint64_t gpu_now_ns);
  bool HooksBusy() const;
  // The hooks may move a KernelCh's GPU window (an emulated device that ran it) or hold it back;
  // false while one holds it.
  bool HooksAllowKernelChStart(KernelChWork* work) const;
  bool HooksAllowKernelChStop(KernelChWork* work) const;
  // ProxyCtrl reloads the shared mask at every event (research §2.4).
  void* StartProxyCtrl();
  void RecordProxyCtrl(void* handle, ncclProfilerEventState_t state, int appended);
  void StopProxyCtrl(void* handle);
  // Relaxed, as NCCL reads it: a mask change only has to show up at some later event.
  int LoadMask() const { return __atomic_load_n(config_.activation_mask, __ATOMIC_RELAXED); }

  ProxyThreadConfig config_;
  EventIssuer issuer_;
  WorkCounterMap work_counters_;
  std::list<ActiveWork> active_;
  uint64_t next_op_seed_;
  std::optional<ChannelHang> hang_;
  ActiveWork* stuck_work_ = nullptr;
  KernelChOp* stuck_op_ = nullptr;
  int stuck_peer_ = -1;
  bool stuck_is_send_ = true;
  size_t stuck_step_bytes_ = 0;
  uint64_t next_work_serial_ = 0;
  void* stuck_step_ = nullptr;  // never stopped

  std::mutex mutex_;
  std::condition_variable work_posted_;
  std::condition_variable work_retired_;
  std::vector<std::unique_ptr<ProxyWork>> pending_;  // guarded by mutex_
  size_t inflight_ = 0;                              // guarded by mutex_
  bool stop_requested_ = false;                      // guarded by mutex_
  std::thread thread_;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_PROXY_THREAD_H_
