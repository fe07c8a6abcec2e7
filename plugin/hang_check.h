// The hang watchdog's wiring into the session (KATRACE_HANG_TIMEOUT): the spool writer's pass asks
// the watchdog (capture/hang_watchdog.h) and, on a hang, has the report built.
#ifndef KATRACE_PLUGIN_HANG_CHECK_H_
#define KATRACE_PLUGIN_HANG_CHECK_H_

#include "plugin/session_state.h"

namespace katrace {
namespace core {

// Writer thread, every pass: on a hang, makes everything captured readable and has the report
// built on a thread of its own (reading a long spool takes a while; the writer must go on
// draining meanwhile). The job goes on whatever the report finds.
void CheckForHang(Session* s);

}  // namespace core
}  // namespace katrace

#endif  // KATRACE_PLUGIN_HANG_CHECK_H_
