#include "tools/sim/plan_launcher.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "tools/sim/event_mask.h"

namespace katrace::sim {
namespace {

constexpr uint64_t kKernelFixedCostNs = 5000;
constexpr uint8_t kRingWarps = 16;
constexpr uintptr_t kFakeDeviceMemoryBase = 0x7f0000000000ull;

uint64_t NextRandom(uint64_t* state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

void* FakeDevicePointer(int rank, int which) {
  return reinterpret_cast<void*>(kFakeDeviceMemoryBase + (static_cast<uintptr_t>(rank) << 34) +
                                 (static_cast<uintptr_t>(which) << 32));
}

}  // namespace

PlanLauncher::PlanLauncher(const SimConfig& config, int rank, void* plugin_context,
                           ProfilerApi* api, ProxyThread* proxy, const GpuClock* clock,
                           StepWorkSink* step_sink)
    : config_(config),
      rank_(rank),
      plugin_context_(plugin_context),
      proxy_(proxy),
      step_sink_(step_sink),
      issuer_(api),
      stream_(clock),
      rng_state_((config.seed + 1) * 0x2545F4914F6CDD1Dull ^ static_cast<uint64_t>(rank + 1)) {}

uint64_t PlanLauncher::KernelDurationNs(const KernelPlan& plan) const {
  if (config_.bench) return 0;  // one tick: stamps stay close to the host clock at full rate
  // 1 GB/s moves one byte per nanosecond.
  return kKernelFixedCostNs +
         static_cast<uint64_t>(static_cast<double>(plan.wire_bytes) /
                               config_.bandwidth_gbytes_per_s);
}

GpuWindow PlanLauncher::ChannelWindow(const GpuWindow& kernel, int channel) {
  // Blocks (channels) start and finish a tick or two apart, as on a GPU.
  uint64_t tick = config_.gpu_tick_ns;
  GpuWindow window;
  window.start_ns = kernel.start_ns + channel_start_skew_[channel] * tick;
  uint64_t stop_skew = channel_stop_skew_[channel] * tick;
  window.stop_ns = kernel.stop_ns > stop_skew ? kernel.stop_ns - stop_skew : kernel.stop_ns;
  if (window.stop_ns <= window.start_ns) window.stop_ns = window.start_ns + tick;
  return window;
}

void PlanLauncher::StartTaskEvents(KernelPlan* plan) {
  for (PlannedTask& task : plan->tasks) {
    const TaskSpec& spec = task.spec;
    ncclProfilerEventDescr_v6_t descr;
    std::memset(&descr, 0, sizeof(descr));
    descr.rank = rank_;
    if (spec.is_coll) {
      if (task.mask & kCollStarters) {
        descr.type = ncclProfileColl;
        descr.parentObj = task.api_handle;
        descr.coll.parentGroup = plan->group_handle;
        descr.coll.seqNumber = seq_numbers_[spec.task_func];
        descr.coll.func = spec.task_func;
        descr.coll.sendBuff = FakeDevicePointer(rank_, 0);
        descr.coll.recvBuff = FakeDevicePointer(rank_, 1);
        descr.coll.count = spec.task_count;
        descr.coll.root = spec.root;
        descr.coll.datatype = spec.task_datatype;
        descr.coll.nChannels = static_cast<uint8_t>(spec.channels.size());
        descr.coll.nWarps = kRingWarps;
        descr.coll.algo = "RING";
        descr.coll.proto = "SIMPLE";
        issuer_.Start(plugin_context_, &task.event_handle, &descr);
      }
      // Graph-captured plans advance the sequence only when KernelCh forces proxy work (§3.2).
      bool counts = !plan->persistent ||
                    ((plan->group_handle != nullptr || task.api_handle != nullptr) &&
                     (task.mask & ncclProfileKernelCh));
      if (counts) ++seq_numbers_[spec.task_func];
    } else if (task.mask & kP2pStarters) {
      descr.type = ncclProfileP2p;
      descr.parentObj = task.api_handle;
      descr.p2p.parentGroup = plan->group_handle;
      descr.p2p.func = spec.task_func;
      descr.p2p.buff = FakeDevicePointer(rank_, spec.api_func[0] == 'S' ? 0 : 1);
      descr.p2p.datatype = spec.task_datatype;
      descr.p2p.count = spec.task_count;
      descr.p2p.peer = spec.peer;
      descr.p2p.nChannels = static_cast<uint8_t>(spec.channels.size());
      issuer_.Start(plugin_context_, &task.event_handle, &descr);
    }
  }
}

void PlanLauncher::StopTaskEvents(KernelPlan* plan) {
  for (PlannedTask& task : plan->tasks) {
    if (task.event_handle == nullptr) continue;
    issuer_.Stop(task.spec.is_coll ? ncclProfileColl : ncclProfileP2p, task.event_handle);
    task.event_handle = nullptr;  // a replay re-creates it
  }
}

std::unique_ptr<ProxyWork> PlanLauncher::BuildProxyWork(const KernelPlan& plan,
                                                        const GpuWindow& kernel,
                                                        std::vector<StepWork>* step_works) {
  auto work = std::make_unique<ProxyWork>();
  for (int c = 0; c < config_.num_channels; ++c) {
    channel_start_skew_[c] = NextRandom(&rng_state_) % 3;
    channel_stop_skew_[c] = NextRandom(&rng_state_) % 3;
  }
  auto add_work = [&](int channel, const std::vector<const PlannedTask*>& tasks) {
    WorkRecord record;
    record.channel = channel;
    record.work_counter = ++work_counters_[channel];
    record.gpu = ChannelWindow(kernel, channel);
    for (const PlannedTask* task : tasks) {
      record.task_handles[record.num_tasks++] = task->event_handle;
      record.mask |= task->mask;
      // The KernelCh profiler proxy op exists only when the task's mask has KernelCh (§5.3).
      if (task->mask & ncclProfileKernelCh) {
        KernelChWork kernel_ch;
        kernel_ch.channel = channel;
        kernel_ch.work_counter = record.work_counter;
        kernel_ch.task_handle = task->event_handle;
        kernel_ch.mask = task->mask;
        kernel_ch.gpu = record.gpu;
        work->kernel_chs.push_back(kernel_ch);
      }
    }
    work->works.push_back(record);
    if (step_works == nullptr) return;
    // The GPU side of the channel's slices: one role per ProxyOp the task runs on this channel,
    // each slice as big as the network step it feeds (simple prims: ring AllReduce 2(N-1) slices
    // per chunk, AllGather/ReduceScatter N-1, Send/Recv one per chunk per peer).
    StepWork step_work;
    step_work.channel = channel;
    step_work.work_counter = record.work_counter;
    step_work.gpu = record.gpu;
    for (const PlannedTask* task : tasks) {
      if ((task->mask & ncclProfileKernelStep) == 0) continue;
      for (const ProxyOpSpec& op : task->spec.proxy_ops) {
        if (op.channel != channel || op.num_steps <= 0) continue;
        StepRole role;
        role.is_send = op.is_send;
        role.peer = op.peer;
        role.num_steps = static_cast<uint32_t>(op.num_steps);
        role.step_bytes = static_cast<uint32_t>(op.step_bytes);
        role.last_step_bytes = static_cast<uint32_t>(op.last_step_bytes);
        role.parent = task->event_handle;
        step_work.roles.push_back(role);
      }
    }
    step_works->push_back(std::move(step_work));
  };

  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const PlannedTask& task = plan.tasks[i];
    if (task.spec.is_coll) {
      for (int channel : task.spec.channels) add_work(channel, {&task});
      continue;
    }
    // A fused Send/Recv pair bumps each channel's counter once; both halves share the value.
    if (i > 0 && task.spec.pair_id != 0 && plan.tasks[i - 1].spec.pair_id == task.spec.pair_id) {
      continue;
    }
    const PlannedTask* partner = nullptr;
    if (i + 1 < plan.tasks.size() && task.spec.pair_id != 0 &&
        plan.tasks[i + 1].spec.pair_id == task.spec.pair_id) {
      partner = &plan.tasks[i + 1];
    }
    std::vector<int> channels = task.spec.channels;
    if (partner != nullptr) {
      channels.insert(channels.end(), partner->spec.channels.begin(), partner->spec.channels.end());
      std::sort(channels.begin(), channels.end());
      channels.erase(std::unique(channels.begin(), channels.end()), channels.end());
    }
    for (int channel : channels) {
      std::vector<const PlannedTask*> on_channel;
      for (const PlannedTask* candidate : {&task, partner}) {
        if (candidate == nullptr) continue;
        const std::vector<int>& used = candidate->spec.channels;
        if (std::find(used.begin(), used.end(), channel) != used.end()) {
          on_channel.push_back(candidate);
        }
      }
      add_work(channel, on_channel);
    }
  }

