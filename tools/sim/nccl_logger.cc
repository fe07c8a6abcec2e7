#include "tools/sim/nccl_logger.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace katrace::sim {
namespace {

thread_local int t_log_rank = -1;

int ThresholdFromEnv() {
  const char* value = std::getenv("NCCL_DEBUG");
  // As NCCL: nothing unless asked (the plugin then prints its warnings itself; showing them here
  // too printed each twice).
  if (value == nullptr || value[0] == '\0') return NCCL_LOG_NONE;
  if (strcasecmp(value, "NONE") == 0) return NCCL_LOG_NONE;
  if (strcasecmp(value, "VERSION") == 0) return NCCL_LOG_VERSION;
  if (strcasecmp(value, "WARN") == 0) return NCCL_LOG_WARN;
  if (strcasecmp(value, "INFO") == 0) return NCCL_LOG_INFO;
  if (strcasecmp(value, "TRACE") == 0) return NCCL_LOG_TRACE;
  return NCCL_LOG_NONE;
}

// Level values are not ordered by verbosity (ABORT=4 sits between INFO and TRACE).
bool Shown(ncclDebugLogLevel level, int threshold) {
  switch (level) {
    case NCCL_LOG_WARN:
    case NCCL_LOG_ABORT:
      return threshold >= NCCL_LOG_WARN;
    case NCCL_LOG_INFO:
      return threshold == NCCL_LOG_INFO || threshold == NCCL_LOG_TRACE;
    case NCCL_LOG_TRACE:
      return threshold == NCCL_LOG_TRACE;
    case NCCL_LOG_VERSION:
      return threshold >= NCCL_LOG_VERSION;
    default:
      return false;
  }
}

const char* LevelName(ncclDebugLogLevel level) {
  switch (level) {
    case NCCL_LOG_WARN:
      return "WARN";
    case NCCL_LOG_ABORT:
      return "ABORT";
    case NCCL_LOG_TRACE:
      return "TRACE";
    default:
      return "INFO";
  }
}

}  // namespace

void SetLogThreadRank(int rank) { t_log_rank = rank; }

void NcclStyleLog(ncclDebugLogLevel level, unsigned long flags, const char* file, int line,
                  const char* fmt, ...) {
  (void)flags;
  static const int threshold = ThresholdFromEnv();
  if (!Shown(level, threshold) || fmt == nullptr) return;

  char host[64] = "localhost";
  gethostname(host, sizeof(host) - 1);
  host[sizeof(host) - 1] = '\0';
  if (char* dot = std::strchr(host, '.')) *dot = '\0';

  char text[1024];
  int used = std::snprintf(text, sizeof(text), "%s:%d:%ld [%d] NCCL %s ", host,
                           static_cast<int>(getpid()), static_cast<long>(syscall(SYS_gettid)),
                           t_log_rank, LevelName(level));
  if (used < 0) return;
  va_list args;
  va_start(args, fmt);
  int body = std::vsnprintf(text + used, sizeof(text) - used, fmt, args);
  va_end(args);
  if (body < 0) return;
  size_t length = std::strlen(text);
  if (level == NCCL_LOG_TRACE && file != nullptr && length + 32 < sizeof(text)) {
    length += std::snprintf(text + length, sizeof(text) - length, " (%s:%d)", file, line);
  }
  if (length >= sizeof(text) - 1) length = sizeof(text) - 2;
  text[length++] = '\n';
  ssize_t written = write(STDERR_FILENO, text, length);
  (void)written;
}

}  // namespace katrace::sim
