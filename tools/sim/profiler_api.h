// The plugin as NCCL core sees it: one internal interface that always takes v6 descriptors, with
// an adapter behind it for plugins that only export an older table (research §2.2).
// Thread safety: the interface adds no state; calls are as thread-safe as the plugin itself.
#ifndef KATRACE_TOOLS_SIM_PROFILER_API_H_
#define KATRACE_TOOLS_SIM_PROFILER_API_H_

#include <cstdint>

#include "nccl_profiler/v6.h"

namespace katrace::sim {

enum class AbiVersion { kV4 = 4, kV5 = 5, kV6 = 6 };

// Mirrors NCCL's internal ncclProfiler_t. Return codes other than Init's are ignored by the
// driver, exactly as NCCL ignores them.
class ProfilerApi {
 public:
  virtual ~ProfilerApi() = default;

  virtual const char* name() const = 0;
  virtual AbiVersion version() const = 0;

  virtual ncclResult_t Init(void** context, uint64_t comm_id, int* activation_mask,
                            const char* comm_name, int num_nodes, int num_ranks, int rank,
                            ncclDebugLogger_t logger) = 0;
  virtual ncclResult_t StartEvent(void* context, void** handle,
                                  ncclProfilerEventDescr_v6_t* descr) = 0;
  virtual ncclResult_t StopEvent(void* handle) = 0;
  virtual ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                        ncclProfilerEventStateArgs_v6_t* args) = 0;
  virtual ncclResult_t Finalize(void* context) = 0;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_PROFILER_API_H_
