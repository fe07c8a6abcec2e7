// Counting v6 table for the KernelStep drain; see drain_plugin_shim.h.
#include "tools/sim/drain_plugin_shim.h"

#include "nccl_profiler/kernel_step.h"

namespace katrace::sim {
namespace {

thread_local DrainPluginShim* t_active = nullptr;

// The drain never initialises or finalizes a plugin; these only keep the table whole.
ncclResult_t InitUnused(void** context, uint64_t, int*, const char*, int, int, int,
                        ncclDebugLogger_t) {
  if (context != nullptr) *context = nullptr;
  return ncclSuccess;
}
ncclResult_t FinalizeUnused(void*) { return ncclSuccess; }

bool IsDrainReport(const ncclProfilerEventDescr_v6_t* descr) {
  return descr->type == static_cast<uint64_t>(ncclProfileKernelStep) &&
         descr->parentObj == nullptr &&
         descr->kernelStep.isSend == static_cast<ncclProfilerKernelStepIsSend_t>(ncclProfilerKernelStepReport);
}

}  // namespace

const ncclProfiler_v6_t* DrainPluginShim::Table() {
  static const ncclProfiler_v6_t table = {"katrace-sim drain",
                                          InitUnused,
                                          &DrainPluginShim::StartEvent,
                                          &DrainPluginShim::StopEvent,
                                          &DrainPluginShim::RecordEventState,
                                          FinalizeUnused};
  return &table;
}

DrainPluginShim::Scope::Scope(DrainPluginShim* shim, EventIssuer* issuer) : saved_(t_active) {
  shim->issuer_ = issuer;
  t_active = shim;
}

DrainPluginShim::Scope::~Scope() { t_active = saved_; }

ncclResult_t DrainPluginShim::StartEvent(void* context, void** handle,
                                         ncclProfilerEventDescr_v6_t* descr) {
  DrainPluginShim* shim = t_active;
  if (shim == nullptr || shim->issuer_ == nullptr) {
    if (handle != nullptr) *handle = nullptr;
    return ncclSuccess;
  }
  ++shim->num_calls_;
  if (IsDrainReport(descr)) {
    ++shim->num_reports_;
    ncclResult_t result = shim->api_->StartEvent(context, handle, descr);
    if (*handle != nullptr) shim->report_handle_ = *handle;
    return result;
  }
  shim->issuer_->Start(context, handle, descr);
  return ncclSuccess;
}

ncclResult_t DrainPluginShim::StopEvent(void* handle) {
  DrainPluginShim* shim = t_active;
  if (shim == nullptr || shim->issuer_ == nullptr) return ncclSuccess;
  ++shim->num_calls_;
  if (handle != nullptr && handle == shim->report_handle_) {
    shim->report_handle_ = nullptr;
    return shim->api_->StopEvent(handle);
  }
  shim->issuer_->Stop(ncclProfileKernelStep, handle);
  return ncclSuccess;
}

ncclResult_t DrainPluginShim::RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                               ncclProfilerEventStateArgs_v6_t* args) {
  DrainPluginShim* shim = t_active;
  if (shim == nullptr || shim->issuer_ == nullptr) return ncclSuccess;
  ++shim->num_calls_;
  shim->issuer_->Record(ncclProfileKernelStep, handle, state, args);
  return ncclSuccess;
}

}  // namespace katrace::sim
