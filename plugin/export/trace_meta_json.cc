#include "plugin/export/trace_meta_json.h"

#include <stdio.h>

#include <string>

namespace katrace {
namespace exporting {

void PutIdentityJson(JsonOut* out, const TraceProcess& process, int rank) {
  out->Char('{');
  out->Raw("\"format\":\"katrace-trace\",\"version\":1,\"rank\":").Int(rank);
  out->Raw(",\"host\":").String(process.host).Raw(",\"os_pid\":").Int(process.os_pid);
  out->Raw(",\"base_realtime_ns\":").Uint(process.base_realtime_ns);
  out->Raw(",\"base_monotonic_ns\":").Uint(process.base_monotonic_ns);
  // Which Perfetto process (pid) is which rank, for tools that map pids back to ranks.
  out->Raw(",\"ranks\":[");
  for (size_t i = 0; i < process.ranks.size(); ++i) {
    const TraceRank& r = process.ranks[i];
    out->Raw(i ? ",{\"pid\":" : "{\"pid\":").Int(r.pid).Raw(",\"world_rank\":").Int(r.world_rank);
    out->Raw(",\"launcher_rank\":").Int(r.launcher_rank).Raw(",\"cuda_device\":").Int(r.cuda_device).Raw("}");
  }
  out->Raw("]");
  out->Char('}');
}

void PutFooterJson(JsonOut* out, const TraceProcess& process, const TraceTotals& t) {
  // The identity's keys open the footer too: everything inside its braces, then the counts.
  JsonOut identity;
  PutIdentityJson(&identity, process, process.rank);
  out->Raw(std::string_view(identity.data(), identity.size() - 1));
  out->Raw(",\"mask\":").Int(t.mask);
  out->Raw(",\n\"events\":{");
  for (int k = 0; k < kKindCount; ++k) out->Raw(k ? "," : "").Key(kKindInfo[k].name).Uint(t.events[k]);
  out->Raw("},\n\"drops\":{");
  for (int k = 0; k < kKindCount; ++k) out->Raw(k ? "," : "").Key(kKindInfo[k].name).Uint(t.drops[k]);
  out->Raw("},\n\"incomplete\":").Uint(t.incomplete).Raw(",\"late_children\":").Uint(t.late_children);
  out->Raw(",\"gpu_before_launch\":").Uint(t.gpu_before_launch);
  out->Raw(",\"waits\":").Uint(t.waits);
  out->Raw(",\"io_errors\":").Uint(t.io_errors);
  out->Raw(",\"strings_unnamed\":").Uint(t.strings_unnamed);
  out->Raw(",\"gpu_offset_ns\":").Int(t.gpu_offset_ns).Raw(",\"gpu_offset_error_ns\":").Int(t.gpu_offset_error_ns);
  out->Raw(",\"gpu_offset_samples\":").Uint(t.gpu_offset_samples);
  // Drift in ppm to the ppb, as text (a fit's drift is always finite).
  auto ppm = [](double v) {
    char b[32];
    snprintf(b, sizeof(b), "%.3f", v == v && v > -1e9 && v < 1e9 ? v : 0.0);
    return std::string(b);
  };
  out->Raw(",\n\"gpu_clocks\":[");
  for (size_t i = 0; i < t.gpu_clocks.size(); ++i) {
    const FooterGpuClock& g = t.gpu_clocks[i];
    out->Raw(i ? ",\n{\"cuda_device\":" : "\n{\"cuda_device\":").Int(g.cuda_device).Raw(",\"pid\":").Int(g.pid);
    out->Raw(",\"comms\":[");
    for (size_t k = 0; k < g.comms.size(); ++k) out->Raw(k ? ",\"" : "\"").Hex64(g.comms[k]).Raw("\"");
    out->Raw("],\"offset_ns\":").Int(g.offset_ns).Raw(",\"drift_ppm\":").Raw(ppm(g.drift_ppm));
    out->Raw(",\"error_ns\":").Int(g.error_ns).Raw(",\"band_empty\":").Raw(g.band_empty ? "true" : "false");
    out->Raw(",\"realtime_prior\":").Raw(g.prior ? "true" : "false");
    out->Raw(",\"upper_bounds\":").Uint(g.upper_bounds).Raw(",\"lower_bounds\":").Uint(g.lower_bounds);
    out->Raw(",\"unlaunched\":").Uint(g.unlaunched).Raw(",\"outliers\":").Uint(g.outliers);
    out->Raw(",\"quantum_ns\":").Uint(g.quantum_ns).Raw(",\"segments\":[");
    for (size_t k = 0; k < g.segments.size(); ++k) {
      const FooterGpuSegment& sg = g.segments[k];
      out->Raw(k ? ",{\"from_ns\":" : "{\"from_ns\":").Int(sg.from_ns).Raw(",\"offset_ns\":").Int(sg.offset_ns);
      out->Raw(",\"drift_ppm\":").Raw(ppm(sg.drift_ppm)).Raw(",\"error_ns\":").Int(sg.error_ns).Raw("}");
    }
    out->Raw("]}");
  }
  out->Raw("]");
  out->Raw(",\n\"drain\":{");
  for (int i = 0; i < kDrainCounterCount; ++i) {
    out->Raw(i ? "," : "").Key(kDrainCounterFields[i].name).Uint(t.drain.*kDrainCounterFields[i].member);
  }
  out->Raw("},\n\"spool\":{\"blocks\":").Uint(t.spool_blocks).Raw(",\"bytes\":").Uint(t.spool_bytes);
  out->Raw(",\"clean_end\":").Raw(t.clean_end ? "true" : "false").Raw(",\"cut_offset\":").Uint(t.cut_offset);
  if (t.flight) {
    out->Raw(",\"flight\":{\"reason\":").String(t.flight_reason).Raw(",\"signal\":").Int(t.flight_signal);
    out->Raw(",\"evicted_blocks\":").Uint(t.flight_evicted_blocks).Raw(",\"evicted_bytes\":").Uint(t.flight_evicted_bytes);
    out->Raw(",\"refused_blocks\":").Uint(t.flight_refused_blocks).Raw(",\"sticky_dropped\":").Uint(t.flight_sticky_dropped);
    out->Raw(",\"cut_records\":").Uint(t.flight_cut_records).Raw("}");
  }
  out->Raw("},\n\"communicators\":[");
  for (size_t i = 0; i < t.comms.size(); ++i) {
    const FooterComm& c = t.comms[i];
    out->Raw(i ? ",\n" : "\n").Raw("{\"comm\":\"").Hex64(c.comm_hash).Raw("\",\"name\":").String(c.name);
    out->Raw(",\"rank\":").Int(c.rank).Raw(",\"nranks\":").Int(c.nranks).Raw(",\"abi\":").Int(c.abi_version);
    out->Raw(",\"pid\":").Int(c.pid);
    out->Raw(",\"gpu_offset_ns\":").Int(c.gpu_offset_ns).Raw(",\"gpu_clock\":").Int(c.gpu_clock);
    out->Raw("}");
  }
  out->Raw("]}");
}

}  // namespace exporting
}  // namespace katrace
