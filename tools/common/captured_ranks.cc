#include "tools/common/captured_ranks.h"

#include <cstdio>

#include "tools/common/trace_reader.h"

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
               std::map<CapturedRank, int64_t>* ranks, std::vector<RankHeldTwice>* twice) {
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
      AddMerged(*part, &own_to_top, depth + 1, ranks, twice);
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
      const auto [held, first] = ranks->emplace(rank, top);
      if (!first && held->second != top && twice != nullptr) twice->push_back({rank, held->second, top});
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

std::map<CapturedRank, int64_t> CapturedRanksOfMerged(const Json& merged_footer, std::vector<RankHeldTwice>* twice) {
  std::map<CapturedRank, int64_t> ranks;
  AddMerged(merged_footer, nullptr, 0, &ranks, twice);
  return ranks;
}

std::vector<HeldElsewhere> RanksHeldElsewhere(const std::vector<TraceInput>& inputs, const std::string& tool) {
  std::vector<HeldElsewhere> held(inputs.size());
  if (inputs.size() < 2) return held;
  struct FooterPass : TraceVisitor {
    bool OnEvent(const TraceEvent& /*event*/) override { return true; }
    void OnOtherData(const Json& other_data) override {
      if (const Json* katrace = Field(other_data, "katrace")) footer = *katrace;
    }
    Json footer;
  };
  std::map<CapturedRank, size_t> holder;  // -> the input that keeps it
  // |twice|: the other pids of ranks |i| holds twice, already left out (a merged input).
  auto claim = [&](size_t i, const std::map<CapturedRank, int64_t>& ranks, size_t twice) {
    for (const auto& [rank, pid] : ranks) {
      auto [at, first] = holder.emplace(rank, i);
      if (first) continue;
      std::fprintf(stderr, "%s: %s: rank %lld (%s, os pid %lld) is already in %s; left out\n", tool.c_str(),
                   inputs[i].path.c_str(), static_cast<long long>(rank.pid), rank.host.c_str(),
                   static_cast<long long>(rank.os_pid), inputs[at->second].path.c_str());
      held[i].pids.insert(pid);
    }
    held[i].all = !held[i].pids.empty() && held[i].pids.size() == ranks.size() + twice;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].header.rebased) continue;
    FooterPass pass;
    ReadOptions options;
    options.tool = tool;
    ReadTrace(inputs[i].path, &pass, options);
    if (!pass.footer.is_object()) continue;
    std::vector<RankHeldTwice> twice;
    const std::map<CapturedRank, int64_t> ranks = CapturedRanksOfMerged(pass.footer, &twice);
    for (const RankHeldTwice& t : twice) {
      std::fprintf(stderr,
                   "%s: %s: rank %lld (%s, os pid %lld) is in it twice, as pids %lld and %lld (its capture "
                   "reached the merge that made it twice); pid %lld left out\n",
                   tool.c_str(), inputs[i].path.c_str(), static_cast<long long>(t.rank.pid), t.rank.host.c_str(),
                   static_cast<long long>(t.rank.os_pid), static_cast<long long>(t.first_pid),
                   static_cast<long long>(t.pid), static_cast<long long>(t.pid));
      held[i].pids.insert(t.pid);
    }
    claim(i, ranks, twice.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].header.rebased) claim(i, CapturedRanksOf(inputs[i].header), 0);
  }
  return held;
}

}  // namespace katrace::tools
