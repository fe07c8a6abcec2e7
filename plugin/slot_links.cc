// Completion of a pool slot: the last hold released (by the event's stop, a child's completion or
// finalize's claim) gives the slot back, names the announced KernelCh children that were never
// recorded, and releases the parent's hold in turn. Out of line: it runs at most once per event
// and from several places; what runs on every start is inline in slot_links.h.
#include "plugin/slot_links.h"

#include <atomic>
#include <mutex>

#include "plugin/capture/host_clock.h"
#include "plugin/capture/record_appender.h"
#include "plugin/thread_capture.h"

namespace katrace {
namespace core {
namespace {

// Names the announced KernelCh children of a Coll/P2p that were not recorded, for the export.
// Never dropped while the writer runs: without it the export would write a complete Coll as
// incomplete. False when this thread has no capture buffer.
bool WriteNotice(Session* s, const PendingNotice& n) {
  spool::StateBody body{n.id, NowTicks(), spool::kStateUnrecordedChildren, 0, n.count};
  AppendPolicy waiting = s->policy;
  waiting.drop_when_full = false;
  return s->spooling && AppendRecord(BufferForThisThread(s), waiting, spool::RecordType::kState,
                                     static_cast<int>(n.kind), n.context, 0, body);
}

// The export waits for every KernelCh a Coll/P2p announced; those dropped are named once, when
// nothing can be added any more. Never dropped while the writer runs: without it the export
// would write a complete Coll as incomplete. Cold: only when a child was dropped.
__attribute__((noinline, cold)) void NameUnrecordedChildren(Session* s, const PendingNotice& notice) {
  if (WriteNotice(s, notice)) return;
  std::lock_guard<std::mutex> lock(s->notices_mu);
  if (s->num_pending_notices < kMaxPendingNotices) s->pending_notices[s->num_pending_notices++] = notice;
}

}  // namespace

void WritePendingNotices(Session* s) {
  std::lock_guard<std::mutex> lock(s->notices_mu);
  for (size_t i = 0; i < s->num_pending_notices; ++i) WriteNotice(s, s->pending_notices[i]);
  s->num_pending_notices = 0;
}

void Complete(Session* s, EventPool* pool, uint32_t index, uint16_t context, Kind kind) {
  EventSlot& slot = pool->slot(index);
  const uint32_t unrecorded = slot.unrecorded_awaited.load(std::memory_order_relaxed);
  if (unrecorded != 0 && slot.recorded) NameUnrecordedChildren(s, {slot.id, unrecorded, context, kind});
  SlotRef parent;
  const bool has_parent = slot.holds_parent && ResolveFields(s, slot.parent, &parent);
  uint32_t gen = SlotState::Generation(slot.state.load(std::memory_order_relaxed));
  slot.tombstone.store((static_cast<uint64_t>(gen) << 40) | (slot.id & ((1ull << 40) - 1)), std::memory_order_release);
  slot.state.store(SlotState::Free(gen + 1), std::memory_order_release);
  pool->Release(index);
  if (has_parent) ReleaseSlot(s, parent);
}

void ReleaseSlot(Session* s, const SlotRef& ref) {
  if (SlotState::ReleaseHold(&ref.slot->state, ref.fields.generation)) {
    Complete(s, ref.pool, ref.index, static_cast<uint16_t>(ref.fields.context), ref.fields.kind);
  }
}

void WriteHeldGpuStops(Session* s, Context* ctx) {
  if (ctx == nullptr || !s->spooling) return;
  AppendPolicy waiting = s->policy;
  waiting.drop_when_full = false;
  for (Kind kind : {Kind::kKernelCh, Kind::kKernelStep}) {
    EventPool* pool = ctx->pools[static_cast<int>(kind)].load(std::memory_order_acquire);
    for (uint32_t i = 0; pool != nullptr && i < pool->size(); ++i) {
      EventSlot& slot = pool->slot(i);
      const uint64_t w = slot.state.load(std::memory_order_acquire);
      if (!SlotState::IsLiveUnstopped(w, SlotState::Generation(w))) continue;
      const bool recorded = slot.recorded;
      const uint64_t id = slot.id;
      const uint64_t ticks = slot.done_ticks.load(std::memory_order_acquire);
      const uint64_t gpu_stop = slot.gpu_stop.load(std::memory_order_relaxed);
      // The slot is not ours: what was read counts only if the event is still the same one,
      // unstopped (a proxy thread may still be running at exit). A compare-and-swap of the word
      // with itself tells, and orders the reads before it (a fence would too, but ThreadSanitizer
      // cannot follow one).
      uint64_t unchanged = w;
      if (!recorded || ticks == 0 || !slot.state.compare_exchange_strong(unchanged, w, std::memory_order_acq_rel)) {
        continue;
      }
      spool::StateBody body{id, ticks, spool::GpuStopStateOf(kind), 0, gpu_stop};
      AppendRecord(BufferForThisThread(s), waiting, spool::RecordType::kState, static_cast<int>(kind),
                   static_cast<uint16_t>(ctx->index), 0, body);
    }
  }
}

void ClaimLiveSlots(Session* s, Context* ctx) {
  for (int k = 0; k < kKindCount; ++k) {
    EventPool* pool = ctx->pools[k].load(std::memory_order_acquire);
    if (pool == nullptr) continue;
    for (uint32_t i = 0; i < pool->size(); ++i) {
      if (SlotState::TryClaimLive(&pool->slot(i).state)) Complete(s, pool, i, static_cast<uint16_t>(ctx->index), static_cast<Kind>(k));
    }
  }
}

}  // namespace core
}  // namespace katrace
