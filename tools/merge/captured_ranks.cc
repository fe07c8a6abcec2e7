#include "tools/merge/captured_ranks.h"

namespace katrace::tools {
namespace {

// Merges of merges nest their footers; a hostile footer could nest them without end.
constexpr int kMaxNesting = 32;

// |pid| of a merged file back to the pid its input had (`pid_remap`: from -> to).
int64_t InputPid(const Json& input, int64_t pid) {
  const Json* remap = Field(input, "pid_remap");
  if (remap == nullptr || !remap->is_array()) return pid;
  for (const Json& move : *remap) {
    int64_t from = 0, to = 0;
    const Json* from_value = move.is_object() ? Field(move, "from") : nullptr;
    const Json* to_value = move.is_object() ? Field(move, "to") : nullptr;
    if (from_value != nullptr && to_value != nullptr && AsInt64(*from_value, &from) &&
        AsInt64(*to_value, &to) && to == pid) {
      return from;
    }
  }
  return pid;
}

// The ranks of |footer|'s file, each with its pid in the outermost file: |to_top| maps this
// file's pids there (null: this file is the outermost); a pid it lacks is not held there (a merge
// that took this file in with --ranks kept only some).
void AddMerged(const Json& footer, const std::map<int64_t, int64_t>* to_top, int depth,
               std::map<CapturedRank, int64_t>* ranks) {
  const Json* inputs = Field(footer, "inputs");
  if (depth > kMaxNesting || inputs == nullptr || !inputs->is_array()) return;
  for (const Json& input : *inputs) {
    const Json* part = input.is_object() ? Field(input, "footer") : nullptr;
    const Json* pids = part != nullptr ? Field(input, "pids") : nullptr;
    if (part == nullptr || !part->is_object() || pids == nullptr || !pids->is_array()) continue;
    // This input's pids as its own file had them -> the outermost file's.
    std::map<int64_t, int64_t> own_to_top;
    for (const Json& pid : *pids) {
      int64_t here = 0;
      if (!AsInt64(pid, &here)) continue;
      if (to_top == nullptr) {
        own_to_top[InputPid(input, here)] = here;
      } else if (auto top = to_top->find(here); top != to_top->end()) {
        own_to_top[InputPid(input, here)] = top->second;
      }
    }
    if (StringField(*part, "format") == kMergedFormat) {
      AddMerged(*part, &own_to_top, depth + 1, ranks);
      continue;
    }
    CapturedRank rank;
    const Json* host = Field(*part, "host");
    const Json* os_pid = Field(*part, "os_pid");
    const Json* base = Field(*part, "base_realtime_ns");
    if (host == nullptr || !host->is_string() || os_pid == nullptr || !AsInt64(*os_pid, &rank.os_pid) ||
        base == nullptr || !AsInt64(*base, &rank.base_realtime_ns)) {
      continue;
    }
    rank.host = host->get<std::string>();
    for (const auto& [own, top] : own_to_top) {
      rank.pid = own;
      ranks->emplace(rank, top);
    }
  }
}

}  // namespace

std::map<CapturedRank, int64_t> CapturedRanksOf(const TraceHeader& header) {
  std::map<CapturedRank, int64_t> ranks;
  for (int64_t pid : header.Pids()) {
    ranks.emplace(CapturedRank{header.host, header.os_pid, header.base_realtime_ns, pid}, pid);
  }
  return ranks;
}

std::map<CapturedRank, int64_t> CapturedRanksOfMerged(const Json& merged_footer) {
  std::map<CapturedRank, int64_t> ranks;
  AddMerged(merged_footer, nullptr, 0, &ranks);
  return ranks;
}

}  // namespace katrace::tools
