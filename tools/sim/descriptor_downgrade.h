// What NCCL's v4 and v5 adapters share when they hand a v6 core's event to an older plugin: a
// field-by-field copy of the event types both versions know (same member names in both), and of
// the state args. Each adapter adds what only it does (v5: API events and parentGroup; v4:
// parenting Coll/P2p to the legacy Group).
#ifndef KATRACE_TOOLS_SIM_DESCRIPTOR_DOWNGRADE_H_
#define KATRACE_TOOLS_SIM_DESCRIPTOR_DOWNGRADE_H_

#include <cstring>

#include "nccl_profiler/v6.h"

namespace katrace::sim {

// Returns false for a type the older descriptor does not share; the payload is then left zero.
template <typename Descr>
bool CopySharedDescriptorFields(const ncclProfilerEventDescr_v6_t& in, Descr* out) {
  std::memset(out, 0, sizeof(*out));
  // Only types the older version knows are copied, and each fits v4's 8-bit field.
  out->type = static_cast<decltype(out->type)>(in.type);
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
      return true;
    case ncclProfileP2p:
      out->p2p.func = in.p2p.func;
      out->p2p.buff = in.p2p.buff;
      out->p2p.datatype = in.p2p.datatype;
      out->p2p.count = in.p2p.count;
      out->p2p.peer = in.p2p.peer;
      // NCCL's v4 adapter leaves this uninitialised; a 2.27 core (native v4) sets it.
      out->p2p.nChannels = in.p2p.nChannels;
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

// Copies the args of a state v4 and v5 both know. Returns false for any other state (GroupApi
// 23/24 and the v4 ProxyOp InProgress carry no args and are left to the caller; CE and KernelStep
// states are dropped by both adapters).
template <typename Args>
bool CopySharedStateArgs(int state, const ncclProfilerEventStateArgs_v6_t* in, Args* out) {
  std::memset(out, 0, sizeof(*out));
  switch (state) {
    case ncclProfilerProxyStepSendGPUWait:
    case ncclProfilerProxyStepSendPeerWait_v4:
    case ncclProfilerProxyStepSendWait:
    case ncclProfilerProxyStepRecvWait:
    case ncclProfilerProxyStepRecvFlushWait:
    case ncclProfilerProxyStepRecvGPUWait:
      if (in != nullptr) out->proxyStep.transSize = in->proxyStep.transSize;
      return true;
    case ncclProfilerProxyCtrlIdle:
    case ncclProfilerProxyCtrlActive:
    case ncclProfilerProxyCtrlSleep:
    case ncclProfilerProxyCtrlWakeup:
    case ncclProfilerProxyCtrlAppend:
    case ncclProfilerProxyCtrlAppendEnd:
      if (in != nullptr) out->proxyCtrl.appendedProxyOps = in->proxyCtrl.appendedProxyOps;
      return true;
    case ncclProfilerNetPluginUpdate:
      if (in != nullptr) out->netPlugin.data = in->netPlugin.data;
      return true;
    case ncclProfilerKernelChStop:
      if (in != nullptr) out->kernelCh.pTimer = in->kernelCh.pTimer;
      return true;
    default:
      return false;
  }
}

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_DESCRIPTOR_DOWNGRADE_H_
