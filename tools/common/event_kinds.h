// The event kinds (the `cat` of X events) a katrace trace holds, recorded and derived, read off
// katrace/event_kinds.h, the table the plugin's export uses too.
#ifndef KATRACE_TOOLS_COMMON_EVENT_KINDS_H_
#define KATRACE_TOOLS_COMMON_EVENT_KINDS_H_

#include <string>
#include <string_view>
#include <vector>

namespace katrace::tools {

// Recorded and derived kinds, ProxyStepState (in neither summary) included.
bool IsKnownKind(std::string_view cat);
// Slices derived at export (CollGpu, KernelStep halves, ProxyStepState): no record id of their own.
bool IsDerivedKind(std::string_view cat);
// Every known kind: host and proxy kinds, GPU kinds, then the derived ones, each in table order.
const std::vector<std::string>& KnownKinds();

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_EVENT_KINDS_H_
