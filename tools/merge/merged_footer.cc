// Merged footer (see merged_footer.h).
#include "tools/merge/merged_footer.h"

#include "tools/common/trace_header.h"

namespace katrace::tools {
namespace {

const char* const kSummedObjects[] = {"events", "drops", "drain"};
const char* const kSummedCounters[] = {"incomplete", "late_children", "gpu_before_launch", "overflow_moves",
                                       "waits",      "strings_unnamed", "io_errors"};
// Inputs from the plugin before the spool counted the same waits as `writer_stalls`.
const char* const kOlderWaits = "writer_stalls";

void AddInto(Json* sum, const Json& value) {
  int64_t n = 0;
  if (!AsInt64(value, &n)) return;
  int64_t have = 0;
  if (!sum->is_null()) AsInt64(*sum, &have);
  *sum = have + n;
}

}  // namespace

MergedFooter::MergedFooter()
    : sums_(Json::object()), spools_(Json::array()), inputs_(Json::array()) {
  for (const char* key : kSummedObjects) sums_[key] = Json::object();
  for (const char* key : kSummedCounters) sums_[key] = 0;
}

void MergedFooter::AddInput(const std::string& path, int64_t rank, int64_t offset_ns,
                            uint64_t events_in, uint64_t events_out, const Json* footer,
                            const std::string& problem,
                            const std::vector<std::pair<int64_t, int64_t>>& pid_map,
                            const RankSelection& ranks) {
  Json input = Json::object();
  input["file"] = path;
  input["rank"] = rank;
  input["pids"] = Json::array();
  Json remap = Json::array();
  for (const auto& [own, merged] : pid_map) {
    pids_.insert(merged);
    input["pids"].push_back(merged);
    if (own != merged) remap.push_back({{"from", own}, {"to", merged}});
  }
  if (!remap.empty()) input["pid_remap"] = std::move(remap);
  input["rebased_ns"] = offset_ns;
  input["events_read"] = events_in;
  input["events_written"] = events_out;
  if (!problem.empty()) input["problem"] = problem;
  if (footer != nullptr) {
    input["footer"] = *footer;
    AddCaptures(*footer, rank, ranks);
  }
  inputs_.push_back(std::move(input));
}

void MergedFooter::NoteHostShift(int64_t ns) {
  if (!inputs_.empty()) inputs_.back()["host_shift_ns"] = ns;
}

namespace {

// Whether a merged footer's input entry holds a rank |ranks| keeps: its `pids` are pids of the
// merged file, which --ranks selects on. An entry without pids is kept.
bool PartIsSelected(const Json& input, const RankSelection& ranks) {
  const Json* pids = Field(input, "pids");
  if (ranks.all() || pids == nullptr || !pids->is_array()) return true;
  for (const Json& pid : *pids) {
    int64_t value = 0;
    if (AsInt64(pid, &value) && ranks.Contains(value)) return true;
  }
  return false;
}

}  // namespace

void MergedFooter::AddCaptures(const Json& footer, int64_t rank, const RankSelection& ranks) {
  // A merged input's sums are its inputs' footers summed: those footers are added instead, so
  // that a capture that reaches this merge twice (its ranks split with --ranks, each part
  // carrying the whole capture's footer, then merged back) counts once.
  if (StringField(footer, "format") == kMergedFormat) {
    if (const Json* inputs = Field(footer, "inputs"); inputs != nullptr && inputs->is_array()) {
      for (const Json& input : *inputs) {
        const Json* part = input.is_object() ? Field(input, "footer") : nullptr;
        if (part == nullptr || !part->is_object() || !PartIsSelected(input, ranks)) continue;
        int64_t part_rank = rank;
        if (const Json* r = Field(input, "rank")) AsInt64(*r, &part_rank);
        // Its own parts' pids are those of the file it was merged into: all of them count.
        AddCaptures(*part, part_rank, RankSelection());
      }
      return;
    }
  }
  // One capture: its footer repeats its header, whose host, OS pid and clock base name it.
  const Json* host = Field(footer, "host");
  const Json* os_pid = Field(footer, "os_pid");
  const Json* base = Field(footer, "base_realtime_ns");
  if (host != nullptr && os_pid != nullptr && base != nullptr &&
      !captures_.insert(host->dump() + ' ' + os_pid->dump() + ' ' + base->dump()).second) {
    return;
  }
  for (const char* key : kSummedObjects) {
    const Json* part = Field(footer, key);
    if (part == nullptr || !part->is_object()) continue;
    for (const auto& [name, value] : part->items()) AddInto(&sums_[key][name], value);
  }
  for (const char* key : kSummedCounters) {
    if (const Json* v = Field(footer, key)) AddInto(&sums_[key], *v);
  }
  if (Field(footer, "waits") == nullptr) {
    if (const Json* v = Field(footer, kOlderWaits)) AddInto(&sums_["waits"], *v);
  }
  // Offsets and clean ends do not add up across files: one entry per capture that has a spool.
  if (const Json* spool = Field(footer, "spool"); spool != nullptr && spool->is_object()) {
    Json entry = Json::object();
    entry["rank"] = rank;
    for (const auto& [name, value] : spool->items()) entry[name] = value;
    spools_.push_back(std::move(entry));
  } else if (spool != nullptr && spool->is_array()) {
    // A merged footer without its inputs' footers: its list as it is.
    for (const Json& entry : *spool) {
      if (entry.is_object()) spools_.push_back(entry);
    }
  }
}

Json MergedFooter::Katrace(int64_t merged_base_realtime_ns, const MergeOptions& options) const {
  Json katrace = Json::object();
  katrace["format"] = kMergedFormat;
  katrace["version"] = kTraceVersion;
  katrace["base_realtime_ns"] = merged_base_realtime_ns;
  katrace["ranks"] = Json::array();
  for (int64_t pid : pids_) katrace["ranks"].push_back(pid);
  for (const auto& [key, value] : sums_.items()) katrace[key] = value;
  katrace["spool"] = spools_;
  Json selection = Json::object();
  if (!options.ranks_text.empty()) selection["ranks"] = options.ranks_text;
  if (options.from_ns) selection["from_ns"] = *options.from_ns;
  if (options.to_ns) selection["to_ns"] = *options.to_ns;
  if (options.kinds) {
    selection["kinds"] = Json::array();
    for (const std::string& kind : *options.kinds) selection["kinds"].push_back(kind);
  }
  katrace["selection"] = selection;
  katrace["inputs"] = inputs_;
  return katrace;
}

std::string MergedFooter::Render(int64_t merged_base_realtime_ns,
                                 const MergeOptions& options) const {
  Json other = Json::object();
  other["katrace"] = Katrace(merged_base_realtime_ns, options);
  return "\"otherData\":" + other.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace katrace::tools
