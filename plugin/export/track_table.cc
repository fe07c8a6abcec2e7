#include "plugin/export/track_table.h"

#include <algorithm>

namespace katrace {

size_t NestingLane::LowerBound(uint64_t start, uint64_t end) const {
  // The common case: the new slice sorts after everything kept.
  if (slices_.empty() || Before(slices_.back(), start, end)) return slices_.size();
  auto it = std::lower_bound(slices_.begin(), slices_.end(), Slice{start, end},
                             [](const Slice& a, const Slice& b) { return Before(a, b.start, b.end); });
  return static_cast<size_t>(it - slices_.begin());
}

size_t NestingLane::RootUpperBound(uint64_t start) const {
  if (roots_.empty() || roots_.back().start <= start) return roots_.size();
  auto it = std::upper_bound(roots_.begin(), roots_.end(), start, [](uint64_t s, const Root& r) { return s < r.start; });
  return static_cast<size_t>(it - roots_.begin());
}

bool NestingLane::Fits(uint64_t start, uint64_t end) const {
  const size_t lb = LowerBound(start, end);
  // Slices starting inside [start, end): each must end by |end| (be a child), and a child that
  // starts with us must not already be in the file: at equal starts Perfetto needs the parent
  // first.
  for (size_t i = lb; i < slices_.size() && slices_[i].start < end; ++i) {
    if (slices_[i].end > end || (slices_[i].start == start && slices_[i].end < end)) return false;
  }
  // Slices starting before: only those inside the root that covers |start| can reach past it.
  size_t r = RootUpperBound(start);
  if (r == 0) return true;
  const Root& root = roots_[r - 1];
  if (root.end <= start) return true;  // |start| lies in a gap between roots
  if (root.end < end) return root.start == start;  // a same-start shorter root is our child
  // Inside that root: the nearest slice still open at |start| must enclose us.
  for (size_t i = lb, walked = 0; i > 0; ++walked) {
    --i;
    if (slices_[i].start < root.start) return true;  // left the root: all before it is disjoint
    if (walked >= static_cast<size_t>(kMaxAncestorWalk)) return false;  // cannot prove it fits: play safe
    uint64_t other_end = slices_[i].end;
    if (other_end >= end) return true;
    if (other_end > start) return false;
  }
  return true;
}

void NestingLane::Insert(uint64_t start, uint64_t end) {
  size_t at = LowerBound(start, end);
  // A slice identical to one kept adds nothing (the set has unique keys).
  if (at == slices_.size() || slices_[at].start != start || slices_[at].end != end) {
    slices_.insert(slices_.begin() + static_cast<std::ptrdiff_t>(at), Slice{start, end});
  }
  size_t r = RootUpperBound(start);
  bool inside_root = r != 0 && roots_[r - 1].end >= end;
  if (!inside_root) {
    // The new slice becomes a root; roots it encloses become its descendants.
    size_t first = r;
    if (first != 0 && roots_[first - 1].start == start) --first;  // lower_bound(start)
    size_t last = first;
    while (last < roots_.size() && roots_[last].start <= end && roots_[last].end <= end) ++last;
    auto pos = roots_.erase(roots_.begin() + static_cast<std::ptrdiff_t>(first),
                            roots_.begin() + static_cast<std::ptrdiff_t>(last));
    roots_.insert(pos, Root{start, end});
  }
  if (slices_.size() > kMaxKept) {
    uint64_t cut_start = slices_[kMaxKept / 2].start;
    slices_.erase(slices_.begin(), slices_.begin() + static_cast<std::ptrdiff_t>(kMaxKept / 2));
    auto cut = std::lower_bound(roots_.begin(), roots_.end(), cut_start,
                                [](const Root& x, uint64_t s) { return x.start < s; });
    roots_.erase(roots_.begin(), cut);
  }
}

int TrackTable::NewTid(const std::string& name, int sort_index) {
  int tid = next_tid_++;
  on_new_track_(tid, name, sort_index);
  return tid;
}

TrackTable::Tracks::iterator TrackTable::NewTrack(const TrackKey& key, std::string name) {
  Track t;
  t.name = std::move(name);
  // Host threads first, then proxy, then GPU tracks, in creation order within each group.
  t.sort_index = static_cast<int>(key.type) * 100000 + next_tid_;
  auto found = tracks_.emplace(key, std::move(t)).first;
  Track& track = found->second;
  track.lanes.emplace_back(new NestingLane(NewTid(track.name, track.sort_index)));
  return found;
}

int TrackTable::PlaceOn(Track* track_ptr, const Span* spans, size_t n) {
  Track& track = *track_ptr;
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
