// KernelStep drain: called from a proxy thread, it polls every channel's step rings and emits
// KernelStep events through a profiler plugin's v6 table, as a patched NCCL core would. It never
// calls CUDA; the rings are host memory (host-mapped for a GPU writer).
//
// Usage: RegisterWork(channel, direction, work tag, Coll/P2p handle) before the kernel that runs
// the work can stamp it; Poll() repeatedly; RetireWork(...) once the kernel is done (and before the
// plugin may reclaim the parent); Close() at the end, before the plugin's finalize. After Close
// every call is a no-op: a proxy loop that polls once more never calls into a finalized plugin.
//
// Abandoned steps: their KernelStepStop state carries pTimer == 0 (kKernelStepAbandonedStopNs).
// Drain reports: a KernelStep start with parentObj NULL and isSend == ncclProfilerKernelStepReport
// carrying a channel's counters since its previous report (encoded by katrace/drain_counters.h),
// then stopEvent; every report_every_polls polls and from Flush/Close.
//
// Thread safety: RegisterWork may be called from any thread. Everything else, and every plugin
// callback the drain makes, happens on the one thread that polls.
#ifndef KATRACE_PROXY_DRAIN_STEP_DRAIN_H_
#define KATRACE_PROXY_DRAIN_STEP_DRAIN_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <vector>

#include "katrace/step_ring.h"
#include "nccl_profiler/v6.h"
#include "proxy_drain/channel_drain.h"
#include "proxy_drain/kernel_step_emitter.h"
#include "proxy_drain/step_drain_config.h"
#include "katrace/drain_counters.h"
#include "proxy_drain/work_registry.h"

namespace katrace {

class StepDrain {
 public:
  // |channel_rings|[c] are channel c's rings (host pointers; next_seq is not used). The
  // descriptor's channelId is a byte: steps of channels above 255 are read and counted as
  // sampled_out, never emitted, and their reports go out as channel 255. |plugin| and |context|
  // are a plugin's v6 table and the context its init returned, |activation_mask| the mask its
  // init was given (any of them NULL: count only, emit nothing).
  StepDrain(const std::vector<StepRingView>& channel_rings, const ncclProfiler_v6_t* plugin,
            void* context, const int* activation_mask, const StepDrainConfig& config = {});
  StepDrain(const StepDrain&) = delete;
  StepDrain& operator=(const StepDrain&) = delete;

  // Any thread. |work_tag| is the work counter (its low 16 bits travel in the records).
  void RegisterWork(int channel, bool is_send, uint32_t work_tag, void* parent);

  // Reads every channel once. Cost: O(new records + open steps + gaps) per channel.
  void Poll();
  // Polls |channel|, closes the work's still-open steps as abandoned and forgets the work: its
  // later steps count as late and are not emitted with a stale parent.
  void RetireWork(int channel, bool is_send, uint32_t work_tag);
  // Poll, then a report for every channel whose counters changed.
  void Flush();
  // Poll, abandon every open step, then report: the drain's end.
  void Close();

  DrainCounters Counters() const;
  DrainCounters ChannelCounters(int channel) const;
  size_t num_open_steps() const;
  int num_channels() const { return int(channels_.size()); }

 private:
  void ApplyRegistrations();
  void AbandonEvicted();
  void Report();

  const StepDrainConfig config_;
  WorkRegistry registry_;
  KernelStepEmitter emitter_;
  std::vector<ChannelDrain> channels_;
  std::vector<WorkKey> evicted_;
  uint64_t num_polls_ = 0;
  std::atomic<bool> closed_{false};  // read by RegisterWork on any thread
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_STEP_DRAIN_H_
