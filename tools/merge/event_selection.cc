// Event selection for katrace-merge (see event_selection.h).
#include "tools/merge/event_selection.h"

#include <algorithm>
#include <iterator>

namespace katrace::tools {

bool EventSelection::InWindow(int64_t start_ns, int64_t end_ns) const {
  if (options_.from_ns && end_ns < *options_.from_ns) return false;
  if (options_.to_ns && start_ns > *options_.to_ns) return false;
  return true;
}

bool EventSelection::Keep(char ph, const std::string& cat, const std::string& name,
                          int64_t start_ns, int64_t end_ns) const {
  switch (ph) {
    case 'M': return true;
    case 'X':
      // A P2p's GPU extent is drawn as CollGpu too (named as its P2p, by direction): it goes
      // with its P2p, so that p2p keeps all of a P2p and coll nothing of it.
      if (cat == "CollGpu" && (name == "Send" || name == "Recv")) {
        return KeepsKind("P2p") && InWindow(start_ns, end_ns);
      }
      return KeepsKind(cat) && InWindow(start_ns, end_ns);
    case 's': case 't': case 'f': return KeepsKind("flow") && InWindow(start_ns, end_ns);
    case 'C': return KeepsKind("counter") && InWindow(start_ns, end_ns);
    case 'i': case 'I': return KeepsKind("instant") && InWindow(start_ns, end_ns);
    default: return !options_.kinds && InWindow(start_ns, end_ns);
  }
}

void FlowWindow::Seal() {
  std::sort(starts_.begin(), starts_.end());
  std::sort(ends_.begin(), ends_.end());
  both_.clear();
  std::set_intersection(starts_.begin(), starts_.end(), ends_.begin(), ends_.end(),
                        std::back_inserter(both_));
  starts_ = std::vector<uint64_t>();
  ends_ = std::vector<uint64_t>();
}

bool FlowWindow::Contains(uint64_t key) const {
  return std::binary_search(both_.begin(), both_.end(), key);
}

void FlowWindow::Clear() {
  starts_.clear();
  ends_.clear();
  both_.clear();
}

}  // namespace katrace::tools
