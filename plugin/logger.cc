#include "plugin/logger.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "common/warning.h"

namespace katrace {
namespace {

std::atomic<ncclDebugLogger_t> g_logger{nullptr};
// Whether NCCL shows its logger's warnings: only with NCCL_DEBUG at WARN or more verbose (unset,
// empty, NONE, VERSION or a word NCCL does not know show nothing). Otherwise warnings must still
// reach the user, from the plugin itself.
bool NcclShowsWarnings() {
  const char* v = getenv("NCCL_DEBUG");
  if (v == nullptr) return false;
  for (const char* level : {"WARN", "INFO", "TRACE"}) {
    if (strcasecmp(v, level) == 0) return true;
  }
  return false;
}
const bool g_nccl_shows_warnings = NcclShowsWarnings();

void Emit(ncclDebugLogLevel level, const std::string& message) {
  ncclDebugLogger_t log = g_logger.load(std::memory_order_acquire);
  if (log != nullptr) {
    log(level, NCCL_PROFILE, __FILE__, __LINE__, "katrace: %s", message.c_str());
    if (g_nccl_shows_warnings || level != NCCL_LOG_WARN) return;
  }
  // Without NCCL's logger (a driver that passed none), warnings still reach the user.
  if (level == NCCL_LOG_WARN) fprintf(stderr, "katrace WARN %s\n", message.c_str());
}

// The warnings of the code the plugin shares with the tools (common/warning.h) go where the
// plugin's own go: installed when the .so is loaded, before any export can run.
struct RouteSharedWarnings {
  RouteSharedWarnings() { SetWarningHandler(&LogWarn); }
} g_route_shared_warnings;

}  // namespace

void SetNcclLogger(ncclDebugLogger_t logfn) {
  if (logfn != nullptr) g_logger.store(logfn, std::memory_order_release);
}

void ClearNcclLogger() { g_logger.store(nullptr, std::memory_order_release); }

void LogWarn(const std::string& message) { Emit(NCCL_LOG_WARN, message); }
void LogInfo(const std::string& message) { Emit(NCCL_LOG_INFO, message); }

}  // namespace katrace
