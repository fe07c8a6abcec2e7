// The one profiler core behind every ABI version. The adapters (abi_v*.cc) translate their
// descriptors into the v6 layout field by field and call these. Every entry point accepts NULL,
// stale and foreign values, always writes *handle, and never fails NCCL.
// Init and finalize are in session_lifecycle.cc, start, stop and record (the hot path) in
// callbacks.cc; session_state.h lists the core's other files.
#ifndef KATRACE_PLUGIN_PROFILER_H_
#define KATRACE_PLUGIN_PROFILER_H_

#include <stdint.h>

#include "nccl_profiler/v6.h"

namespace katrace {

struct InitArgs {
  uint64_t comm_hash;
  int* mask;  // NCCL's process-global activation mask
  const char* comm_name;
  int nnodes;
  int nranks;
  int rank;
  ncclDebugLogger_t logfn;
  int abi_version;
  int mask_allowed;  // the type bits this ABI version's core understands
};

ncclResult_t CoreInit(void** context, const InitArgs& args);
// Not const: it is ncclProfiler_v6's startEvent itself (abi_v6.cc), with that exact type.
ncclResult_t CoreStart(void* context, void** handle, ncclProfilerEventDescr_v6_t* descr);
ncclResult_t CoreStop(void* handle);
ncclResult_t CoreRecord(void* handle, int state, const ncclProfilerEventStateArgs_v6_t* args);
ncclResult_t CoreFinalize(void* context);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_PROFILER_H_
