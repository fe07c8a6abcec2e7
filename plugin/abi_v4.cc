// ncclProfiler_v4 (NCCL 2.27.x): 8-bit type, no API events, Coll/P2p parented by the legacy
// Group event, commHash as init's fourth argument. Copied field by field into the v6 layout.
#include "nccl_profiler/v4.h"
#include "plugin/descriptor_translation.h"
#include "plugin/profiler.h"

namespace katrace {
namespace {

constexpr int kV4Bits = 0xff;

ncclResult_t InitV4(void** context, int* mask, const char* comm_name, uint64_t comm_hash, int nnodes, int nranks,
                    int rank, ncclDebugLogger_t logfn) {
  return CoreInit(context, {comm_hash, mask, comm_name, nnodes, nranks, rank, logfn, 4, kV4Bits});
}

ncclResult_t StartV4(void* context, void** handle, ncclProfilerEventDescr_v4_t* in) {
  if (handle != nullptr) *handle = nullptr;
  if (in == nullptr) return CoreStart(context, handle, nullptr);
  ncclProfilerEventDescr_v6_t d;
  if (!CopySharedEventFields(*in, &d)) return ncclSuccess;  // not a v4 type
  return CoreStart(context, handle, &d);
}

// |raw_state| is never read as the enum (see StateAsInt).
ncclResult_t RecordV4(void* handle, ncclProfilerEventState_v4_t raw_state, ncclProfilerEventStateArgs_v4_t* in) {
  const int state = StateAsInt(raw_state);
  if (state > ncclProfilerKernelChStop) return ncclSuccess;  // v5+ states
  if (in == nullptr) return CoreRecord(handle, state, nullptr);
  ncclProfilerEventStateArgs_v6_t args = TranslateStateArgs(state, *in);
  return CoreRecord(handle, state, &args);
}

}  // namespace
}  // namespace katrace

// The one exported symbol of this file: NCCL looks it up by name with dlsym.
extern "C" {
__attribute__((visibility("default"))) ncclProfiler_v4_t ncclProfiler_v4 = {
    "katrace", katrace::InitV4, katrace::StartV4, katrace::CoreStop, katrace::RecordV4, katrace::CoreFinalize,
};
}  // extern "C"
