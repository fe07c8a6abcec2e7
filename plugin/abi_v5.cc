// ncclProfiler_v5 (NCCL 2.28.x): the descriptor is copied field by field into the v6 layout.
// A v5 core knows no CE or KernelStep events.
#include "nccl_profiler/v5.h"
#include "plugin/descriptor_translation.h"
#include "plugin/profiler.h"

namespace katrace {
namespace {

constexpr int kV5Bits = 0xfff;

ncclResult_t InitV5(void** context, uint64_t comm_id, int* mask, const char* comm_name, int nnodes, int nranks,
                    int rank, ncclDebugLogger_t logfn) {
  return CoreInit(context, {comm_id, mask, comm_name, nnodes, nranks, rank, logfn, 5, kV5Bits});
}

// The API events v5 added.
bool CopyApiEventFields(const ncclProfilerEventDescr_v5_t& in, ncclProfilerEventDescr_v6_t* d) {
  switch (in.type) {
    case ncclProfileGroupApi:
      d->groupApi.graphCaptured = in.groupApi.graphCaptured;
      d->groupApi.groupDepth = in.groupApi.groupDepth;
      return true;
    case ncclProfileCollApi:
      d->collApi.func = in.collApi.func;
      d->collApi.count = in.collApi.count;
      d->collApi.datatype = in.collApi.datatype;
      d->collApi.root = in.collApi.root;
      d->collApi.stream = in.collApi.stream;
      d->collApi.graphCaptured = in.collApi.graphCaptured;
      return true;
    case ncclProfileP2pApi:
      d->p2pApi.func = in.p2pApi.func;
      d->p2pApi.count = in.p2pApi.count;
      d->p2pApi.datatype = in.p2pApi.datatype;
      d->p2pApi.stream = in.p2pApi.stream;
      d->p2pApi.graphCaptured = in.p2pApi.graphCaptured;
      return true;
    case ncclProfileKernelLaunch:
      d->kernelLaunch.stream = in.kernelLaunch.stream;
      return true;
    default:
      return false;
  }
}

ncclResult_t StartV5(void* context, void** handle, ncclProfilerEventDescr_v5_t* in) {
  if (handle != nullptr) *handle = nullptr;
  if (in == nullptr) return CoreStart(context, handle, nullptr);
  ncclProfilerEventDescr_v6_t d;
  if (!CopySharedEventFields(*in, &d) && !CopyApiEventFields(*in, &d)) return ncclSuccess;  // not a v5 type
  if (in->type == ncclProfileColl) d.coll.parentGroup = in->coll.parentGroup;
  if (in->type == ncclProfileP2p) d.p2p.parentGroup = in->p2p.parentGroup;
  return CoreStart(context, handle, &d);
}

// |raw_state| is never read as the enum (see StateAsInt).
ncclResult_t RecordV5(void* handle, ncclProfilerEventState_v5_t raw_state, ncclProfilerEventStateArgs_v5_t* in) {
  const int state = StateAsInt(raw_state);
  if (state > ncclProfilerGroupEndApiStart) return ncclSuccess;  // v6-only states
  if (in == nullptr) return CoreRecord(handle, state, nullptr);
  ncclProfilerEventStateArgs_v6_t args = TranslateStateArgs(state, *in);
  return CoreRecord(handle, state, &args);
}

}  // namespace
}  // namespace katrace

// The one exported symbol of this file: NCCL looks it up by name with dlsym.
extern "C" {
__attribute__((visibility("default"))) ncclProfiler_v5_t ncclProfiler_v5 = {
    "katrace", katrace::InitV5, katrace::StartV5, katrace::CoreStop, katrace::RecordV5, katrace::CoreFinalize,
};
}  // extern "C"
