// NCCL's v5 adapter (2.29+ core driving a v5-only plugin): copy each v5 field by name, drop the
// copy-engine events (and katrace's KernelStep, which v5 does not know) with a NULL handle, drop
// their states, and clear their bits from the shared mask after init.
#include <cstring>

#include "tools/sim/abi_adapters.h"

namespace katrace::sim {
namespace {

constexpr int kBitsUnknownToV5 =
    ncclProfileCeColl | ncclProfileCeSync | ncclProfileCeBatch | ncclProfileKernelStep;

// Returns false when v5 has no such event; the caller then returns without calling the plugin.
bool CopyDescriptor(const ncclProfilerEventDescr_v6_t& in, ncclProfilerEventDescr_v5_t* out) {
  out->type = in.type;
  out->parentObj = in.parentObj;
  out->rank = in.rank;
  switch (in.type) {
    case ncclProfileGroup:
    case ncclProfileProxyCtrl:
      return true;
    case ncclProfileGroupApi:
      out->groupApi.graphCaptured = in.groupApi.graphCaptured;
      out->groupApi.groupDepth = in.groupApi.groupDepth;
      return true;
    case ncclProfileCollApi:
      out->collApi.func = in.collApi.func;
      out->collApi.count = in.collApi.count;
      out->collApi.datatype = in.collApi.datatype;
      out->collApi.root = in.collApi.root;
      out->collApi.stream = in.collApi.stream;
      out->collApi.graphCaptured = in.collApi.graphCaptured;
      return true;
    case ncclProfileP2pApi:
      out->p2pApi.func = in.p2pApi.func;
      out->p2pApi.count = in.p2pApi.count;
      out->p2pApi.datatype = in.p2pApi.datatype;
      out->p2pApi.stream = in.p2pApi.stream;
      out->p2pApi.graphCaptured = in.p2pApi.graphCaptured;
      return true;
    case ncclProfileKernelLaunch:
      out->kernelLaunch.stream = in.kernelLaunch.stream;
      return true;
    case ncclProfileColl:
      out->coll.seqNumber = in.coll.seqNumber;
      out->coll.func = in.coll.func;
      out->coll.sendBuff = in.coll.sendBuff;
      out->coll.recvBuff = in.coll.recvBuff;
      out->coll.count = in.coll.count;
      out->coll.root = in.coll.root;
      out->coll.datatype = in.coll.datatype;
      out->coll.nChannels = in.coll.nChannels;
      out->coll.nWarps = in.coll.nWarps;
      out->coll.algo = in.coll.algo;
      out->coll.proto = in.coll.proto;
      out->coll.parentGroup = in.coll.parentGroup;
      return true;
    case ncclProfileP2p:
      out->p2p.func = in.p2p.func;
      out->p2p.buff = in.p2p.buff;
      out->p2p.datatype = in.p2p.datatype;
      out->p2p.count = in.p2p.count;
      out->p2p.peer = in.p2p.peer;
      out->p2p.nChannels = in.p2p.nChannels;
      out->p2p.parentGroup = in.p2p.parentGroup;
      return true;
    case ncclProfileProxyOp:
      out->proxyOp.pid = in.proxyOp.pid;
      out->proxyOp.channelId = in.proxyOp.channelId;
      out->proxyOp.peer = in.proxyOp.peer;
      out->proxyOp.nSteps = in.proxyOp.nSteps;
      out->proxyOp.chunkSize = in.proxyOp.chunkSize;
      out->proxyOp.isSend = in.proxyOp.isSend;
      return true;
    case ncclProfileProxyStep:
      out->proxyStep.step = in.proxyStep.step;
      return true;
    case ncclProfileKernelCh:
      out->kernelCh.channelId = in.kernelCh.channelId;
      out->kernelCh.pTimer = in.kernelCh.pTimer;
      return true;
    case ncclProfileNetPlugin:
      out->netPlugin.id = in.netPlugin.id;
      out->netPlugin.data = in.netPlugin.data;
      return true;
    default:
      return false;
  }
}

class V5Adapter final : public ProfilerApi {
 public:
  explicit V5Adapter(const ncclProfiler_v5_t* table) : table_(table) {}

