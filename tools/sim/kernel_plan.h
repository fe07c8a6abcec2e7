// One launched (or graph-captured) kernel plan of a rank: its tasks with the mask snapshot and
// the API handles captured when each task was appended, plus the plan's own event handles.
// Thread safety: built on the application thread; afterwards used by one launching thread at a
// time (the application thread, or the host-callback thread for graph replays).
#ifndef KATRACE_TOOLS_SIM_KERNEL_PLAN_H_
#define KATRACE_TOOLS_SIM_KERNEL_PLAN_H_

#include <cstdint>
#include <vector>

#include "tools/sim/collective_schedule.h"

namespace katrace::sim {

struct PlannedTask {
  TaskSpec spec;
  int mask = 0;                      // the mask snapshot taken at the task's API call
  void* api_handle = nullptr;        // CollApi/P2pApi slot value at append: Coll/P2p parent
  void* group_api_handle = nullptr;  // KernelLaunch parent
  void* event_handle = nullptr;      // this launch's Coll/P2p handle
};

struct KernelPlan {
  OpKind kind = OpKind::kAllReduce;
  uint64_t wire_bytes = 0;
  bool persistent = false;  // captured in a CUDA graph: replayed from the host-callback thread
  std::vector<PlannedTask> tasks;
  void* group_handle = nullptr;
  void* kernel_launch_handle = nullptr;

  // NCCL takes the plan-level mask and GroupApi handle from the first task with a non-zero mask.
  const PlannedTask* FirstProfiledTask() const {
    for (const PlannedTask& task : tasks) {
      if (task.mask != 0) return &task;
    }
    return nullptr;
  }
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_KERNEL_PLAN_H_
