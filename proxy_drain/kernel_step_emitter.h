// Delivers KernelStep events to a profiler plugin through its v6 table, exactly as a patched NCCL
// core would (NVIDIA/nccl PR #2316): startEvent with the kernelStep payload and the Coll/P2p
// handle as parent; later recordEventState(KernelStepStop, pTimer = GPU stop) and stopEvent.
//
// Convention: pTimer == 0 in the KernelStepStop state means "abandoned": the step's stop record
// never came (lost to overrun, lag exceeded, or its work was retired first). The plugin should mark
// the step instead of giving it a duration.
//
// Thread safety: the drain thread only. Never calls CUDA.
#ifndef KATRACE_PROXY_DRAIN_KERNEL_STEP_EMITTER_H_
#define KATRACE_PROXY_DRAIN_KERNEL_STEP_EMITTER_H_

#include <stdint.h>

#include "katrace/step_record.h"
#include "nccl_profiler/v6.h"
#include "katrace/drain_counters.h"

namespace katrace {

constexpr uint64_t kKernelStepAbandonedStopNs = 0;
// The descriptor's channelId is a byte: steps of higher channels cannot be named, and their drain
// reports go out under this channel (the plugin sums reports, so their counts still arrive).
constexpr int kKernelStepChannelMax = UINT8_MAX;

class KernelStepEmitter {
 public:
  // |activation_mask| is the int the plugin's init received; the plugin may rewrite it at any time.
  KernelStepEmitter(const ncclProfiler_v6_t* plugin, void* context, const int* activation_mask,
                    int rank)
      : plugin_(plugin), context_(context), activation_mask_(activation_mask), rank_(rank) {}

  // Whether a step starting now is to be emitted: a plugin, its context, and the KernelStep bit.
  bool Enabled() const {
    return plugin_ != nullptr && context_ != nullptr && activation_mask_ != nullptr &&
           (__atomic_load_n(activation_mask_, __ATOMIC_RELAXED) & ncclProfileKernelStep) != 0;
  }

  // Returns the plugin's handle (NULL: the plugin does not track this step). |channel| is at most
  // kKernelStepChannelMax (the caller leaves higher ones out).
  void* Start(void* parent, int channel, const StepStart& start);
  // |stop_ns| == kKernelStepAbandonedStopNs marks the step abandoned.
  void Stop(void* handle, uint64_t stop_ns);
  // Emits one drain report for |channel| (see nccl_profiler/kernel_step.h) and returns what it
  // carried: each field saturates at its ABI width, so the caller keeps the remainder for the next
  // report. Returns zeros and emits nothing when disabled. A |channel| above kKernelStepChannelMax
  // is reported as that channel.
  DrainCounters Report(int channel, const DrainCounters& delta);

 private:
  const ncclProfiler_v6_t* plugin_;
  void* context_;
  const int* activation_mask_;
  int rank_;
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_KERNEL_STEP_EMITTER_H_
