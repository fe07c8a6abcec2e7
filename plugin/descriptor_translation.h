// Field-by-field copies from the v4 and v5 descriptors and state args into the v6 layout the core
// takes. Never a cast between versions: their layouts differ (v4's type is 8 bits, its Coll has no
// parentGroup), and a cast once broke NCCL's own v2 shim. The members v4 and v5 share have the
// same names, so one template serves both.
#ifndef KATRACE_PLUGIN_DESCRIPTOR_TRANSLATION_H_
#define KATRACE_PLUGIN_DESCRIPTOR_TRANSLATION_H_

#include <string.h>

#include "nccl_profiler/v6.h"

namespace katrace {

// The state of recordEventState as the int NCCL passes. The tables declare it with the
// ncclProfilerEventState_t enum, whose range (0..31 for its enumerators) excludes states that
// really occur (katrace's KernelStep stop is 64, newer cores send states past 31), and reading
// such a value through the enum type is undefined behaviour. So its bytes are copied out and
// only the int is ever looked at.
template <typename Enum>
int StateAsInt(const Enum& state) {
  static_assert(sizeof(Enum) == sizeof(int), "NCCL passes the state as an int");
  int value;
  memcpy(&value, &state, sizeof(value));
  return value;
}

// Copies the header and the payload of the event types v4 and v5 share. Returns false for any
// other type, leaving the payload to the caller.
template <typename Descr>
bool CopySharedEventFields(const Descr& in, ncclProfilerEventDescr_v6_t* d) {
  memset(d, 0, sizeof(*d));
  d->type = in.type;
  d->parentObj = in.parentObj;
  d->rank = in.rank;
  switch (in.type) {
    case ncclProfileColl:
      d->coll.seqNumber = in.coll.seqNumber;
      d->coll.func = in.coll.func;
      d->coll.sendBuff = in.coll.sendBuff;
      d->coll.recvBuff = in.coll.recvBuff;
      d->coll.count = in.coll.count;
      d->coll.root = in.coll.root;
      d->coll.datatype = in.coll.datatype;
      d->coll.nChannels = in.coll.nChannels;
      d->coll.nWarps = in.coll.nWarps;
      d->coll.algo = in.coll.algo;
      d->coll.proto = in.coll.proto;
      return true;
    case ncclProfileP2p:
      d->p2p.func = in.p2p.func;
      d->p2p.buff = in.p2p.buff;
      d->p2p.datatype = in.p2p.datatype;
      d->p2p.count = in.p2p.count;
      d->p2p.peer = in.p2p.peer;
      d->p2p.nChannels = in.p2p.nChannels;
      return true;
    case ncclProfileProxyOp:
      d->proxyOp.pid = in.proxyOp.pid;
      d->proxyOp.channelId = in.proxyOp.channelId;
      d->proxyOp.peer = in.proxyOp.peer;
      d->proxyOp.nSteps = in.proxyOp.nSteps;
      d->proxyOp.chunkSize = in.proxyOp.chunkSize;
      d->proxyOp.isSend = in.proxyOp.isSend;
      return true;
    case ncclProfileProxyStep:
      d->proxyStep.step = in.proxyStep.step;
      return true;
    case ncclProfileKernelCh:
      d->kernelCh.channelId = in.kernelCh.channelId;
      d->kernelCh.pTimer = in.kernelCh.pTimer;
      return true;
    case ncclProfileNetPlugin:
      d->netPlugin.id = in.netPlugin.id;
      d->netPlugin.data = in.netPlugin.data;
      return true;
    case ncclProfileGroup:
    case ncclProfileProxyCtrl:
      return true;  // no payload
    default:
      return false;
  }
}

// The v4 and v5 state args have the v6 members minus the KernelStep one.
template <typename Args>
ncclProfilerEventStateArgs_v6_t TranslateStateArgs(int state, const Args& in) {
  ncclProfilerEventStateArgs_v6_t out;
  memset(&out, 0, sizeof(out));
  switch (state) {
    case ncclProfilerProxyCtrlAppendEnd: out.proxyCtrl.appendedProxyOps = in.proxyCtrl.appendedProxyOps; break;
    case ncclProfilerNetPluginUpdate: out.netPlugin.data = in.netPlugin.data; break;
    case ncclProfilerKernelChStop: out.kernelCh.pTimer = in.kernelCh.pTimer; break;
    default: out.proxyStep.transSize = in.proxyStep.transSize; break;
  }
  return out;
}

}  // namespace katrace

#endif  // KATRACE_PLUGIN_DESCRIPTOR_TRANSLATION_H_
