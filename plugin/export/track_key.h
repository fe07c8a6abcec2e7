// What a slice's track is keyed by, before lanes: the lane group. Everything of one group that
// can overlap gets lanes (lane_allocator.h); only a host thread's own calls nest on one track.
#ifndef KATRACE_PLUGIN_EXPORT_TRACK_KEY_H_
#define KATRACE_PLUGIN_EXPORT_TRACK_KEY_H_

#include <stddef.h>
#include <stdint.h>

namespace katrace {
namespace exporting {

enum class TrackType : uint8_t {
  kHost,        // (rank, os tid): the thread's calls, nested as they were called
  kHostLanes,   // (rank, os tid): a call that did not nest there (inconsistent times), on lanes
  kHostTasks,   // (rank, os tid): Coll/P2p/CeColl enqueued by the thread, whose life is not a call
  kProxyOp,     // (comm, channel, direction, peer): ProxyOps in flight on one connection
  kProxyStep,   // (comm, channel, direction, peer): ProxySteps with their state intervals
  kProxyCtrl,   // (comm)
  kNet,         // (comm)
  kGpuComm,     // (comm): Coll/P2p GPU extents
  kGpuChannel,  // (comm, channel): KernelCh
  kGpuStep,     // (comm, channel, direction, peer): KernelSteps with their wait/transfer halves
};

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
