// Wrap a plugin's exported function table in the v6 ProfilerApi the driver speaks. v6 is called
// as is; v5 and v4 get NCCL's adapters: descriptors copied field by field (never cast between
// versions, research §8 "2.26.6"), unknown events and states dropped, init arguments reordered.
#ifndef KATRACE_TOOLS_SIM_ABI_ADAPTERS_H_
#define KATRACE_TOOLS_SIM_ABI_ADAPTERS_H_

#include <memory>

#include "nccl_profiler/v4.h"
#include "nccl_profiler/v5.h"
#include "nccl_profiler/v6.h"
#include "tools/sim/profiler_api.h"

namespace katrace::sim {

// The table must outlive the returned object (it lives in the dlopen'ed library).
std::unique_ptr<ProfilerApi> MakeV6Api(const ncclProfiler_v6_t* table);
std::unique_ptr<ProfilerApi> MakeV5Adapter(const ncclProfiler_v5_t* table);
std::unique_ptr<ProfilerApi> MakeV4Adapter(const ncclProfiler_v4_t* table);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_ABI_ADAPTERS_H_
