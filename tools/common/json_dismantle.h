// Frees a DOM the tools are done with from the innermost containers out. nlohmann's destructor
// of an object or array first moves each member onto a heap stack of its own (so that no nesting
// can overflow the call stack): an allocation and a move per member for each of the two objects
// of every event. Emptied bottom-up, each container it destroys is empty.
#ifndef KATRACE_TOOLS_COMMON_JSON_DISMANTLE_H_
#define KATRACE_TOOLS_COMMON_JSON_DISMANTLE_H_

#include "tools/common/json_fields.h"

namespace katrace::tools {

// An event's args hold scalars (katrace's identity, in process_name, one level more).
constexpr int kEventDismantleDepth = 4;

// Empties |value|'s containers bottom-up, to |depth| levels; what is deeper is left to
// nlohmann's destructor.
void Dismantle(Json* value, int depth);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_JSON_DISMANTLE_H_
