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
  const KindSchema& s = SchemaOf(e.kind);
  switch (s.naming) {
    case NameRule::kFixed: return s.fixed_name;
    case NameRule::kDirection: return IsSend(e) ? "Send" : "Recv";
    case NameRule::kStepDirection:
      if ((e.flags & kEvDirectionKnown) == 0) return "Step";
      return IsSend(e) ? "SendStep" : "RecvStep";
    case NameRule::kFirstState: return e.nstates > 0 ? StateName(e.state_id[0]) : KindNameView(e.kind);
    case NameRule::kFunc: break;
  }
  return e.func != nullptr ? std::string_view(*e.func) : KindNameView(e.kind);
}

}  // namespace exporting
}  // namespace katrace
