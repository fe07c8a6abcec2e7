// ncclProfiler_v5 (NCCL 2.28.x): the descriptor is copied field by field into the v6 layout
// (never cast between versions). A v5 core knows no CE or KernelStep events.
#include <string.h>

#include "nccl_profiler/v5.h"
#include "plugin/profiler.h"

namespace katrace {
namespace {

constexpr int kV5Bits = 0xfff;

ncclResult_t InitV5(void** context, uint64_t comm_id, int* mask, const char* comm_name, int nnodes, int nranks,
                    int rank, ncclDebugLogger_t logfn) {
  return CoreInit(context, {comm_id, mask, comm_name, nnodes, nranks, rank, logfn, 5, kV5Bits});
}

ncclResult_t StartV5(void* context, void** handle, ncclProfilerEventDescr_v5_t* in) {
  if (handle != nullptr) *handle = nullptr;
  if (in == nullptr) return CoreStart(context, handle, nullptr);
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof(d));
  d.type = in->type;
  d.parentObj = in->parentObj;
  d.rank = in->rank;
  switch (in->type) {
    case ncclProfileGroupApi:
      d.groupApi.graphCaptured = in->groupApi.graphCaptured;
      d.groupApi.groupDepth = in->groupApi.groupDepth;
      break;
    case ncclProfileCollApi:
      d.collApi.func = in->collApi.func;
      d.collApi.count = in->collApi.count;
      d.collApi.datatype = in->collApi.datatype;
      d.collApi.root = in->collApi.root;
      d.collApi.stream = in->collApi.stream;
      d.collApi.graphCaptured = in->collApi.graphCaptured;
      break;
    case ncclProfileP2pApi:
      d.p2pApi.func = in->p2pApi.func;
      d.p2pApi.count = in->p2pApi.count;
      d.p2pApi.datatype = in->p2pApi.datatype;
      d.p2pApi.stream = in->p2pApi.stream;
      d.p2pApi.graphCaptured = in->p2pApi.graphCaptured;
      break;
    case ncclProfileKernelLaunch:
      d.kernelLaunch.stream = in->kernelLaunch.stream;
      break;
    case ncclProfileColl:
      d.coll.seqNumber = in->coll.seqNumber;
      d.coll.func = in->coll.func;
      d.coll.sendBuff = in->coll.sendBuff;
      d.coll.recvBuff = in->coll.recvBuff;
      d.coll.count = in->coll.count;
      d.coll.root = in->coll.root;
      d.coll.datatype = in->coll.datatype;
      d.coll.nChannels = in->coll.nChannels;
      d.coll.nWarps = in->coll.nWarps;
      d.coll.algo = in->coll.algo;
      d.coll.proto = in->coll.proto;
      d.coll.parentGroup = in->coll.parentGroup;
      break;
    case ncclProfileP2p:
      d.p2p.func = in->p2p.func;
      d.p2p.buff = in->p2p.buff;
      d.p2p.datatype = in->p2p.datatype;
      d.p2p.count = in->p2p.count;
      d.p2p.peer = in->p2p.peer;
      d.p2p.nChannels = in->p2p.nChannels;
      d.p2p.parentGroup = in->p2p.parentGroup;
      break;
    case ncclProfileProxyOp:
      d.proxyOp.pid = in->proxyOp.pid;
      d.proxyOp.channelId = in->proxyOp.channelId;
      d.proxyOp.peer = in->proxyOp.peer;
      d.proxyOp.nSteps = in->proxyOp.nSteps;
      d.proxyOp.chunkSize = in->proxyOp.chunkSize;
      d.proxyOp.isSend = in->proxyOp.isSend;
      break;
    case ncclProfileProxyStep:
      d.proxyStep.step = in->proxyStep.step;
      break;
    case ncclProfileKernelCh:
      d.kernelCh.channelId = in->kernelCh.channelId;
      d.kernelCh.pTimer = in->kernelCh.pTimer;
      break;
    case ncclProfileNetPlugin:
      d.netPlugin.id = in->netPlugin.id;
      d.netPlugin.data = in->netPlugin.data;
      break;
    case ncclProfileGroup:
    case ncclProfileProxyCtrl:
      break;
    default:
      return ncclSuccess;  // not a v5 event type
  }
  return CoreStart(context, handle, &d);
}

ncclResult_t RecordV5(void* handle, ncclProfilerEventState_v5_t state, ncclProfilerEventStateArgs_v5_t* in) {
  if (state > ncclProfilerGroupEndApiStart) return ncclSuccess;  // v6-only states
  ncclProfilerEventStateArgs_v6_t args;
  memset(&args, 0, sizeof(args));
  if (in != nullptr) {
    switch (state) {
      case ncclProfilerProxyCtrlAppendEnd: args.proxyCtrl.appendedProxyOps = in->proxyCtrl.appendedProxyOps; break;
      case ncclProfilerNetPluginUpdate: args.netPlugin.data = in->netPlugin.data; break;
      case ncclProfilerKernelChStop: args.kernelCh.pTimer = in->kernelCh.pTimer; break;
      default: args.proxyStep.transSize = in->proxyStep.transSize; break;
    }
  }
  return CoreRecord(handle, state, in != nullptr ? &args : nullptr);
}

}  // namespace
}  // namespace katrace

// The one exported symbol of this file: NCCL looks it up by name with dlsym.
extern "C" {
__attribute__((visibility("default"))) ncclProfiler_v5_t ncclProfiler_v5 = {
    "katrace", katrace::InitV5, katrace::StartV5, katrace::CoreStop, katrace::RecordV5, katrace::CoreFinalize,
};
}  // extern "C"
