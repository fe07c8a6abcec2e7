// The per-file driver of katrace-check (see trace_checker.h).
#include "tools/check/trace_checker.h"

#include "tools/check/ancestry_rule.h"
#include "tools/check/diagnostics.h"
#include "tools/check/event_rules.h"
#include "tools/check/flow_pairing.h"
#include "tools/check/metadata_rules.h"
#include "tools/check/parent_links.h"
#include "tools/check/track_nesting.h"
#include "tools/common/plural.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {
namespace {

class TraceChecker : public TraceVisitor {
 public:
  TraceChecker(const CheckOptions& options, Diagnostics* diag)
      : diag_(diag),
        metadata_(diag),
        // The sort budget is split by how many records each check gets per event.
        nesting_(options.sort_memory_bytes / 2),
        links_(options.sort_memory_bytes / 8 * 3, options.slack_ns),
        flows_(options.sort_memory_bytes / 8) {}

  bool OnEvent(const TraceEvent& event) override {
    if (event.repaired_strings > 0) {
      // Strict JSON parsers (Python's json, Perfetto's) reject such bytes; the reader has
      // replaced them so the other checks still run.
      diag_->Error("utf8", event.line,
                   "event #" + std::to_string(event.index) + ": " +
                       std::to_string(event.repaired_strings) +
                       (event.repaired_strings == 1 ? " string holds" : " strings hold") +
                       " bytes that are not UTF-8");
    }
    EventFacts f;
    if (!CheckEventRules(event, diag_, &f)) return true;
    metadata_.OnEvent(event, f);
    if (!f.has_pid || !f.has_tid) return true;
    // The id is known whatever the times: a slice whose ts or dur is wrong (reported above) is
    // still its children's parent, which must not read as a parent that names nothing.
    if (f.ph == 'X' && f.has_id && !(f.has_ts && f.has_dur)) {
      links_.AddEvent(f.pid, f.id, f.cat, f.has_gpu_extent, f.gpu_start_ns, f.gpu_end_ns,
                      f.unfinished, event.index, event.line);
    }
    if (f.ph == 'X' && f.has_ts && f.has_dur) {
      const int64_t end_ns = f.ts_ns + f.dur_ns;
      const SliceIdentity who =
          IdentifySlice(f.cat, f.has_id ? f.id : 0, f.has_parent ? f.parent : 0,
                        f.has_coll_ref ? f.coll_ref : 0, f.has_owner ? f.owner : 0);
      nesting_.AddSlice(metadata_.TrackIndex(f.pid, f.tid), f.ts_ns, end_ns, event.index,
                        event.line, f.pid, who);
      if (who.gpu_or_proxy && f.has_id && f.has_parent) ancestry_.AddParent(f.pid, f.id, f.parent);
      if (f.has_id) {
        links_.AddEvent(f.pid, f.id, f.cat, f.has_gpu_extent, f.gpu_start_ns, f.gpu_end_ns,
                        f.unfinished, event.index, event.line);
      }
      // Neither an unfinished event nor one at host times can be held to a GPU extent, nor a late
      // one: it started after its parent's work was retired, when the parent's extent was final
      // (the trace flags it `late` and the footer counts it in late_children).
      const bool no_gpu_times = f.unfinished || f.host_timed || f.late;
      if (f.has_parent) {
        links_.AddReference(f.pid, f.parent, f.cat, f.ts_ns, end_ns, no_gpu_times, false,
                            event.index, event.line);
      }
      if (f.has_coll_ref && (!f.has_parent || f.coll_ref != f.parent)) {
        links_.AddReference(f.pid, f.coll_ref, f.cat, f.ts_ns, end_ns, no_gpu_times, true,
                            event.index, event.line);
      }
    } else if ((f.ph == 's' || f.ph == 't' || f.ph == 'f') && f.has_ts) {
      nesting_.AddFlowPoint(metadata_.TrackIndex(f.pid, f.tid), f.ts_ns, event.index,
                            event.line);
      if (f.has_flow_key) {
        int64_t numeric_id = -1;
        AsInt64(*Field(event.json, "id"), &numeric_id);
        flows_.Add(f.flow_key, f.ph, f.ts_ns, numeric_id, event.index, event.line);
      }
    }
    return true;
  }

