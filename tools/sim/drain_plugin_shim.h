// The v6 function table the KernelStep drain calls (StepDrain takes a plugin's v6 table): it
// forwards every call to the loaded plugin through the proxy thread's EventIssuer, so the drain's
// KernelStep starts, states and stops are counted and timed like every other event the sim
// issues. Drain reports (parentObj NULL, isSend == ncclProfilerKernelStepReport) go to the plugin
// directly and are counted apart, so they do not read as KernelSteps in the report.
//
// Thread safety: the drain calls from the thread that polls it; that thread opens a Scope around
// every drain call, which names the rank's shim and the issuer to count with. stopEvent and
// recordEventState carry no context, hence the per-thread scope.
#ifndef KATRACE_TOOLS_SIM_DRAIN_PLUGIN_SHIM_H_
#define KATRACE_TOOLS_SIM_DRAIN_PLUGIN_SHIM_H_

#include <cstdint>

#include "nccl_profiler/v6.h"
#include "tools/sim/event_issuer.h"
#include "tools/sim/profiler_api.h"

namespace katrace::sim {

class DrainPluginShim {
 public:
  explicit DrainPluginShim(ProfilerApi* api) : api_(api) {}
  DrainPluginShim(const DrainPluginShim&) = delete;
  DrainPluginShim& operator=(const DrainPluginShim&) = delete;

  // One table for every rank; the context the drain passes is the plugin's own.
  static const ncclProfiler_v6_t* Table();

  class Scope {
   public:
    Scope(DrainPluginShim* shim, EventIssuer* issuer);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    DrainPluginShim* saved_;
  };

  // Calls forwarded so far, reports included: a change means the drain did something.
  uint64_t num_calls() const { return num_calls_; }
  uint64_t num_reports() const { return num_reports_; }

 private:
  static ncclResult_t StartEvent(void* context, void** handle, ncclProfilerEventDescr_v6_t* descr);
  static ncclResult_t StopEvent(void* handle);
  static ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                       ncclProfilerEventStateArgs_v6_t* args);

  ProfilerApi* api_;
  EventIssuer* issuer_ = nullptr;  // set by the active Scope
  void* report_handle_ = nullptr;  // a report the plugin gave a handle to, stopped directly
  uint64_t num_calls_ = 0;
  uint64_t num_reports_ = 0;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_DRAIN_PLUGIN_SHIM_H_
