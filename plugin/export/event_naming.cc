#include "plugin/export/event_naming.h"

namespace katrace {
namespace exporting {

const char* StateName(int32_t state) {
  switch (state) {
    case ncclProfilerProxyStepSendGPUWait: return "SendGpuWait";
    case ncclProfilerProxyStepSendPeerWait_v4: return "SendPeerWait";
    case ncclProfilerProxyStepSendWait: return "SendWait";
    case ncclProfilerProxyStepRecvWait: return "RecvWait";
    case ncclProfilerProxyStepRecvFlushWait: return "RecvFlushWait";
    case ncclProfilerProxyStepRecvGPUWait: return "RecvGpuWait";
    case ncclProfilerProxyCtrlIdle: return "Idle";
    case ncclProfilerProxyCtrlActive: return "Active";
    case ncclProfilerProxyCtrlSleep: return "Sleep";
    case ncclProfilerProxyCtrlWakeup: return "Wakeup";
    case ncclProfilerProxyCtrlAppend: return "Append";
    case ncclProfilerProxyCtrlAppendEnd: return "AppendEnd";
    default: return "State";
  }
}

std::string_view EventName(const AssembledEvent& e) {
  switch (e.kind) {
    case Kind::kGroupApi:
    case Kind::kGroup: return "Group";
    case Kind::kKernelLaunch: return "KernelLaunch";
    case Kind::kProxyOp: return IsSend(e) ? "Send" : "Recv";
    case Kind::kProxyStep:
      if ((e.flags & kEvDirectionKnown) == 0) return "Step";
      return IsSend(e) ? "SendStep" : "RecvStep";
    case Kind::kProxyCtrl: return e.nstates > 0 ? StateName(e.state_id[0]) : "ProxyCtrl";
    case Kind::kNetPlugin: return "NetPlugin";
    case Kind::kKernelStep: return IsSend(e) ? "Send" : "Recv";
    case Kind::kCeSync: return "CeSync";
    case Kind::kCeBatch: return "CeBatch";
    default: return e.func != nullptr ? std::string_view(*e.func) : std::string_view(KindName(e.kind));
  }
}

}  // namespace exporting
}  // namespace katrace
