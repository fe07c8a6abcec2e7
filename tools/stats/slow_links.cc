// Slowest channel and peer accounting (see slow_links.h).
#include "tools/stats/slow_links.h"

#include <algorithm>

namespace katrace::tools {
namespace {

// A bound on collectives whose Coll never shows up (incomplete, dropped, or a file cut short).
constexpr size_t kMaxOpenInstances = 1 << 20;

}  // namespace

void SlowLinks::AddStep(int64_t pid, uint64_t comm, int64_t comm_rank, uint64_t parent,
                        bool send, int64_t channel, int64_t peer, uint64_t transfer_ns) {
  const LinkKey channel_key{pid, comm, comm_rank, send, channel};
  const LinkKey peer_key{pid, comm, comm_rank, send, peer};
  for (const auto& [stats, key] : {std::pair{&channels_, &channel_key}, std::pair{&peers_, &peer_key}}) {
    LinkStats& link = (*stats)[*key];
    ++link.steps;
    link.transfer_ns += transfer_ns;
  }
  if (parent == 0) return;
  if (open_.size() >= kMaxOpenInstances && open_.count(parent) == 0) EndFile();
  Instance& instance = open_[parent];
  instance.channel_ns[channel_key] += transfer_ns;
  instance.peer_ns[peer_key] += transfer_ns;
}

void SlowLinks::ParentDone(uint64_t parent) {
  auto it = open_.find(parent);
  if (it == open_.end()) return;
  Close(&it->second);
  open_.erase(it);
}

void SlowLinks::EndFile() {
  for (auto& [parent, instance] : open_) Close(&instance);
  open_.clear();
}

void SlowLinks::Close(Instance* instance) {
  Score(instance->channel_ns, &channels_);
  Score(instance->peer_ns, &peers_);
}

void SlowLinks::Score(const std::map<LinkKey, uint64_t>& sums,
                      std::map<LinkKey, LinkStats>* stats) {
  // Links of one group (same pid, comm, comm rank, direction) sit next to each other in |sums|.
  auto begin = sums.begin();
  while (begin != sums.end()) {
    auto end = begin;
    const auto group = [](const LinkKey& k) {
      return std::make_tuple(std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k));
    };
    while (end != sums.end() && group(end->first) == group(begin->first)) ++end;
    if (std::distance(begin, end) >= 2) {
      // A tie for the most time names no slowest link for this instance.
      auto slowest = begin;
      uint64_t runner_up = 0;
      for (auto it = begin; it != end; ++it) {
        ++(*stats)[it->first].instances;
        if (it == begin) continue;
        if (it->second > slowest->second) {
          runner_up = slowest->second;
          slowest = it;
        } else {
          runner_up = std::max(runner_up, it->second);
        }
      }
      if (slowest->second > runner_up) ++(*stats)[slowest->first].slowest;
    }
    begin = end;
  }
}

std::vector<SlowLinks::Finding> SlowLinks::Top(const std::map<LinkKey, LinkStats>& stats,
                                               size_t top_n) {
  std::vector<Finding> findings;
  auto begin = stats.begin();
  while (begin != stats.end()) {
    auto end = begin;
    const auto group = [](const LinkKey& k) {
      return std::make_tuple(std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k));
    };
    while (end != stats.end() && group(end->first) == group(begin->first)) ++end;
    std::vector<double> means;
    for (auto it = begin; it != end; ++it) {
      if (it->second.steps > 0) {
        means.push_back(static_cast<double>(it->second.transfer_ns) / it->second.steps);
      }
    }
    std::sort(means.begin(), means.end());
    double median = 0;
    if (!means.empty()) {
      const size_t n = means.size();
      median = n % 2 == 1 ? means[n / 2] : (means[n / 2 - 1] + means[n / 2]) / 2.0;
    }
    for (auto it = begin; it != end; ++it) {
      const LinkStats& s = it->second;
      if (s.slowest == 0) continue;
      Finding f;
      std::tie(f.pid, f.comm, f.comm_rank, f.send, f.index) = it->first;
      f.instances = s.instances;
      f.slowest = s.slowest;
      f.mean_step_ns = s.steps == 0 ? 0 : static_cast<double>(s.transfer_ns) / s.steps;
      f.sibling_median_ns = median;
      findings.push_back(f);
    }
    begin = end;
  }
  std::sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    const double share_a = static_cast<double>(a.slowest) / a.instances;
    const double share_b = static_cast<double>(b.slowest) / b.instances;
    if (share_a != share_b) return share_a > share_b;
    const double ratio_a = a.sibling_median_ns > 0 ? a.mean_step_ns / a.sibling_median_ns : 0;
    const double ratio_b = b.sibling_median_ns > 0 ? b.mean_step_ns / b.sibling_median_ns : 0;
    if (ratio_a != ratio_b) return ratio_a > ratio_b;
    return a.slowest > b.slowest;
  });
  if (findings.size() > top_n) findings.resize(top_n);
  return findings;
}

}  // namespace katrace::tools