  void OnFormat(TraceFileFormat format) override {
    if (format == TraceFileFormat::kPerfettoProtobuf) diag_->set_byte_offsets();
  }

  // What a protobuf trace says that makes no sense (an unknown interned id, an event on a track
  // never declared, a slice or flow that never ends): an error of the trace like any other.
  // The first packet sits at byte 0, which Report takes for "the whole file": so named here.
  void OnProblem(uint64_t byte_offset, const std::string& message) override {
    diag_->Error("protobuf", byte_offset, byte_offset == 0 ? message + " (at byte 0)" : message);
  }

  void OnNonObjectEvent(uint64_t index, uint64_t line) override {
    diag_->Error("field", line, "event #" + std::to_string(index) + " is not a JSON object");
  }

  void OnOtherData(const Json& other_data) override { metadata_.OnFooter(other_data); }

  // |whole_file|: the file parsed to the end; otherwise only the checks that stay meaningful
  // on a prefix run (a cut file has no footer, and its flows and parents are cut too).
  void Finish(bool whole_file) {
    metadata_.Finish(whole_file);
    // Ancestry needs every parent link, which only the whole file has; and a flow endpoint of a
    // cut file may belong to a slice past the cut (a .pftrace gives a slice only at its end).
    nesting_.Check(metadata_.TrackNames(), whole_file ? &ancestry_ : nullptr, whole_file, diag_);
    if (!whole_file) return;
    flows_.Check(diag_);
    links_.Check(!metadata_.merged(), diag_);
  }

 private:
  Diagnostics* diag_;
  MetadataRules metadata_;
  TrackNesting nesting_;
  AncestryRule ancestry_;
  ParentLinks links_;
  FlowPairing flows_;
};

}  // namespace

CheckSummary CheckTraceFile(const std::string& path, const CheckOptions& options, FILE* out) {
  Diagnostics diag(path, options.max_per_code, out);
  TraceChecker checker(options, &diag);
  ReadOptions read_options;
  read_options.tool = "katrace-check";
  read_options.progress_min_bytes = options.progress_min_bytes;
  const ReadResult read = ReadTrace(path, &checker, read_options);
  switch (read.status) {
    case ReadStatus::kOk:
      break;
    case ReadStatus::kOpenError:
      diag.Error("input", 0, read.message);
      break;
    case ReadStatus::kTruncated:
      diag.Error("truncated", read.error_line, read.message);
      break;
    case ReadStatus::kBadJson:
      diag.Error("json", read.error_line, read.message);
      break;
    case ReadStatus::kBadProtobuf:
      diag.Error("protobuf", read.error_line, read.message);
      break;
    case ReadStatus::kNotATrace:  // JSON of something else, a spool or an NVTXT file
      diag.Error("input", 0, read.message);
      break;
    case ReadStatus::kTooLarge:
      diag.Error("limit", read.error_line, read.message);
      break;
    case ReadStatus::kTrailingBytes:  // every event was read: the checks below still run whole
      diag.Error("gzip", 0, read.message);
      break;
    case ReadStatus::kStopped:
      break;
  }
  if (read.status != ReadStatus::kOpenError && read.status != ReadStatus::kNotATrace) {
    checker.Finish(read.status == ReadStatus::kOk || read.status == ReadStatus::kTrailingBytes);
  }
  diag.PrintSuppressed();
  CheckSummary summary{read.events, diag.errors(), diag.warnings()};
  if (summary.errors > 0) {
    std::fprintf(out, "%s: FAILED: %s, %s in %s\n", path.c_str(),
                 Plural(summary.errors, "error").c_str(),
                 Plural(summary.warnings, "warning").c_str(),
                 Plural(summary.events, "event").c_str());
  } else if (!options.quiet || summary.warnings > 0) {
    std::fprintf(out, "%s: OK: %s, %s\n", path.c_str(), Plural(summary.events, "event").c_str(),
                 Plural(summary.warnings, "warning").c_str());
  }
  return summary;
}

}  // namespace katrace::tools
