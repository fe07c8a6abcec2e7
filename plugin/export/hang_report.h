// The hang report (docs/hang-report.md): what was in flight when the watchdog fired, read back
// from the spool the capture just made readable. Per communicator: the oldest Coll/P2p still in
// flight, the channels whose KernelCh started and never stopped, per (channel, direction, peer)
// the last KernelStep open, and per peer the last open ProxyStep with its last state. Written as
// "<trace>.hang.json" (readable alone: it names the process, host and times in realtime) plus a
// few lines for stderr. Reads the spool with the export's own stages (index, merge, assembler),
// so an event is "open" by exactly the rules the trace uses.
#ifndef KATRACE_PLUGIN_EXPORT_HANG_REPORT_H_
#define KATRACE_PLUGIN_EXPORT_HANG_REPORT_H_

#include <stdint.h>

#include <string>

namespace katrace {

constexpr int kHangReportVersion = 1;

struct HangReportInput {
  std::string spool_path;
  std::string report_path;  // "<trace>.hang.json"
  uint64_t timeout_ns = 0;
  uint64_t last_progress_monotonic_ns = 0;
  int64_t in_flight = 0;  // Coll/P2p in flight in the whole process, as the watchdog counted
  // One reading of both clocks when the hang was detected: every time in the report is placed
  // on realtime through it.
  uint64_t detected_monotonic_ns = 0;
  uint64_t detected_realtime_ns = 0;
};

struct HangReportResult {
  bool ok = false;
  std::string summary;  // the stderr lines, each starting "katrace: "
  std::string message;  // why not, when !ok
};

// Never throws. Cold: runs on a thread of its own, off the writer.
HangReportResult WriteHangReport(const HangReportInput& input);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_HANG_REPORT_H_
