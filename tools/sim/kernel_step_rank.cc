// A rank's KernelStep emulation and drain; see kernel_step_rank.h.
#include "tools/sim/kernel_step_rank.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "katrace/step_ring.h"

namespace katrace::sim {
namespace {

katrace::StepDrainConfig DrainConfig(const KernelStepRankOptions& options) {
  katrace::StepDrainConfig config;
  config.rank = options.rank;
  config.sample_every = std::max<uint32_t>(options.sample_every, 1);
  return config;
}

RankStepWriterOptions WriterOptions(const KernelStepRankOptions& options) {
  RankStepWriterOptions writer;
  writer.rank = options.rank;
  writer.sample_every = std::max<uint32_t>(options.sample_every, 1);
  writer.bench = options.bench;
  return writer;
}

}  // namespace

uint64_t StepRingBytesPerChannel(uint32_t depth_log2) { return katrace::StepRingBytes(depth_log2); }

uint32_t ChooseStepRingDepthLog2(std::optional<uint32_t> requested, uint64_t num_rings) {
  if (requested) {
    return std::clamp(*requested, katrace::kStepRingMinDepthLog2, katrace::kStepRingMaxDepthLog2);
  }
  uint32_t depth = katrace::kStepRingDefaultDepthLog2;
  while (depth > katrace::kStepRingMinDepthLog2 &&
         katrace::StepRingBytes(depth) * std::max<uint64_t>(num_rings, 1) >
             kMaxDefaultStepRingBytes) {
    --depth;
  }
  return depth;
}

KernelStepRank::KernelStepRank(const KernelStepRankOptions& options)
    : rings_(options.num_channels, options.ring_depth_log2),
      shim_(options.api),
      drain_(rings_.views(), DrainPluginShim::Table(), options.plugin_context,
             options.activation_mask, DrainConfig(options)),
      writer_(rings_.views(), WriterOptions(options)),
      windows_(static_cast<size_t>(options.num_channels), std::vector<WorkWindow>(kWindowHistory)) {
  // Without rings the rank still runs (its writer skips channels that have none, so the works
  // still get their KernelCh windows); it says so once instead of dying on a null ring.
  if (rings_.num_channels() != options.num_channels) {
    std::fprintf(stderr, "katrace-sim: rank %d: %s; its KernelSteps are not written\n",
                 options.rank, rings_.error().c_str());
  }
  writer_.Start();
}

KernelStepRank::~KernelStepRank() { writer_.StopAndJoin(); }

void KernelStepRank::Launch(std::vector<StepWork> kernel) {
  for (const StepWork& work : kernel) {
    // Once per direction: a Coll's send and recv roles share its handle; a fused Send/Recv pair
    // has one role each, under its own P2p.
    bool registered[2] = {false, false};
    for (const StepRole& role : work.roles) {
      if (registered[role.is_send]) continue;
      registered[role.is_send] = true;
      drain_.RegisterWork(work.channel, role.is_send, static_cast<uint32_t>(work.work_counter),
                          role.parent);
    }
  }
  // Relaxed: the proxy only compares it with what it retired, and the works themselves reach it
  // through the writer's mutex.
  num_launched_.fetch_add(kernel.size(), std::memory_order_relaxed);
  writer_.Enqueue(std::move(kernel));
}

bool KernelStepRank::ApplyUpdates() {
  if (!writer_.TakeUpdates(&updates_)) return false;
  for (const StepWorkUpdate& update : updates_) {
    WorkWindow& window =
        windows_[static_cast<size_t>(update.channel)][update.work_counter % kWindowHistory];
    window.work_counter = update.work_counter;
    window.gpu = update.gpu;
    if (!update.finished) continue;
    const uint32_t tag = static_cast<uint32_t>(update.work_counter);
    if (update.has_send) drain_.RetireWork(update.channel, true, tag);
    if (update.has_recv) drain_.RetireWork(update.channel, false, tag);
    window.retired = true;
    ++num_retired_;
  }
  updates_.clear();
  return true;
}

const KernelStepRank::WorkWindow* KernelStepRank::FindWindow(int channel,
                                                             uint64_t work_counter) const {
  if (channel < 0 || static_cast<size_t>(channel) >= windows_.size()) return nullptr;
  const WorkWindow& window = windows_[static_cast<size_t>(channel)][work_counter % kWindowHistory];
  return window.work_counter == work_counter ? &window : nullptr;
}

bool KernelStepRank::OnProxyPoll(const ProxyPollContext& context) {
  if (closed_) return false;
  DrainPluginShim::Scope scope(&shim_, context.issuer);
  const uint64_t calls = shim_.num_calls();
  drain_.Poll();
  const bool updated = ApplyUpdates();
  return updated || shim_.num_calls() != calls;
}

bool KernelStepRank::HasPendingWork() const {
  return num_retired_ != num_launched_.load(std::memory_order_relaxed);
}

bool KernelStepRank::KernelChStart(int channel, uint64_t work_counter, uint64_t* start_ns) const {
  if (channel < 0 || static_cast<size_t>(channel) >= windows_.size()) return true;
  const WorkWindow* window = FindWindow(channel, work_counter);
  if (window == nullptr) return false;  // the writer has not begun it
  *start_ns = window->gpu.start_ns;
  return true;
}

bool KernelStepRank::KernelChStop(int channel, uint64_t work_counter, uint64_t* stop_ns) const {
  if (channel < 0 || static_cast<size_t>(channel) >= windows_.size()) return true;
  const WorkWindow* window = FindWindow(channel, work_counter);
  if (window == nullptr || !window->retired) return false;
  *stop_ns = window->gpu.stop_ns;
  return true;
}

void KernelStepRank::OnProxyExit(const ProxyPollContext& context) {
  if (closed_) return;
  DrainPluginShim::Scope scope(&shim_, context.issuer);
  writer_.StopAndJoin();
  ApplyUpdates();
  drain_.Close();
  closed_ = true;
  stats_ = writer_.counters();
  stats_.drain = drain_.Counters();
  stats_.reports = shim_.num_reports();
}

}  // namespace katrace::sim
