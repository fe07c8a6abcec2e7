// ncclProfiler_v6: the core's native layout, called as is.
#include "nccl_profiler/v6.h"
#include "plugin/descriptor_translation.h"
#include "plugin/profiler.h"

namespace katrace {
namespace {

constexpr int kV6Bits = 0x7fff | ncclProfileKernelStep;

ncclResult_t InitV6(void** context, uint64_t comm_id, int* mask, const char* comm_name, int nnodes, int nranks,
                    int rank, ncclDebugLogger_t logfn) {
  return CoreInit(context, {comm_id, mask, comm_name, nnodes, nranks, rank, logfn, 6, kV6Bits});
}

// |state| is never read as the enum (see StateAsInt).
ncclResult_t RecordV6(void* handle, ncclProfilerEventState_v6_t state, ncclProfilerEventStateArgs_v6_t* args) {
  return CoreRecord(handle, StateAsInt(state), args);
}

}  // namespace
}  // namespace katrace

// The one exported symbol of this file: NCCL looks it up by name with dlsym.
extern "C" {
__attribute__((visibility("default"))) ncclProfiler_v6_t ncclProfiler_v6 = {
    "katrace", katrace::InitV6, katrace::CoreStart, katrace::CoreStop, katrace::RecordV6, katrace::CoreFinalize,
};
}  // extern "C"
