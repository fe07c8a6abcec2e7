// Per-event rules (see event_rules.h). Field types follow what Perfetto's JSON importer accepts
// and what docs/trace-format.md promises; katrace-specific args are checked only for the kinds
// the format defines.
#include "tools/check/event_rules.h"

#include "tools/common/event_kinds.h"
#include "tools/common/utf8_text.h"

namespace katrace::tools {
namespace {

enum class Need { kRequired, kOptional };

// Checks fields of one object (the event or its args) and reports in the event's name.
class Fields {
 public:
  Fields(const Json* object, std::string prefix, Diagnostics* diag, uint64_t line,
         std::string who)
      : object_(object), prefix_(std::move(prefix)), diag_(diag), line_(line),
        who_(std::move(who)) {}

  const Json* Get(const char* key, Need need) {
    const Json* v = object_ == nullptr ? nullptr : Field(*object_, key);
    if (v == nullptr && need == Need::kRequired) {
      diag_->Error("field", line_, who_ + ": missing field '" + prefix_ + key + "'");
    }
    return v;
  }

  void BadType(const char* key, const Json& v, const char* want) {
    diag_->Error("field", line_,
                 who_ + ": field '" + prefix_ + key + "' must be " + want + ", not " +
                     JsonTypeName(v));
  }

  void OutOfRange(const char* key, const Json& v, const char* want) {
    diag_->Error("field", line_,
                 who_ + ": field '" + prefix_ + key + "' must be " + want + ", not " + v.dump());
  }

  bool Int(const char* key, Need need, int64_t* out) {
    const Json* v = Get(key, need);
    if (v == nullptr) return false;
    if (AsInt64(*v, out)) return true;
    if (v->is_number_unsigned()) {
      // An integer, just too big: the type alone would read "an integer, not integer".
      OutOfRange(key, *v, "at most 9223372036854775807 (INT64_MAX)");
    } else {
      BadType(key, *v, "an integer");
    }
    return false;
  }

  bool Uint(const char* key, Need need, uint64_t* out) {
    const Json* v = Get(key, need);
    if (v == nullptr) return false;
    if (AsUint64(*v, out)) return true;
    if (v->is_number_integer()) {
      OutOfRange(key, *v, "non-negative");
    } else {
      BadType(key, *v, "a non-negative integer");
    }
    return false;
  }

  bool Str(const char* key, Need need, std::string* out) {
    const Json* v = Get(key, need);
    if (v == nullptr) return false;
    if (v->is_string()) {
      *out = v->get<std::string>();
      return true;
    }
    BadType(key, *v, "a string");
    return false;
  }

  bool Bool(const char* key, Need need, bool* out) {
    const Json* v = Get(key, need);
    if (v == nullptr) return false;
    if (v->is_boolean()) {
      *out = v->get<bool>();
      return true;
    }
    BadType(key, *v, "a boolean");
    return false;
  }

  // A time in trace microseconds, returned in ns.
  bool Time(const char* key, Need need, int64_t* ns) {
    const Json* v = Get(key, need);
    if (v == nullptr) return false;
    if (UsToNs(*v, ns)) return true;
    BadType(key, *v, "a number of microseconds");
    return false;
  }

  const std::string& who() const { return who_; }
  uint64_t line() const { return line_; }
  Diagnostics* diag() const { return diag_; }

