// ncclProfiler_v4 (NCCL 2.27.x): 8-bit type, no API events, Coll/P2p parented by the legacy
// Group event, commHash as init's fourth argument. Copied field by field into the v6 layout.
#include <string.h>

#include "nccl_profiler/v4.h"
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
  memset(&d, 0, sizeof(d));
  d.type = in->type;
  d.parentObj = in->parentObj;
  d.rank = in->rank;
  switch (in->type) {
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
      break;
    case ncclProfileP2p:
      d.p2p.func = in->p2p.func;
      d.p2p.buff = in->p2p.buff;
      d.p2p.datatype = in->p2p.datatype;
      d.p2p.count = in->p2p.count;
      d.p2p.peer = in->p2p.peer;
      d.p2p.nChannels = in->p2p.nChannels;
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
      return ncclSuccess;  // not a v4 event type
  }
  return CoreStart(context, handle, &d);
}

ncclResult_t RecordV4(void* handle, ncclProfilerEventState_v4_t state, ncclProfilerEventStateArgs_v4_t* in) {
  if (state > ncclProfilerKernelChStop) return ncclSuccess;  // v5+ states
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
__attribute__((visibility("default"))) ncclProfiler_v4_t ncclProfiler_v4 = {
    "katrace", katrace::InitV4, katrace::StartV4, katrace::CoreStop, katrace::RecordV4, katrace::CoreFinalize,
};
}  // extern "C"
