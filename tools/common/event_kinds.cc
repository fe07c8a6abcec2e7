// Kind lists (see event_kinds.h).
#include "tools/common/event_kinds.h"

#include <algorithm>

namespace katrace::tools {
namespace {

const char* const kHostKinds[] = {"GroupApi", "CollApi", "P2pApi",    "KernelLaunch", "Group",
                                  "Coll",     "P2p",     "ProxyOp",   "ProxyStep",    "ProxyCtrl",
                                  "NetPlugin", "CeColl", "CeSync",    "CeBatch"};
const char* const kGpuKinds[] = {"KernelCh", "KernelStep", "CollGpu", "KernelStepWait",
                                 "KernelStepTransfer"};

template <size_t N>
bool Contains(const char* const (&list)[N], std::string_view cat) {
  return std::any_of(list, list + N, [cat](const char* k) { return cat == k; });
}

}  // namespace

bool IsHostKind(std::string_view cat) { return Contains(kHostKinds, cat); }
bool IsGpuKind(std::string_view cat) { return Contains(kGpuKinds, cat); }
bool IsKnownKind(std::string_view cat) {
  return IsHostKind(cat) || IsGpuKind(cat) || cat == "ProxyStepState";
}

const std::vector<std::string>& KnownKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> all(std::begin(kHostKinds), std::end(kHostKinds));
    all.insert(all.end(), std::begin(kGpuKinds), std::end(kGpuKinds));
    all.push_back("ProxyStepState");
    return all;
  }();
  return kinds;
}

}  // namespace katrace::tools
