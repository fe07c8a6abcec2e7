#include "plugin/export/track_table.h"

#include <algorithm>

namespace katrace {

bool NestingLane::Fits(uint64_t start, uint64_t end) const {
  const auto key = std::make_pair(start, ~end);
  // Slices starting inside [start, end): each must end by |end| (be a child), and a child that
  // starts with us must not already be in the file: at equal starts Perfetto needs the parent
  // first.
  for (auto it = slices_.lower_bound(key); it != slices_.end() && it->first.first < end; ++it) {
    if (it->second > end || (it->first.first == start && it->second < end)) return false;
  }
  // Slices starting before: only those inside the root that covers |start| can reach past it.
  auto root = roots_.upper_bound(start);
  if (root == roots_.begin()) return true;
  --root;
  if (root->second <= start) return true;  // |start| lies in a gap between roots
  if (root->second < end) return root->first == start;  // a same-start shorter root is our child
  // Inside that root: the nearest slice still open at |start| must enclose us.
  auto it = slices_.lower_bound(key);
  for (int walked = 0; it != slices_.begin(); ++walked) {
    --it;
    if (it->first.first < root->first) return true;  // left the root: all before it is disjoint
    if (walked >= kMaxAncestorWalk) return false;    // cannot prove it fits: play safe
    uint64_t other_end = it->second;
    if (other_end >= end) return true;
    if (other_end > start) return false;
  }
  return true;
}

void NestingLane::Insert(uint64_t start, uint64_t end) {
  slices_.emplace(std::make_pair(start, ~end), end);
  auto root = roots_.upper_bound(start);
  bool inside_root = false;
  if (root != roots_.begin()) {
    auto prev = std::prev(root);
    inside_root = prev->second >= end;
  }
  if (!inside_root) {
    // The new slice becomes a root; roots it encloses become its descendants.
    auto first = roots_.lower_bound(start);
    auto last = first;
    while (last != roots_.end() && last->first <= end && last->second <= end) ++last;
    roots_.erase(first, last);
    roots_[start] = end;
  }
  if (slices_.size() > kMaxKept) {
    auto cut = slices_.begin();
    std::advance(cut, kMaxKept / 2);
    uint64_t cut_start = cut->first.first;
    slices_.erase(slices_.begin(), cut);
    roots_.erase(roots_.begin(), roots_.lower_bound(cut_start));
  }
}

int TrackTable::NewTid(const std::string& name, int sort_index) {
  int tid = next_tid_++;
  on_new_track_(tid, name, sort_index);
  return tid;
}

int TrackTable::Place(const TrackKey& key, const Span* spans, size_t n, const std::function<std::string()>& name) {
  auto found = tracks_.find(key);
  if (found == tracks_.end()) {
    Track t;
    t.name = name();
    // Host threads first, then proxy, then GPU tracks, in creation order within each group.
    t.sort_index = static_cast<int>(key.type) * 100000 + next_tid_;
    found = tracks_.emplace(key, std::move(t)).first;
    Track& track = found->second;
    track.lanes.emplace_back(new NestingLane(NewTid(track.name, track.sort_index)));
  }
  Track& track = found->second;
  auto fits = [&](const NestingLane& lane) {
    for (size_t i = 0; i < n; ++i) {
      if (!lane.Fits(spans[i].start, std::max(spans[i].start, spans[i].end))) return false;
    }
    return true;
  };
  NestingLane* chosen = nullptr;
  for (size_t i = 0; i < track.lanes.size() && chosen == nullptr; ++i) {
    if (fits(*track.lanes[i]) || (i + 1 == track.lanes.size() && i + 1 == kMaxLanes)) chosen = track.lanes[i].get();
  }
  if (chosen == nullptr) {
    std::string lane_name = track.name + " (overflow " + std::to_string(track.lanes.size()) + ")";
    track.lanes.emplace_back(new NestingLane(NewTid(lane_name, track.sort_index)));
    chosen = track.lanes.back().get();
  }
  if (chosen != track.lanes.front().get()) ++overflow_moves_;
  for (size_t i = 0; i < n; ++i) chosen->Insert(spans[i].start, std::max(spans[i].start, spans[i].end));
  return chosen->tid();
}

}  // namespace katrace
