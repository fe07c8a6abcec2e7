// Drains one channel's KernelStep rings: emits each start as soon as it is visible, pairs its stop
// by sequence number, and closes (abandons) steps whose stop never comes, so one missing record
// never blocks later ones. Counts everything it cannot deliver. Stops are looked for only for steps
// the plugin took (non-NULL handle): a step not emitted has no stop to deliver.
//
// Thread safety: the drain thread only.
#ifndef KATRACE_PROXY_DRAIN_CHANNEL_DRAIN_H_
#define KATRACE_PROXY_DRAIN_CHANNEL_DRAIN_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "katrace/step_ring.h"
#include "proxy_drain/kernel_step_emitter.h"
#include "proxy_drain/start_ring_scanner.h"
#include "proxy_drain/step_drain_config.h"
#include "katrace/drain_counters.h"
#include "proxy_drain/work_registry.h"

namespace katrace {

class ChannelDrain {
 public:
  ChannelDrain(int channel, const StepRingView& ring, const StepDrainConfig& config);

  // Reads what became visible since the last poll. A registration applied on a lookup miss may
  // displace live works (anywhere): they are appended to |evicted| for the caller to abandon.
  void Poll(WorkRegistry* registry, KernelStepEmitter* emitter, std::vector<WorkKey>* evicted);
  // Closes every open step of one work (its kernel is done, so its stops are all visible).
  void AbandonWork(bool is_send, uint16_t work_tag, KernelStepEmitter* emitter);
  void AbandonAll(KernelStepEmitter* emitter);
  // Emits a drain report with the counters since the last report, if any changed.
  void Report(KernelStepEmitter* emitter);

  const DrainCounters& counters() const { return counters_; }
  size_t num_open() const { return open_.size(); }

 private:
  struct OpenStep {
    uint64_t seq;
    uint64_t ready_ns;
    void* handle;
    uint16_t work_tag;
    bool is_send;
  };

  void OnStart(const StepStart& start, WorkRegistry* registry, KernelStepEmitter* emitter,
               std::vector<WorkKey>* evicted);
  void PairStops(KernelStepEmitter* emitter);

  const int channel_;
  const StepRingView ring_;
  const uint32_t abandon_lag_;
  const uint32_t sample_every_;
  StartRingScanner scanner_;
  std::vector<OpenStep> open_;  // emitted, awaiting their stop; in start-visibility order
  DrainCounters counters_;
  DrainCounters reported_;
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_CHANNEL_DRAIN_H_
