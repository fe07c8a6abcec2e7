// What the enqueue side hands a rank's proxy thread for one launched plan: the KernelCh
// "profiler proxy ops" (one per task and channel, when the task's mask has KernelCh), the network
// ProxyOps, and the work-counter records that tie (channel, work counter) to the task's handle.
#ifndef KATRACE_TOOLS_SIM_PROXY_WORK_H_
#define KATRACE_TOOLS_SIM_PROXY_WORK_H_

#include <cstdint>
#include <vector>

#include "tools/sim/collective_schedule.h"
#include "tools/sim/gpu_clock.h"

namespace katrace::sim {

struct KernelChWork {
  int channel = 0;
  uint64_t work_counter = 0;
  void* task_handle = nullptr;  // the Coll/P2p handle: KernelCh's parent
  int mask = 0;                 // the task's mask snapshot
  GpuWindow gpu;                // emulated %globaltimer stamps of this channel's work
};

struct ProxyOpWork {
  ProxyOpSpec spec;
  void* task_handle = nullptr;  // ProxyOp's parent
  int mask = 0;
  GpuWindow gpu;                // the channel's kernel window; steps are spread over it
};

// One (channel, work counter) of a plan. A fused Send/Recv pair shares one counter value, so it
// can name two tasks.
struct WorkRecord {
  int channel = 0;
  uint64_t work_counter = 0;
  void* task_handles[2] = {nullptr, nullptr};
  int num_tasks = 0;
  int mask = 0;
  GpuWindow gpu;
};

struct ProxyWork {
  std::vector<KernelChWork> kernel_chs;
  std::vector<ProxyOpWork> proxy_ops;
  std::vector<WorkRecord> works;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_PROXY_WORK_H_
