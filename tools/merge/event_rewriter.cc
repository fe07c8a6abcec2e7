// Event rewriting for katrace-merge (see event_rewriter.h). Times are written from integer ns as
// "<us>.<3 digits>", like the plugin, so a merge never rounds.
#include "tools/merge/event_rewriter.h"

#include <functional>

#include "katrace/kind_schema.h"

namespace katrace::tools {
namespace {

constexpr int kFlowIdBits = 40;

void Dump(const Json& value, std::string* out) {
  out->append(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

void Key(const std::string& key, bool* first, std::string* out) {
  if (!*first) out->push_back(',');
  *first = false;
  Dump(Json(key), out);
  out->push_back(':');
}

}  // namespace

bool EventRewriter::MergedSpan(const Json& event, int64_t* start_ns, int64_t* end_ns) const {
  const Json* ts = Field(event, "ts");
  int64_t ts_ns = 0;
  if (ts == nullptr || !UsToNs(*ts, &ts_ns)) return false;
  // A hostile ts near the int64 limits, or a file's clock base far from the others', would wrap.
  if (__builtin_add_overflow(ts_ns, offset_ns_, start_ns)) return false;
  *end_ns = *start_ns;
  const Json* dur = Field(event, "dur");
  int64_t dur_ns = 0;
  if (dur != nullptr && UsToNs(*dur, &dur_ns) && dur_ns > 0) {
    return !__builtin_add_overflow(*start_ns, dur_ns, end_ns);
  }
  return true;
}

bool EventRewriter::ShiftsArg(const std::string& cat, const std::string& key) {
  // The schema is the one list of time arguments (the export writes them from it): a name
  // listed here by hand would miss the next one added, left on its file's old clock base.
  for (const KindSchema& kind : kKindSchema) {
    if (KindNameView(kind.kind) != cat) continue;
    for (uint8_t i = 0; i < kind.nargs; ++i) {
      if (kind.args[i].type == ArgType::kTime && kind.args[i].key == key) return true;
    }
    return false;
  }
  return false;
}

uint64_t EventRewriter::FlowId(const Json& id) const {
  uint64_t value = 0;
  if (AsUint64(id, &value) && value < (uint64_t{1} << kFlowIdBits) && input_ >= 0 &&
      input_ < (int64_t{1} << (62 - kFlowIdBits)) - 1) {
    return (static_cast<uint64_t>(input_ + 1) << kFlowIdBits) | value;
  }
  // Out of range or a string: a hash, kept in the upper half so it cannot meet the form above.
  const uint64_t hash = std::hash<std::string>()(std::to_string(input_) + ':' + id.dump());
  return (hash >> 2) | (uint64_t{1} << 62);
}

void EventRewriter::Write(const Json& event, std::string* out) const {
  const std::string ph = StringField(event, "ph");
  const bool is_flow = ph == "s" || ph == "t" || ph == "f";
  out->push_back('{');
  bool first = true;
  for (const auto& [key, value] : event.items()) {
    Key(key, &first, out);
    int64_t ns = 0;
    int64_t pid = 0;
    if (key == "pid" && AsInt64(value, &pid)) {
      out->append(std::to_string(MapPid(pid)));
    } else if (key == "ts" && UsToNs(value, &ns) && !__builtin_add_overflow(ns, offset_ns_, &ns)) {
      out->append(NsToUsText(ns));
    } else if (key == "dur" && UsToNs(value, &ns)) {
      out->append(NsToUsText(ns));
    } else if (key == "id" && is_flow) {
      out->append(std::to_string(FlowId(value)));
    } else if (key == "args" && value.is_object()) {
      WriteArgs(event, value, out);
    } else {
      Dump(value, out);
    }
  }
  out->push_back('}');
}

void EventRewriter::WriteArgs(const Json& event, const Json& args, std::string* out) const {
  const std::string cat = StringField(event, "cat");
  const bool is_process_name = StringField(event, "name") == "process_name";
  out->push_back('{');
  bool first = true;
  for (const auto& [key, value] : args.items()) {
    Key(key, &first, out);
    int64_t ns = 0;
    if (ShiftsArg(cat, key) && UsToNs(value, &ns) && !__builtin_add_overflow(ns, offset_ns_, &ns)) {
      out->append(NsToUsText(ns));
    } else if (is_process_name && key == "katrace" && value.is_object()) {
      Dump(Header(value), out);
    } else {
      Dump(value, out);
    }
  }
  out->push_back('}');
}

Json EventRewriter::Header(const Json& katrace) const {
  // realtime = base_realtime_ns + ts and monotonic = base_monotonic_ns + ts must keep holding
  // with the shifted ts, so both bases move by the offset (GPU offsets stay valid unchanged).
  Json header = katrace;
  int64_t monotonic = 0, rebased = 0;
  if (const Json* v = Field(katrace, "base_monotonic_ns"); v != nullptr && AsInt64(*v, &monotonic)) {
    header["base_monotonic_ns"] = monotonic - offset_ns_;
  }
  if (const Json* v = Field(katrace, "rebased_ns"); v != nullptr) AsInt64(*v, &rebased);
  header["base_realtime_ns"] = merged_base_realtime_ns_;
  header["rebased_ns"] = rebased + offset_ns_;
  int64_t pid = 0;
  if (const Json* v = Field(katrace, "rank"); v != nullptr && AsInt64(*v, &pid)) header["rank"] = MapPid(pid);
  if (Json* ranks = header.contains("ranks") ? &header["ranks"] : nullptr; ranks != nullptr && ranks->is_array()) {
    // The merged file's header lists the ranks it holds: a rank --ranks left out would claim a
    // pid it has no events on when this file is merged again (the header's ranks are the pids a
    // file reserves), moving the rank that does hold it, as when the ranks of one capture split
    // with --ranks are merged back.
    Json kept = Json::array();
    for (Json& r : *ranks) {
      if (r.is_object() && r.contains("pid") && AsInt64(r["pid"], &pid)) {
        if (keep_pid_ && !keep_pid_(pid)) continue;
        r["pid"] = MapPid(pid);
      }
      kept.push_back(std::move(r));
    }
    *ranks = std::move(kept);
  }
  return header;
}

}  // namespace katrace::tools
