// Metadata, header and footer rules (see metadata_rules.h).
#include "tools/check/metadata_rules.h"

#include "katrace/drain_counters.h"
#include "tools/common/plural.h"

namespace katrace::tools {
namespace {

// Traces from before layout by construction also have overflow_moves (slices the exporter moved);
// it is no longer written, and not asked for.
const char* const kFooterCounters[] = {"incomplete", "io_errors"};
const char* const kFooterOptional[] = {"late_children", "gpu_offset_ns", "gpu_offset_error_ns",
                                       "gpu_offset_samples"};
// The spool's size and where it stops: integers; clean_end is the one boolean.
const char* const kSpoolCounters[] = {"blocks", "bytes", "cut_offset"};

}  // namespace

uint32_t MetadataRules::TrackIndex(int64_t pid, int64_t tid) {
  auto [it, inserted] = tracks_.try_emplace({pid, tid});
  if (inserted) it->second.index = static_cast<uint32_t>(tracks_.size() - 1);
  return it->second.index;
}

std::vector<std::string> MetadataRules::TrackNames() const {
  std::vector<std::string> names(tracks_.size());
  for (const auto& [key, track] : tracks_) {
    names[track.index] = "pid " + std::to_string(key.first) + " tid " +
                         std::to_string(key.second) +
                         (track.named ? " \"" + track.name + "\"" : std::string(" (unnamed)"));
  }
  return names;
}

void MetadataRules::OnEvent(const TraceEvent& event, const EventFacts& f) {
  const Json* katrace = HeaderObjectOf(event.json);
  if (!saw_first_event_) {
    saw_first_event_ = true;
    if (katrace == nullptr) {
      diag_->Error("header", event.line,
                   "traceEvents[0] is not the katrace header (a process_name event with "
                   "args.katrace); merge and stats need it first");
    }
  }
  if (f.ph == 'C' && f.name == "katrace drops") saw_drop_counter_ = true;
  if (!f.has_pid) return;
  Process& process = processes_[f.pid];
  if (process.first_line == 0) process.first_line = event.line;
  if (f.ph == 'M' && f.name == "process_name") {
    process.named = true;
    if (katrace != nullptr) OnHeader(event, *katrace, f.pid);
  }
  if (!f.has_tid) return;
  if (f.ph == 'M' && f.name == "thread_name") {
    TrackIndex(f.pid, f.tid);
    Track& track = tracks_[{f.pid, f.tid}];
    if (track.named) {
      diag_->Warning("metadata", event.line,
                     "event #" + std::to_string(event.index) + ": second thread_name for pid " +
                         std::to_string(f.pid) + " tid " + std::to_string(f.tid));
    }
    track.named = true;
    // Without args (reported by the event rules) the track has no name.
    const Json* args = Field(event.json, "args");
    track.name = args != nullptr ? StringField(*args, "name") : "";
  } else if (f.ph == 'X' || f.ph == 's' || f.ph == 't' || f.ph == 'f') {
    TrackIndex(f.pid, f.tid);
    Track& track = tracks_[{f.pid, f.tid}];
    if (track.slices++ == 0) track.first_line = event.line;
  }
}

void MetadataRules::OnHeader(const TraceEvent& event, const Json& katrace, int64_t pid) {
  Process& process = processes_[pid];
  const std::string who = "event #" + std::to_string(event.index) + " (katrace header)";
  if (process.has_header) {
    diag_->Error("header", event.line, who + ": a second header for pid " + std::to_string(pid));
    return;
  }
  std::vector<std::string> problems;
  if (!ParseHeader(katrace, &process.header, &problems)) {
    process.bad_header = true;
    for (std::string& problem : problems) {
      if (problem.find("base_") != std::string::npos) problem += " (the clock base)";
      diag_->Error("header", event.line, who + ": " + problem);
    }
    return;
  }
  process.has_header = true;
  if (process.header.rank != pid) {
    diag_->Error("header", event.line,
                 who + ": header rank " + std::to_string(process.header.rank) +
                     " differs from the event's pid " + std::to_string(pid) +
                     " (pid must be the rank)");
  }
  if (process.header.version > kTraceVersion) {
    diag_->Warning("header", event.line,
                   who + ": format version " + std::to_string(process.header.version) +
                       " is newer than this tool (" + std::to_string(kTraceVersion) + ")");
  }
}

void MetadataRules::OnFooter(const Json& other_data) {
  const Json* katrace = Field(other_data, "katrace");
  if (katrace == nullptr || !katrace->is_object()) return;
  has_footer_ = true;
  footer_ = *katrace;
  footer_format_ = StringField(footer_, "format");
}

void MetadataRules::Finish(bool whole_file) {
  for (const auto& [pid, process] : processes_) {
    const std::string p = "pid " + std::to_string(pid);
    if (!process.named) {
      diag_->Error("metadata", process.first_line, p + " has no process_name metadata");
    } else if (!process.has_header && !process.bad_header) {
      diag_->Error("header", process.first_line,
                   p + " has no katrace header (process_name args.katrace with the clock base)");
    }
  }
  for (const auto& [key, track] : tracks_) {
    if (track.slices > 0 && !track.named) {
      diag_->Error("metadata", track.first_line,
                   "track pid " + std::to_string(key.first) + " tid " +
                       std::to_string(key.second) + " has no thread_name metadata (" +
                       Plural(track.slices, "event") + " on it)");
    }
  }
  if (!whole_file) return;
  if (!saw_drop_counter_) {
    diag_->Warning("drops", 0, "no 'katrace drops' counter track (C events)");
  }
  CheckFooter();
}

void MetadataRules::CheckFooter() {
  if (!has_footer_) {
    diag_->Error("footer", 0,
                 "no footer (otherData.katrace): drop counters and GPU clock placement are "
                 "missing");
    return;
  }
  auto require_object = [&](const char* key) -> const Json* {
    const Json* v = Field(footer_, key);
    if (v == nullptr || !v->is_object()) {
      diag_->Error("footer", 0,
                   std::string("footer ") + (v == nullptr ? "lacks" : "has a non-object") +
                       " '" + key + "'" +
                       (std::string(key) == "drops" ? " (the drop counters)" : ""));
      return nullptr;
    }
    for (const auto& [name, value] : v->items()) {
      if (!value.is_number_integer() && !value.is_object()) {
        diag_->Error("footer", 0, std::string("footer '") + key + "." + name +
                                      "' must be an integer, not " + JsonTypeName(value));
      }
    }
    return v;
  };
  auto require_int = [&](const char* key, bool required) -> int64_t {
    const Json* v = Field(footer_, key);
    int64_t value = 0;
    if (v == nullptr) {
      diag_->Report(required ? Severity::kError : Severity::kWarning, "footer", 0,
                    std::string("footer lacks '") + key + "'");
    } else if (!AsInt64(*v, &value)) {
      diag_->Error("footer", 0,
                   std::string("footer '") + key + "' must be an integer, not " +
                       JsonTypeName(*v));
    }
    return value;
  };
  require_object("events");
  const Json* drops = require_object("drops");
  if (merged()) {
    const Json* inputs = Field(footer_, "inputs");
    if (inputs == nullptr || !inputs->is_array()) {
      diag_->Error("footer", 0, "merged footer lacks the 'inputs' array");
    }
    // katrace-merge lists each input's spool (see merged_footer.h); inputs from before the
    // spool have none, so an absent list is fine.
    if (const Json* spools = Field(footer_, "spool")) {
      if (!spools->is_array()) {
        diag_->Error("footer", 0,
                     std::string("merged footer 'spool' must be an array, not ") +
                         JsonTypeName(*spools));
      } else {
        for (const Json& spool : *spools) {
          int64_t rank = 0;
          const Json* r = spool.is_object() ? Field(spool, "rank") : nullptr;
          const bool has_rank = r != nullptr && AsInt64(*r, &rank);
          CheckSpool(&spool, has_rank ? "rank " + std::to_string(rank) + ": " : "");
        }
      }
    }
  } else {
    std::vector<std::string> problems;
    TraceHeader repeated;
    if (!ParseHeader(footer_, &repeated, &problems)) {
      for (const std::string& problem : problems) {
        diag_->Error("footer", 0, "footer repeats the header incompletely: " + problem);
      }
    } else if (processes_.count(repeated.rank) != 0 && processes_[repeated.rank].has_header) {
      const TraceHeader& h = processes_[repeated.rank].header;
      if (h.base_realtime_ns != repeated.base_realtime_ns ||
          h.base_monotonic_ns != repeated.base_monotonic_ns) {
        diag_->Error("footer", 0, "footer clock base differs from the header's");
      }
    } else if (processes_.count(repeated.rank) == 0 || !processes_[repeated.rank].bad_header) {
      // (A header that is there but malformed was reported where it is: there is no base to
      // compare with, and saying it has none would be wrong.)
      diag_->Error("footer", 0,
                   "footer names rank " + std::to_string(repeated.rank) +
                       ", which has no header in this file");
    }
    for (const char* key : kFooterCounters) require_int(key, true);
    for (const char* key : kFooterOptional) require_int(key, false);
    // Traces of the plugin before the spool (its writer thread) say `writer_stalls` and have no
    // `spool` or `strings_unnamed`: accepted as they are, rather than warned about keys that
    // writer never had.
    if (Field(footer_, "waits") == nullptr && Field(footer_, "writer_stalls") != nullptr) {
      require_int("writer_stalls", false);
    } else {
      require_int("waits", false);
      const int64_t unnamed = require_int("strings_unnamed", false);
      if (unnamed > 0) {
        diag_->Warning("footer", 0,
                       Plural(unnamed, "string") + " could not be interned (string table full): " +
                           "those events carry their kind's default name");
      }
      CheckSpool(Field(footer_, "spool"), "");
    }
    const Json* drain = require_object("drain");
    if (drain != nullptr) {
      for (const DrainCounterField& counter : kDrainCounterFields) {
        // `late` came with the spool: traces from before it lack it and are still whole.
        const bool optional = std::string(counter.name) == "late";
        if (Field(*drain, counter.name) == nullptr) {
          diag_->Report(optional ? Severity::kWarning : Severity::kError, "footer", 0,
                        std::string("footer 'drain' lacks '") + counter.name + "'");
        }
      }
      int64_t lost = 0;
      if (const Json* v = Field(*drain, "lost_overrun"); v != nullptr && AsInt64(*v, &lost) &&
                                                         lost > 0) {
        diag_->Warning("drops", 0,
                       std::to_string(lost) + " KernelStep records were lost to ring overrun");
      }
    }
    const Json* io = Field(footer_, "io_errors");
    int64_t io_errors = 0;
    if (io != nullptr && AsInt64(*io, &io_errors) && io_errors > 0) {
      diag_->Error("footer", 0,
                   "the writer reported " + std::to_string(io_errors) +
                       " write errors: this trace is incomplete");
    }
  }
  if (drops != nullptr) {
    int64_t total = 0;
    std::string detail;
    for (const auto& [kind, value] : drops->items()) {
      int64_t n = 0;
      if (AsInt64(value, &n) && n > 0) {
        total += n;
        detail += (detail.empty() ? "" : ", ") + kind + " " + std::to_string(n);
      }
    }
    if (total > 0) {
      diag_->Warning("drops", 0,
                     Plural(total, "event") + (total == 1 ? " was" : " were") +
                         " dropped (a full pool or buffer, or an unwritable spool): " + detail);
    }
  }
}

void MetadataRules::CheckSpool(const Json* spool, const std::string& who) {
  if (spool == nullptr) {
    diag_->Warning("footer", 0, who + "footer lacks 'spool' (the spool the trace was exported from)");
    return;
  }
  if (!spool->is_object()) {
    diag_->Error("footer", 0, who + "footer 'spool' must be an object, not " + JsonTypeName(*spool));
    return;
  }
  for (const char* key : kSpoolCounters) {
    const Json* v = Field(*spool, key);
    int64_t n = 0;
    if (v == nullptr || !AsInt64(*v, &n) || n < 0) {
      // A number that is no count (negative, fractional, past INT64_MAX) is shown as it is:
      // its type alone would read "a count, not integer".
      diag_->Error("footer", 0,
                   who + "footer 'spool." + key + "' must be a count, not " +
                       (v == nullptr ? std::string("absent")
                        : v->is_number() ? v->dump()
                                         : std::string(JsonTypeName(*v))));
    }
  }
  const Json* clean = Field(*spool, "clean_end");
  if (clean == nullptr || !clean->is_boolean()) {
    diag_->Error("footer", 0,
                 who + "footer 'spool.clean_end' must be a boolean, not " +
                     (clean == nullptr ? "absent" : JsonTypeName(*clean)));
    return;
  }
  // A valid trace, but of a capture that never closed (a killed job): say what is missing.
  if (!clean->get<bool>()) {
    int64_t cut = 0;
    if (const Json* v = Field(*spool, "cut_offset")) AsInt64(*v, &cut);
    diag_->Warning("footer", 0,
                   who + "the spool was not closed cleanly (cut at offset " + std::to_string(cut) +
                       "): events after the cut are missing, events open at it are incomplete");
  }
}

}  // namespace katrace::tools
