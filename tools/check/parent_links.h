// Joins events to their parents by record id: ids unique per process, every `parent` (and a
// CollGpu's `coll`) names an event in the file, and katrace's GPU invariant: each KernelCh,
// KernelStep and CollGpu lies within its Coll/P2p's GPU extent (args gpu_start/gpu_end). The
// plugin writes children before their parent, so the join goes through an ExternalSorter.
#ifndef KATRACE_TOOLS_CHECK_PARENT_LINKS_H_
#define KATRACE_TOOLS_CHECK_PARENT_LINKS_H_

#include <cstdint>
#include <string>

#include "tools/check/diagnostics.h"
#include "tools/common/external_sorter.h"

namespace katrace::tools {

class ParentLinks {
 public:
  ParentLinks(size_t sort_memory_bytes, int64_t slack_ns);
  // An X event with args.id; |kind| is its cat, |unfinished| if incomplete or abandoned.
  void AddEvent(int64_t pid, uint64_t id, const std::string& kind, bool has_gpu_extent,
                int64_t gpu_start_ns, int64_t gpu_end_ns, bool unfinished, uint64_t index,
                uint64_t line);
  // A reference from an X event (kind |kind|, span [start, end]) to |target| on the same pid;
  // |via_coll_arg| for a CollGpu's args.coll rather than args.parent.
  void AddReference(int64_t pid, uint64_t target, const std::string& kind, int64_t start_ns,
                    int64_t end_ns, bool unfinished, bool via_coll_arg, uint64_t index,
                    uint64_t line);
  // |missing_parent_is_error|: false for merged traces, where a time or kind selection may
  // legitimately drop a parent.
  void Check(bool missing_parent_is_error, Diagnostics* diag);

 private:
  struct Record {
    int64_t pid;
    uint64_t id;
    uint32_t role;  // 0 the event itself, 1 a reference to it
    uint32_t kind;  // kKindNames index
    uint32_t flags;
    uint32_t pad;
    int64_t a_ns;  // event: gpu_start; reference: referrer start
    int64_t b_ns;  // event: gpu_end; reference: referrer end
    uint64_t index;
    uint64_t line;
  };
  struct Less {
    bool operator()(const Record& a, const Record& b) const;
  };
  ExternalSorter<Record, Less> sorter_;
  int64_t slack_ns_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_CHECK_PARENT_LINKS_H_
