// The logger handed to the plugin's init: prints NCCL-style lines to stderr,
// "<host>:<pid>:<tid> [<rank>] NCCL WARN|INFO <message>", filtered by NCCL_DEBUG (read once):
// unset or WARN shows warnings, INFO (or TRACE) shows info lines too, VERSION/NONE show nothing.
// Thread safety: callable from any thread; each line is one write(2).
#ifndef KATRACE_TOOLS_SIM_NCCL_LOGGER_H_
#define KATRACE_TOOLS_SIM_NCCL_LOGGER_H_

#include "nccl_profiler/common.h"

namespace katrace::sim {

// Matches ncclDebugLogger_t, so it can be passed to init as is.
void NcclStyleLog(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                  const char* fmt, ...) __attribute__((format(printf, 5, 6)));

// Tags lines logged from the calling thread with a rank, as NCCL tags them with a device.
void SetLogThreadRank(int rank);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_NCCL_LOGGER_H_
