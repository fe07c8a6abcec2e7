#include "plugin/session_export.h"

#include <stdio.h>

#include "plugin/export/exporter.h"

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
    fprintf(stderr, "katrace: %s %s: %llu events, %llu lost%s\n", job.label, report.trace_path.c_str(),
            static_cast<unsigned long long>(report.events), static_cast<unsigned long long>(report.dropped),
            report.incomplete != 0 ? (", " + std::to_string(report.incomplete) + " incomplete").c_str() : "");
  } else {
    fprintf(stderr, "katrace: the %s could not be built (%s); the %s is kept in %s: katrace-export %s\n", job.label,
            report.message.c_str(), job.kept_as, job.spool.c_str(), job.spool.c_str());
  }
  return report.ok;
}

}  // namespace katrace
