// One channel's KernelStep drain; see channel_drain.h.
#include "proxy_drain/channel_drain.h"

namespace katrace {
namespace {

// Whether a stop rebuilt from its low bits (ReadStop) is a time the plugin can use. The rebuild
// puts it within 2^39 ns of the start's ready time on the 64-bit circle; where that crossed 0 or
// 2^64 (a garbage or zero stamp next to a ready near either end) it is no time at all. And 0 is
// the ABI's "abandoned" mark: delivered as a stop, the plugin would mark the step abandoned
// without any counter saying so. Such a stop closes the step as abandoned, counted.
bool UsableStop(uint64_t ready_ns, uint64_t stop_ns) {
  constexpr uint64_t kReach = uint64_t{1} << (kStepStopTimeBits - 1);
  if (stop_ns == kKernelStepAbandonedStopNs) return false;
  return stop_ns >= ready_ns ? stop_ns - ready_ns < kReach : ready_ns - stop_ns <= kReach;
}

}  // namespace

ChannelDrain::ChannelDrain(int channel, const StepRingView& ring, const StepDrainConfig& config)
    : channel_(channel),
      ring_(ring),
      abandon_lag_(config.abandon_lag > 0 ? config.abandon_lag : 1),
      sample_every_(config.sample_every > 0 ? config.sample_every : 1),
      scanner_(ring, config.max_scan_gap) {}

void ChannelDrain::Poll(WorkRegistry* registry, KernelStepEmitter* emitter,
                        std::vector<WorkKey>* evicted) {
  scanner_.Scan([&](const StepStart& start) { OnStart(start, registry, emitter, evicted); },
                [&](uint64_t count) { counters_.lost_overrun += count; });
  PairStops(emitter);
}

void ChannelDrain::OnStart(const StepStart& start, WorkRegistry* registry,
                           KernelStepEmitter* emitter, std::vector<WorkKey>* evicted) {
  ++counters_.seen;
  // Kept steps are multiples of sample_every, so each later one stands for the skipped ones
  // before it.
  if (start.step > 0) counters_.sampled_out += sample_every_ - 1;

  const WorkKey key{channel_, start.is_send, start.work_tag};
  void* parent = nullptr;
  bool live = registry->Find(key, &parent);
  if (!live && registry->HasQueued()) {
    registry->ApplyQueued(evicted);
    live = registry->Find(key, &parent);
  }
  if (!live) {
    ++counters_.late;
    return;
  }
  // Left out on purpose, like a sampled-out step, so the totals still add up: with the mask off,
  // or with a peer or channel the descriptor's bytes cannot name (PR #2316's own limit;
  // kernel_step.h). Emitting them as the low byte would put them on another peer's or channel's
  // track.
  if (!emitter->Enabled() || start.peer < 0 || start.peer > ncclProfilerKernelStepPeerMax ||
      channel_ > kKernelStepChannelMax) {
    ++counters_.sampled_out;
    return;
  }
  void* handle = emitter->Start(parent, channel_, start);
  if (handle != nullptr) {
    open_.push_back(OpenStep{start.seq, start.ready_ns, handle, start.work_tag, start.is_send});
  }
}

void ChannelDrain::PairStops(KernelStepEmitter* emitter) {
  // Every start up to here has been read or counted lost: the lag counts them all.
  const uint64_t resolved_starts = scanner_.next_seq();
  size_t kept = 0;
  for (size_t i = 0; i < open_.size(); ++i) {
    const OpenStep& step = open_[i];
    uint64_t stop_ns = 0;
    switch (ReadStop(ring_, step.seq, step.ready_ns, &stop_ns)) {
      case StepSlotState::kReady:
        if (!UsableStop(step.ready_ns, stop_ns)) {
          ++counters_.abandoned;
          stop_ns = kKernelStepAbandonedStopNs;
        }
        emitter->Stop(step.handle, stop_ns);
        continue;
      case StepSlotState::kOverwritten:
        ++counters_.lost_overrun;
        emitter->Stop(step.handle, kKernelStepAbandonedStopNs);
        continue;
      case StepSlotState::kNotYet:
        if (resolved_starts - 1 - step.seq >= abandon_lag_) {
          ++counters_.abandoned;
          emitter->Stop(step.handle, kKernelStepAbandonedStopNs);
          continue;
        }
        open_[kept++] = step;
        break;
    }
  }
  open_.resize(kept);
}

void ChannelDrain::AbandonWork(bool is_send, uint16_t work_tag, KernelStepEmitter* emitter) {
  size_t kept = 0;
  for (size_t i = 0; i < open_.size(); ++i) {
    const OpenStep& step = open_[i];
    if (step.is_send == is_send && step.work_tag == work_tag) {
      ++counters_.abandoned;
      emitter->Stop(step.handle, kKernelStepAbandonedStopNs);
    } else {
      open_[kept++] = step;
    }
  }
  open_.resize(kept);
}

void ChannelDrain::AbandonAll(KernelStepEmitter* emitter) {
  for (const OpenStep& step : open_) {
    ++counters_.abandoned;
    emitter->Stop(step.handle, kKernelStepAbandonedStopNs);
  }
  open_.clear();
}

void ChannelDrain::Report(KernelStepEmitter* emitter) {
  const DrainCounters delta = counters_ - reported_;
  if (!delta.Any()) return;
  reported_ += emitter->Report(channel_, delta);
}

}  // namespace katrace