  for (const PlannedTask& task : plan.tasks) {
    for (const ProxyOpSpec& spec : task.spec.proxy_ops) {
      ProxyOpWork op;
      op.spec = spec;
      op.task_handle = task.event_handle;
      op.mask = task.mask;
      op.gpu = ChannelWindow(kernel, spec.channel);
      work->proxy_ops.push_back(op);
    }
  }
  return work;
}

void PlanLauncher::RunPlanTask(KernelPlan* plan) {
  const PlannedTask* first = plan->FirstProfiledTask();
  int plan_mask = first != nullptr ? first->mask : 0;
  if (plan_mask & kGroupStarters) {
    ncclProfilerEventDescr_v6_t descr;
    std::memset(&descr, 0, sizeof(descr));
    descr.type = ncclProfileGroup;
    issuer_.Start(plugin_context_, &plan->group_handle, &descr);
  }
  StartTaskEvents(plan);
  GpuWindow kernel = stream_.Launch(KernelDurationNs(*plan));
  std::vector<StepWork> step_works;
  std::unique_ptr<ProxyWork> work =
      BuildProxyWork(*plan, kernel, step_sink_ != nullptr ? &step_works : nullptr);
  // Registered with the drain and queued for the emulated device before the Coll/P2p stops, as
  // NCCL sets up a kernel's profiling before it launches it.
  if (step_sink_ != nullptr) step_sink_->Launch(std::move(step_works));
  StopTaskEvents(plan);
  // NCCL posts the proxy ops just before these stops; the proxy thread normally appends them
  // after (research §3.4). Posting after the stops makes that usual order the guaranteed one.
  proxy_->Post(std::move(work));
  if (plan->group_handle != nullptr) {
    issuer_.Stop(ncclProfileGroup, plan->group_handle);
    plan->group_handle = nullptr;
  }
}

}  // namespace katrace::sim
