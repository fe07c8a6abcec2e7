#include "tools/sim/proxy_thread.h"

#include <pthread.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tools/sim/nccl_logger.h"

namespace katrace::sim {
namespace {

// NCCL fetches new ops every NCCL_PROGRESS_APPENDOP_FREQ busy passes (default 8).
constexpr int kAppendEveryBusyPasses = 8;
constexpr uint64_t kMinSleepNs = 1000;
constexpr uint64_t kMaxSleepNs = 200000;
// An idle pass with a deadline already past means a hook holds that KernelCh (the emulated device
// has not begun or finished its work): poll at a pace that leaves the CPU to the device's writer,
// whose wake-up is what the proxy waits for.
constexpr uint64_t kHeldSleepNs = 20000;

}  // namespace

ProxyThread::ProxyThread(ProxyThreadConfig config)
    : config_(std::move(config)),
      issuer_(config_.api),
      next_op_seed_(config_.seed * 0x100000001B3ull + static_cast<uint64_t>(config_.rank)) {
  if (config_.hang.enabled() && config_.hang.rank == config_.rank) hang_.emplace(config_.hang);
}

ProxyThread::~ProxyThread() {
  if (thread_.joinable()) StopAndJoin();
}

void ProxyThread::Start() { thread_ = std::thread(&ProxyThread::Run, this); }

void ProxyThread::Post(std::unique_ptr<ProxyWork> work) {
  std::unique_lock<std::mutex> lock(mutex_);
  work_retired_.wait(lock, [&] { return inflight_ < config_.max_inflight_works; });
  ++inflight_;
  pending_.push_back(std::move(work));
  work_posted_.notify_one();
}

void ProxyThread::WaitUntilIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  work_retired_.wait(lock, [&] { return inflight_ == 0; });
}

void ProxyThread::StopAndJoin() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
    work_posted_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void* ProxyThread::StartProxyCtrl() {
  void* handle = nullptr;
  if ((LoadMask() & ncclProfileProxyCtrl) == 0) return handle;
  ncclProfilerEventDescr_v6_t descr;
  std::memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileProxyCtrl;
  issuer_.Start(config_.plugin_context, &handle, &descr);
  return handle;
}

void ProxyThread::RecordProxyCtrl(void* handle, ncclProfilerEventState_t state, int appended) {
  if (handle == nullptr || (LoadMask() & ncclProfileProxyCtrl) == 0) return;
  ncclProfilerEventStateArgs_v6_t args;
  std::memset(&args, 0, sizeof(args));
  args.proxyCtrl.appendedProxyOps = appended;
  issuer_.Record(ncclProfileProxyCtrl, handle, state, &args);
}

void ProxyThread::StopProxyCtrl(void* handle) {
  if (handle != nullptr) issuer_.Stop(ncclProfileProxyCtrl, handle);
}

bool ProxyThread::Frozen(const ActiveWork& work, const KernelChOp& op) const {
  if (!hang_ || !hang_->stuck() || op.work.channel != hang_->channel()) return false;
  // The stuck KernelCh starts and never stops; later ones on its channel wait behind it, in
  // stream order.
  if (&op == stuck_op_) return op.started;
  return work.serial > stuck_work_->serial && !op.started;
}

bool ProxyThread::Frozen(const ActiveWork& work, const NetProxyOp& op) const {
  // Only the stuck work's transfers with the waiting peer hold their posted steps (from the first
  // one on): the sim models no data dependencies, so the proxy work of later operations goes on.
  if (!hang_ || !hang_->stuck() || &work != stuck_work_ || !op.HasOpenStep()) return false;
  const ProxyOpSpec& spec = op.spec();
  return spec.channel == hang_->channel() && spec.is_send == stuck_is_send_ && spec.peer == stuck_peer_;
}

