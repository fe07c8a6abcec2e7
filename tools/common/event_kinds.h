// The event kinds (the `cat` of X events) katrace writes, and which summary side each belongs to:
// host-side (API calls, enqueue, proxy, net) or GPU-side (kernel channels and steps). The plugin's
// finalize summary uses the same split, so the tables agree.
#ifndef KATRACE_TOOLS_COMMON_EVENT_KINDS_H_
#define KATRACE_TOOLS_COMMON_EVENT_KINDS_H_

#include <string>
#include <string_view>
#include <vector>

namespace katrace::tools {

bool IsHostKind(std::string_view cat);
bool IsGpuKind(std::string_view cat);
// Host, GPU and the derived ProxyStepState.
bool IsKnownKind(std::string_view cat);
// Every known kind, host kinds first, in the order the format lists them.
const std::vector<std::string>& KnownKinds();

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_EVENT_KINDS_H_
