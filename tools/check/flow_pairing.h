// Pairs flow events the way Perfetto pairs v1 flows: by (cat, name, id). Each flow needs exactly
// one start (s) and one end (f), and the end may not come before the start, or Perfetto drops the
// arrow or joins the wrong slices. Records go through an ExternalSorter (bounded memory).
#ifndef KATRACE_TOOLS_CHECK_FLOW_PAIRING_H_
#define KATRACE_TOOLS_CHECK_FLOW_PAIRING_H_

#include <cstdint>
#include <string>

#include "tools/check/diagnostics.h"
#include "tools/common/external_sorter.h"

namespace katrace::tools {

class FlowPairing {
 public:
  explicit FlowPairing(size_t sort_memory_bytes);
  // |numeric_id| is shown in messages (the id when it is an integer, else -1).
  void Add(uint64_t key, char phase, int64_t ts_ns, int64_t numeric_id, uint64_t index,
           uint64_t line);
  void Check(Diagnostics* diag);

 private:
  struct Record {
    uint64_t key;
    int64_t ts_ns;
    int64_t numeric_id;
    uint64_t index;
    uint64_t line;
    uint64_t phase;  // 's', 't' or 'f'
  };
  struct Less {
    bool operator()(const Record& a, const Record& b) const;
  };
  ExternalSorter<Record, Less> sorter_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_CHECK_FLOW_PAIRING_H_
