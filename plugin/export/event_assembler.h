// Stage 4: joins Start, State and Stop records (in global tick order, from the merge) into
// events, and decides completion as the live plugin did with its slot holds: an event is complete
// when it stopped and every recorded child that started has completed; a Coll/P2p also waits for
// its nchannels KernelCh children when its Start carries kStartAwaitsKernelCh (KernelCh was in
// NCCL's mask for that task), less those the capture names as dropped (kStateUnrecordedChildren);
// one still waiting at the end of the spool is incomplete. Late is the capture's flag
// (kStartLateChild). A GPU child widens its parent's
// GPU extent when it completes. Memory: the live events plus a bounded window of recently
// completed ids (so a late child still names its parent); never the whole run.
#ifndef KATRACE_PLUGIN_EXPORT_EVENT_ASSEMBLER_H_
#define KATRACE_PLUGIN_EXPORT_EVENT_ASSEMBLER_H_

#include <stdint.h>

#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "plugin/export/assembled_event.h"
#include "plugin/export/id_map.h"
#include "plugin/export/recent_ids.h"
#include "plugin/export/spool_index.h"
#include "plugin/export/stream_merge.h"

namespace katrace {
namespace exporting {

struct AssemblerCounts {
  uint64_t events = 0;
  uint64_t incomplete = 0;
  uint64_t late = 0;
  uint64_t orphans = 0;         // State/Stop for an id that is not live (its Start was not recorded)
  uint64_t unknown_parents = 0; // Starts naming a parent neither live nor recently completed (in a
                                // flight dump: evicted with the ring's older blocks)
  uint64_t cut_starts = 0;      // flight dump: Starts at or before the ring's cut, left out (they
                                // may have lost States, Stops or children with the evicted blocks)
  uint64_t duplicates = 0;      // a Start for an id already live, or id 0
  uint64_t over_budget = 0;     // Starts not assembled because the live events hit the memory budget
  uint64_t unknown_kinds = 0;   // event records with a kind index this exporter does not know
  uint64_t short_records = 0;   // event records too short for their body
};

class EventAssembler {
 public:
  using Sink = std::function<void(const AssembledEvent&)>;
  EventAssembler(const SpoolIndex& index, size_t max_live, Sink sink);

  void Add(const MergedRecord& r);
  // Closes every event still live at the end of the spool: those without a Stop are incomplete,
  // stopped at their communicator's CommEnd, else at |last_ns|.
  void Finish(uint64_t last_ns);

  // No event still to be handed to the sink starts before this (host ns): the oldest start among
  // the live events, else the time of the newest record seen. Exact while at most
  // kMaxTrackedStarts events started since the oldest live one; beyond that the oldest are
  // forgotten, and the layout's own bound decides for them.
  uint64_t Watermark();

  const AssemblerCounts& counts() const { return counts_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr size_t kMaxTrackedStarts = 1 << 17;
  struct Live {
    AssembledEvent ev;
    uint32_t parent = kNone;
    uint32_t holds = 0;     // 1 until stopped + expected + live children
    uint32_t expected = 0;  // announced KernelCh children not yet started
    uint32_t children = 0;
    uint64_t gpu_min = UINT64_MAX, gpu_max = 0;
    bool stopped = false;
    bool in_use = false;
  };

  void OnStart(const MergedRecord& r);
  void OnState(const MergedRecord& r);
  void OnStop(const MergedRecord& r);
  void Complete(uint32_t index);
  const std::string* Str(uint32_t id) const;
  int CommAt(uint16_t slot, uint64_t ticks);

  const SpoolIndex& index_;
  size_t max_live_;
  Sink sink_;
  std::vector<Live> pool_;
  std::vector<uint32_t> free_;
  IdMap live_;
  // Recently completed (far more than are ever in flight between a parent's completion and a
  // straggling child, in bounded memory).
  RecentIds done_;
  std::vector<const std::string*> dense_strings_;
  std::vector<int32_t> slot_comm_;  // per slot: its only communicator, -1 none, -2 several
  AssemblerCounts counts_;
  // (start ns, id) of the events in start order (records come in tick order), those that
  // completed dropped lazily from the front.
  std::deque<std::pair<uint64_t, uint64_t>> starts_;
  uint64_t last_ticks_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_EVENT_ASSEMBLER_H_
