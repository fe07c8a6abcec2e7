// Assigns every slice a Perfetto track (a tid) and guarantees that slices on one track nest:
// a slice that would partially overlap one already placed moves to the track's next overflow
// lane, which is a track of its own, and the move is counted. Events reach the layout in
// completion order, not start order, so the check looks both ways around the new slice.
#ifndef KATRACE_PLUGIN_EXPORT_TRACK_TABLE_H_
#define KATRACE_PLUGIN_EXPORT_TRACK_TABLE_H_

#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace katrace {

enum class TrackType : uint8_t {
  kHost,         // one host thread
  kProxyOp,      // (context, channel, direction, peer)
  kProxyStep,    // (context, channel, direction, peer, lane = step mod 8)
  kProxyCtrl,    // (context)
  kNet,          // (context)
  kGpuComm,      // (context): Coll/P2p GPU extents
  kGpuChannel,   // (context, channel): KernelCh
  kGpuStep,      // (context, channel, direction, peer): KernelSteps
};

struct TrackKey {
  TrackType type;
  uint8_t channel = 0;
  uint8_t send = 0;
  uint8_t lane = 0;
  uint16_t context = 0;
  int32_t peer = 0;
  uint32_t os_tid = 0;

  bool operator==(const TrackKey& o) const {
    return type == o.type && channel == o.channel && send == o.send && lane == o.lane &&
           context == o.context && peer == o.peer && os_tid == o.os_tid;
  }
};

struct TrackKeyHash {
  size_t operator()(const TrackKey& k) const {
    uint64_t a = (static_cast<uint64_t>(k.type) << 56) | (static_cast<uint64_t>(k.channel) << 48) |
                 (static_cast<uint64_t>(k.send) << 40) | (static_cast<uint64_t>(k.lane) << 32) |
                 (static_cast<uint64_t>(k.context) << 16);
    uint64_t b = (static_cast<uint64_t>(static_cast<uint32_t>(k.peer)) << 32) | k.os_tid;
    uint64_t x = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return static_cast<size_t>(x ^ (x >> 32));  // high bits folded down: the low ones vary little
  }
};

// Slices of one lane, checked for partial overlap. Besides every slice, the lane keeps its roots
// (top-level slices, disjoint): a slice starting in a gap between roots cannot partially overlap
// anything that started before it, so the common sequential case costs two comparisons. Memory is
// bounded: only the most recent |kMaxKept| slices are remembered. Both sets are sorted vectors,
// not trees: slices arrive nearly in start order, so inserts land at or near the end, and the
// hot path is free of allocation and pointer chasing.
class NestingLane {
 public:
  explicit NestingLane(int tid) : tid_(tid) {}
  int tid() const { return tid_; }
  bool Fits(uint64_t start, uint64_t end) const;
  void Insert(uint64_t start, uint64_t end);

 private:
  static constexpr size_t kMaxKept = 8192;
  static constexpr int kMaxAncestorWalk = 256;
  // Ordered by (start, ~end) so that among equal starts the longer slice (the parent) comes first.
  struct Slice {
    uint64_t start;
    uint64_t end;
  };
  struct Root {
    uint64_t start;
    uint64_t end;
  };
  static bool Before(const Slice& a, uint64_t start, uint64_t end) {
    return a.start != start ? a.start < start : a.end > end;
  }
  // Index of the first slice not ordered before (start, end).
  size_t LowerBound(uint64_t start, uint64_t end) const;
  // Index of the first root starting after |start|.
  size_t RootUpperBound(uint64_t start) const;

  int tid_;
  std::vector<Slice> slices_;
  std::vector<Root> roots_;
};

class TrackTable {
 public:
  // Called once per new track (and lane) so the writer can emit its thread_name metadata.
  using NewTrackFn = std::function<void(int tid, const std::string& name, int sort_index)>;
  explicit TrackTable(NewTrackFn on_new_track) : on_new_track_(std::move(on_new_track)) {}

  struct Span {
    uint64_t start;
    uint64_t end;
  };
  // Returns the tid for slices on |key|: spans[0] and the |n| − 1 sub-slices inside it (a step's
  // state intervals, a KernelStep's wait and transfer), which go on the same lane and are checked
  // too. |name()| builds the track's name on first use (a template, so no std::function is built
  // per slice).
  template <typename NameFn>
  int Place(const TrackKey& key, const Span* spans, size_t n, NameFn&& name) {
    // A few dozen tracks take nearly every slice: a direct-mapped cache in front of the map
    // (whose nodes never move) saves the hash-map walk.
    // The top bits of a remix: TrackKeyHash's low bits are the same for every non-host track.
    uint64_t h = static_cast<uint64_t>(TrackKeyHash()(key)) * 0x9e3779b97f4a7c15ull;
    CacheEntry& c = cache_[(h >> 56) % kCacheSize];
    if (c.track == nullptr || !(c.key == key)) {
      auto found = tracks_.find(key);
      if (found == tracks_.end()) found = NewTrack(key, name());
      c.key = key;
      c.track = &found->second;
    }
    return PlaceOn(c.track, spans, n);
  }
  template <typename NameFn>
  int Place(const TrackKey& key, uint64_t start, uint64_t end, NameFn&& name) {
    Span span{start, end};
    return Place(key, &span, 1, name);
  }

  uint64_t overflow_moves() const { return overflow_moves_; }

 private:
  // Beyond this many concurrent slices on one track, slices go to the last lane regardless (a
  // pathological caller; counted as overflow moves like any other).
  static constexpr int kMaxLanes = 1024;
  struct Track {
    std::string name;
    int sort_index;
    std::vector<std::unique_ptr<NestingLane>> lanes;
  };
  using Tracks = std::unordered_map<TrackKey, Track, TrackKeyHash>;
  Tracks::iterator NewTrack(const TrackKey& key, std::string name);
  int PlaceOn(Track* track, const Span* spans, size_t n);
  int NewTid(const std::string& name, int sort_index);

  static constexpr size_t kCacheSize = 256;
  struct CacheEntry {
    TrackKey key{TrackType::kHost};
    Track* track = nullptr;
  };

  NewTrackFn on_new_track_;
  Tracks tracks_;
  CacheEntry cache_[kCacheSize];
  int next_tid_ = 1;
  uint64_t overflow_moves_ = 0;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_TRACK_TABLE_H_
