// The finalize summary: the host and GPU activity tables (common/activity_summary.h) and the
// closing count lines. It sits between the layout and the trace's encoder and sees every slice
// exactly as the trace gets it (placed times, final names, args), so katrace-stats, reading the
// trace back, prints the same tables. Everything is passed on to the encoder unchanged.
#ifndef KATRACE_PLUGIN_EXPORT_EXPORT_SUMMARY_H_
#define KATRACE_PLUGIN_EXPORT_EXPORT_SUMMARY_H_

#include <stdint.h>

#include <string>

#include "common/activity_summary.h"
#include "plugin/export/trace_encoder.h"

namespace katrace {
namespace exporting {

class ExportSummary : public TraceEncoder {
 public:
  // Without |tables| (nobody will read them: no summary printed or written) slices pass straight
  // through and Text has the count lines only.
  explicit ExportSummary(TraceEncoder* next, bool tables = true) : next_(next), tables_(tables) {}

  void Begin(const TraceProcess& process) override { next_->Begin(process); }
  void Track(const TrackInfo& track) override { next_->Track(track); }
  void Slice(const SliceEvent& slice) override {
    if (tables_) Summarize(slice);
    next_->Slice(slice);
  }
  void Counter(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override {
    next_->Counter(name, ts, args, nargs);
  }
  void Instant(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override {
    next_->Instant(name, ts, args, nargs);
  }
  void End(const TraceTotals& totals) override { next_->End(totals); }

  // The tables, then the count lines; |trace_line| ends it ("katrace: trace PATH"). Call once,
  // after End.
  std::string Text(const TraceTotals& totals, const std::string& spool_line, const std::string& trace_line);

 private:
  void Summarize(const SliceEvent& slice);

  TraceEncoder* next_;
  bool tables_;
  ActivitySummary summary_;
};

// Writes |text| to |path| through a temporary file unique to this process and a rename, so a
// failed write never leaves an empty or partial summary under the final name; a device or a
// pipe at |path| is written in place, never replaced (common/output_file.h).
bool WriteTextFileAtomically(const std::string& path, const std::string& text, std::string* error);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_EXPORT_SUMMARY_H_
