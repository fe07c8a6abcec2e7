// Stage 5, format-neutral: assembled events become slices on tracks with typed args, track names
// and order, flows from host launches to GPU work, and counter samples; an encoder writes them.
//
// Layout by construction: a track holds only what cannot overlap. Things that can (the tasks a
// thread enqueued, ProxyOps in flight on one connection, ProxySteps, KernelCh per channel,
// KernelSteps per channel, direction and peer, GPU extents) get lanes by interval partitioning
// (lane_allocator.h), each slice together with its own sub-slices, so on proxy and GPU tracks a
// slice only ever encloses its own parts. A host thread's calls nest on its track as they were
// called. Nothing is moved after the fact.
//
// Events arrive in completion order; lanes want start order. Slices wait in a reorder buffer
// keyed by start until the assembler's watermark says nothing earlier can still come (Advance),
// so memory follows concurrency, not the length of the run; a hard bound (kMaxReorder) places the
// oldest anyway when an event stays open for very long. Which track each kind goes on and what
// each slice carries is specified in docs/trace-format.md.
#ifndef KATRACE_PLUGIN_EXPORT_TRACE_LAYOUT_H_
#define KATRACE_PLUGIN_EXPORT_TRACE_LAYOUT_H_

#include <stdint.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "katrace/spool_format.h"
#include "plugin/export/assembled_event.h"
#include "plugin/export/gpu_placement.h"
#include "plugin/export/lane_allocator.h"
#include "plugin/export/start_order_queue.h"
#include "plugin/export/trace_encoder.h"
#include "plugin/export/track_key.h"

namespace katrace {
namespace exporting {

class TraceLayout {
 public:
  // Slices waiting for their start to be placed in order; beyond this many the earliest goes
  // even before the watermark passes it (an event open for a very long time, or no watermark).
  // 128 K slices, about 40 MB, reached only while such an event is open.
  static constexpr size_t kMaxReorder = 1 << 17;
  // GPU slices are placed on the fitted GPU clock, which may put a child a little before the
  // host start of its live ancestor (the fit's error): they are held this much longer.
  static constexpr uint64_t kWatermarkMarginNs = 1000 * 1000;

  TraceLayout(const TraceProcess& process, TraceEncoder* encoder);

  // |gpu|: where GpuPlacement put the event's GPU work (a Coll/P2p: its extent), empty for others.
  void Add(const AssembledEvent& e, const GpuSpan& gpu);
  // Nothing added from now on starts before |watermark_ns| (host ns): places what waits before it.
  void Advance(uint64_t watermark_ns);
  // A counter sample at |host_ns|: written when the drop total or the drain losses changed, or
  // always when |force| (the closing sample).
  void Counters(uint64_t host_ns, const uint64_t drops[kKindCount], const DrainCounters& drain, bool force);

  // A capture switch or dump (a Marker record) at |host_ns|: a process-scoped instant named
  // "capture on", "capture off" or "dump", its reason in args.
  void Marker(uint64_t host_ns, const spool::MarkerBody& marker);

  // Places what still waits, fills what the layout counted (events, incomplete, late, GPU
  // samples) into |totals| and closes the trace.
  void Finish(uint64_t end_host_ns, TraceTotals* totals);

  int64_t Rel(uint64_t host_ns) const { return static_cast<int64_t>(host_ns - process_.base_monotonic_ns); }

  // Host call slices that could not nest on their thread's track (their times contradict call
  // nesting, or they arrived too late for the reorder buffer) and went to its lanes instead.
  uint64_t unnested() const { return unnested_; }
  // Slices placed after one that starts later: they arrived past the reorder buffer. Lanes stay
  // exact (an extra lane at worst); a host call among them goes to its thread's unnested lanes.
  uint64_t out_of_order() const { return out_of_order_; }
  // GPU slices whose stamps fell outside the run at both ends (a GPU clock the fit could not
  // follow): KernelCh and KernelStep drawn at their host times instead (host_timed, clamped),
  // CollGpu extents left out. Held at the run's edge, each would have needed a lane of its own.
  uint64_t outside_run() const { return outside_run_; }

