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

// The ranks of |footer|'s file: of its pids, those in |kept| (null: all of them; a merge that took
// this file in with --ranks kept only some).
void AddMerged(const Json& footer, const std::set<int64_t>* kept, int depth,
               std::set<CapturedRank>* ranks) {
  const Json* inputs = Field(footer, "inputs");
  if (depth > kMaxNesting || inputs == nullptr || !inputs->is_array()) return;
  for (const Json& input : *inputs) {
    const Json* part = input.is_object() ? Field(input, "footer") : nullptr;
    const Json* pids = part != nullptr ? Field(input, "pids") : nullptr;
    if (part == nullptr || !part->is_object() || pids == nullptr || !pids->is_array()) continue;
    // This input's pids as its own file had them, where this file still holds them.
    std::set<int64_t> own;
    for (const Json& pid : *pids) {
      int64_t merged = 0;
      if (AsInt64(pid, &merged) && (kept == nullptr || kept->count(merged) != 0)) {
        own.insert(InputPid(input, merged));
      }
    }
    if (StringField(*part, "format") == kMergedFormat) {
      AddMerged(*part, &own, depth + 1, ranks);
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
    for (int64_t pid : own) {
      rank.pid = pid;
      ranks->insert(rank);
    }
  }
}

}  // namespace

std::set<CapturedRank> CapturedRanksOf(const TraceHeader& header) {
  std::set<CapturedRank> ranks;
  for (int64_t pid : header.Pids()) {
    ranks.insert(CapturedRank{header.host, header.os_pid, header.base_realtime_ns, pid});
  }
  return ranks;
}

std::set<CapturedRank> CapturedRanksOfMerged(const Json& merged_footer) {
  std::set<CapturedRank> ranks;
  AddMerged(merged_footer, nullptr, 0, &ranks);
  return ranks;
}

}  // namespace katrace::tools
