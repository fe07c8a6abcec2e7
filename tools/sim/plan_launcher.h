// NCCL's hostStreamPlanTask for one rank: legacy Group start, Coll/P2p starts (parent = the task's
// CollApi/P2pApi handle, parentGroup = the Group handle), the emulated kernel on the rank's GPU
// stream, work counters and ProxyWork for the proxy thread (and, with KernelStep on, the kernel's
// step works for the emulated device), then Coll/P2p stops and Group stop.
// Thread safety: one launching thread at a time (application thread, or the host-callback thread
// in graph mode); counters() after that thread is done.
#ifndef KATRACE_TOOLS_SIM_PLAN_LAUNCHER_H_
#define KATRACE_TOOLS_SIM_PLAN_LAUNCHER_H_

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "tools/sim/event_issuer.h"
#include "tools/sim/gpu_clock.h"
#include "tools/sim/kernel_plan.h"
#include "tools/sim/proxy_thread.h"
#include "tools/sim/sim_config.h"
#include "tools/sim/step_work.h"

namespace katrace::sim {

class PlanLauncher {
 public:
  // |step_sink|: where each kernel's KernelStep works go (NULL: KernelStep is off for the rank).
  PlanLauncher(const SimConfig& config, int rank, void* plugin_context, ProfilerApi* api,
               ProxyThread* proxy, const GpuClock* clock, StepWorkSink* step_sink);

  void RunPlanTask(KernelPlan* plan);

  const CallCounters& counters() const { return issuer_.counters(); }

 private:
  void StartTaskEvents(KernelPlan* plan);
  void StopTaskEvents(KernelPlan* plan);
  // Also fills |step_works| (when not NULL) with one entry per (channel, work counter).
  std::unique_ptr<ProxyWork> BuildProxyWork(const KernelPlan& plan, const GpuWindow& kernel,
                                            std::vector<StepWork>* step_works);
  GpuWindow ChannelWindow(const GpuWindow& kernel, int channel);
  uint64_t KernelDurationNs(const KernelPlan& plan) const;

  const SimConfig& config_;
  int rank_;
  void* plugin_context_;
  ProxyThread* proxy_;
  StepWorkSink* step_sink_;
  EventIssuer issuer_;
  EmulatedStream stream_;
  // comm->seqNumber[func]: keyed by NCCL's static func string.
  std::unordered_map<const char*, uint64_t> seq_numbers_;
  // comm->profiler.workCounter[channel]: advanced exactly as the GPU advances its own.
  uint64_t work_counters_[kMaxChannels] = {};
  uint64_t rng_state_;
  uint64_t channel_start_skew_[kMaxChannels] = {};
  uint64_t channel_stop_skew_[kMaxChannels] = {};
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_PLAN_LAUNCHER_H_
