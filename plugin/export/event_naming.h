// Names shown for events and states: the slice names in the trace and the row names of the
// summary come from here, so both always agree.
#ifndef KATRACE_PLUGIN_EXPORT_EVENT_NAMING_H_
#define KATRACE_PLUGIN_EXPORT_EVENT_NAMING_H_

#include <string_view>

#include "katrace/kind_schema.h"
#include "plugin/export/assembled_event.h"

namespace katrace {
namespace exporting {

// NCCL's state numbers are open-ended ints; unknown ones are "State".
const char* StateName(int32_t state);

// The slice name: the collective's func, "Send"/"Recv", the first ProxyCtrl state, ... The
// returned view points at a literal or an interned string, so its data pointer identifies it.
std::string_view EventName(const AssembledEvent& e);

inline bool IsSend(const AssembledEvent& e) { return (e.flags & kEvSend) != 0; }
inline std::string_view Text(const std::string* s) { return s != nullptr ? std::string_view(*s) : std::string_view(); }

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_EVENT_NAMING_H_
