#include "plugin/export/chrome_json_encoder.h"

#include <stdio.h>

namespace katrace {
namespace exporting {

void ChromeJsonEncoder::Flush() { writer_->Hand(&buf_); }

void ChromeJsonEncoder::Identity(int rank) {
  buf_->Raw("\"format\":\"katrace-trace\",\"version\":1,\"rank\":").Int(rank);
  buf_->Raw(",\"host\":").String(process_.host).Raw(",\"os_pid\":").Int(process_.os_pid);
  buf_->Raw(",\"base_realtime_ns\":").Uint(process_.base_realtime_ns);
  buf_->Raw(",\"base_monotonic_ns\":").Uint(process_.base_monotonic_ns);
  // Which Perfetto process (pid) is which rank, for tools that map pids back to ranks.
  buf_->Raw(",\"ranks\":[");
  for (size_t i = 0; i < process_.ranks.size(); ++i) {
    const TraceRank& r = process_.ranks[i];
    buf_->Raw(i ? ",{\"pid\":" : "{\"pid\":").Int(r.pid).Raw(",\"world_rank\":").Int(r.world_rank);
    buf_->Raw(",\"launcher_rank\":").Int(r.launcher_rank).Raw(",\"cuda_device\":").Int(r.cuda_device).Raw("}");
  }
  buf_->Raw("]");
}

// One rank's process: its name ("rank 3"), where it ran (args and a label Perfetto shows), and
// its order. Every rank's process_name carries the header (its clock base, for tools that take
// pids apart); the first rank's is the file's first event.
void ChromeJsonEncoder::ProcessMetadata(const TraceRank& r) {
  std::string where = process_.host + ", pid " + std::to_string(process_.os_pid);
  BeginEvent();
  buf_->Raw("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":").Int(r.pid);
  buf_->Raw(",\"tid\":0,\"args\":{\"name\":").String(r.label.empty() ? "rank " + std::to_string(r.pid) : r.label);
  buf_->Raw(",\"host\":").String(process_.host).Raw(",\"os_pid\":").Int(process_.os_pid);
  buf_->Raw(",\"katrace\":{");
  Identity(r.pid);
  buf_->Raw("}}}");
  BeginEvent();
  buf_->Raw("{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":").Int(r.pid);
  buf_->Raw(",\"tid\":0,\"args\":{\"labels\":").String(where).Raw("}}");
  BeginEvent();
  buf_->Raw("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":").Int(r.pid);
  buf_->Raw(",\"tid\":0,\"args\":{\"sort_index\":").Int(r.pid).Raw("}}");
}

void ChromeJsonEncoder::Begin(const TraceProcess& process) {
  process_ = process;
  if (process_.ranks.empty()) {
    TraceRank r;
    r.pid = process_.rank;
    process_.ranks.push_back(r);
  }
  pid0_ = process_.ranks.front().pid;
  buf_->Raw("{\"traceEvents\":[\n");
  for (size_t i = 0; i < process_.ranks.size(); ++i) ProcessMetadata(process_.ranks[i]);
}

void ChromeJsonEncoder::Track(const TrackInfo& t) {
  const int track = t.track, pid = t.pid;
  if (track >= 0) {
    if (track_pid_.size() <= static_cast<size_t>(track)) track_pid_.resize(static_cast<size_t>(track) + 1, pid0_);
    track_pid_[static_cast<size_t>(track)] = pid;
  }
  BeginEvent();
  buf_->Raw("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":").Int(pid);
  buf_->Raw(",\"tid\":").Int(track).Raw(",\"args\":{\"name\":").String(t.name).Raw("}}");
  BeginEvent();
  buf_->Raw("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":").Int(pid);
  buf_->Raw(",\"tid\":").Int(track).Raw(",\"args\":{\"sort_index\":").Int(t.sort_index).Raw("}}");
}

void ChromeJsonEncoder::Args(const Arg* args, size_t n) {
  buf_->Raw(",\"args\":{");
  for (size_t i = 0; i < n; ++i) {
    const Arg& a = args[i];
    if (i) buf_->Char(',');
    buf_->Key(a.key);
    switch (a.type) {
      case ArgType::kUint: buf_->Uint(a.u); break;
      case ArgType::kInt: buf_->Int(a.i); break;
      case ArgType::kBool: buf_->Raw(a.u ? "true" : "false"); break;
      case ArgType::kString: buf_->String(a.s); break;
      case ArgType::kTime: buf_->Micros(a.i); break;
      case ArgType::kHex64: buf_->Char('"').Hex64(a.u).Char('"'); break;
    }
  }
  buf_->Char('}');
}

// Most of the file: formatted in one pass through a local pointer, after one bound on its size
// (every piece's most); a slice with a string that needs escaping takes the general path.
bool ChromeJsonEncoder::FastSlice(const SliceEvent& s) {
  if (!JsonOut::Plain(s.name)) return false;
  const std::string_view cat = s.category;
  size_t bound = 2 + 80 + s.name.size() + cat.size() + JsonOut::kMaxInt * 2 + JsonOut::kMaxMicros * 2 + 2;
  for (size_t i = 0; i < s.nargs; ++i) {
    const Arg& a = s.args[i];
    bound += 4 + a.key.size() + JsonOut::kMaxMicros;
    if (a.type == ArgType::kString) {
      if (!JsonOut::Plain(a.s)) return false;
      bound += a.s.size() + 2;
    }
  }
  char* p = buf_->Claim(bound);
  if (!first_event_) p = JsonOut::PutRaw(p, ",\n");
  first_event_ = false;
  p = JsonOut::PutRaw(p, "{\"name\":");
  p = JsonOut::PutPlainString(p, s.name);
  p = JsonOut::PutRaw(p, ",\"cat\":\"");
  p = JsonOut::PutRaw(p, cat);
  p = JsonOut::PutRaw(p, "\",\"ph\":\"X\",\"pid\":");
  p = JsonOut::PutInt(p, PidOf(s.track));
  p = JsonOut::PutRaw(p, ",\"tid\":");
  p = JsonOut::PutInt(p, s.track);
  p = JsonOut::PutRaw(p, ",\"ts\":");
  p = JsonOut::PutMicros(p, s.ts);
  p = JsonOut::PutRaw(p, ",\"dur\":");
  p = JsonOut::PutMicros(p, s.dur < 0 ? 0 : s.dur);
  p = JsonOut::PutRaw(p, ",\"args\":{");
  for (size_t i = 0; i < s.nargs; ++i) {
    const Arg& a = s.args[i];
    if (i) *p++ = ',';
    p = JsonOut::PutKey(p, a.key);
    switch (a.type) {
      case ArgType::kUint: p = JsonOut::PutUint(p, a.u); break;
      case ArgType::kInt: p = JsonOut::PutInt(p, a.i); break;
      case ArgType::kBool: p = JsonOut::PutRaw(p, a.u ? "true" : "false"); break;
      case ArgType::kString: p = JsonOut::PutPlainString(p, a.s); break;
      case ArgType::kTime: p = JsonOut::PutMicros(p, a.i); break;
      case ArgType::kHex64:
        *p++ = '"';
        p = JsonOut::PutHex64(p, a.u);
        *p++ = '"';
        break;
    }
  }
  p[0] = '}';
  p[1] = '}';
  buf_->Commit(p + 2);
  return true;
}

void ChromeJsonEncoder::Slice(const SliceEvent& s) {
  if (FastSlice(s)) {
    if (s.flow_out != 0) FlowEnd(s.flow_out, true, s.track, s.ts);
    if (s.flow_in != 0) FlowEnd(s.flow_in, false, s.track, s.ts);
    MaybeFlush();
    return;
  }
  BeginEvent();
  buf_->Raw("{\"name\":").String(s.name).Raw(",\"cat\":\"").Raw(s.category).Raw("\",\"ph\":\"X\",\"pid\":");
  buf_->Int(PidOf(s.track)).Raw(",\"tid\":").Int(s.track).Raw(",\"ts\":").Micros(s.ts);
  buf_->Raw(",\"dur\":").Micros(s.dur < 0 ? 0 : s.dur);
  Args(s.args, s.nargs);
  buf_->Char('}');
  if (s.flow_out != 0) FlowEnd(s.flow_out, true, s.track, s.ts);
  if (s.flow_in != 0) FlowEnd(s.flow_in, false, s.track, s.ts);
  MaybeFlush();
}

void ChromeJsonEncoder::FlowEnd(uint64_t id, bool out, int track, int64_t ts) {
  auto it = flows_.find(id);
  if (it == flows_.end() || it->second.out == out) {
    flows_[id] = FlowHalf{out, track, ts};
    return;
  }
  const FlowHalf other = it->second;
  flows_.erase(it);
  if (out) {
    WriteFlow(id, track, ts, other.track, other.ts);
  } else {
    WriteFlow(id, other.track, other.ts, track, ts);
  }
}

void ChromeJsonEncoder::WriteFlow(uint64_t id, int from_track, int64_t from_ts, int to_track, int64_t to_ts) {
  BeginEvent();
  buf_->Raw("{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":").Uint(id);
  buf_->Raw(",\"pid\":").Int(PidOf(from_track)).Raw(",\"tid\":").Int(from_track);
  buf_->Raw(",\"ts\":").Micros(from_ts).Raw("}");
  BeginEvent();
  buf_->Raw("{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":").Uint(id);
  buf_->Raw(",\"pid\":").Int(PidOf(to_track)).Raw(",\"tid\":").Int(to_track);
  buf_->Raw(",\"ts\":").Micros(to_ts).Raw("}");
}

void ChromeJsonEncoder::Counter(std::string_view name, int64_t ts, const Arg* args, size_t nargs) {
  BeginEvent();
  buf_->Raw("{\"name\":").String(name).Raw(",\"ph\":\"C\",\"pid\":").Int(pid0_);
  buf_->Raw(",\"tid\":0,\"ts\":").Micros(ts);
  Args(args, nargs);
  buf_->Char('}');
}

void ChromeJsonEncoder::Instant(std::string_view name, int64_t ts, const Arg* args, size_t nargs) {
  BeginEvent();
  buf_->Raw("{\"name\":").String(name).Raw(",\"cat\":\"katrace\",\"ph\":\"i\",\"s\":\"p\",\"pid\":").Int(pid0_);
  buf_->Raw(",\"tid\":0,\"ts\":").Micros(ts);
  Args(args, nargs);
  buf_->Char('}');
}

void ChromeJsonEncoder::End(const TraceTotals& t) {
  uint64_t total_drops = 0;
  for (uint64_t d : t.drops) total_drops += d;
  // A closing instant on the process track, so the counters are visible in Perfetto too.
  BeginEvent();
  buf_->Raw("{\"name\":\"katrace trace end\",\"ph\":\"i\",\"s\":\"g\",\"pid\":").Int(pid0_);
  buf_->Raw(",\"tid\":0,\"ts\":").Micros(t.end_ts);
  buf_->Raw(",\"args\":{\"drops\":").Uint(total_drops).Raw(",\"incomplete\":").Uint(t.incomplete).Raw("}}");
  buf_->Raw("\n],\n\"otherData\":{\"katrace\":{");
  Identity(process_.rank);
  buf_->Raw(",\"mask\":").Int(t.mask);
  buf_->Raw(",\n\"events\":{");
  for (int k = 0; k < kKindCount; ++k) buf_->Raw(k ? "," : "").Key(kKindInfo[k].name).Uint(t.events[k]);
  buf_->Raw("},\n\"drops\":{");
  for (int k = 0; k < kKindCount; ++k) buf_->Raw(k ? "," : "").Key(kKindInfo[k].name).Uint(t.drops[k]);
  buf_->Raw("},\n\"incomplete\":").Uint(t.incomplete).Raw(",\"late_children\":").Uint(t.late_children);
  buf_->Raw(",\"gpu_before_launch\":").Uint(t.gpu_before_launch);
  buf_->Raw(",\"waits\":").Uint(t.waits);
  buf_->Raw(",\"io_errors\":").Uint(t.io_errors);
  buf_->Raw(",\"strings_unnamed\":").Uint(t.strings_unnamed);
  buf_->Raw(",\"gpu_offset_ns\":").Int(t.gpu_offset_ns).Raw(",\"gpu_offset_error_ns\":").Int(t.gpu_offset_error_ns);
  buf_->Raw(",\"gpu_offset_samples\":").Uint(t.gpu_offset_samples);
  // Drift in ppm to the ppb, as text (a fit's drift is always finite).
  auto ppm = [](double v) {
    char b[32];
    snprintf(b, sizeof(b), "%.3f", v == v && v > -1e9 && v < 1e9 ? v : 0.0);
    return std::string(b);
  };
  buf_->Raw(",\n\"gpu_clocks\":[");
  for (size_t i = 0; i < t.gpu_clocks.size(); ++i) {
    const FooterGpuClock& g = t.gpu_clocks[i];
    buf_->Raw(i ? ",\n{\"cuda_device\":" : "\n{\"cuda_device\":").Int(g.cuda_device).Raw(",\"pid\":").Int(g.pid);
    buf_->Raw(",\"comms\":[");
    for (size_t k = 0; k < g.comms.size(); ++k) buf_->Raw(k ? ",\"" : "\"").Hex64(g.comms[k]).Raw("\"");
    buf_->Raw("],\"offset_ns\":").Int(g.offset_ns).Raw(",\"drift_ppm\":").Raw(ppm(g.drift_ppm));
    buf_->Raw(",\"error_ns\":").Int(g.error_ns).Raw(",\"band_empty\":").Raw(g.band_empty ? "true" : "false");
    buf_->Raw(",\"realtime_prior\":").Raw(g.prior ? "true" : "false");
    buf_->Raw(",\"upper_bounds\":").Uint(g.upper_bounds).Raw(",\"lower_bounds\":").Uint(g.lower_bounds);
    buf_->Raw(",\"unlaunched\":").Uint(g.unlaunched).Raw(",\"outliers\":").Uint(g.outliers);
    buf_->Raw(",\"quantum_ns\":").Uint(g.quantum_ns).Raw(",\"segments\":[");
    for (size_t k = 0; k < g.segments.size(); ++k) {
      const FooterGpuSegment& sg = g.segments[k];
      buf_->Raw(k ? ",{\"from_ns\":" : "{\"from_ns\":").Int(sg.from_ns).Raw(",\"offset_ns\":").Int(sg.offset_ns);
      buf_->Raw(",\"drift_ppm\":").Raw(ppm(sg.drift_ppm)).Raw(",\"error_ns\":").Int(sg.error_ns).Raw("}");
    }
    buf_->Raw("]}");
  }
  buf_->Raw("]");
  buf_->Raw(",\n\"drain\":{");
  for (int i = 0; i < kDrainCounterCount; ++i) {
    buf_->Raw(i ? "," : "").Key(kDrainCounterFields[i].name).Uint(t.drain.*kDrainCounterFields[i].member);
  }
  buf_->Raw("},\n\"spool\":{\"blocks\":").Uint(t.spool_blocks).Raw(",\"bytes\":").Uint(t.spool_bytes);
  buf_->Raw(",\"clean_end\":").Raw(t.clean_end ? "true" : "false").Raw(",\"cut_offset\":").Uint(t.cut_offset);
  if (t.flight) {
    buf_->Raw(",\"flight\":{\"reason\":").String(t.flight_reason).Raw(",\"signal\":").Int(t.flight_signal);
    buf_->Raw(",\"evicted_blocks\":").Uint(t.flight_evicted_blocks).Raw(",\"evicted_bytes\":").Uint(t.flight_evicted_bytes);
    buf_->Raw(",\"refused_blocks\":").Uint(t.flight_refused_blocks).Raw(",\"sticky_dropped\":").Uint(t.flight_sticky_dropped);
    buf_->Raw(",\"cut_records\":").Uint(t.flight_cut_records).Raw("}");
  }
  buf_->Raw("},\n\"communicators\":[");
  for (size_t i = 0; i < t.comms.size(); ++i) {
    const FooterComm& c = t.comms[i];
    buf_->Raw(i ? ",\n" : "\n").Raw("{\"comm\":\"").Hex64(c.comm_hash).Raw("\",\"name\":").String(c.name);
    buf_->Raw(",\"rank\":").Int(c.rank).Raw(",\"nranks\":").Int(c.nranks).Raw(",\"abi\":").Int(c.abi_version);
    buf_->Raw(",\"pid\":").Int(c.pid);
    buf_->Raw(",\"gpu_offset_ns\":").Int(c.gpu_offset_ns).Raw(",\"gpu_clock\":").Int(c.gpu_clock);
    buf_->Raw("}");
  }
  buf_->Raw("]}}}\n");
  Flush();
}

}  // namespace exporting
}  // namespace katrace
