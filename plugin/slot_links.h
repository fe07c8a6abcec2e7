// Links between a pool slot and its parent's, on top of the slot's life word (slot_state.h): a
// handle resolved to its slot, a child taking a hold on its parent and copying what it inherits
// (facts, the task's mask), the announced KernelCh holds, and completion, which gives the slot
// back and releases the parent in turn. What runs on every start is inline here, so the
// callbacks compile it in as if it were theirs; completion and the finalize's claim are out of
// line in slot_links.cc.
#ifndef KATRACE_PLUGIN_SLOT_LINKS_H_
#define KATRACE_PLUGIN_SLOT_LINKS_H_

#include <stdint.h>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "nccl_profiler/v6.h"
#include "plugin/comm_contexts.h"
#include "plugin/event_pool.h"
#include "plugin/handle_codec.h"
#include "plugin/session_state.h"
#include "plugin/slot_state.h"

namespace katrace {
namespace core {

struct SlotRef {
  Context* ctx = nullptr;
  EventPool* pool = nullptr;
  EventSlot* slot = nullptr;
  uint32_t index = 0;
  HandleFields fields{};
};

// Resolves a decoded handle to its slot without trusting it: every field is range-checked. An
// untracked handle resolves to nothing.
__attribute__((always_inline)) inline bool ResolveFields(Session* s, const HandleFields& fields, SlotRef* out) {
  if (fields.slot == kUntrackedSlot) return false;
  out->fields = fields;
  out->ctx = ContextAt(s, out->fields.context);
  if (out->ctx == nullptr) return false;
  out->pool = out->ctx->pools[static_cast<int>(out->fields.kind)].load(std::memory_order_acquire);
  if (out->pool == nullptr || out->fields.slot >= out->pool->size()) return false;
  out->index = out->fields.slot;
  out->slot = &out->pool->slot(out->index);
  return out->slot->tag == kSlotTag;
}

// The same, from the handle itself.
__attribute__((always_inline)) inline bool Resolve(Session* s, const void* handle, SlotRef* out) {
  HandleFields fields;
  return DecodeHandle(handle, &fields) && ResolveFields(s, fields, out);
}

// Gives the slot back once the event and all its children are done, then releases the hold it
// had on its parent. Runs on whichever thread released the last hold; no other thread touches the
// slot until it is acquired again.
void Complete(Session* s, EventPool* pool, uint32_t index, uint16_t context, Kind kind);

// Gives back one hold on |ref|'s slot, completing the event when it was the last.
void ReleaseSlot(Session* s, const SlotRef& ref);

// Writes the notices threads without a buffer left behind (finalize and exit, cold).
void WritePendingNotices(Session* s);

// Writes as a State record of its own the GPU stop state of each KernelCh and KernelStep of
// |ctx| that has it but not yet the stop that would carry it (spool::kStopCarriesGpuStop): for
// finalize and exit, so an event that never stops keeps its GPU stop stamp. A stop racing with
// this writes the stamp a second time, which the export takes as the same.
void WriteHeldGpuStops(Session* s, Context* ctx);

// Claims every event still holding a slot of |ctx| (events that never stopped, or whose children
// never came) so their parents in other communicators are released. Their records stay as they
// are: the exporter writes an event without a stop as incomplete.
void ClaimLiveSlots(Session* s, Context* ctx);

// A task's activation mask as NCCL snapshotted it, kept in 22 bits for the slot's task_mask word
// and for the generation field of an untracked handle (which names no slot): NCCL's bits as they
// are, up to and with the KernelStep bit, and above them whether the event awaits KernelCh
// children. Kept as NCCL's own bits, packing one is a single and: the masked-out parents' path
// (CoreStart) packs a mask per call.
constexpr int kMaskBitsKept = __builtin_ctz(static_cast<unsigned>(ncclProfileKernelStep)) + 1;
constexpr uint32_t kKeptMaskBits = (1u << kMaskBitsKept) - 1;
constexpr uint32_t kPackedAwaitsKernelCh = 1u << kMaskBitsKept;
constexpr uint64_t kPackedMaskBits = (uint64_t{1} << (kMaskBitsKept + 1)) - 1;
static_assert(kMaskBitsKept + 1 <= kGenerationBits, "a packed mask fits an untracked handle's generation field");
static_assert(kMaskBitsKept + 1 <= 40, "a packed mask stays below the generation in a slot's task_mask word");
inline uint32_t PackMask(int mask, bool awaits_kernel_ch) {
  return (static_cast<uint32_t>(mask) & kKeptMaskBits) | (awaits_kernel_ch ? kPackedAwaitsKernelCh : 0);
}

inline int UnpackMask(uint32_t packed) { return static_cast<int>(packed & kKeptMaskBits); }

// NCCL reads its mask once per API call and copies it into the task: every event of that task
// (Coll/P2p, ProxyOp, ProxyStep, NetPlugin, KernelCh, KernelStep, KernelLaunch) follows that
// snapshot, however the mask changed since. Only ProxyCtrl and CE events read it afresh.
constexpr bool FollowsTaskMask(Kind kind) {
  switch (kind) {
    case Kind::kColl:
    case Kind::kP2p:
    case Kind::kProxyOp:
    case Kind::kProxyStep:
    case Kind::kNetPlugin:
    case Kind::kKernelCh:
    case Kind::kKernelStep:
    case Kind::kKernelLaunch: return true;
    default: return false;
  }
}

// Children copy facts from these parents (func, channel, peer, direction), so they keep a slot
// even when not recorded themselves.
constexpr bool PassesFactsToChildren(Kind kind) {
  return kind == Kind::kColl || kind == Kind::kP2p || kind == Kind::kProxyOp;
}

// The NCCL type bits of the kinds that read the live mask and pass nothing to their children
// (API calls, groups, ProxyCtrl, CE events): masked out, such an event needs no slot at all.
constexpr uint64_t SlotlessWhenMaskedBits() {
  uint64_t bits = 0;
  for (const KindInfo& k : kKindInfo) {
    if (!FollowsTaskMask(k.kind) && !PassesFactsToChildren(k.kind)) bits |= k.type_bit;
  }
  return bits;
}
inline constexpr uint64_t kSlotlessWhenMaskedBits = SlotlessWhenMaskedBits();
static_assert((kSlotlessWhenMaskedBits & ncclProfileColl) == 0 && (kSlotlessWhenMaskedBits & ncclProfileGroup) != 0,
              "a Coll passes its func to its children; a Group passes nothing");

// The packed mask of the task whose parent handle decoded to |f| (|parent|: its slot, resolved by
// the caller, or null); false when the parent is not known (a slot that has since held another
// event, or none).
inline bool ParentTaskMask(const HandleFields& f, const SlotRef* parent, uint32_t* packed) {
  if (f.slot == kUntrackedSlot) {
    *packed = f.generation & kPackedMaskBits;
    return true;
  }
  if (parent == nullptr) return false;
  const uint64_t w = parent->slot->task_mask.load(std::memory_order_acquire);
  if ((w >> 40) != (parent->fields.generation & kGenerationMask)) return false;
  *packed = static_cast<uint32_t>(w & kPackedMaskBits);
  return true;
}

// A KernelCh its Coll/P2p announced will never hold the parent (dropped before it had a slot):
// the announced hold is given back, so the parent completes, and counted, so the export stops
// waiting too. A hold of our own keeps the parent from completing between the two steps.
__attribute__((always_inline)) inline void ForgoAnnouncedChild(Session* s, void* parent_obj) {
  SlotRef p;
  if (parent_obj == nullptr || !Resolve(s, parent_obj, &p)) return;
  if (!SlotState::TryHold(&p.slot->state, p.fields.generation, false)) return;
  bool last = false;
  if (SlotState::ForgoExpected(&p.slot->state, p.fields.generation, &last)) {
    p.slot->unrecorded_awaited.fetch_add(1, std::memory_order_relaxed);  // ordered by the release below
  }
  ReleaseSlot(s, p);
}

// Links a new event to its parent (|parent|: the slot its parent handle resolved to, or null):
// takes a hold on a live parent (so it cannot complete first) and copies what the child inherits,
// or, if the parent already completed, keeps its record id from the slot's tombstone. Returns the
// child's start flags (late or not).
// |*took_announced|: the child took one of the KernelCh holds its parent announced.
inline uint16_t AttachParent(EventSlot* child, Kind kind, const SlotRef* parent, uint64_t* parent_id,
                             bool* took_announced) {
  *parent_id = 0;
  *took_announced = false;
  if (parent == nullptr) return 0;
  const SlotRef& p = *parent;
  if (SlotState::TryHold(&p.slot->state, p.fields.generation, kind == Kind::kKernelCh, took_announced)) {
    *parent_id = p.slot->id;
    child->parent = p.fields;
    child->holds_parent = true;
    child->func = p.slot->func;
    child->channel = p.slot->channel;
    child->peer = p.slot->peer;
    child->direction = p.slot->direction;
    return 0;
  }
  uint64_t t = p.slot->tombstone.load(std::memory_order_acquire);
  if ((t >> 40) != (p.fields.generation & kGenerationMask)) return 0;
  *parent_id = t & ((1ull << 40) - 1);
  // Late means the parent's work was retired before this child started. A parent whose stop
  // only says "enqueued" completes at that stop, and its children follow it in NCCL's normal
  // order: a Coll/P2p after its API call, a ProxyOp or KernelStep after a Coll/P2p that awaited
  // no KernelCh. A Coll/P2p that awaited its KernelCh, or a ProxyOp (stopped when its steps are
  // done), was released only when its work was.
  switch (p.fields.kind) {
    case Kind::kGroupApi:
    case Kind::kCollApi:
    case Kind::kP2pApi:
    case Kind::kGroup:
    case Kind::kKernelLaunch: return 0;
    case Kind::kColl:
    case Kind::kP2p: {
      const uint64_t w = p.slot->task_mask.load(std::memory_order_acquire);
      const bool awaited = (w >> 40) == (p.fields.generation & kGenerationMask) && (w & kPackedAwaitsKernelCh);
      return awaited ? spool::kStartLateChild : 0;
    }
    default: return spool::kStartLateChild;
  }
}

}  // namespace core
}  // namespace katrace

#endif  // KATRACE_PLUGIN_SLOT_LINKS_H_