  const char* name() const override { return table_->name; }
  AbiVersion version() const override { return AbiVersion::kV5; }

  ncclResult_t Init(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name,
                    int num_nodes, int num_ranks, int rank, ncclDebugLogger_t logger) override {
    ncclResult_t result = table_->init(context, comm_id, activation_mask, comm_name, num_nodes,
                                       num_ranks, rank, logger);
    if (result != ncclSuccess) return result;
    // Atomic because other ranks may already be loading the mask on their application threads.
    if (activation_mask != nullptr) {
      __atomic_fetch_and(activation_mask, ~kBitsUnknownToV5, __ATOMIC_RELAXED);
    }
    return ncclSuccess;
  }

  ncclResult_t StartEvent(void* context, void** handle,
                          ncclProfilerEventDescr_v6_t* descr) override {
    if (descr->type & kBitsUnknownToV5) {
      *handle = nullptr;
      return ncclSuccess;
    }
    ncclProfilerEventDescr_v5_t descr_v5;
    std::memset(&descr_v5, 0, sizeof(descr_v5));
    // NCCL's adapter returns without touching *handle for a type it does not know.
    if (!CopyDescriptor(*descr, &descr_v5)) return ncclSuccess;
    return table_->startEvent(context, handle, &descr_v5);
  }

  ncclResult_t StopEvent(void* handle) override { return table_->stopEvent(handle); }

  ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                ncclProfilerEventStateArgs_v6_t* args) override {
    ncclProfilerEventStateArgs_v5_t args_v5;
    std::memset(&args_v5, 0, sizeof(args_v5));
    // NCCL hands the plugin its local copy even when the core passed NULL (GroupApi states).
    switch (static_cast<int>(state)) {
      case ncclProfilerProxyStepSendGPUWait:
      case ncclProfilerProxyStepSendPeerWait_v4:
      case ncclProfilerProxyStepSendWait:
      case ncclProfilerProxyStepRecvWait:
      case ncclProfilerProxyStepRecvFlushWait:
      case ncclProfilerProxyStepRecvGPUWait:
        if (args != nullptr) args_v5.proxyStep.transSize = args->proxyStep.transSize;
        break;
      case ncclProfilerProxyCtrlIdle:
      case ncclProfilerProxyCtrlActive:
      case ncclProfilerProxyCtrlSleep:
      case ncclProfilerProxyCtrlWakeup:
      case ncclProfilerProxyCtrlAppend:
      case ncclProfilerProxyCtrlAppendEnd:
        if (args != nullptr) args_v5.proxyCtrl.appendedProxyOps = args->proxyCtrl.appendedProxyOps;
        break;
      case ncclProfilerNetPluginUpdate:
        if (args != nullptr) args_v5.netPlugin.data = args->netPlugin.data;
        break;
      case ncclProfilerKernelChStop:
        if (args != nullptr) args_v5.kernelCh.pTimer = args->kernelCh.pTimer;
        break;
      case ncclProfilerProxyOpInProgress_v4:
      case ncclProfilerGroupStartApiStop:
      case ncclProfilerGroupEndApiStart:
        break;
      default:  // CE states 25-30, the KernelStep stop, anything newer
        return ncclSuccess;
    }
    return table_->recordEventState(handle, state, &args_v5);
  }

  ncclResult_t Finalize(void* context) override { return table_->finalize(context); }

 private:
  const ncclProfiler_v5_t* table_;
};

}  // namespace

std::unique_ptr<ProfilerApi> MakeV5Adapter(const ncclProfiler_v5_t* table) {
  return std::make_unique<V5Adapter>(table);
}

}  // namespace katrace::sim
