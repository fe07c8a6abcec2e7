// NCCL's v4 adapter: no API events (GroupApi, CollApi, P2pApi, KernelLaunch return without
// writing the handle, as NCCL's adapter does), no v5+ states, Coll/P2p parented to the legacy
// Group through |parentGroup|, and v4's init argument order (commHash fourth).
#include <cstring>

#include "tools/sim/abi_adapters.h"

namespace katrace::sim {
namespace {

bool CopyDescriptor(const ncclProfilerEventDescr_v6_t& in, ncclProfilerEventDescr_v4_t* out) {
  // Only types that exist in v4 reach here, and each fits the 8-bit field.
  out->type = static_cast<uint8_t>(in.type);
  out->parentObj = in.parentObj;
  out->rank = in.rank;
  switch (in.type) {
    case ncclProfileGroup:
    case ncclProfileProxyCtrl:
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
      out->parentObj = in.coll.parentGroup;
      return true;
    case ncclProfileP2p:
      out->p2p.func = in.p2p.func;
      out->p2p.buff = in.p2p.buff;
      out->p2p.count = in.p2p.count;
      out->p2p.datatype = in.p2p.datatype;
      out->p2p.peer = in.p2p.peer;
      // NCCL's adapter leaves this field uninitialised; a 2.27 core (native v4) sets it.
      out->p2p.nChannels = in.p2p.nChannels;
      out->parentObj = in.p2p.parentGroup;
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

class V4Adapter final : public ProfilerApi {
 public:
  explicit V4Adapter(const ncclProfiler_v4_t* table) : table_(table) {}

  const char* name() const override { return table_->name; }
  AbiVersion version() const override { return AbiVersion::kV4; }

  ncclResult_t Init(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name,
                    int num_nodes, int num_ranks, int rank, ncclDebugLogger_t logger) override {
    return table_->init(context, activation_mask, comm_name, comm_id, num_nodes, num_ranks, rank,
                        logger);
  }

  ncclResult_t StartEvent(void* context, void** handle,
                          ncclProfilerEventDescr_v6_t* descr) override {
    ncclProfilerEventDescr_v4_t descr_v4;
    std::memset(&descr_v4, 0, sizeof(descr_v4));
    if (!CopyDescriptor(*descr, &descr_v4)) return ncclSuccess;
    return table_->startEvent(context, handle, &descr_v4);
  }

  ncclResult_t StopEvent(void* handle) override { return table_->stopEvent(handle); }

  ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                ncclProfilerEventStateArgs_v6_t* args) override {
    ncclProfilerEventStateArgs_v4_t args_v4;
    std::memset(&args_v4, 0, sizeof(args_v4));
    switch (static_cast<int>(state)) {
      case ncclProfilerProxyOpInProgress_v4:
        break;
      case ncclProfilerProxyStepSendGPUWait:
      case ncclProfilerProxyStepSendPeerWait_v4:
      case ncclProfilerProxyStepSendWait:
      case ncclProfilerProxyStepRecvWait:
      case ncclProfilerProxyStepRecvFlushWait:
      case ncclProfilerProxyStepRecvGPUWait:
        if (args != nullptr) args_v4.proxyStep.transSize = args->proxyStep.transSize;
        break;
      case ncclProfilerNetPluginUpdate:
        if (args != nullptr) args_v4.netPlugin.data = args->netPlugin.data;
        break;
      case ncclProfilerKernelChStop:
        if (args != nullptr) args_v4.kernelCh.pTimer = args->kernelCh.pTimer;
        break;
      case ncclProfilerProxyCtrlIdle:
      case ncclProfilerProxyCtrlActive:
      case ncclProfilerProxyCtrlSleep:
      case ncclProfilerProxyCtrlWakeup:
      case ncclProfilerProxyCtrlAppend:
      case ncclProfilerProxyCtrlAppendEnd:
        if (args != nullptr) args_v4.proxyCtrl.appendedProxyOps = args->proxyCtrl.appendedProxyOps;
        break;
      default:  // GroupApi states 23/24, CE states, the KernelStep stop
        return ncclSuccess;
    }
    return table_->recordEventState(handle, state, &args_v4);
  }

  ncclResult_t Finalize(void* context) override { return table_->finalize(context); }

 private:
  const ncclProfiler_v4_t* table_;
};

}  // namespace

std::unique_ptr<ProfilerApi> MakeV4Adapter(const ncclProfiler_v4_t* table) {
  return std::make_unique<V4Adapter>(table);
}

}  // namespace katrace::sim
