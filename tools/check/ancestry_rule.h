// "Containment means ancestry": on GPU and proxy tracks a slice that encloses another must be one
// of its ancestors by the record ids (args.id and args.parent, followed up the chain; a CollGpu
// stands for its Coll, args.coll; a sub-slice, a ProxyStepState or a KernelStep half, belongs to
// the event it names). Perfetto draws containment as parenthood, so any other enclosure puts an
// unrelated slice under another in the picture. Host tracks are left out: there containment is
// call nesting on the thread, which the ids need not follow.
//
// Memory: one (pid, id) -> parent entry per GPU or proxy event that has a parent (the chain from
// a GPU or proxy slice up to any GPU or proxy enclosure runs through such events only; a Coll is
// reached as the last link by its id). Beyond kMaxEvents the rule stops and says so.
#ifndef KATRACE_TOOLS_CHECK_ANCESTRY_RULE_H_
#define KATRACE_TOOLS_CHECK_ANCESTRY_RULE_H_

#include <cstdint>
#include <string>
#include <unordered_map>

#include "tools/check/diagnostics.h"

namespace katrace::tools {

// Who a slice is for this rule: its own record id, or (a sub-slice) the event it belongs to.
struct SliceIdentity {
  uint64_t node = 0;   // record id (a CollGpu: its Coll's); 0 for a sub-slice or unknown
  uint64_t owner = 0;  // a sub-slice's event id; 0 otherwise
  bool gpu_or_proxy = false;
  bool known() const { return node != 0 || owner != 0; }
};

// The identity of a slice of category |cat| from its args (0 = absent).
SliceIdentity IdentifySlice(const std::string& cat, uint64_t id, uint64_t parent, uint64_t coll_ref,
                            uint64_t owner);

class AncestryRule {
 public:
  static constexpr size_t kMaxEvents = size_t{1} << 24;

  // A GPU or proxy event |id| of process |pid| whose parent is |parent|.
  void AddParent(int64_t pid, uint64_t id, uint64_t parent);
  // |inner| lies inside |outer| on one track of |pid|; reports it unless |outer| is an ancestor.
  void CheckEnclosure(int64_t pid, const SliceIdentity& inner, uint64_t inner_index, uint64_t inner_line,
                      const SliceIdentity& outer, uint64_t outer_index, uint64_t outer_line,
                      const std::string& track_name, Diagnostics* diag);
  uint64_t violations() const { return violations_; }

 private:
  static constexpr int kMaxDepth = 16;
  struct Key {
    int64_t pid;
    uint64_t id;
    bool operator==(const Key& o) const { return pid == o.pid && id == o.id; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t x = (k.id ^ (static_cast<uint64_t>(k.pid) * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
      return static_cast<size_t>(x ^ (x >> 29));
    }
  };
  bool IsAncestor(int64_t pid, uint64_t start, uint64_t ancestor) const;

  std::unordered_map<Key, uint64_t, KeyHash> parent_;
  bool full_ = false;
  bool said_full_ = false;
  uint64_t violations_ = 0;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_CHECK_ANCESTRY_RULE_H_