void ProxyThread::GetStuck(ActiveWork* work, KernelChOp* op) {
  stuck_work_ = work;
  stuck_op_ = op;
  // The peer it waits on: its first send on the channel (a recv-only task: its first recv).
  const ProxyOpSpec* towards = nullptr;
  for (const NetProxyOp& net : work->net_ops) {
    if (net.spec().channel != op->work.channel) continue;
    if (towards == nullptr || (net.spec().is_send && !towards->is_send)) towards = &net.spec();
  }
  if (towards == nullptr) return;
  stuck_peer_ = towards->peer;
  stuck_is_send_ = towards->is_send;
  stuck_step_bytes_ = towards->step_bytes;
  for (NetProxyOp& net : work->net_ops) {
    const ProxyOpSpec& spec = net.spec();
    if (spec.channel == op->work.channel && spec.is_send == stuck_is_send_ && spec.peer == stuck_peer_) net.Hold();
  }
}

void ProxyThread::StartStuckKernelStep(const KernelChOp& op, uint64_t gpu_now_ns) {
  if ((op.work.mask & ncclProfileKernelStep) == 0 || stuck_peer_ < 0) return;
  ncclProfilerEventDescr_v6_t descr;
  std::memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileKernelStep;
  descr.parentObj = op.work.task_handle;
  descr.kernelStep.channelId = static_cast<uint8_t>(op.work.channel);
  descr.kernelStep.isSend = stuck_is_send_ ? 1 : 0;
  descr.kernelStep.peer = static_cast<uint8_t>(stuck_peer_);
  descr.kernelStep.step = 0;
  descr.kernelStep.size = static_cast<uint32_t>(stuck_step_bytes_);
  descr.kernelStep.startTs = gpu_now_ns;
  descr.kernelStep.readyTs = gpu_now_ns;
  issuer_.Start(config_.plugin_context, &stuck_step_, &descr);
}

void ProxyThread::ReleaseHang() {
  if (stuck_op_ != nullptr) stuck_op_->completed = true;
  if (stuck_work_ != nullptr) {
    for (NetProxyOp& net : stuck_work_->net_ops) {
      const ProxyOpSpec& spec = net.spec();
      if (spec.channel == hang_->channel() && spec.is_send == stuck_is_send_ && spec.peer == stuck_peer_) net.Abandon();
    }
  }
  stuck_work_ = nullptr;
  stuck_op_ = nullptr;
  NcclStyleLog(NCCL_LOG_WARN, NCCL_PROFILE, __FILE__, __LINE__,
               "katrace-sim: rank %d channel %d: the injected hang ends (--hang-for); its events stay open",
               config_.rank, hang_->channel());
}

bool ProxyThread::ProgressKernelCh(KernelChOp* op, uint64_t gpu_now_ns) {
  // Start and stop are seen on different passes, as NCCL's drain continues after a start.
  if (!op->started) {
    if (!HooksAllowKernelChStart(&op->work)) return false;
    if (!config_.bench && gpu_now_ns < op->work.gpu.start_ns) return false;
    if (op->work.mask & ncclProfileKernelCh) {
      ncclProfilerEventDescr_v6_t descr;
      std::memset(&descr, 0, sizeof(descr));
      descr.type = ncclProfileKernelCh;
      descr.parentObj = op->work.task_handle;
      descr.kernelCh.channelId = static_cast<uint8_t>(op->work.channel);
      descr.kernelCh.pTimer = op->work.gpu.start_ns;
      issuer_.Start(config_.plugin_context, &op->handle, &descr);
    }
    op->started = true;
    if (op == stuck_op_) StartStuckKernelStep(*op, gpu_now_ns);
    return true;
  }
  if (op->completed) return false;
  if (!HooksAllowKernelChStop(&op->work)) return false;
  if (!config_.bench && gpu_now_ns < op->work.gpu.stop_ns) return false;
  if (op->handle != nullptr) {
    ncclProfilerEventStateArgs_v6_t args;
    std::memset(&args, 0, sizeof(args));
    args.kernelCh.pTimer = op->work.gpu.stop_ns;
    issuer_.Record(ncclProfileKernelCh, op->handle, ncclProfilerKernelChStop, &args);
    issuer_.Stop(ncclProfileKernelCh, op->handle);
  }
  op->completed = true;
  return true;
}

