// The bridge to the export (see session_export.h): the only file of the capture side that
// includes plugin/export, so the capture's dependencies on it stay in one place.
#include "plugin/session_export.h"

#include <stdio.h>

#include "common/warning.h"
#include "plugin/export/exporter.h"
#include "plugin/export/hang_report.h"

namespace katrace {

bool ExportSessionSpool(const SessionExport& job, const Config& config) {
  ExportOptions options;
  options.output = job.trace;
  options.gzip = config.gzip;
  options.format = config.format;
  options.summary = job.summary && config.summary;
  if (options.summary) options.summary_path = config.summary_path;
  options.progress = job.progress;
  ExportReport report = ExportSpool(job.spool, options);
  if (report.ok) {
    std::string more;
    if (report.incomplete != 0) more += ", " + std::to_string(report.incomplete) + " incomplete";
    // A flight dump whose blocks were each larger than the ring holds nothing: say why.
    if (report.refused_blocks != 0) {
      more += ", " + std::to_string(report.refused_blocks) +
              " blocks were refused (larger than the ring, or after a crash froze it)";
    }
    fprintf(stderr, "katrace: %s %s: %llu events, %llu lost%s\n", job.label, report.trace_path.c_str(),
            static_cast<unsigned long long>(report.events), static_cast<unsigned long long>(report.dropped),
            more.c_str());
    // The failure message carries it otherwise.
    if (!report.summary_error.empty()) Warn(report.summary_error);
  } else {
    fprintf(stderr, "katrace: the %s could not be built (%s); the %s is kept in %s: katrace-export %s\n", job.label,
            report.message.c_str(), job.kept_as, job.spool.c_str(), job.spool.c_str());
  }
  return report.ok;
}

void ReportHangFromSpool(const HangReportRequest& request) {
  HangReportInput in;
  in.spool_path = request.spool_path;
  in.report_path = request.report_path;
  in.timeout_ns = request.timeout_ns;
  in.last_progress_monotonic_ns = request.last_progress_monotonic_ns;
  in.in_flight = request.in_flight;
  in.detected_monotonic_ns = request.detected_monotonic_ns;
  in.detected_realtime_ns = request.detected_realtime_ns;
  HangReportResult r = WriteHangReport(in);
  if (!r.summary.empty()) {
    fputs(r.summary.c_str(), stderr);
  } else {
    fprintf(stderr, "katrace: a hang was detected but its report could not be built (%s)\n", r.message.c_str());
  }
}

}  // namespace katrace
