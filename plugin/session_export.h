// The one bridge from the capture side to the export (plugin/export): the session hands a spool
// over here and gets a trace, or a hang's dump and gets its report. Everything else in the
// capture stays ignorant of the export's stages.
//
// Builds a trace from a spool with the session's settings (KATRACE_GZIP, KATRACE_SUMMARY and its
// file) and says what became of it in one stderr line, whether or not NCCL's logger prints: the
// trace's path and counts, or why it could not be built and how to build it later. Used for the
// run's own trace at the end and for the flight recorder's dumps.
#ifndef KATRACE_PLUGIN_SESSION_EXPORT_H_
#define KATRACE_PLUGIN_SESSION_EXPORT_H_

#include <string>

#include "plugin/capture/hang_watchdog.h"
#include "plugin/config.h"

namespace katrace {

struct SessionExport {
  std::string spool;
  std::string trace;
  const char* label = "trace";      // what the line calls the result: "trace", "flight recorder trace"
  const char* kept_as = "capture";  // what the kept spool holds, when the export failed
  bool summary = true;              // the run's summary tables, KATRACE_SUMMARY permitting
  bool progress = true;             // progress lines on stderr when the export takes long
};

// True when the trace was built. The spool is left for the caller to remove.
bool ExportSessionSpool(const SessionExport& job, const Config& config);

// The session's HangReporter: reads the hang's dump with the export's stages, writes
// "<trace>.hang.json" and prints its summary lines on stderr (or why it could not be built).
void ReportHangFromSpool(const HangReportRequest& request);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_SESSION_EXPORT_H_