bool ProxyThread::ProgressActive(uint64_t gpu_now_ns) {
  bool progressed = false;
  if (hang_ && hang_->ReleaseDue(EventIssuer::NowNs())) ReleaseHang();
  for (ActiveWork& work : active_) {
    for (KernelChOp& op : work.kernel_chs) {
      if (!Frozen(work, op)) progressed |= ProgressKernelCh(&op, gpu_now_ns);
    }
    for (NetProxyOp& op : work.net_ops) {
      if (op.done() || Frozen(work, op)) continue;
      progressed |= op.Progress(config_.plugin_context, &issuer_, gpu_now_ns, config_.bench);
    }
  }
  return progressed;
}

bool ProxyThread::HooksBusy() const {
  for (const std::unique_ptr<ProxyPollHook>& hook : config_.hooks) {
    if (hook->HasPendingWork()) return true;
  }
  return false;
}

bool ProxyThread::HooksAllowKernelChStart(KernelChWork* work) const {
  for (const std::unique_ptr<ProxyPollHook>& hook : config_.hooks) {
    if (!hook->KernelChStart(work->channel, work->work_counter, &work->gpu.start_ns)) return false;
  }
  return true;
}

bool ProxyThread::HooksAllowKernelChStop(KernelChWork* work) const {
  for (const std::unique_ptr<ProxyPollHook>& hook : config_.hooks) {
    if (!hook->KernelChStop(work->channel, work->work_counter, &work->gpu.stop_ns)) return false;
  }
  return true;
}

void ProxyThread::RetireFinished() {
  size_t retired = 0;
  for (auto it = active_.begin(); it != active_.end();) {
    bool finished =
        std::all_of(it->kernel_chs.begin(), it->kernel_chs.end(),
                    [](const KernelChOp& op) { return op.completed; }) &&
        std::all_of(it->net_ops.begin(), it->net_ops.end(),
                    [](const NetProxyOp& op) { return op.done(); });
    if (finished) {
      it = active_.erase(it);
      ++retired;
    } else {
      ++it;
    }
  }
  if (retired == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  inflight_ -= retired;
  work_retired_.notify_all();
}

void ProxyThread::AppendWork(std::vector<std::unique_ptr<ProxyWork>>* works) {
  void* ctrl = StartProxyCtrl();
  RecordProxyCtrl(ctrl, ncclProfilerProxyCtrlAppend, 0);
  int appended = 0;
  for (std::unique_ptr<ProxyWork>& work : *works) {
    ActiveWork& active = active_.emplace_back();
    active.serial = next_work_serial_++;
    for (const WorkRecord& record : work->works) work_counters_.Add(record);
    for (const KernelChWork& kernel_ch : work->kernel_chs) {
      active.kernel_chs.push_back(KernelChOp{kernel_ch});
      ++appended;
    }
    for (const ProxyOpWork& op_work : work->proxy_ops) {
      active.net_ops.emplace_back(op_work, config_.rank, config_.nccl_quirks, next_op_seed_++);
      active.net_ops.back().Append(config_.plugin_context, &issuer_);
      ++appended;
    }
    // The hang is decided as the work is appended, so its transfers hold from their first step.
    if (hang_) {
      for (KernelChOp& op : active.kernel_chs) {
        if (op.work.channel == hang_->channel() && hang_->StartsStuck(EventIssuer::NowNs())) GetStuck(&active, &op);
      }
    }
  }
  RecordProxyCtrl(ctrl, ncclProfilerProxyCtrlAppendEnd, appended);
  StopProxyCtrl(ctrl);
  works->clear();
}

bool ProxyThread::FetchPostedWork() {
  std::vector<std::unique_ptr<ProxyWork>> taken;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    bool hook_busy = HooksBusy();
    if (active_.empty() && pending_.empty() && !stop_requested_ && !hook_busy) {
      // NCCL records Sleep and Wakeup while holding the op-pool lock; so do we.
      void* ctrl = StartProxyCtrl();
      RecordProxyCtrl(ctrl, ncclProfilerProxyCtrlSleep, 0);
      work_posted_.wait(lock, [&] { return !pending_.empty() || stop_requested_; });
      RecordProxyCtrl(ctrl, ncclProfilerProxyCtrlWakeup, 0);
      StopProxyCtrl(ctrl);
    }
    hook_busy = HooksBusy();
    if (stop_requested_ && pending_.empty() && active_.empty() && !hook_busy) return false;
    taken.swap(pending_);
  }
  if (!taken.empty()) AppendWork(&taken);
  return true;
}

