// The event kinds (the `cat` of X events) a katrace trace holds, and which summary side each
// belongs to: host-side (API calls, enqueue, proxy, net) or GPU-side (kernel channels and steps).
// All of it is read off katrace/event_kinds.h (recorded kinds with their Side, and the derived
// slices), the table the plugin's finalize summary uses too, so the tables agree.
#ifndef KATRACE_TOOLS_COMMON_EVENT_KINDS_H_
#define KATRACE_TOOLS_COMMON_EVENT_KINDS_H_

#include <string>
#include <string_view>
#include <vector>

namespace katrace::tools {

// Counted in the host-side summary: recorded kinds of the host and proxy sides.
bool IsHostKind(std::string_view cat);
// Counted in the GPU-side summary: GPU kinds and the GPU slices derived from them.
bool IsGpuKind(std::string_view cat);
// Recorded and derived kinds, ProxyStepState (in neither summary) included.
bool IsKnownKind(std::string_view cat);
// Slices derived at export (CollGpu, KernelStep halves, ProxyStepState): no record id of their own.
bool IsDerivedKind(std::string_view cat);
// Every known kind: host and proxy kinds, GPU kinds, then the derived ones, each in table order.
const std::vector<std::string>& KnownKinds();

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_EVENT_KINDS_H_
