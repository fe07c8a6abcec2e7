// Where warnings of code shared by the plugin and the tools go (today the trace output's
// fallbacks and failures, plugin/export/output_sink.h). In the plugin they must reach NCCL's log
// like its other warnings, so plugin/logger.cc installs its LogWarn as the handler when the .so
// is loaded; katrace-export and the test binaries that link the export stage without the
// plugin's logger print them on stderr, in the line LogWarn writes when NCCL gave it no logger.
// That keeps the export stage free of NCCL's logger glue.
#ifndef KATRACE_COMMON_WARNING_H_
#define KATRACE_COMMON_WARNING_H_

#include <stdio.h>

#include <atomic>
#include <string>

namespace katrace {

using WarningHandler = void (*)(const std::string& message);

namespace warning_detail {
inline std::atomic<WarningHandler>& Handler() {
  static std::atomic<WarningHandler> handler{nullptr};
  return handler;
}
}  // namespace warning_detail

// Installed once, before any warning can be issued (a static initializer); nullptr: stderr.
inline void SetWarningHandler(WarningHandler handler) {
  warning_detail::Handler().store(handler, std::memory_order_release);
}

inline void Warn(const std::string& message) {
  WarningHandler handler = warning_detail::Handler().load(std::memory_order_acquire);
  if (handler != nullptr) {
    handler(message);
  } else {
    fprintf(stderr, "katrace WARN %s\n", message.c_str());
  }
}

}  // namespace katrace

#endif  // KATRACE_COMMON_WARNING_H_
