// Kind lists, read off katrace's one kind table (see event_kinds.h).
#include "tools/common/event_kinds.h"

#include "katrace/event_kinds.h"

namespace katrace::tools {
namespace {

// The side a trace category is drawn on, and whether the summary tables count it.
struct Category {
  Side side;
  bool summarized;
};

bool Lookup(std::string_view cat, Category* out) {
  for (const KindInfo& k : kKindInfo) {
    if (cat == k.name) return *out = {k.side, true}, true;
  }
  for (const DerivedKindInfo& d : kDerivedKinds) {
    if (cat == d.name) return *out = {d.side, d.summarized}, true;
  }
  return false;
}

}  // namespace

bool IsHostKind(std::string_view cat) {
  Category c;
  return Lookup(cat, &c) && c.summarized && c.side != Side::kGpu;
}

bool IsGpuKind(std::string_view cat) {
  Category c;
  return Lookup(cat, &c) && c.summarized && c.side == Side::kGpu;
}

bool IsKnownKind(std::string_view cat) {
  Category c;
  return Lookup(cat, &c);
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
