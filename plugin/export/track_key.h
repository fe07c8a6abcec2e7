// What a slice's track is keyed by, before lanes: the lane group. Everything of one group that
// can overlap gets lanes (lane_allocator.h); only a host thread's own calls nest on one track.
#ifndef KATRACE_PLUGIN_EXPORT_TRACK_KEY_H_
#define KATRACE_PLUGIN_EXPORT_TRACK_KEY_H_

#include <stddef.h>
#include <stdint.h>

#include "katrace/kind_schema.h"

namespace katrace {
namespace exporting {

// A kind's track family (katrace/kind_schema.h, where each is described), plus the lanes a host
// call goes to when it does not nest on its thread's track.
enum class TrackType : uint8_t {
  kHost = static_cast<uint8_t>(TrackFamily::kHostCalls),
  kHostTasks = static_cast<uint8_t>(TrackFamily::kHostTasks),
  kProxyOp = static_cast<uint8_t>(TrackFamily::kProxyOp),
  kProxyStep = static_cast<uint8_t>(TrackFamily::kProxyStep),
  kProxyCtrl = static_cast<uint8_t>(TrackFamily::kProxyCtrl),
  kNet = static_cast<uint8_t>(TrackFamily::kNet),
  kGpuComm = static_cast<uint8_t>(TrackFamily::kGpuComm),
  kGpuChannel = static_cast<uint8_t>(TrackFamily::kGpuChannel),
  kGpuStep = static_cast<uint8_t>(TrackFamily::kGpuStep),
  kHostLanes,  // (rank, os tid): a call that did not nest on its thread's track, on lanes
};

inline TrackType TrackTypeOf(TrackFamily f) { return static_cast<TrackType>(f); }

inline bool IsHostTrack(TrackType t) {
  return t == TrackType::kHost || t == TrackType::kHostLanes || t == TrackType::kHostTasks;
}

struct TrackKey {
  TrackType type = TrackType::kHost;
  uint8_t channel = 0;
  uint8_t send = 0;
  int32_t rank = 0;   // index into TraceProcess::ranks
  int32_t comm = -1;  // index into SpoolIndex::comms (-1 unknown); a reused slot is a new comm
  int32_t peer = 0;
  uint32_t os_tid = 0;

  bool operator==(const TrackKey& o) const {
    return type == o.type && channel == o.channel && send == o.send && rank == o.rank && comm == o.comm &&
           peer == o.peer && os_tid == o.os_tid;
  }
};

struct TrackKeyHash {
  size_t operator()(const TrackKey& k) const {
    uint64_t a = (static_cast<uint64_t>(k.type) << 56) | (static_cast<uint64_t>(k.channel) << 48) |
                 (static_cast<uint64_t>(k.send) << 40) | static_cast<uint32_t>(k.comm);
    uint64_t b = (static_cast<uint64_t>(static_cast<uint32_t>(k.peer)) << 32) | k.os_tid;
    uint64_t x = (a ^ (b * 0x9e3779b97f4a7c15ull) ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.rank)) << 20)) *
                 0xff51afd7ed558ccdull;
    return static_cast<size_t>(x ^ (x >> 32));  // high bits folded down: the low ones vary little
  }
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_TRACK_KEY_H_
