// Kind indices of the sim's call counters (see event_mask.h).
#include "tools/sim/event_mask.h"

namespace katrace::sim {

int EventKindIndex(uint64_t type) {
  Kind kind;
  return KindFromType(type, &kind) ? static_cast<int>(kind) : kOtherKind;
}

const char* EventKindName(int kind_index) {
  if (kind_index >= 0 && kind_index < kKindCount) return kKindInfo[kind_index].name;
  return "Other";
}

}  // namespace katrace::sim
