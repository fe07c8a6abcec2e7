// One rank's application thread, driving the plugin the way NCCL's enqueue path does for a
// blocking communicator: init, then per operation GroupApi start -> state 23 -> CollApi/P2pApi
// start/stop -> state 24 at the outermost group end -> KernelLaunch start/stop -> (launch)
// Group, Coll/P2p and proxy work -> GroupApi stop; in graph mode the launch half is replayed
// from a host-callback thread. Owns the rank's proxy thread.
// Thread safety: Run() is the thread body; result() after the thread joined.
#ifndef KATRACE_TOOLS_SIM_RANK_DRIVER_H_
#define KATRACE_TOOLS_SIM_RANK_DRIVER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "tools/sim/event_issuer.h"
#include "tools/sim/gpu_clock.h"
#include "tools/sim/host_callback_thread.h"
#include "tools/sim/kernel_plan.h"
#include "tools/sim/kernel_step_stats.h"
#include "tools/sim/plan_launcher.h"
#include "tools/sim/proxy_thread.h"
#include "tools/sim/rank_barrier.h"
#include "tools/sim/sim_config.h"

namespace katrace::sim {

class KernelStepRank;

struct RankResult {
  CallCounters counters;
  ncclResult_t init_result = ncclSuccess;
  bool context_null = false;
  int mask_after_init = 0;    // the shared mask once every rank has initialised
  uint64_t ops_start_ns = 0;  // after every rank initialised
  uint64_t ops_done_ns = 0;   // when this rank's last event was issued
  bool kernel_steps_active = false;
  KernelStepStats kernel_steps;
};

class RankDriver {
 public:
  RankDriver(const SimConfig& config, int rank, ProfilerApi* api, int* activation_mask,
             const GpuClock* clock, RankBarrier* barrier);

  void Run();
  const RankResult& result() const { return result_; }

 private:
  // NCCL's thread-local ncclProfilerApiState, plus ncclGroupDepth.
  enum class GroupApiStartState { kReset, kStarted, kStopped };
  struct ApiState {
    int mask = 0;
    void* group_api_handle = nullptr;
    void* coll_api_handle = nullptr;  // NCCL never clears it after the stop (--nccl-quirks)
    void* p2p_api_handle = nullptr;
    bool group_api_tried = false;     // GroupApi start already considered for this group
    GroupApiStartState start_state = GroupApiStartState::kReset;
    int group_depth = 0;
  };

  void Initialize();
  // The rank's KernelStep emulation when the plugin can take KernelSteps; otherwise NULL.
  std::unique_ptr<KernelStepRank> MakeKernelSteps();
  void RunEagerIterations();
  void RunGraphIterations();
  void ReplayStaleCollApiStop();
  void Finish();

  // One operation as the application issues it; returns the plan (captured or launched).
  std::shared_ptr<KernelPlan> IssueOperation(OpKind kind, bool capture);
  void EnqueueApiCall(const TaskSpec& spec, bool capture, KernelPlan* plan);
  void StartGroupApiEvent(bool capture);
  void RecordGroupApiState(ncclProfilerEventState_t state);
  void StartApiEvent(const TaskSpec& spec, bool capture);
  void StopApiEvent(const TaskSpec& spec);
  void GroupEndInternal(bool capture, const std::shared_ptr<KernelPlan>& plan);
  void LaunchKernel(KernelPlan* plan);
  void RunPlanTask(const std::shared_ptr<KernelPlan>& plan);

  const SimConfig& config_;
  const int rank_;
  ProfilerApi* api_;
  int* activation_mask_;
  const GpuClock* clock_;
  RankBarrier* barrier_;
  void* plugin_context_ = nullptr;
  EventIssuer issuer_;
  ApiState api_state_;
  void* stream_;  // the application's cudaStream_t, as an opaque value
  std::unique_ptr<ProxyThread> proxy_;
  KernelStepRank* kernel_steps_ = nullptr;  // owned by proxy_ (one of its hooks)
  std::unique_ptr<PlanLauncher> launcher_;
  std::unique_ptr<HostCallbackThread> host_callbacks_;
  std::vector<std::shared_ptr<KernelPlan>> captured_plans_;
  RankResult result_;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_RANK_DRIVER_H_
