// KernelStep events through the v6 ABI; see kernel_step_emitter.h.
#include "proxy_drain/kernel_step_emitter.h"

#include <string.h>

namespace katrace {

void* KernelStepEmitter::Start(void* parent, int channel, const StepStart& start) {
  ncclProfilerEventDescr_v6_t descr;
  memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileKernelStep;
  descr.parentObj = parent;
  descr.rank = rank_;
  descr.kernelStep.channelId = uint8_t(channel);
  descr.kernelStep.isSend = start.is_send ? 1 : 0;
  descr.kernelStep.peer = uint8_t(start.peer);  // 0..255: the drain leaves wider peers out
  descr.kernelStep.step = start.step;
  descr.kernelStep.size = start.size_bytes;
  descr.kernelStep.startTs = start.wait_start_ns;
  descr.kernelStep.readyTs = start.ready_ns;
  void* handle = nullptr;
  plugin_->startEvent(context_, &handle, &descr);
  return handle;
}

void KernelStepEmitter::Stop(void* handle, uint64_t stop_ns) {
  if (handle == nullptr) return;  // as NCCL core: no stop or state calls for an untracked event
  ncclProfilerEventStateArgs_v6_t args;
  memset(&args, 0, sizeof(args));
  args.kernelStep.pTimer = stop_ns;
  plugin_->recordEventState(handle, ncclProfilerEventState_v6_t(ncclProfilerKernelStepStop), &args);
  plugin_->stopEvent(handle);
}

DrainCounters KernelStepEmitter::Report(int channel, const DrainCounters& delta) {
  if (!Enabled()) return DrainCounters();
  ncclProfilerEventDescr_v6_t descr;
  memset(&descr, 0, sizeof(descr));
  descr.type = ncclProfileKernelStep;
  descr.parentObj = nullptr;
  descr.rank = rank_;
  descr.kernelStep.channelId =
      uint8_t(channel < kKernelStepChannelMax ? channel : kKernelStepChannelMax);
  descr.kernelStep.isSend = ncclProfilerKernelStepReport;
  const DrainCounters carried = EncodeDrainReport(delta, &descr.kernelStep);
  void* handle = nullptr;
  plugin_->startEvent(context_, &handle, &descr);
  if (handle != nullptr) plugin_->stopEvent(handle);
  return carried;
}

}  // namespace katrace