void ProxyThread::SleepUntilNextDeadline(uint64_t gpu_now_ns) {
  uint64_t deadline = UINT64_MAX;
  for (const ActiveWork& work : active_) {
    for (const KernelChOp& op : work.kernel_chs) {
      if (Frozen(work, op)) continue;
      if (!op.started) deadline = std::min(deadline, op.work.gpu.start_ns);
      else if (!op.completed) deadline = std::min(deadline, op.work.gpu.stop_ns);
    }
    for (const NetProxyOp& op : work.net_ops) {
      if (!op.done() && !Frozen(work, op)) deadline = std::min(deadline, op.NextDeadlineNs());
    }
  }
  uint64_t wait_ns = 0;
  if (deadline > gpu_now_ns) {
    wait_ns = deadline - gpu_now_ns;
  } else if (!config_.hooks.empty()) {
    wait_ns = kHeldSleepNs;
  }
  wait_ns = std::clamp<uint64_t>(wait_ns, kMinSleepNs, kMaxSleepNs);
  timespec pause{0, static_cast<long>(wait_ns)};
  nanosleep(&pause, nullptr);
}

void ProxyThread::Run() {
  char name[16];
  std::snprintf(name, sizeof(name), "sim-proxy-%d", config_.rank);
  pthread_setname_np(pthread_self(), name);
  SetLogThreadRank(config_.rank);
  // The default 50 µs timer slack would blur the ~1 µs GPU ticks we wait for.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

  ProxyPollContext poll_context;
  poll_context.rank = config_.rank;
  poll_context.plugin_context = config_.plugin_context;
  poll_context.issuer = &issuer_;
  poll_context.works = &work_counters_;
  poll_context.activation_mask = config_.activation_mask;
  poll_context.bench = config_.bench;

  bool last_idle = false;  // NCCL starts with lastIdle = 0
  int busy_passes = 0;
  while (true) {
    uint64_t gpu_now = config_.clock->NowNs();
    bool idle = !ProgressActive(gpu_now);
    poll_context.gpu_now_ns = gpu_now;
    for (std::unique_ptr<ProxyPollHook>& hook : config_.hooks) {
      if (hook->OnProxyPoll(poll_context)) idle = false;
    }
    RetireFinished();
    if (idle != last_idle) {
      void* ctrl = StartProxyCtrl();
      RecordProxyCtrl(ctrl, idle ? ncclProfilerProxyCtrlIdle : ncclProfilerProxyCtrlActive, 0);
      StopProxyCtrl(ctrl);
    }
    last_idle = idle;
    if (idle || active_.empty() || ++busy_passes == kAppendEveryBusyPasses) {
      busy_passes = 0;
      if (!FetchPostedWork()) break;
    }
    // A hook with pending work (KernelSteps still being written) keeps the proxy polling, at the
    // pace of an idle one rather than spinning.
    if (idle && !config_.bench && (!active_.empty() || HooksBusy())) {
      SleepUntilNextDeadline(gpu_now);
    }
  }
  poll_context.gpu_now_ns = config_.clock->NowNs();
  for (std::unique_ptr<ProxyPollHook>& hook : config_.hooks) hook->OnProxyExit(poll_context);
}

}  // namespace katrace::sim