 private:
  const Json* object_;
  std::string prefix_;
  Diagnostics* diag_;
  uint64_t line_;
  std::string who_;
};

void CheckCollArgs(Fields& args, bool is_coll, EventFacts* f) {
  std::string text;
  int64_t number = 0;
  args.Str("func", Need::kRequired, &text);
  args.Int("bytes", Need::kRequired, &number);
  if (is_coll) {
    args.Int("seq", Need::kRequired, &number);
    args.Str("algo", Need::kRequired, &text);
    args.Str("proto", Need::kRequired, &text);
  } else {
    args.Int("peer", Need::kRequired, &number);
  }
  int64_t start = 0, end = 0;
  const bool has_start = args.Time("gpu_start", Need::kOptional, &start);
  const bool has_end = args.Time("gpu_end", Need::kOptional, &end);
  if (has_start != has_end) {
    args.diag()->Error("field", args.line(),
                       args.who() + ": has only one of 'args.gpu_start' and 'args.gpu_end'");
  } else if (has_start) {
    f->has_gpu_extent = true;
    f->gpu_start_ns = start;
    f->gpu_end_ns = end;
    if (end < start) {
      args.diag()->Error("gpu-time", args.line(),
                         args.who() + ": GPU extent ends before it starts (gpu_end " +
                             NsToUsText(end) + " < gpu_start " + NsToUsText(start) + ")");
    }
  }
}

void CheckKernelChArgs(Fields& args, EventFacts* facts) {
  const EventFacts& f = *facts;
  int64_t channel = 0;
  uint64_t start = 0, stop = 0;
  args.Int("channel", Need::kRequired, &channel);
  // A stamp that never arrived is absent; the slice then uses host times and says so.
  bool host_timed = false;
  args.Bool("host_timed", Need::kOptional, &host_timed);
  // Host times say nothing about the GPU extent of the parent (a KernelCh stopped with NULL
  // args has no stop stamp): the containment check leaves it out.
  facts->host_timed = host_timed;
  const Need stamps = host_timed || f.unfinished ? Need::kOptional : Need::kRequired;
  // Both read, so that each missing one is reported.
  const bool has_start = args.Uint("gpu_start_ns", stamps, &start);
  const bool has_stop = args.Uint("gpu_stop_ns", stamps, &stop);
  if (!has_start || !has_stop || f.unfinished || host_timed) return;
  // The exporter flags what it could not place as measured: a stop before the start (drawn with
  // zero length at the start) and times held within the run (clamped). Flagged, it is a fact
  // about the stamps, not an error of the trace.
  bool flagged_stop = false, clamped = false;
  args.Bool("gpu_stop_before_start", Need::kOptional, &flagged_stop);
  args.Bool("clamped", Need::kOptional, &clamped);
  if (stop < start) {
    std::string text = args.who() + ": GPU stop before start (gpu_stop_ns " + std::to_string(stop) +
                       " < gpu_start_ns " + std::to_string(start) + ")";
    if (flagged_stop) {
      args.diag()->Warning("gpu-time", args.line(), text + ", flagged gpu_stop_before_start");
    } else {
      args.diag()->Error("gpu-time", args.line(), text);
    }
  } else if (!clamped && f.has_dur && static_cast<uint64_t>(f.dur_ns) != stop - start) {
    args.diag()->Warning("gpu-time", args.line(),
                         args.who() + ": dur " + NsToUsText(f.dur_ns) +
                             " us differs from gpu_stop_ns - gpu_start_ns = " +
                             std::to_string(stop - start) + " ns");
  }
}

void CheckKernelStepArgs(Fields& args, EventFacts* f) {
  int64_t number = 0;
  bool send = false;
  args.Int("channel", Need::kRequired, &number);
  args.Bool("send", Need::kRequired, &send);
  args.Int("peer", Need::kRequired, &number);
  args.Int("step", Need::kRequired, &number);
  args.Int("size", Need::kRequired, &number);
  bool abandoned = false;
  args.Bool("abandoned", Need::kOptional, &abandoned);
  if (abandoned) f->unfinished = true;
  // Stamps outside the run at both ends: drawn at host times, which say nothing of the GPU
  // extent of its collective (the containment check leaves it out, as for a KernelCh).
  args.Bool("host_timed", Need::kOptional, &f->host_timed);
  uint64_t start = 0, ready = 0, stop = 0;
  // Both read, so that each missing one is reported.
  const bool has_start = args.Uint("gpu_start_ns", Need::kRequired, &start);
  const bool has_ready = args.Uint("gpu_ready_ns", Need::kRequired, &ready);
  const bool ok = has_start && has_ready;
  // A step whose stop never came (abandoned, incomplete, or the plugin saw no stop state) has
  // no stop stamp; the plugin then ends it at its ready stamp, so it is checked as unfinished.
  const bool has_stop = args.Uint("gpu_stop_ns", Need::kOptional, &stop);
  if (!has_stop) f->unfinished = true;
  if (!ok) return;
  // gpu_start_ns 0 means the wait was not measured.
  if (start != 0 && ready < start) {
    args.diag()->Error("gpu-time", args.line(),
                       args.who() + ": transfer starts before the wait (gpu_ready_ns " +
                           std::to_string(ready) + " < gpu_start_ns " + std::to_string(start) +
                           ")");
  }
  bool flagged_stop = false;
  args.Bool("gpu_stop_before_start", Need::kOptional, &flagged_stop);
  bool clamped = false;
  args.Bool("clamped", Need::kOptional, &clamped);
  if (has_stop && !f->unfinished && stop < ready) {
    std::string text = args.who() + ": GPU stop before start (gpu_stop_ns " + std::to_string(stop) +
                       " < gpu_ready_ns " + std::to_string(ready) + ")";
    if (flagged_stop) {
      args.diag()->Warning("gpu-time", args.line(), text + ", flagged gpu_stop_before_start");
    } else {
      args.diag()->Error("gpu-time", args.line(), text);
    }
  }
}

void CheckSliceArgs(Fields& top, EventFacts* f) {
  const Json* args_value = top.Get("args", Need::kRequired);
  if (args_value != nullptr && !args_value->is_object()) {
    top.BadType("args", *args_value, "an object");
    return;
  }
  Fields args(args_value, "args.", top.diag(), top.line(), top.who());
  if (args_value == nullptr) return;
  // Derived slices (a Coll's GPU extent, a step's halves, proxy state intervals) are not
  // records of their own, so only recorded kinds must carry a record id.
  const bool derived = IsDerivedKind(f->cat);
  f->has_id = args.Uint("id", derived ? Need::kOptional : Need::kRequired, &f->id);
  f->has_parent = args.Uint("parent", Need::kOptional, &f->parent);
  bool incomplete = false;
  if (args.Bool("incomplete", Need::kOptional, &incomplete)) f->unfinished = incomplete;
  args.Bool("late", Need::kOptional, &f->late);
  std::string comm;
  if (args.Str("comm", Need::kOptional, &comm)) {
    uint64_t hash = 0;
    if (!ParseCommHash(comm, &hash)) {
      top.diag()->Error("field", top.line(),
                        top.who() + ": 'args.comm' must be 16 hex digits, not " + QuoteForMessage(comm));
    }
  }
  int64_t rank = 0;
  args.Int("rank", Need::kOptional, &rank);
  const std::string& cat = f->cat;
  if (cat == "Coll" || cat == "P2p") {
    CheckCollArgs(args, cat == "Coll", f);
  } else if (cat == "KernelCh") {
    CheckKernelChArgs(args, f);
  } else if (cat == "KernelStep") {
    CheckKernelStepArgs(args, f);
  } else if (cat == "CollGpu") {
    f->has_coll_ref = args.Uint("coll", Need::kRequired, &f->coll_ref);
    bool flag = false;
    args.Bool("clamped", Need::kOptional, &flag);
    args.Bool("gpu_stop_before_start", Need::kOptional, &flag);
  } else if (cat == "ProxyStepState") {
    f->has_owner = args.Uint("proxy_step", Need::kOptional, &f->owner);
  } else if (cat == "KernelStepWait" || cat == "KernelStepTransfer") {
    f->has_owner = args.Uint("kernel_step", Need::kOptional, &f->owner);
  } else if (cat == "ProxyOp") {
    int64_t number = 0;
    bool send = false;
    args.Int("channel", Need::kOptional, &number);
    args.Int("peer", Need::kOptional, &number);
    args.Bool("send", Need::kOptional, &send);
  }
}

void CheckSlice(Fields& top, EventFacts* f) {
  f->has_ts = top.Time("ts", Need::kRequired, &f->ts_ns);
  int64_t dur = 0;
  if (top.Time("dur", Need::kRequired, &dur)) {
    if (dur < 0) {
      top.diag()->Error("time", top.line(),
                        top.who() + ": negative dur " + NsToUsText(dur) + " (stop before start)");
    } else {
      f->has_dur = true;
      f->dur_ns = dur;
    }
  }
  if (top.Str("cat", Need::kRequired, &f->cat) && !IsKnownKind(f->cat)) {
    top.diag()->Warning("kind", top.line(), top.who() + ": unknown event kind " + QuoteForMessage(f->cat));
  }
  CheckSliceArgs(top, f);
}

void CheckMetadata(Fields& top, const EventFacts& f) {
  const Json* args_value = top.Get("args", Need::kRequired);
  if (args_value != nullptr && !args_value->is_object()) {
    top.BadType("args", *args_value, "an object");
    return;
  }
  Fields args(args_value, "args.", top.diag(), top.line(), top.who());
  if (args_value == nullptr) return;
  std::string text;
  int64_t number = 0;
  if (f.name == "process_name" || f.name == "thread_name") {
    args.Str("name", Need::kRequired, &text);
  } else if (f.name == "thread_sort_index" || f.name == "process_sort_index") {
    args.Int("sort_index", Need::kRequired, &number);
  } else if (f.name == "process_labels") {
    args.Str("labels", Need::kRequired, &text);  // where a rank ran: "host, pid N"
  } else {
    top.diag()->Warning("metadata", top.line(),
                        top.who() + ": metadata " + QuoteForMessage(f.name) + " is not one katrace writes");
  }
}

void CheckFlow(const Json& event, Fields& top, EventFacts* f) {
  f->has_ts = top.Time("ts", Need::kRequired, &f->ts_ns);
  top.Str("cat", Need::kRequired, &f->cat);
  const Json* id = top.Get("id", Need::kRequired);
  if (id != nullptr) {
    if (FlowKeyOf(event, &f->flow_key)) {
      f->has_flow_key = true;
    } else {
      top.BadType("id", *id, "an integer or a string");
    }
  }
  if (f->ph == 'f') {
    const Json* bp = Field(event, "bp");
    if (bp == nullptr || *bp != "e") {
      top.diag()->Error("flow", top.line(),
                        top.who() + ": flow end without \"bp\":\"e\" binds to the next slice, "
                                    "not the enclosing one");
    }
  }
}

void CheckCounter(Fields& top, EventFacts* f) {
  f->has_ts = top.Time("ts", Need::kRequired, &f->ts_ns);
  const Json* args = top.Get("args", Need::kRequired);
  if (args == nullptr) return;
  if (!args->is_object() || args->empty()) {
    top.diag()->Error("field", top.line(),
                      top.who() + ": counter 'args' must be an object of numbers");
    return;
  }
  for (const auto& [key, value] : args->items()) {
    if (!value.is_number()) {
      top.diag()->Error("field", top.line(),
                        top.who() + ": counter value 'args." + key + "' must be a number, not " +
                            JsonTypeName(value));
    }
  }
}

void CheckInstant(const Json& event, Fields& top, EventFacts* f) {
  f->has_ts = top.Time("ts", Need::kRequired, &f->ts_ns);
  const Json* scope = Field(event, "s");
  if (scope != nullptr && *scope != "g" && *scope != "p" && *scope != "t") {
    top.diag()->Error("field", top.line(),
                      top.who() + ": instant scope 's' must be \"g\", \"p\" or \"t\"");
  }
}

}  // namespace

std::string DescribeEvent(const EventFacts& f) {
  std::string out(1, f.ph == 0 ? '?' : f.ph);
  // Names come from the file: quoted with a bounded length, since a hostile name can be huge.
  if (!f.cat.empty()) out += " " + BoundedForMessage(f.cat, 40);
  if (!f.name.empty()) {
    const std::string name = BoundedForMessage(f.name, 80);
    out += f.ph == 'M' ? " " + name : " \"" + name + "\"";
  }
  return out;
}

bool CheckEventRules(const TraceEvent& event, Diagnostics* diag, EventFacts* f) {
  const Json& json = event.json;
  const std::string where = "event #" + std::to_string(event.index);
  if (json.empty()) {
    diag->Error("sentinel", event.line,
                where + ": empty {} event; Perfetto's JSON tokenizer fails on it");
    return false;
  }
  const Json* ph = Field(json, "ph");
  if (ph != nullptr && ph->is_string() && ph->get<std::string>().size() == 1) {
    f->ph = ph->get<std::string>()[0];
  }
  f->name = StringField(json, "name");
  f->cat = StringField(json, "cat");
  Fields top(&json, "", diag, event.line, where + " (" + DescribeEvent(*f) + ")");
  if (ph == nullptr) {
    top.Get("ph", Need::kRequired);
    return true;
  }
  if (f->ph == 0) {
    diag->Error("field", event.line, top.who() + ": 'ph' must be a one-letter string");
    return true;
  }
  std::string name;
  top.Str("name", Need::kRequired, &name);
  f->has_pid = top.Int("pid", Need::kRequired, &f->pid);
  f->has_tid = top.Int("tid", Need::kRequired, &f->tid);
  switch (f->ph) {
    case 'X': CheckSlice(top, f); break;
    case 'M': CheckMetadata(top, *f); break;
    case 's': case 't': case 'f': CheckFlow(json, top, f); break;
    case 'C': CheckCounter(top, f); break;
    case 'i': case 'I': CheckInstant(json, top, f); break;
    default:
      diag->Error("phase", event.line,
                  top.who() + ": phase '" + std::string(1, f->ph) +
                      "' is not one katrace writes (X, M, s, f, C, i)");
  }
  return true;
}

}  // namespace katrace::tools
