// The ancestry rule (see ancestry_rule.h).
#include "tools/check/ancestry_rule.h"

namespace katrace::tools {
namespace {

bool IsGpuOrProxyCategory(const std::string& cat) {
  static const char* const kCats[] = {"KernelCh",     "KernelStep",     "KernelStepWait", "KernelStepTransfer",
                                      "CollGpu",      "ProxyOp",        "ProxyStep",      "ProxyStepState",
                                      "ProxyCtrl",    "NetPlugin"};
  for (const char* c : kCats) {
    if (cat == c) return true;
  }
  return false;
}

std::string Describe(const SliceIdentity& s, uint64_t index, uint64_t line, const Diagnostics& diag) {
  std::string who = "event #" + std::to_string(index) + " (" + diag.Position(line) + ", ";
  if (s.node != 0) return who + "id " + std::to_string(s.node) + ")";
  return who + "part of id " + std::to_string(s.owner) + ")";
}

}  // namespace

SliceIdentity IdentifySlice(const std::string& cat, uint64_t id, uint64_t parent, uint64_t coll_ref,
                            uint64_t owner) {
  SliceIdentity s;
  s.gpu_or_proxy = IsGpuOrProxyCategory(cat);
  const bool sub_slice = cat == "ProxyStepState" || cat == "KernelStepWait" || cat == "KernelStepTransfer";
  if (cat == "CollGpu") {
    s.node = coll_ref;
  } else if (owner != 0) {
    s.owner = owner;
  } else if (sub_slice && id == 0) {
    s.owner = parent;  // hand-written traces name a sub-slice's event as its parent
  } else {
    s.node = id;
  }
  return s;
}

void AncestryRule::AddParent(int64_t pid, uint64_t id, uint64_t parent) {
  if (id == 0 || parent == 0 || full_) return;
  if (parent_.size() >= kMaxEvents) {
    full_ = true;
    return;
  }
  parent_.emplace(Key{pid, id}, parent);
}

bool AncestryRule::IsAncestor(int64_t pid, uint64_t start, uint64_t ancestor) const {
  uint64_t at = start;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    auto it = parent_.find(Key{pid, at});
    if (it == parent_.end()) return false;
    at = it->second;
    if (at == ancestor) return true;
  }
  return false;
}

void AncestryRule::CheckEnclosure(int64_t pid, const SliceIdentity& inner, uint64_t inner_index,
                                  uint64_t inner_line, const SliceIdentity& outer, uint64_t outer_index,
                                  uint64_t outer_line, const std::string& track_name, Diagnostics* diag) {
  if (!inner.gpu_or_proxy && !outer.gpu_or_proxy) return;  // host tracks: call nesting
  if (!inner.known() || !outer.known()) return;            // older traces name no owner
  if (full_) {
    if (!said_full_) {
      said_full_ = true;
      diag->Warning("ancestry", 0,
                    "containment-means-ancestry check stopped after " + std::to_string(kMaxEvents) +
                        " GPU and proxy events with parents (memory bound)");
    }
    return;
  }
  bool ok;
  if (outer.node == 0) {
    // A sub-slice encloses only a zero-length sibling of its own event (equal times).
    ok = inner.node == 0 && inner.owner == outer.owner;
  } else {
    // A sub-slice of |outer| itself, or of one of its descendants; an event below |outer|.
    uint64_t self = inner.node != 0 ? inner.node : inner.owner;
    ok = (inner.node == 0 && self == outer.node) || IsAncestor(pid, self, outer.node);
  }
  if (ok) return;
  ++violations_;
  diag->Error("ancestry", inner_line,
              Describe(inner, inner_index, inner_line, *diag) + " lies inside " +
                  Describe(outer, outer_index, outer_line, *diag) +
                  " on track " + track_name +
                  ", which is not its ancestor by parent ids; Perfetto draws it as the parent (containment "
                  "must mean ancestry on GPU and proxy tracks)");
}

}  // namespace katrace::tools
