// The KernelStep drain facade; see step_drain.h.
#include "proxy_drain/step_drain.h"

namespace katrace {

StepDrain::StepDrain(const std::vector<StepRingView>& channel_rings,
                     const ncclProfiler_v6_t* plugin, void* context, const int* activation_mask,
                     const StepDrainConfig& config)
    : config_(config),
      registry_(int(channel_rings.size()), config.work_slots_log2),
      emitter_(plugin, context, activation_mask, config.rank) {
  channels_.reserve(channel_rings.size());
  for (size_t c = 0; c < channel_rings.size(); ++c) {
    channels_.emplace_back(int(c), channel_rings[c], config);
  }
}

void StepDrain::RegisterWork(int channel, bool is_send, uint32_t work_tag, void* parent) {
  if (closed_.load(std::memory_order_relaxed)) return;
  registry_.Register(channel, is_send, work_tag, parent);
}

void StepDrain::ApplyRegistrations() {
  if (registry_.HasQueued()) registry_.ApplyQueued(&evicted_);
  AbandonEvicted();
}

void StepDrain::AbandonEvicted() {
  for (const WorkKey& key : evicted_) {
    channels_[key.channel].AbandonWork(key.is_send, key.tag, &emitter_);
  }
  evicted_.clear();
}

void StepDrain::Poll() {
  if (closed_.load(std::memory_order_relaxed)) return;
  ApplyRegistrations();
  for (ChannelDrain& channel : channels_) {
    channel.Poll(&registry_, &emitter_, &evicted_);
    AbandonEvicted();
  }
  ++num_polls_;
  if (config_.report_every_polls != 0 && num_polls_ % config_.report_every_polls == 0) Report();
}

void StepDrain::RetireWork(int channel, bool is_send, uint32_t work_tag) {
  if (channel < 0 || channel >= num_channels() || closed_.load(std::memory_order_relaxed)) return;
  ApplyRegistrations();
  ChannelDrain& drain = channels_[channel];
  drain.Poll(&registry_, &emitter_, &evicted_);
  AbandonEvicted();
  const uint16_t tag = uint16_t(work_tag);
  drain.AbandonWork(is_send, tag, &emitter_);
  registry_.Retire(WorkKey{channel, is_send, tag});
}

void StepDrain::Report() {
  for (ChannelDrain& channel : channels_) channel.Report(&emitter_);
}

void StepDrain::Flush() {
  if (closed_.load(std::memory_order_relaxed)) return;
  Poll();
  Report();
}

void StepDrain::Close() {
  if (closed_.load(std::memory_order_relaxed)) return;
  Poll();
  for (ChannelDrain& channel : channels_) channel.AbandonAll(&emitter_);
  Report();
  closed_.store(true, std::memory_order_relaxed);
}

DrainCounters StepDrain::Counters() const {
  DrainCounters total;
  for (const ChannelDrain& channel : channels_) total += channel.counters();
  return total;
}

DrainCounters StepDrain::ChannelCounters(int channel) const {
  if (channel < 0 || channel >= num_channels()) return DrainCounters();
  return channels_[channel].counters();
}

size_t StepDrain::num_open_steps() const {
  size_t open = 0;
  for (const ChannelDrain& channel : channels_) open += channel.num_open();
  return open;
}

}  // namespace katrace
