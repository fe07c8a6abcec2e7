// The KernelStep side of one launched kernel, as PlanLauncher hands it over: per (channel, work
// counter) the roles (direction, peer) that channel's simple-prims loop runs, their slice counts
// and sizes, the Coll/P2p handle each role's steps belong to, and the channel's emulated GPU
// window. A StepWorkSink takes them before the kernel can run, as a patched NCCL registers work
// with its drain before the launch.
// Thread safety: plain data; a sink is called from the launching thread only.
#ifndef KATRACE_TOOLS_SIM_STEP_WORK_H_
#define KATRACE_TOOLS_SIM_STEP_WORK_H_

#include <cstdint>
#include <vector>

#include "tools/sim/gpu_clock.h"

namespace katrace::sim {

struct StepRole {
  bool is_send = false;
  int peer = 0;             // ring neighbour or P2P peer
  uint32_t num_steps = 0;   // slices this role runs for the work
  uint32_t step_bytes = 0;  // every slice but the last
  uint32_t last_step_bytes = 0;
  void* parent = nullptr;  // the Coll/P2p handle (NULL when the plugin did not record it)
};

struct StepWork {
  int channel = 0;
  uint64_t work_counter = 0;    // the channel's work counter; its low 16 bits tag the records
  GpuWindow gpu;                // the channel's KernelCh window: every stamp lies inside it
  std::vector<StepRole> roles;  // empty when the task's mask has no KernelStep
};

class StepWorkSink {
 public:
  virtual ~StepWorkSink() = default;
  // Every (channel, work) of one kernel, including those without roles, so that works finish in
  // counter order on each channel.
  virtual void Launch(std::vector<StepWork> kernel) = 0;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_STEP_WORK_H_
