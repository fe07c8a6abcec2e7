#include "plugin/export/hang_report.h"

#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <exception>
#include <map>
#include <tuple>
#include <vector>

#include "common/hex16.h"
#include "plugin/export/event_assembler.h"
#include "plugin/export/event_naming.h"
#include "plugin/export/export_summary.h"
#include "plugin/export/json_buffer.h"
#include "plugin/export/kind_args.h"
#include "plugin/export/spool_index.h"
#include "plugin/export/stream_merge.h"

namespace katrace {
namespace {

using namespace exporting;

// One open event, copied out of the assembler (its strings live only as long as the index).
struct OpenEvent {
  Kind kind = Kind::kColl;
  std::string func;
  uint64_t seq = 0, bytes = 0, start_ns = 0;
  int32_t peer = 0, step = 0, state = 0;
  uint8_t channel = 0;
  bool send = false, direction_known = false, has_state = false;
};

struct CommHang {
  int comm_index = -1;
  uint64_t tasks = 0;
  bool has_oldest = false;
  OpenEvent oldest;
  std::map<int, OpenEvent> channels;                         // channel -> oldest open KernelCh
  std::map<std::tuple<int, int, int>, OpenEvent> steps;      // (channel, send, peer) -> last open KernelStep
  std::map<int, OpenEvent> proxy_steps;                      // peer -> last open ProxyStep
};

class Collector {
 public:
  // Everything the assembler hands over from Finish was still live at the end of the spool.
  void set_finishing() { finishing_ = true; }

  void Add(const AssembledEvent& e) {
    if (!finishing_) return;
    const bool never_stopped = (e.flags & kEvIncomplete) != 0;
    switch (e.kind) {
      case Kind::kColl:
      case Kind::kP2p: {
        CommHang& c = At(e.comm_index);
        ++c.tasks;
        if (!c.has_oldest || e.start_ns < c.oldest.start_ns) {
          c.oldest = Copy(e);
          c.has_oldest = true;
        }
        break;
      }
      case Kind::kKernelCh: {
        if (!never_stopped || (e.flags & kEvGpuStopSeen)) break;
        auto& slot = At(e.comm_index).channels;
        auto it = slot.find(e.channel);
        if (it == slot.end() || e.start_ns < it->second.start_ns) slot[e.channel] = Copy(e);
        break;
      }
      case Kind::kKernelStep: {
        if (!never_stopped) break;
        auto& slot = At(e.comm_index).steps;
        auto key = std::make_tuple(static_cast<int>(e.channel), IsSend(e) ? 1 : 0, static_cast<int>(e.peer));
        auto it = slot.find(key);
        if (it == slot.end() || e.start_ns > it->second.start_ns) slot[key] = Copy(e);
        break;
      }
      case Kind::kProxyStep: {
        if (!never_stopped) break;
        auto& slot = At(e.comm_index).proxy_steps;
        auto it = slot.find(e.peer);
        if (it == slot.end() || e.start_ns > it->second.start_ns) slot[e.peer] = Copy(e);
        break;
      }
      default: break;
    }
  }

  std::vector<CommHang> Result() const {
    std::vector<CommHang> out;
    for (const auto& kv : comms_) out.push_back(kv.second);
    return out;
  }

 private:
  CommHang& At(int comm_index) {
    CommHang& c = comms_[comm_index];
    c.comm_index = comm_index;
    return c;
  }
  static OpenEvent Copy(const AssembledEvent& e) {
    OpenEvent o;
    o.kind = e.kind;
    o.func = std::string(EventName(e));
    // What the report says of each kind is read by its schema's argument names.
    Arg a;
    if (KindArg(e, "seq", &a)) o.seq = a.u;
    if (KindArg(e, "bytes", &a) || KindArg(e, "size", &a) || KindArg(e, "trans_size", &a)) o.bytes = a.u;
    if (KindArg(e, "step", &a)) o.step = static_cast<int32_t>(a.i);
    o.start_ns = e.start_ns;
    o.peer = e.peer;
    o.channel = e.channel;
    o.send = IsSend(e);
    o.direction_known = (e.flags & kEvDirectionKnown) != 0;
    if (e.nstates > 0) {
      o.has_state = true;
      o.state = e.state_id[e.nstates - 1];
    }
    return o;
  }

