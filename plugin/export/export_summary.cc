// The finalize summary (see export_summary.h): slices into ActivitySummary, then the count lines.
#include "plugin/export/export_summary.h"


#include "common/output_file.h"

namespace katrace {
namespace exporting {

void ExportSummary::Summarize(const SliceEvent& e) {
  ActivitySlice s;
  s.category = e.category;
  s.name = e.name;
  s.start_ns = e.ts;
  s.duration_ns = e.dur > 0 ? static_cast<uint64_t>(e.dur) : 0;
  // The args the summary reads, by key, as katrace-stats reads them from the trace.
  // A slice has a dozen args and only these few matter: the key's length picks the one or two
  // candidates, so most keys cost one comparison of lengths.
  for (size_t i = 0; i < e.nargs; ++i) {
    const Arg& a = e.args[i];
    switch (a.key.size()) {
      case 2:
        if (a.key == "id") s.id = a.u;
        break;
      case 4:
        if (a.key == "comm") {
          s.comm = a.u;
        } else if (a.key == "rank") {
          s.rank = a.i;
        }
        break;
      case 7:
        if (a.key == "channel") s.channel = a.type == ArgType::kUint ? static_cast<int64_t>(a.u) : a.i;
        break;
      case 9:
        if (a.key == "abandoned") s.abandoned = a.u != 0;
        break;
      case 10:
        if (a.key == "incomplete") {
          s.incomplete = a.u != 0;
        } else if (a.key == "host_timed") {
          s.host_timed = a.u != 0;
        }
        break;
      case 11:
        if (a.key == "kernel_step") s.owner = a.u;
        break;
      default:
        break;
    }
  }
  summary_.Add(s);
}

std::string ExportSummary::Text(const TraceTotals& t, const std::string& spool_line, const std::string& trace_line) {
  summary_.Finish();
  std::string text;
  text += summary_.host.empty() ? "" : summary_.host.ToText() + "\n";
  text += summary_.gpu.empty() ? "" : summary_.gpu.ToText() + "\n";
  uint64_t total_drops = 0;
  std::string drops;
  for (int k = 0; k < kKindCount; ++k) {
    total_drops += t.drops[k];
    if (t.drops[k] != 0) drops += std::string(" ") + kKindInfo[k].name + "=" + std::to_string(t.drops[k]);
  }
  uint64_t recorded = 0;
  for (uint64_t e : t.events) recorded += e;
  text += "katrace: " + std::to_string(recorded) + " events recorded, " + std::to_string(total_drops) +
          " dropped (pool or buffers full, or spool not writable)" + (drops.empty() ? "" : ":" + drops) + ", " +
          std::to_string(t.incomplete) + " incomplete";
  if (t.waits != 0) text += ", " + std::to_string(t.waits) + (t.waits == 1 ? " wait" : " waits") + " for buffer space";
  if (t.drain.Any()) {
    text += "; KernelStep drain:";
    for (int i = 0; i < kDrainCounterCount; ++i) {
      text += std::string(i ? ", " : " ") + std::to_string(t.drain.*kDrainCounterFields[i].member) + " " +
              kDrainCounterFields[i].name;
    }
  }
  text += "\n";
  if (!spool_line.empty()) text += spool_line + "\n";
  if (!trace_line.empty()) text += trace_line + "\n";
  return text;
}

bool WriteTextFileAtomically(const std::string& path, const std::string& text, std::string* error) {
  OutputFilePolicy policy;
  policy.dash_is_stdout = false;  // a file name, as the plugin's KATRACE_SUMMARY_FILE is
  OutputFile out(policy);
  if (!out.Open(path, false, error)) return false;
  out.Write(text);
  return out.Commit(error);
}

}  // namespace exporting
}  // namespace katrace