 private:
  // One slice as the layout places it: its times on the host clock, sub-slices, and the facts
  // found while converting GPU stamps.
  enum class Role : uint8_t { kEvent, kGpuExtent };
  struct Span {
    uint64_t start, end;
  };
  struct Pending {
    Pending() = default;
    explicit Pending(const AssembledEvent& event) : e(event) {}
    AssembledEvent e;
    Role role = Role::kEvent;
    TrackType type = TrackType::kHost;
    uint64_t start = 0, end = 0;
    Span parts[1 + kMaxStates] = {};  // sub-slices inside [start, end]
    uint8_t nparts = 0;
    GpuSpan gpu;  // as placed (GpuPlacement)
    uint64_t flow_out = 0, flow_in = 0;           // a Coll/P2p's launch arrow (SliceEvent)
  };
  // One lane group: its lanes' tracks and, for a host thread, the stack of open calls.
  struct Group {
    std::string name;
    int pid = 0;
    int sort_base = 0;
    LaneAllocator lanes;
    std::vector<int> tids;  // per lane
    std::vector<uint64_t> open_ends;  // kHost: ends of the calls open at the last start
    bool placed_any = false;
    uint64_t last_start = 0, last_end = 0;
  };

  void Prepare(const AssembledEvent& e, const GpuSpan& gpu, Pending* p) const;
  void PrepareGpuExtent(const AssembledEvent& e, const GpuSpan& gpu, Pending* p) const;
  // A free slot for one pending slice: a reused one, else the next one (a new chunk at each
  // kChunkSlots).
  uint32_t TakeSlot();
  Pending& SlotAt(uint32_t slot) { return chunks_[slot >> kChunkShift][slot & (kChunkSlots - 1)]; }
  void Enqueue(uint32_t slot);
  void PlaceSlot(uint32_t slot);
  void PlaceReady();  // every slot in ready_, in order
  void Place(const Pending& p);

  TrackKey KeyOf(const Pending& p) const;
  int RankOf(const AssembledEvent& e) const;
  Group* FindGroup(const TrackKey& key, const AssembledEvent& e);
  int LaneTid(Group* g, int lane);
  int HostTid(const TrackKey& key, const Pending& p);
  std::string GroupName(const TrackKey& key, const AssembledEvent& e) const;
  int SortBase(const TrackKey& key);

  void Emit(std::string_view name, std::string_view cat, int tid, uint64_t start, uint64_t stop, const Arg* args, size_t n,
            uint64_t flow_out = 0, uint64_t flow_in = 0, bool part = false);
  void EventSlice(const Pending& p, int tid);
  void GpuExtent(const Pending& p, int tid);
  void ProxyStepStates(const Pending& p, int tid);
  void KernelStepHalves(const Pending& p, int tid);

  TraceProcess process_;
  TraceEncoder* enc_;

  // The pending slices, in fixed chunks: the buffer grows in steps of about 1.3 MB and is never
  // copied. (A vector of slots doubled on its way to the bound, and copied itself each time: its
  // peak was about three times the slots in use.)
  static constexpr uint32_t kChunkShift = 12;
  static constexpr uint32_t kChunkSlots = 1u << kChunkShift;
  std::vector<std::unique_ptr<Pending[]>> chunks_;
  uint32_t slot_count_ = 0;
  std::vector<uint32_t> free_slots_;
  StartOrderQueue queue_;        // the waiting slots, in placement order
  std::vector<uint32_t> ready_;  // those the watermark just let out

  std::unordered_map<TrackKey, std::unique_ptr<Group>, TrackKeyHash> groups_;
  static constexpr size_t kCacheSize = 256;
  struct CacheEntry {
    TrackKey key;
    Group* group = nullptr;
  };
  CacheEntry cache_[kCacheSize];
  std::unordered_map<uint64_t, int> host_ordinal_;  // os tid -> order of first appearance
  int ordinals_[16] = {};                           // per TrackType: groups so far
  int next_tid_ = 1;

  uint64_t events_[kKindCount] = {};
  uint64_t incomplete_ = 0;
  uint64_t late_children_ = 0;
  uint64_t gpu_before_launch_ = 0;  // Coll/P2p whose GPU work lies before their host launch
  uint64_t gpu_stamped_ = 0;
  uint64_t unnested_ = 0;
  uint64_t out_of_order_ = 0;
  uint64_t outside_run_ = 0;
  uint64_t last_placed_start_ = 0;
  uint64_t last_drops_total_ = 0;
  uint64_t last_drain_lost_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_TRACE_LAYOUT_H_
