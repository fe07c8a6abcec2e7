// One rank's KernelStep emulation on katrace-sim's CPU path: a ring pair per channel
// (StepRingBuffers), the rank's emulated device writer (RankStepWriter) and the KernelStep drain
// (StepDrain), which the rank's proxy thread runs through the ProxyPollHook.
//
// Per work: Launch registers it with the drain (per direction, parent = its Coll/P2p) and only
// then queues it for the writer. The proxy thread polls the drain on every pass. The writer is
// the rank's GPU, so the work's KernelCh carries the writer's window: its start goes out once the
// writer began the work; its stop once the writer wrote all of the work's records and the drain
// retired the work (the retire polls its channel first, so every step is delivered). The drain
// thus runs before the KernelCh stop, as in NVIDIA/nccl PR #2316, and a step is always stopped
// before the plugin may complete its parent. At the proxy's exit the drain is closed, so its last
// report reaches the plugin before finalize.
//
// Thread safety: Launch from the launching thread (one at a time); the hook calls on the rank's
// proxy thread; stats() once that thread has joined.
#ifndef KATRACE_TOOLS_SIM_KERNEL_STEP_RANK_H_
#define KATRACE_TOOLS_SIM_KERNEL_STEP_RANK_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "proxy_drain/step_drain.h"
#include "proxy_drain/step_ring_buffers.h"
#include "tools/sim/drain_plugin_shim.h"
#include "tools/sim/kernel_step_stats.h"
#include "tools/sim/profiler_api.h"
#include "tools/sim/proxy_poll_hook.h"
#include "tools/sim/rank_step_writer.h"
#include "tools/sim/step_work.h"

namespace katrace::sim {

struct KernelStepRankOptions {
  int rank = 0;
  int num_channels = 1;
  uint32_t ring_depth_log2 = 0;
  uint32_t sample_every = 1;
  bool bench = false;
  ProfilerApi* api = nullptr;            // a v6 plugin
  void* plugin_context = nullptr;        // what its init returned for this rank
  const int* activation_mask = nullptr;  // the shared mask
};

// Ring memory all ranks may pin together when the depth is not given: the default depth is
// lowered until ranks x channels rings fit.
inline constexpr uint64_t kMaxDefaultStepRingBytes = 1ull << 30;

// The depth to use: |requested| (clamped to the ring's limits), else the drain's default or the
// largest depth below it whose |num_rings| rings fit in kMaxDefaultStepRingBytes.
uint32_t ChooseStepRingDepthLog2(std::optional<uint32_t> requested, uint64_t num_rings);
uint64_t StepRingBytesPerChannel(uint32_t depth_log2);

class KernelStepRank final : public ProxyPollHook, public StepWorkSink {
 public:
  explicit KernelStepRank(const KernelStepRankOptions& options);
  ~KernelStepRank() override;

  void Launch(std::vector<StepWork> kernel) override;

  bool OnProxyPoll(const ProxyPollContext& context) override;
  bool HasPendingWork() const override;
  bool KernelChStart(int channel, uint64_t work_counter, uint64_t* start_ns) const override;
  bool KernelChStop(int channel, uint64_t work_counter, uint64_t* stop_ns) const override;
  void OnProxyExit(const ProxyPollContext& context) override;

  const KernelStepStats& stats() const { return stats_; }

 private:
  // What the proxy knows of one (channel, work) the writer took.
  struct WorkWindow {
    uint64_t work_counter = 0;  // 0: none yet (counters start at 1)
    GpuWindow gpu;
    bool retired = false;
  };
  // Works a channel's KernelCh may still ask about: far more than the proxy's works in flight.
  static constexpr uint64_t kWindowHistory = 1024;

  // Applies the writer's updates (began: window start; finished: retire); true when any.
  bool ApplyUpdates();
  const WorkWindow* FindWindow(int channel, uint64_t work_counter) const;

  StepRingBuffers rings_;
  DrainPluginShim shim_;
  katrace::StepDrain drain_;
  RankStepWriter writer_;
  std::atomic<uint64_t> num_launched_{0};         // works handed in (launching thread)
  uint64_t num_retired_ = 0;                      // proxy thread
  std::vector<std::vector<WorkWindow>> windows_;  // [channel][counter % kWindowHistory]
  std::vector<StepWorkUpdate> updates_;           // proxy thread scratch
  bool closed_ = false;
  KernelStepStats stats_;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_KERNEL_STEP_RANK_H_
