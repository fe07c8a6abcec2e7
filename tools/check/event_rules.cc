// Per-event rules (see event_rules.h). Field types follow what Perfetto's JSON importer accepts;
// each kind's arguments are checked as the kind schema (katrace/kind_schema.h) gives them, the
// one description the exporter writes them from, then by the rules types alone cannot say.
#include "tools/check/event_rules.h"

#include <cmath>

#include "katrace/kind_schema.h"
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

  // The same fields, read without reporting their types again: the schema check (CheckSchemaArgs)
  // reported every argument's type once; the per-kind rules only read values.
  Fields Quiet() const {
    Fields q = *this;
    q.report_types_ = false;
    return q;
  }

  void BadType(const char* key, const Json& v, const char* want) {
    if (!report_types_) return;
    diag_->Error("field", line_,
                 who_ + ": field '" + prefix_ + key + "' must be " + want + ", not " +
                     JsonTypeName(v));
  }

  void OutOfRange(const char* key, const Json& v, const char* want) {
    if (!report_types_) return;
    // A float too large for a double (1e400) parses as infinity, which dump() would print as null.
    const bool infinite = v.is_number_float() && !std::isfinite(v.get<double>());
    diag_->Error("field", line_,
                 who_ + ": field '" + prefix_ + key + "' must be " + want + ", not " +
                     (infinite ? std::string("infinity") : v.dump()));
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
    if (v->is_number()) {
      // A number, just too large: the type alone would read "a number ..., not number".
      OutOfRange(key, *v, "a number of microseconds within +-9e15 (the range the tools compute in)");
    } else {
      BadType(key, *v, "a number of microseconds");
    }
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
  bool report_types_ = true;
};

// The schema's arguments (katrace/kind_schema.h) of a slice of |cat|, or false for a category
// katrace does not write. Recorded kinds carry the common arguments first and their GPU facts last.
struct SchemaArgs {
  const ArgSpec* lists[3] = {};
  size_t sizes[3] = {};
};

bool SchemaArgsOf(const std::string& cat, SchemaArgs* out) {
  for (const KindSchema& s : kKindSchema) {
    if (cat != KindName(s.kind)) continue;
    out->lists[0] = kCommonArgs;
    out->sizes[0] = sizeof(kCommonArgs) / sizeof(kCommonArgs[0]);
    out->lists[1] = s.args;
    out->sizes[1] = s.nargs;
    if (s.gpu_facts) {
      out->lists[2] = kGpuFacts;
      out->sizes[2] = sizeof(kGpuFacts) / sizeof(kGpuFacts[0]);
    }
    return true;
  }
  for (const DerivedSchema& d : kDerivedSchema) {
    if (cat != d.name) continue;
    out->lists[0] = d.args;
    out->sizes[0] = d.nargs;
    return true;
  }
  return false;
}

// One argument, typed as the schema says; required where the exporter always writes it.
void CheckSchemaArg(Fields& args, const ArgSpec& spec, bool all_optional) {
  const char* key = spec.key.data();  // a literal: NUL-terminated
  const Need need = spec.presence == Presence::kAlways && !all_optional ? Need::kRequired : Need::kOptional;
  int64_t number = 0;
  uint64_t unsigned_number = 0;
  bool flag = false;
  std::string text;
  switch (spec.type) {
    case ArgType::kUint: args.Uint(key, need, &unsigned_number); break;
    case ArgType::kInt: args.Int(key, need, &number); break;
    case ArgType::kBool: args.Bool(key, need, &flag); break;
    case ArgType::kString: args.Str(key, need, &text); break;
    case ArgType::kTime: args.Time(key, need, &number); break;
    case ArgType::kHex64: {
      uint64_t hash = 0;
      if (args.Str(key, need, &text) && !ParseCommHash(text, &hash)) {
        args.diag()->Error("field", args.line(),
                           args.who() + ": 'args." + std::string(spec.key) + "' must be 16 hex digits, not " +
                               QuoteForMessage(text));
      }
      break;
    }
  }
}

// Every argument the schema gives the slice's kind. A category katrace does not write (warned
// about elsewhere) is held only to the common arguments, all optional but its id.
void CheckSchemaArgs(Fields& args, const std::string& cat) {
  SchemaArgs schema;
  const bool known = SchemaArgsOf(cat, &schema);
  if (!known) {
    schema.lists[0] = kCommonArgs;
    schema.sizes[0] = sizeof(kCommonArgs) / sizeof(kCommonArgs[0]);
  }
  for (size_t l = 0; l < 3; ++l) {
    for (size_t i = 0; i < schema.sizes[l]; ++i) {
      const ArgSpec& spec = schema.lists[l][i];
      CheckSchemaArg(args, spec, !known && spec.key != "id");
    }
  }
}

// The rules beyond types and presence, per kind; values are read quietly (Fields::Quiet).

void CheckGpuExtent(Fields& args, EventFacts* f) {
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
  uint64_t start = 0, stop = 0;
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
  bool abandoned = false;
  args.Bool("abandoned", Need::kOptional, &abandoned);
  if (abandoned) f->unfinished = true;
  // Stamps outside the run at both ends: drawn at host times, which say nothing of the GPU
  // extent of its collective (the containment check leaves it out, as for a KernelCh).
  args.Bool("host_timed", Need::kOptional, &f->host_timed);
  uint64_t start = 0, ready = 0, stop = 0;
  const bool has_start = args.Uint("gpu_start_ns", Need::kOptional, &start);
  const bool has_ready = args.Uint("gpu_ready_ns", Need::kOptional, &ready);
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
  Fields checked(args_value, "args.", top.diag(), top.line(), top.who());
  if (args_value == nullptr) return;
  const std::string& cat = f->cat;
  CheckSchemaArgs(checked, cat);
  Fields args = checked.Quiet();
  f->has_id = args.Uint("id", Need::kOptional, &f->id);
  f->has_parent = args.Uint("parent", Need::kOptional, &f->parent);
  bool incomplete = false;
  if (args.Bool("incomplete", Need::kOptional, &incomplete)) f->unfinished = incomplete;
  args.Bool("late", Need::kOptional, &f->late);
  if (cat == "Coll" || cat == "P2p") {
    CheckGpuExtent(args, f);
  } else if (cat == "KernelCh") {
    CheckKernelChArgs(args, f);
  } else if (cat == "KernelStep") {
    CheckKernelStepArgs(args, f);
  } else if (cat == "CollGpu") {
    f->has_coll_ref = args.Uint("coll", Need::kOptional, &f->coll_ref);
  } else if (cat == "ProxyStepState") {
    f->has_owner = args.Uint("proxy_step", Need::kOptional, &f->owner);
  } else if (cat == "KernelStepWait" || cat == "KernelStepTransfer") {
    f->has_owner = args.Uint("kernel_step", Need::kOptional, &f->owner);
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
