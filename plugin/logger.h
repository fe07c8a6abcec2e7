// Messages go through NCCL's logger (subsystem PROFILE) when NCCL gave us one, else to stderr, so
// users see them where they see NCCL's own. Warnings about a recurring condition are issued once.
#ifndef KATRACE_PLUGIN_LOGGER_H_
#define KATRACE_PLUGIN_LOGGER_H_

#include <atomic>
#include <string>

#include "nccl_profiler/common.h"

namespace katrace {

// The logger NCCL passed to the first init; NCCL's logger lives for the whole process.
void SetNcclLogger(ncclDebugLogger_t logfn);
// Back to stderr, e.g. at process exit when NCCL may already be gone.
void ClearNcclLogger();

void LogWarn(const std::string& message);
void LogInfo(const std::string& message);

// Warns the first time |flag| flips from false to true; later calls are silent.
inline void WarnOnce(std::atomic<bool>* flag, const std::string& message) {
  if (!flag->load(std::memory_order_relaxed) && !flag->exchange(true)) LogWarn(message);
}

}  // namespace katrace

#endif  // KATRACE_PLUGIN_LOGGER_H_
