// katrace-check for one file: streams the events through the per-event rules and the metadata
// bookkeeping, feeds the cross-event checks (nesting, flows, parents), then runs them.
#ifndef KATRACE_TOOLS_CHECK_TRACE_CHECKER_H_
#define KATRACE_TOOLS_CHECK_TRACE_CHECKER_H_

#include <cstdint>
#include <cstdio>
#include <string>

namespace katrace::tools {

struct CheckOptions {
  uint64_t max_per_code = 20;
  int64_t slack_ns = 0;  // tolerance for the GPU-extent containment
  size_t sort_memory_bytes = size_t{128} << 20;
  uint64_t progress_min_bytes = uint64_t{256} << 20;
  bool quiet = false;  // no line for a clean file
};

struct CheckSummary {
  uint64_t events = 0;
  uint64_t errors = 0;
  uint64_t warnings = 0;
};

// Prints problems and a one-line verdict to |out|.
CheckSummary CheckTraceFile(const std::string& path, const CheckOptions& options, FILE* out);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_CHECK_TRACE_CHECKER_H_
