// Kind lists, read off katrace's one kind table (see event_kinds.h).
#include "tools/common/event_kinds.h"

#include "katrace/event_kinds.h"

namespace katrace::tools {

bool IsKnownKind(std::string_view cat) {
  for (const KindInfo& k : kKindInfo) {
    if (cat == k.name) return true;
  }
  return IsDerivedKind(cat);
}

bool IsDerivedKind(std::string_view cat) {
  for (const DerivedKindInfo& d : kDerivedKinds) {
    if (cat == d.name) return true;
  }
  return false;
}

const std::vector<std::string>& KnownKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> all;
    for (const KindInfo& k : kKindInfo) {
      if (k.side != Side::kGpu) all.emplace_back(k.name);
    }
    for (const KindInfo& k : kKindInfo) {
      if (k.side == Side::kGpu) all.emplace_back(k.name);
    }
    for (const DerivedKindInfo& d : kDerivedKinds) all.emplace_back(d.name);
    return all;
  }();
  return kinds;
}

}  // namespace katrace::tools
