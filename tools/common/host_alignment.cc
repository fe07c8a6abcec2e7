// Host clock alignment (see host_alignment.h).
#include "tools/common/host_alignment.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

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
    int64_t difference = 0;
    // Ends of hostile clock bases can lie further apart than an int64_t holds: not a clock skew.
    if (other == looked_up.ends.end() ||
        __builtin_sub_overflow(walk_to ? end : other->second, walk_to ? other->second : end, &difference)) {
      continue;
    }
    differences.push_back(difference);
  }
  return differences;
}

// The mean of two sorted values, exact and without overflow.
int64_t Midpoint(int64_t low, int64_t high) {
  return static_cast<int64_t>((static_cast<__int128>(low) + high) / 2);
}

// A clock difference for a message: "+3.250 ms", "-12.4 µs", "+800 ns" (signed with |sign|).
std::string ClockDifferenceText(int64_t ns, bool sign) {
  const double magnitude = std::fabs(static_cast<double>(ns));
  char text[48];
  const char* prefix = ns < 0 ? "-" : sign ? "+" : "";
  if (magnitude >= 1e9) {
    std::snprintf(text, sizeof(text), "%s%.3f s", prefix, magnitude / 1e9);
  } else if (magnitude >= 1e6) {
    std::snprintf(text, sizeof(text), "%s%.3f ms", prefix, magnitude / 1e6);
  } else if (magnitude >= 1e3) {
    std::snprintf(text, sizeof(text), "%s%.1f µs", prefix, magnitude / 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%s%.0f ns", prefix, magnitude);
  }
  return text;
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
        const int64_t median = n % 2 == 1 ? d[n / 2] : Midpoint(d[n / 2 - 1], d[n / 2]);
        int64_t offset = 0;
        if (__builtin_add_overflow(shifts[a].offset_ns, median, &offset)) continue;
        HostShift& s = shifts[h];
        s.aligned = true;
        s.offset_ns = offset;
        s.onto = hosts[a].host;
        s.collectives = n;
        const __int128 middle_half = static_cast<__int128>(d[(3 * n) / 4]) - d[n / 4];
        s.middle_half_ns = middle_half > INT64_MAX ? INT64_MAX : static_cast<int64_t>(middle_half);
        aligned_order.push_back(h);
        moved = true;
        break;
      }
    }
  }
  return shifts;
}

std::vector<int64_t> AlignInputHosts(const std::vector<TraceInput>& inputs, bool quiet,
                                     const ReadOptions& read_options, bool* unaligned) {
  const char* tool = read_options.tool.c_str();
  std::vector<int64_t> shift(inputs.size(), 0);
  std::vector<HostCollectiveEnds> hosts;
  std::vector<int> host_of(inputs.size(), -1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TraceInput& input = inputs[i];
    if (input.header.rebased) {
      std::fprintf(stderr, "%s: --align-hosts: %s is a merged trace; its times are kept as they are\n", tool,
                   input.path.c_str());
      continue;
    }
    auto known = std::find_if(hosts.begin(), hosts.end(),
                              [&](const HostCollectiveEnds& h) { return h.host == input.header.host; });
    if (known == hosts.end()) {
      hosts.push_back(HostCollectiveEnds{input.header.host, {}});
      known = hosts.end() - 1;
    }
    host_of[i] = static_cast<int>(known - hosts.begin());
    CollectiveEndsPass pass(input.header.base_realtime_ns, &*known);
    ReadTrace(input.path, &pass, read_options);
  }
  if (hosts.size() < 2) {
    if (!quiet) {
      std::fprintf(stderr, "%s: --align-hosts: %s; nothing to align\n", tool,
                   hosts.empty() ? "every input is a merged trace" : ("every input is of host " + hosts[0].host).c_str());
    }
    return shift;
  }
  const std::vector<HostShift> shifts = AlignHosts(hosts);
  for (size_t h = 1; h < shifts.size(); ++h) {  // shifts[0] is the reference
    const HostShift& s = shifts[h];
    if (!s.aligned) {
      *unaligned = true;
      std::fprintf(stderr,
                   "%s: --align-hosts: host %s shares fewer than %zu complete collectives with a GPU end with "
                   "any aligned host; its times are kept as recorded\n",
                   tool, s.host.c_str(), kMinSharedCollectives);
    } else if (!quiet) {
      std::fprintf(stderr,
                   "%s: --align-hosts: host %s moved by %s onto the clock of %s (the median difference of %zu "
                   "collectives' GPU ends with %s; the middle half of the differences spans %s)\n",
                   tool, s.host.c_str(), ClockDifferenceText(s.offset_ns, true).c_str(), shifts[0].host.c_str(),
                   s.collectives, s.onto.c_str(), ClockDifferenceText(s.middle_half_ns, false).c_str());
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (host_of[i] < 0) continue;
    const int64_t offset = shifts[static_cast<size_t>(host_of[i])].offset_ns;
    int64_t moved_base = 0;
    if (__builtin_add_overflow(inputs[i].header.base_realtime_ns, offset, &moved_base)) {
      *unaligned = true;
      std::fprintf(stderr, "%s: --align-hosts: %s: its clock base moved by %s is out of range; its times are kept as recorded\n",
                   tool, inputs[i].path.c_str(), ClockDifferenceText(offset, true).c_str());
      continue;
    }
    shift[i] = offset;
  }
  return shift;
}

}  // namespace katrace::tools
