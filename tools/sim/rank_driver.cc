#include "tools/sim/rank_driver.h"

#include <pthread.h>

#include <cstdio>
#include <cstring>

#include "tools/sim/event_mask.h"
#include "tools/sim/kernel_step_rank.h"
#include "tools/sim/nccl_logger.h"

namespace katrace::sim {
namespace {

constexpr uint64_t kCommHashBase = 0x6b61747261636573ull;  // "katraces"
constexpr uintptr_t kFakeStreamBase = 0x5000000;

}  // namespace

RankDriver::RankDriver(const SimConfig& config, int rank, ProfilerApi* api, int* activation_mask,
                       const GpuClock* clock, RankBarrier* barrier)
    : config_(config),
      rank_(rank),
      api_(api),
      activation_mask_(activation_mask),
      clock_(clock),
      barrier_(barrier),
      issuer_(api),
      stream_(reinterpret_cast<void*>(kFakeStreamBase + 0x100 * static_cast<uintptr_t>(rank))) {}

void RankDriver::Run() {
  Initialize();
  barrier_->Wait();
  result_.mask_after_init = __atomic_load_n(activation_mask_, __ATOMIC_RELAXED);
  result_.ops_start_ns = EventIssuer::NowNs();
  if (config_.graph) {
    RunGraphIterations();
  } else {
    RunEagerIterations();
  }
  if (config_.nccl_quirks) ReplayStaleCollApiStop();
  Finish();
}

void RankDriver::Initialize() {
  char name[16];
  std::snprintf(name, sizeof(name), "sim-app-%d", rank_);
  pthread_setname_np(pthread_self(), name);
  SetLogThreadRank(rank_);

  // Every rank sits on its own node: all peers are reached over the network (ProxyOps).
  result_.init_result =
      api_->Init(&plugin_context_, kCommHashBase ^ config_.seed, activation_mask_, "katrace-sim",
                 config_.num_ranks, config_.num_ranks, rank_, NcclStyleLog);
  if (result_.init_result != ncclSuccess) {
    // NCCL 2.28 only logs this and keeps calling with whatever context the plugin left.
    NcclStyleLog(NCCL_LOG_WARN, NCCL_PROFILE, __FILE__, __LINE__,
                 "Profiler init failed with error '%d'. Continue without profiler.",
                 static_cast<int>(result_.init_result));
  }
  result_.context_null = plugin_context_ == nullptr;

  // The proxy thread is created after the profiler's init, as in initTransportsRank.
  ProxyThreadConfig proxy_config;
  proxy_config.rank = rank_;
  proxy_config.plugin_context = plugin_context_;
  proxy_config.api = api_;
  proxy_config.activation_mask = activation_mask_;
  proxy_config.clock = clock_;
  proxy_config.bench = config_.bench;
  proxy_config.nccl_quirks = config_.nccl_quirks;
  proxy_config.seed = config_.seed;
  proxy_config.hang = config_.hang;
  if (config_.proxy_poll_hook_factory) {
    if (std::unique_ptr<ProxyPollHook> hook = config_.proxy_poll_hook_factory(rank_)) {
      proxy_config.hooks.push_back(std::move(hook));
    }
  }
  if (std::unique_ptr<KernelStepRank> steps = MakeKernelSteps()) {
    kernel_steps_ = steps.get();
    result_.kernel_steps_active = true;
    proxy_config.hooks.push_back(std::move(steps));
  }
  proxy_ = std::make_unique<ProxyThread>(std::move(proxy_config));
  proxy_->Start();
  launcher_ = std::make_unique<PlanLauncher>(config_, rank_, plugin_context_, api_, proxy_.get(),
                                             clock_, kernel_steps_);
  if (config_.graph) {
    host_callbacks_ = std::make_unique<HostCallbackThread>(rank_);
    host_callbacks_->Start();
  }
}

std::unique_ptr<KernelStepRank> RankDriver::MakeKernelSteps() {
  // The plugin asked for KernelSteps in its init (the mask is shared, so it is read now, after
  // this rank's init) and can receive them: only the v6 table has the KernelStep descriptor.
  int mask = __atomic_load_n(activation_mask_, __ATOMIC_RELAXED);
  // A hung rank's only KernelStep is the one its injected hang leaves open (channel_hang.h).
  if (!config_.kernel_steps.enabled || plugin_context_ == nullptr || config_.hang.rank == rank_ ||
      api_->version() != AbiVersion::kV6 || (mask & ncclProfileKernelStep) == 0) {
    return nullptr;
  }
  KernelStepRankOptions options;
  options.rank = rank_;
  options.num_channels = config_.num_channels;
  options.ring_depth_log2 = ChooseStepRingDepthLog2(
      config_.kernel_steps.ring_depth_log2,
      static_cast<uint64_t>(config_.num_ranks) * static_cast<uint64_t>(config_.num_channels));
  options.sample_every = config_.kernel_steps.sample_every;
  options.bench = config_.bench;
  options.api = api_;
  options.plugin_context = plugin_context_;
  options.activation_mask = activation_mask_;
  return std::make_unique<KernelStepRank>(options);
}

void RankDriver::RunEagerIterations() {
  for (int iter = 0; iter < config_.iters; ++iter) {
    for (OpKind kind : config_.ops) IssueOperation(kind, /*capture=*/false);
  }
}

void RankDriver::RunGraphIterations() {
  for (OpKind kind : config_.ops) IssueOperation(kind, /*capture=*/true);
  // cudaGraphLaunch issues no profiler events on this thread; the captured host callback does.
  for (int iter = 0; iter < config_.iters; ++iter) {
    for (const std::shared_ptr<KernelPlan>& plan : captured_plans_) RunPlanTask(plan);
  }
}

void RankDriver::ReplayStaleCollApiStop() {
  // NCCL keeps the CollApi handle slot after the stop (research §2.7). When the mask loses every
  // CollApi-related bit, as a plugin's control API may do at any time, the next collective stops
  // the old handle again. Rank 0 plays the plugin clearing the mask; every rank then issues one
  // AllReduce.
  barrier_->Wait();
  int saved_mask = 0;
  if (rank_ == 0) {
    saved_mask = __atomic_load_n(activation_mask_, __ATOMIC_RELAXED);
    __atomic_store_n(activation_mask_, 0, __ATOMIC_RELAXED);
  }
  barrier_->Wait();
  IssueOperation(OpKind::kAllReduce, /*capture=*/false);
  barrier_->Wait();
  if (rank_ == 0) __atomic_store_n(activation_mask_, saved_mask, __ATOMIC_RELAXED);
}

void RankDriver::Finish() {
  if (host_callbacks_ != nullptr) host_callbacks_->Drain();
  proxy_->WaitUntilIdle();
  result_.ops_done_ns = EventIssuer::NowNs();
  if (host_callbacks_ != nullptr) host_callbacks_->StopAndJoin();
  // The proxy thread closes the KernelStep drain as it exits: its report is in before finalize.
  proxy_->StopAndJoin();
  if (kernel_steps_ != nullptr) result_.kernel_steps = kernel_steps_->stats();
  // commFree calls finalize only for a non-NULL context.
  if (plugin_context_ != nullptr) api_->Finalize(plugin_context_);
  result_.counters.Add(issuer_.counters());
  result_.counters.Add(launcher_->counters());
  result_.counters.Add(proxy_->counters());
}

std::shared_ptr<KernelPlan> RankDriver::IssueOperation(OpKind kind, bool capture) {
  OpSchedule schedule =
      BuildOpSchedule(kind, rank_, config_.num_ranks, config_.num_channels, config_.size_bytes);
  auto plan = std::make_shared<KernelPlan>();
  plan->kind = kind;
  plan->wire_bytes = schedule.wire_bytes;
  plan->persistent = capture;
  if (schedule.user_group) ++api_state_.group_depth;  // ncclGroupStart
  for (const TaskSpec& spec : schedule.tasks) {
    // ncclEnqueueCheck wraps every call in its own (nested) group.
    ++api_state_.group_depth;
    EnqueueApiCall(spec, capture, plan.get());
    GroupEndInternal(capture, plan);
  }
  if (schedule.user_group) GroupEndInternal(capture, plan);  // ncclGroupEnd
  return plan;
}

void RankDriver::EnqueueApiCall(const TaskSpec& spec, bool capture, KernelPlan* plan) {
  // taskAppend: the mask is loaded at every API call and snapshotted into the task.
  StartGroupApiEvent(capture);
  RecordGroupApiState(ncclProfilerGroupStartApiStop);
  StartApiEvent(spec, capture);
  PlannedTask task;
  task.spec = spec;
  task.mask = api_state_.mask;
  task.api_handle = spec.is_coll ? api_state_.coll_api_handle : api_state_.p2p_api_handle;
  task.group_api_handle = api_state_.group_api_handle;
  plan->tasks.push_back(std::move(task));
  StopApiEvent(spec);
}

void RankDriver::StartGroupApiEvent(bool capture) {
  // Relaxed, as NCCL reads it: the plugin may change the mask at any time, and a change only
  // has to take effect from some later API call on.
  api_state_.mask = __atomic_load_n(activation_mask_, __ATOMIC_RELAXED);
  // Only the outermost group gets a GroupApi event, at its first operation.
  if (api_state_.group_api_tried || (api_state_.mask & kGroupApiStarters) == 0) return;
  ncclProfilerEventDescr_v6_t descr;
  std::memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileGroupApi;
  descr.groupApi.graphCaptured = capture;
  descr.groupApi.groupDepth = api_state_.group_depth;
  issuer_.Start(plugin_context_, &api_state_.group_api_handle, &descr);
  api_state_.group_api_tried = true;
  api_state_.start_state = GroupApiStartState::kStarted;
}

void RankDriver::RecordGroupApiState(ncclProfilerEventState_t state) {
  bool record = false;
  if (state == ncclProfilerGroupStartApiStop &&
      api_state_.start_state == GroupApiStartState::kStarted) {
    api_state_.start_state = GroupApiStartState::kStopped;
    record = true;
  } else if (state == ncclProfilerGroupEndApiStart &&
             api_state_.start_state == GroupApiStartState::kStopped) {
    api_state_.start_state = GroupApiStartState::kReset;
    record = true;
  }
  // GroupApi states carry no arguments: NCCL passes NULL.
  if (record && api_state_.group_api_handle != nullptr) {
    issuer_.Record(ncclProfileGroupApi, api_state_.group_api_handle, state, nullptr);
  }
}

void RankDriver::StartApiEvent(const TaskSpec& spec, bool capture) {
  ncclProfilerEventDescr_v6_t descr;
  std::memset(&descr, 0, sizeof(descr));
  descr.parentObj = api_state_.group_api_handle;
  if (spec.is_coll) {
    if ((api_state_.mask & kCollApiStarters) == 0) return;
    descr.type = ncclProfileCollApi;
    descr.collApi.func = spec.api_func;
    descr.collApi.count = spec.api_count;
    descr.collApi.datatype = spec.api_datatype;
    descr.collApi.root = spec.root;
    descr.collApi.stream = stream_;
    descr.collApi.graphCaptured = capture;
    issuer_.Start(plugin_context_, &api_state_.coll_api_handle, &descr);
  } else {
    if ((api_state_.mask & kP2pApiStarters) == 0) return;
    descr.type = ncclProfileP2pApi;
    descr.p2pApi.func = spec.api_func;
    descr.p2pApi.count = spec.api_count;
    descr.p2pApi.datatype = spec.api_datatype;
    descr.p2pApi.stream = stream_;
    descr.p2pApi.graphCaptured = capture;
    issuer_.Start(plugin_context_, &api_state_.p2p_api_handle, &descr);
  }
}

void RankDriver::StopApiEvent(const TaskSpec& spec) {
  if (spec.is_coll) {
    if (api_state_.coll_api_handle == nullptr) return;
    issuer_.Stop(ncclProfileCollApi, api_state_.coll_api_handle);
    if (!config_.nccl_quirks) api_state_.coll_api_handle = nullptr;
  } else {
    if (api_state_.p2p_api_handle == nullptr) return;
    issuer_.Stop(ncclProfileP2pApi, api_state_.p2p_api_handle);
    api_state_.p2p_api_handle = nullptr;
  }
}

void RankDriver::GroupEndInternal(bool capture, const std::shared_ptr<KernelPlan>& plan) {
  if (api_state_.group_depth == 1) RecordGroupApiState(ncclProfilerGroupEndApiStart);
  if (--api_state_.group_depth > 0) return;
  LaunchKernel(plan.get());
  if (capture) {
    captured_plans_.push_back(plan);
  } else {
    RunPlanTask(plan);
  }
  if (api_state_.group_api_handle != nullptr) {
    issuer_.Stop(ncclProfileGroupApi, api_state_.group_api_handle);
    api_state_.group_api_handle = nullptr;
  }
  api_state_.group_api_tried = false;
}

void RankDriver::LaunchKernel(KernelPlan* plan) {
  const PlannedTask* first = plan->FirstProfiledTask();
  if (first == nullptr || (first->mask & ncclProfileKernelLaunch) == 0) return;
  ncclProfilerEventDescr_v6_t descr;
  std::memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileKernelLaunch;
  descr.parentObj = first->group_api_handle;
  descr.kernelLaunch.stream = stream_;
  issuer_.Start(plugin_context_, &plan->kernel_launch_handle, &descr);
  // cuLaunchKernelEx would run here; the emulated kernel is placed when the plan task runs.
  if (plan->kernel_launch_handle != nullptr) {
    issuer_.Stop(ncclProfileKernelLaunch, plan->kernel_launch_handle);
  }
}

void RankDriver::RunPlanTask(const std::shared_ptr<KernelPlan>& plan) {
  // While a graph exists NCCL runs every plan's host task from the stream's host callback.
  if (host_callbacks_ != nullptr) {
    PlanLauncher* launcher = launcher_.get();
    host_callbacks_->Enqueue([launcher, plan] { launcher->RunPlanTask(plan.get()); });
  } else {
    launcher_->RunPlanTask(plan.get());
  }
}

}  // namespace katrace::sim
