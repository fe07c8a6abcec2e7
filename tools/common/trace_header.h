// The katrace header (traceEvents[0].args.katrace, repeated in otherData.katrace): which rank
// wrote the file and its clock base, which merge and stats need before they read any event.
#ifndef KATRACE_TOOLS_COMMON_TRACE_HEADER_H_
#define KATRACE_TOOLS_COMMON_TRACE_HEADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/common/json_fields.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {

inline constexpr char kTraceFormat[] = "katrace-trace";
inline constexpr char kMergedFormat[] = "katrace-merged";
inline constexpr int64_t kTraceVersion = 1;

// One rank of a file, from the header's `ranks` list: each rank of a process is its own Perfetto
// process (pid), the global rank; a file may hold several (two ranks in one OS process).
struct TraceRankEntry {
  int64_t pid = -1;
  int64_t world_rank = -1;
  int64_t launcher_rank = -1;
  int64_t cuda_device = -1;
};

struct TraceHeader {
  std::string format;
  int64_t version = 0;
  int64_t rank = -1;  // the first rank's pid
  // Every rank of the file; older traces (one rank per file, no list) get {rank}.
  std::vector<TraceRankEntry> ranks;
  std::string host;
  int64_t os_pid = 0;
  int64_t base_realtime_ns = 0;
  int64_t base_monotonic_ns = 0;
  // Set by katrace-merge on the headers it rewrites: how far this rank was shifted. A file whose
  // first header has it is a merged trace, which may hold several ranks.
  int64_t rebased_ns = 0;
  bool rebased = false;

  // The pids the header declares: every entry of |ranks|.
  std::vector<int64_t> Pids() const;
  // The same process wrote both headers (same host, OS pid and clock base): one capture, so two
  // files of it are copies, not two ranks.
  bool SameCapture(const TraceHeader& other) const {
    return host == other.host && os_pid == other.os_pid && base_realtime_ns == other.base_realtime_ns;
  }
};

// The args.katrace object of |event| when it is a process_name metadata event carrying one.
const Json* HeaderObjectOf(const Json& event);
// Reads a header object; every missing or mistyped key becomes one line in |problems|.
bool ParseHeader(const Json& katrace, TraceHeader* header, std::vector<std::string>* problems);

struct HeaderProbe {
  ReadResult read;     // status of the (partial) read
  bool found = false;  // traceEvents[0] carried a valid header
  TraceHeader header;
  std::string problem;  // why no header, when !found
};
// Reads only as far as traceEvents[0]; cheap even for a huge file.
HeaderProbe ProbeHeader(const std::string& path);

// One of the traces a tool reads, with its header (ProbeHeader's).
struct TraceInput {
  std::string path;
  TraceHeader header;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_TRACE_HEADER_H_
