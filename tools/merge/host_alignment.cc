// Host clock alignment (see host_alignment.h).
#include "tools/merge/host_alignment.h"

#include <algorithm>

#include "tools/common/json_fields.h"

namespace katrace::tools {
namespace {

// |to|'s clock minus |from|'s at each collective both hosts recorded: what moves |from| onto |to|.
std::vector<int64_t> Differences(const HostCollectiveEnds& to, const HostCollectiveEnds& from) {
  const bool walk_to = to.ends.size() <= from.ends.size();
  const HostCollectiveEnds& walked = walk_to ? to : from;
  const HostCollectiveEnds& looked_up = walk_to ? from : to;
  std::vector<int64_t> differences;
  for (const auto& [key, end] : walked.ends) {
    const auto other = looked_up.ends.find(key);
    if (other == looked_up.ends.end()) continue;
    differences.push_back(walk_to ? end - other->second : other->second - end);
  }
  return differences;
}

}  // namespace

bool CollectiveEndsPass::OnEvent(const TraceEvent& event) {
  if (out_->ends.size() >= HostCollectiveEnds::kMaxEndsPerHost) return false;  // enough for a median
  const Json& json = event.json;
  if (StringField(json, "cat") != "Coll" || StringField(json, "ph") != "X") return true;
  const Json* args = Field(json, "args");
  if (args == nullptr || !args->is_object() || IsTrue(*args, "incomplete")) return true;
  CollectiveKey key;
  int64_t end_ns = 0, end = 0;
  const Json* seq = Field(*args, "seq");
  const Json* gpu_end = Field(*args, "gpu_end");
  if (!ParseCommHash(StringField(*args, "comm"), &key.comm) || seq == nullptr || !AsInt64(*seq, &key.seq) ||
      gpu_end == nullptr || !UsToNs(*gpu_end, &end_ns) || __builtin_add_overflow(base_, end_ns, &end)) {
    return true;
  }
  out_->ends.emplace(key, end);
  return true;
}

std::vector<HostShift> AlignHosts(const std::vector<HostCollectiveEnds>& hosts) {
  std::vector<HostShift> shifts(hosts.size());
  for (size_t h = 0; h < hosts.size(); ++h) shifts[h].host = hosts[h].host;
  if (hosts.empty()) return shifts;
  shifts[0].aligned = true;
  std::vector<size_t> aligned_order = {0};
  // Each round moves every host that shares enough with one already aligned (the reference
  // first): a host that shares nothing with the reference is reached through one that does.
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t h = 0; h < hosts.size(); ++h) {
      if (shifts[h].aligned) continue;
      for (size_t a : aligned_order) {
        std::vector<int64_t> d = Differences(hosts[a], hosts[h]);
        if (d.size() < kMinSharedCollectives) continue;
        std::sort(d.begin(), d.end());
        const size_t n = d.size();
        const int64_t median = n % 2 == 1 ? d[n / 2] : d[n / 2 - 1] + (d[n / 2] - d[n / 2 - 1]) / 2;
        HostShift& s = shifts[h];
        s.aligned = true;
        s.offset_ns = shifts[a].offset_ns + median;
        s.onto = hosts[a].host;
        s.collectives = n;
        s.spread_ns = (d[(3 * n) / 4] - d[n / 4]) / 2;
        aligned_order.push_back(h);
        moved = true;
        break;
      }
    }
  }
  return shifts;
}

}  // namespace katrace::tools