  bool finishing_ = false;
  std::map<int, CommHang> comms_;  // by comm index: the report lists them in the spool's order
};

class Writer {
 public:
  explicit Writer(const HangReportInput& in) : in_(in) {}

  uint64_t Realtime(uint64_t monotonic_ns) const {
    return in_.detected_realtime_ns - (in_.detected_monotonic_ns - std::min(monotonic_ns, in_.detected_monotonic_ns));
  }
  double Ago(uint64_t monotonic_ns) const {
    return static_cast<double>(in_.detected_monotonic_ns - std::min(monotonic_ns, in_.detected_monotonic_ns)) * 1e-9;
  }
  static std::string Seconds(double s) {
    char b[32];
    snprintf(b, sizeof(b), "%.3f", s);
    return b;
  }
  void Since(JsonBuffer* j, uint64_t start_ns) const {
    j->Key("since_realtime_ns").Uint(Realtime(start_ns)).Char(',');
    j->Key("seconds_before_report").Raw(Seconds(Ago(start_ns)).c_str());
  }

 private:
  const HangReportInput& in_;
};

const char* Direction(const OpenEvent& e) { return !e.direction_known ? "unknown" : e.send ? "send" : "recv"; }

// The first stderr line: what the watchdog itself saw, which needs no spool.
std::string HeadLine(const HangReportInput& in) {
  const Writer w(in);
  return "katrace: HANG: no event completed for " + Writer::Seconds(w.Ago(in.last_progress_monotonic_ns)) +
         " s with " + std::to_string(in.in_flight) + (in.in_flight == 1 ? " collective" : " collectives") +
         " in flight; ";
}

// No report: the hang is still said, with why there is no more to say.
HangReportResult Unreadable(const HangReportInput& in, const std::string& why) {
  HangReportResult result;
  result.message = why;
  result.summary = HeadLine(in) + "no report (" + why + ")\n";
  return result;
}

HangReportResult Build(const HangReportInput& in) {
  HangReportResult result;
  // The capture could not be made readable (a flight dump that could not be written, said in its
  // own warning): the watchdog's own sighting is all there is.
  if (in.spool_path.empty()) return Unreadable(in, "the capture could not be written out for it");
  SpoolReader file;
  std::string error;
  if (!file.Open(in.spool_path, &error)) return Unreadable(in, error);
  ExportProgress progress(false, "");
  SpoolIndex index;
  if (!ScanSpool(file, 1, &progress, &index, &error)) return Unreadable(in, in.spool_path + ": " + error);
  Collector collector;
  {
    EventAssembler assembler(index, 1u << 20, [&](const AssembledEvent& e) { collector.Add(e); });
    StreamMerge merge(file, index, 1, &progress);
    MergedRecord r;
    while (merge.Next(&r)) {
      const spool::RecordType t = r.header.type;
      if (t == spool::RecordType::kStart || t == spool::RecordType::kState || t == spool::RecordType::kStop) {
        assembler.Add(r);
      }
    }
    collector.set_finishing();
    assembler.Finish(in.detected_monotonic_ns);
  }
  const std::vector<CommHang> comms = collector.Result();
  const Writer w(in);

  JsonBuffer j;
  j.Char('{').Key("katrace_hang_report").Int(kHangReportVersion).Char(',');
  j.Key("process").Char('{');
  j.Key("host").String(index.host).Char(',');
  j.Key("pid").Int(index.has_process ? index.process.os_pid : static_cast<int>(file.header().os_pid)).Char(',');
  j.Key("launcher_rank").Int(index.has_process ? index.process.rank : -1).Char(',');
  j.Key("trace").String(index.trace_path).Char(',');
  j.Key("spool").String(in.spool_path).Char('}').Char(',');
  j.Key("report_realtime_ns").Uint(in.detected_realtime_ns).Char(',');
  j.Key("timeout_seconds").Raw(Writer::Seconds(static_cast<double>(in.timeout_ns) * 1e-9).c_str()).Char(',');
  j.Key("last_progress_realtime_ns").Uint(w.Realtime(in.last_progress_monotonic_ns)).Char(',');
  j.Key("seconds_without_progress").Raw(Writer::Seconds(w.Ago(in.last_progress_monotonic_ns)).c_str()).Char(',');
  j.Key("tasks_in_flight").Int(in.in_flight).Char(',');
  j.Key("communicators").Char('[');

  const std::string head = HeadLine(in);
  std::string text;
  bool first_comm = true;
  for (const CommHang& c : comms) {
    const CommInstance* ci = c.comm_index >= 0 && static_cast<size_t>(c.comm_index) < index.comms.size()
                                 ? &index.comms[static_cast<size_t>(c.comm_index)]
                                 : nullptr;
    if (!first_comm) j.Char(',');
    first_comm = false;
    j.Char('{');
    j.Key("comm_hash").String(Hex16(ci != nullptr ? ci->comm_hash : 0)).Char(',');
    j.Key("name").String(ci != nullptr ? ci->name : std::string()).Char(',');
    j.Key("rank").Int(ci != nullptr ? ci->rank : -1).Char(',');
    j.Key("nranks").Int(ci != nullptr ? ci->nranks : 0).Char(',');
    j.Key("tasks_in_flight").Uint(c.tasks).Char(',');
    std::string line = "katrace:   comm " + Hex16(ci != nullptr ? ci->comm_hash : 0) + " rank " +
                       std::to_string(ci != nullptr ? ci->rank : -1) + "/" + std::to_string(ci != nullptr ? ci->nranks : 0) +
                       ":";
    j.Key("oldest_in_flight");
    if (c.has_oldest) {
      const OpenEvent& o = c.oldest;
      j.Char('{').Key("kind").String(KindName(o.kind)).Char(',');
      j.Key("func").String(o.func).Char(',');
      j.Key("seq").Uint(o.seq).Char(',');
      j.Key("bytes").Uint(o.bytes).Char(',');
      if (o.kind == Kind::kP2p) j.Key("peer").Int(o.peer).Char(',');
      w.Since(&j, o.start_ns);
      j.Char('}');
      line += " oldest " + o.func + (o.kind == Kind::kColl ? " seq " + std::to_string(o.seq) : " peer " + std::to_string(o.peer)) +
              " (" + std::to_string(o.bytes) + " B) for " + Writer::Seconds(w.Ago(o.start_ns)) + " s;";
    } else {
      j.Raw("null");
    }
    j.Char(',').Key("open_channels").Char('[');
    bool first = true;
    std::string channels;
    for (const auto& kv : c.channels) {
      if (!first) j.Char(',');
      first = false;
      j.Char('{').Key("channel").Int(kv.first).Char(',');
      w.Since(&j, kv.second.start_ns);
      j.Char('}');
      channels += (channels.empty() ? "" : ",") + std::to_string(kv.first);
    }
    if (!channels.empty()) line += " KernelCh open on channel " + channels + ";";
    j.Raw("],").Key("open_kernel_steps").Char('[');
    first = true;
    for (const auto& kv : c.steps) {
      const OpenEvent& s = kv.second;
      if (!first) j.Char(',');
      first = false;
      j.Char('{').Key("channel").Int(s.channel).Char(',');
      j.Key("direction").String(Direction(s)).Char(',');
      j.Key("peer").Int(s.peer).Char(',');
      j.Key("step").Int(s.step).Char(',');
      j.Key("size").Uint(s.bytes).Char(',');
      w.Since(&j, s.start_ns);
      j.Char('}');
      line += std::string(" KernelStep ") + Direction(s) + " peer " + std::to_string(s.peer) + " channel " +
              std::to_string(s.channel) + " step " + std::to_string(s.step) + " for " + Writer::Seconds(w.Ago(s.start_ns)) +
              " s;";
    }
    j.Raw("],").Key("proxy_steps").Char('[');
    first = true;
    for (const auto& kv : c.proxy_steps) {
      const OpenEvent& s = kv.second;
      if (!first) j.Char(',');
      first = false;
      j.Char('{').Key("peer").Int(s.peer).Char(',');
      j.Key("channel").Int(s.channel).Char(',');
      j.Key("direction").String(Direction(s)).Char(',');
      j.Key("step").Int(s.step).Char(',');
      j.Key("state").String(s.has_state ? StateName(s.state) : "Started").Char(',');
      w.Since(&j, s.start_ns);
      j.Char('}');
      line += " ProxyStep peer " + std::to_string(s.peer) + " " + (s.has_state ? StateName(s.state) : "Started") + ";";
    }
    j.Raw("]}");
    if (line.back() == ';') line.pop_back();
    text += line + "\n";
  }
  // The communicators with nothing open (finalized ones too): they answer for their rank ("it did
  // not hang"), so a merge of many reports can tell a quiet rank from one that sent no report.
  j.Raw("],").Key("quiet_communicators").Char('[');
  bool first_quiet = true;
  for (size_t i = 0; i < index.comms.size(); ++i) {
    const CommInstance& ci = index.comms[i];
    const bool listed = std::any_of(comms.begin(), comms.end(), [&](const CommHang& c) { return c.comm_index == static_cast<int>(i); });
    if (listed) continue;
    if (!first_quiet) j.Char(',');
    first_quiet = false;
    j.Char('{').Key("comm_hash").String(Hex16(ci.comm_hash)).Char(',');
    j.Key("name").String(ci.name).Char(',');
    j.Key("rank").Int(ci.rank).Char(',');
    j.Key("nranks").Int(ci.nranks).Char(',');
    j.Key("finalized").Raw(ci.ended ? "true" : "false").Char('}');
  }
  j.Raw("]}\n");
  if (comms.empty()) text += "katrace:   (nothing open in the spool: its records may have been dropped)\n";
  // Where the trace cannot go (a read-only directory), the spool went elsewhere: the report
  // follows it. Either way the summary reaches stderr.
  std::string path = in.report_path;
  bool written = WriteTextFileAtomically(path, j.str(), &error);
  const size_t ext = in.spool_path.rfind(".kspool");
  const std::string spool_stem = ext != std::string::npos && ext + strlen(".kspool") == in.spool_path.size()
                                     ? in.spool_path.substr(0, ext)
                                     : in.spool_path;
  if (!written && !spool_stem.empty() && spool_stem + ".hang.json" != path) {
    std::string second_error;
    path = spool_stem + ".hang.json";
    written = WriteTextFileAtomically(path, j.str(), &second_error);
  }
  result.summary = head + (written ? "report " + path : "the report could not be written (" + error + ")") + "\n" + text;
  result.ok = written;
  if (!written) result.message = error;
  return result;
}

// Unreadable, from a catch: out of memory again, it says nothing rather than throw.
HangReportResult Said(const HangReportInput& in, const char* what) {
  try {
    return Unreadable(in, std::string("hang report failed") + (what != nullptr ? std::string(": ") + what : ""));
  } catch (...) {
    return HangReportResult{};
  }
}

}  // namespace

HangReportResult WriteHangReport(const HangReportInput& input) {
  try {
    return Build(input);
  } catch (const std::exception& e) {
    return Said(input, e.what());
  } catch (...) {
    return Said(input, nullptr);
  }
}

}  // namespace katrace
