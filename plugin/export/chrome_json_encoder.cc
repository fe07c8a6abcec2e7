#include "plugin/export/chrome_json_encoder.h"

#include "plugin/export/trace_meta_json.h"

namespace katrace {
namespace exporting {

void ChromeJsonEncoder::Flush() { writer_->Hand(&buf_); }

// One rank's process: its name ("rank 3"), where it ran (args and a label Perfetto shows), and
// its order. Every rank's process_name carries the header (its clock base, for tools that take
// pids apart); the first rank's is the file's first event.
void ChromeJsonEncoder::ProcessMetadata(const TraceRank& r) {
  std::string where = process_.host + ", pid " + std::to_string(process_.os_pid);
  BeginEvent();
  buf_->Raw("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":").Int(r.pid);
  buf_->Raw(",\"tid\":0,\"args\":{\"name\":").String(r.label.empty() ? "rank " + std::to_string(r.pid) : r.label);
  buf_->Raw(",\"host\":").String(process_.host).Raw(",\"os_pid\":").Int(process_.os_pid);
  buf_->Raw(",\"katrace\":");
  PutIdentityJson(buf_.get(), process_, r.pid);
  buf_->Raw("}}");
  BeginEvent();
  buf_->Raw("{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":").Int(r.pid);
  buf_->Raw(",\"tid\":0,\"args\":{\"labels\":").String(where).Raw("}}");
  BeginEvent();
  buf_->Raw("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":").Int(r.pid);
  buf_->Raw(",\"tid\":0,\"args\":{\"sort_index\":").Int(r.pid).Raw("}}");
}

void ChromeJsonEncoder::Begin(const TraceProcess& process) {
  process_ = WithARank(process);
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
  buf_->Raw("\n],\n\"otherData\":{\"katrace\":");
  PutFooterJson(buf_.get(), process_, t);
  buf_->Raw("}}\n");
  Flush();
}

}  // namespace exporting
}  // namespace katrace
