// The hot path: NCCL's start, stop and recordEventState callbacks. Each validates its handle, keeps
// the pool slot's life state (holds, generations) and appends one compact record to the calling
// thread's capture buffer. It takes no shared lock, allocates nothing and formats nothing; the
// spool writer thread moves the buffers to disk and the exporter builds the trace at the end,
// with the whole run in view. Everything a callback runs on its common path is in this file or
// inline in the headers it includes, so it compiles as one piece.
#include "plugin/profiler.h"

#include <stdint.h>

#include <array>
#include <atomic>
#include <string>
#include <utility>

#include "katrace/drain_counters.h"
#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "plugin/capture/hang_watchdog.h"
#include "plugin/capture/host_clock.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/start_record.h"
#include "plugin/comm_contexts.h"
#include "plugin/handle_codec.h"
#include "plugin/logger.h"
#include "plugin/session_state.h"
#include "plugin/slot_links.h"
#include "plugin/slot_state.h"
#include "plugin/thread_capture.h"

namespace katrace {
namespace core {
namespace {

std::atomic<uint64_t> g_next_id_block{0};

// Record ids are handed out in per-thread blocks so that threads do not share a counter.
uint64_t NextRecordId() {
  constexpr uint64_t kBlock = 1024;
  static __attribute__((tls_model("initial-exec"))) thread_local uint64_t next = 0, end = 0;
  if (next == end) {
    next = g_next_id_block.fetch_add(kBlock, std::memory_order_relaxed) + 1;
    end = next + kBlock;
  }
  return next++;
}

void HandleDrainReport(Session* s, const ncclProfilerKernelStepDescr_t& d) {
  const DrainCounters report = DecodeDrainReport(d);
  for (int i = 0; i < kDrainCounterCount; ++i) {
    s->drain[i].fetch_add(report.*kDrainCounterFields[i].member, std::memory_order_relaxed);
  }
}

// An event for a communicator that was already finalized (NCCL's shared proxy thread can still
// report for it), or that could not be profiled (more live ones than the plugin holds), cannot be
// recorded: it is counted as lost against its kind, never ignored.
void CountIfFinalized(Session* s, void* context, Kind kind) {
  uint32_t index = 0;
  uint64_t serial = 0;
  if (context == nullptr || !DecodeContext(context, &index, &serial)) return;
  if (index == kForeignContext && serial == kUnprofiledSerial) {
    // A communicator beyond the live ones the plugin holds: said once at its init.
    s->counters.dropped[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (index == kForeignContext || index >= kMaxContexts || serial == 0 ||
      s->context_storage[index].retired_serial.load(std::memory_order_relaxed) != serial) {
    return;
  }
  s->counters.dropped[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
  WarnOnce(&s->after_finalize_warned,
           "events for an already finalized communicator cannot be recorded: they are dropped and counted in the trace");
}

// The capture window's verdict for a root event starting now. A collective edge crossed by this
// call is marked in the trace from this thread, which saw it first.
bool AdmitRoot(Session* s, Kind kind) {
  spool::MarkerBody edge;
  const bool inside = s->window.AdmitRoot(kind, &edge);
  if (edge.what != 0 && s->spooling) {
    AppendPolicy waiting = s->policy;
    waiting.drop_when_full = false;
    AppendRecord(BufferForThisThread(s), waiting, spool::RecordType::kMarker, 0, 0, 0, edge);
  }
  return inside;
}

// The kinds recorded now: NCCL's live mask (what it used for the events it is about to report),
// or the configured one when NCCL gave no mask pointer.
int LiveMask(const Session* s) { return __atomic_load_n(s->live_mask, __ATOMIC_RELAXED); }

// A start lost because its pool is full (or could not be made): counted, and said once.
__attribute__((noinline, cold)) void DropForFullPool(Session* s, Kind kind, bool out_of_memory) {
  const int k = static_cast<int>(kind);
  s->counters.dropped[k].fetch_add(1, std::memory_order_relaxed);
  const std::string pool = std::string("the ") + kKindInfo[k].name + " pool (" +
                           std::to_string(s->config.pool_size[k]) + " live events per communicator)";
  const std::string dropped = std::string(": ") + kKindInfo[k].name + " events are dropped and counted in the trace; ";
  WarnOnce(&s->drop_warned[k], out_of_memory ? pool + " could not be allocated (out of memory)" + dropped +
                                                   "lower KATRACE_POOL_" + kKindInfo[k].pool_env +
                                                   " (or KATRACE_POOL_SIZE)"
                                             : pool + " is full" + dropped + "raise KATRACE_POOL_" +
                                                   kKindInfo[k].pool_env);
}

// The handle of a masked-out event of a kind in kSlotlessWhenMaskedBits, made from the context
// value without looking it up or testing it. It names no slot, so stop and record on it return at
// once and its context field is never resolved; its kind field says Group whatever the kind (no
// untracked handle's kind is read); it carries the mask NCCL used, for its children. Its magic is
// the context's own with one bit flipped: a context of ours (0xB) gives a handle's (0xA); any
// other value (NULL, a foreign pointer) gives a handle of no use to its children but the mask it
// carries, since the window verdict its magic may say is never read on this path's sessions.
// One xor flips that bit and sets the kind and slot fields, which the context's bits leave 0.
static_assert((kContextMagic ^ kHandleMagic) == 1, "a context's magic and a handle's differ in one bit");
constexpr uint64_t kContextToSlotlessHandle = ((kContextMagic ^ kHandleMagic) << 60) |
                                              (static_cast<uint64_t>(Kind::kGroup) << 45) |
                                              (static_cast<uint64_t>(kUntrackedSlot) << 24);
inline void* SlotlessHandle(const void* context, uint32_t packed_mask) {
  const uint64_t magic_and_context = reinterpret_cast<uint64_t>(context) & ((uint64_t{0xF} << 60) | kContextField);
  return reinterpret_cast<void*>((magic_and_context ^ kContextToSlotlessHandle) | packed_mask);
}

// A start that takes a slot: the event is recorded, or passes facts to its children. Inlined into
// StartOfKind, for its kind.
template <Kind kind>
__attribute__((always_inline)) inline ncclResult_t StartTracked(Session* s, Context* ctx, int mask, bool record,
                                                                bool outside, bool foreign, const SlotRef* parent,
                                                                void** handle, const ncclProfilerEventDescr_v6_t* d) {
  // Read once, as early as the event is known to be recorded.
  uint64_t ticks = record ? NowTicks() : 0;
  EventPool* pool = GetPool(s, ctx, kind);
  uint32_t index = 0;
  if (pool == nullptr || !pool->Acquire(&index)) {
    DropForFullPool(s, kind, pool == nullptr);
    if (kind == Kind::kKernelCh && !foreign) ForgoAnnouncedChild(s, d->parentObj);
    return ncclSuccess;
  }
  EventSlot& slot = pool->slot(index);
  uint32_t gen = SlotState::Generation(slot.state.load(std::memory_order_relaxed));
  slot.id = NextRecordId();
  slot.holds_parent = false;
  slot.nvtx_range = 0;
  slot.func = 0;
  slot.peer = 0;
  slot.channel = 0;
  slot.direction = 0;
  // A Coll/P2p is done only when its GPU work is: with KernelCh on, one child per channel will
  // come, usually after this event's stop, so hold the slot for them now.
  // Outside the capture window its KernelCh children are not recorded and take no hold, so
  // none is awaited.
  uint32_t expected = 0;
  const bool awaits_kernel_ch = !outside && (mask & ncclProfileKernelCh);
  if (kind == Kind::kColl && awaits_kernel_ch) expected = d->coll.nChannels;
  if (kind == Kind::kP2p && awaits_kernel_ch) expected = d->p2p.nChannels;
  uint16_t flags = StartFlags(kind, d) | (expected != 0 ? spool::kStartAwaitsKernelCh : 0);
  slot.unrecorded_awaited.store(0, std::memory_order_relaxed);
  slot.done_ticks.store(0, std::memory_order_relaxed);
  // Published with the state below; read by children through their handle, also once completed.
  slot.task_mask.store((static_cast<uint64_t>(gen) << 40) | PackMask(mask, expected != 0), std::memory_order_relaxed);
  spool::StartBody start{slot.id, 0, ticks};
  bool took_announced = false;
  flags |= AttachParent(&slot, kind, parent, &start.parent_id, &took_announced);
  CaptureTarget target{BufferForThisThread(s), &s->policy, &s->strings};
  if (kind == Kind::kColl || kind == Kind::kP2p) {
    const char* func = kind == Kind::kColl ? d->coll.func : d->p2p.func;
    slot.func = InternString(target, func);
    if (s->nvtx.enabled()) slot.nvtx_range = s->nvtx.Start(func);
  } else if (kind == Kind::kGroup) {
    if (s->nvtx.enabled()) slot.nvtx_range = s->nvtx.Start("Group");
  } else if (kind == Kind::kProxyOp) {
    slot.channel = d->proxyOp.channelId;
    slot.peer = d->proxyOp.peer;
    slot.direction = d->proxyOp.isSend ? 1 : 2;
  }
  // Kinds NCCL reports only because a descendant is on are tracked for their links, not recorded.
  slot.recorded = record && RecordStart(target, kind, static_cast<uint16_t>(ctx->index), flags, start, d,
                                        InheritedFacts{slot.func, slot.peer, slot.channel, slot.direction});
  // An announced KernelCh whose record was lost (buffer full in drop mode, or beyond the buffer
  // budget) still holds its parent here, but the export will never see it: the parent, which
  // this child holds live, names it at completion.
  if (took_announced && !slot.recorded) {
    SlotRef p;
    if (ResolveFields(s, slot.parent, &p)) p.slot->unrecorded_awaited.fetch_add(1, std::memory_order_relaxed);
  }
  slot.state.store(SlotState::Live(gen, expected), std::memory_order_release);
  *handle = EncodeHandle(ctx->index, kind, index, gen, outside);
  return ncclSuccess;
}

// A start of kind |kind| (any but a masked-out parent's): the parent, the mask and the window
// decide whether the event is recorded and whether it takes a slot. One function per kind, so
// that every choice that depends on the kind alone is made by the compiler.
template <Kind kind>
__attribute__((noinline)) ncclResult_t StartOfKind(void* context, void** handle, const ncclProfilerEventDescr_v6_t* d,
                                                   Session* s) {
  // A ProxyOp created by another process (PXN): its context and parent are that process's values.
  const bool foreign = kind == Kind::kProxyOp && d->proxyOp.pid != s->os_pid;
  // The parent's handle, decoded once (a foreign parent is not ours), and its slot if it has one.
  HandleFields parent_fields;
  const bool parent_ours = !foreign && d->parentObj != nullptr && DecodeHandle(d->parentObj, &parent_fields);
  SlotRef parent_slot;
  const SlotRef* parent = parent_ours && ResolveFields(s, parent_fields, &parent_slot) ? &parent_slot : nullptr;
  Context* ctx = foreign ? ContextAt(s, kForeignContext) : LookupContext(s, context);
  // Steps of a foreign proxy op carry that process's context too; their parent is ours.
  if (ctx == nullptr && parent != nullptr) ctx = parent->ctx;
  if (ctx == nullptr) {
    if (!foreign) CountIfFinalized(s, context, kind);
    return ncclSuccess;
  }
  if (kind == Kind::kKernelStep && d->parentObj == nullptr && d->kernelStep.isSend == ncclProfilerKernelStepReport) {
    HandleDrainReport(s, d->kernelStep);
    return ncclSuccess;
  }
  constexpr int k = static_cast<int>(kind);
  // The mask NCCL used for this event's task: the parent's snapshot, else the live mask (NCCL
  // has just read it for an API call, ProxyCtrl or CE event).
  uint32_t parent_mask = 0;
  const int mask = FollowsTaskMask(kind) && parent_ours && ParentTaskMask(parent_fields, parent, &parent_mask)
                       ? UnpackMask(parent_mask)
                       : LiveMask(s);
  // The capture window's verdict: the parent's, read from its handle, whatever became of its
  // slot since; a root (no parent of ours) takes it now.
  bool outside = false;
  if (s->window.active()) {
    outside = parent_ours ? parent_fields.outside : !AdmitRoot(s, kind);
    if (kind == Kind::kColl || kind == Kind::kP2p) s->window.CountCollective(!outside);
  }
  const bool record = !outside && (mask & static_cast<int>(kKindInfo[k].type_bit)) != 0;
  if (!record && !PassesFactsToChildren(kind)) {
    // Its children still learn the task's mask and the window verdict from the handle.
    *handle = EncodeHandle(ctx->index, kind, kUntrackedSlot, PackMask(mask, false), outside);
    return ncclSuccess;
  }
  return StartTracked<kind>(s, ctx, mask, record, outside, foreign, parent, handle, d);
}

using StartFunction = ncclResult_t (*)(void*, void**, const ncclProfilerEventDescr_v6_t*, Session*);
template <size_t... K>
constexpr std::array<StartFunction, kKindCount> StartFunctions(std::index_sequence<K...>) {
  return {&StartOfKind<static_cast<Kind>(K)>...};
}
inline constexpr std::array<StartFunction, kKindCount> kStartOfKind = StartFunctions(std::make_index_sequence<kKindCount>{});

// Every start but a masked-out parent's, handed to its kind's function. Its arguments are
// CoreStart's, in their registers.
__attribute__((noinline)) ncclResult_t StartEvent(void* context, void** handle, const ncclProfilerEventDescr_v6_t* d) {
  *handle = nullptr;
  Session* s = g_session.load(std::memory_order_acquire);
  Kind kind;
  if (s == nullptr || !KindFromType(d->type, &kind)) return ncclSuccess;
  return kStartOfKind[static_cast<size_t>(kind)](context, handle, d, s);
}

// A state of an event that may hold a slot; out of line, so that the states of the slotless
// parents pay for no stack frame.
__attribute__((noinline)) ncclResult_t RecordState(void* handle, int state, const ncclProfilerEventStateArgs_v6_t* args) {
  Session* s = g_session.load(std::memory_order_acquire);
  SlotRef ref;
  // katrace's own state number in the spool is never taken from NCCL.
  if (s == nullptr || handle == nullptr || state == spool::kStateUnrecordedChildren || !Resolve(s, handle, &ref)) {
    return ncclSuccess;
  }
  if (!SlotState::IsLiveUnstopped(ref.slot->state.load(std::memory_order_acquire), ref.fields.generation) ||
      !ref.slot->recorded) {
    return ncclSuccess;
  }
  const uint64_t ticks = NowTicks();
  const int32_t gpu_stop_state = spool::GpuStopStateOf(ref.fields.kind);
  if (gpu_stop_state >= 0 && state == gpu_stop_state) {
    // A GPU stop stamp, kept in the slot for the stop that follows, which writes it in its own
    // record (spool::kStopCarriesGpuStop); finalize or exit writes it if that stop never comes.
    uint64_t gpu_stop = 0;
    if (args != nullptr) gpu_stop = ref.fields.kind == Kind::kKernelCh ? args->kernelCh.pTimer : args->kernelStep.pTimer;
    ref.slot->gpu_stop.store(gpu_stop, std::memory_order_relaxed);
    ref.slot->done_ticks.store(ticks, std::memory_order_release);
    return ncclSuccess;
  }
  uint64_t value = 0;
  if (args != nullptr) {
    switch (state) {
      case ncclProfilerProxyCtrlAppendEnd: value = static_cast<uint64_t>(args->proxyCtrl.appendedProxyOps); break;
      case ncclProfilerProxyStepSendWait:
      case ncclProfilerProxyStepRecvFlushWait: value = args->proxyStep.transSize; break;
      default: break;
    }
  }
  const uint64_t id = ref.slot->id;
  AppendRecordInPlace<spool::StateBody>(BufferForThisThread(s), s->policy, spool::RecordType::kState,
                                        static_cast<int>(ref.fields.kind), static_cast<uint16_t>(ref.fields.context),
                                        0, [&](spool::StateBody& body) {
                                          body.id = id;
                                          body.ticks = ticks;
                                          body.state = state;
                                          body.value = value;
                                        });
  return ncclSuccess;
}


}  // namespace
}  // namespace core

// The entry points profiler.h declares, written in the core's own terms.
using namespace core;

ncclResult_t CoreStart(void* context, void** handle, ncclProfilerEventDescr_v6_t* d) {
  if (handle == nullptr) return ncclSuccess;
  if (d == nullptr) {
    *handle = nullptr;
    return ncclSuccess;
  }
  const uint64_t type = d->type;
  // The parents NCCL reports only for a descendant's sake (API calls and groups under a mask that
  // leaves them out): their kind reads the live mask and passes nothing to its children, so with
  // no capture window to consult (their bits are 0 under one, and while no session runs) their
  // handle is made here, without the session, a slot, a clock read or a locked operation.
  // Everything else is StartEvent's, out of line, so that this path pays for no stack frame.
  if ((type & g_slotless_starts.type_bits.load(std::memory_order_acquire)) != 0 && (type & (type - 1)) == 0) {
    const int mask = __atomic_load_n(g_slotless_starts.live_mask.load(std::memory_order_relaxed), __ATOMIC_RELAXED);
    if (__builtin_expect((static_cast<uint64_t>(static_cast<uint32_t>(mask)) & type) == 0, 1)) {
      *handle = SlotlessHandle(context, PackMask(mask, false));
      return ncclSuccess;
    }
  }
  return StartEvent(context, handle, d);
}

ncclResult_t CoreStop(void* handle) {
  if (NamesNoSlot(handle)) return ncclSuccess;
  Session* s = g_session.load(std::memory_order_acquire);
  SlotRef ref;
  if (s == nullptr || handle == nullptr || !Resolve(s, handle, &ref)) return ncclSuccess;
  // Only the first stop of the current occupant counts: a double stop or a stale handle is ignored.
  bool last = false;
  if (!SlotState::StopAndRelease(&ref.slot->state, ref.fields.generation, &last)) return ncclSuccess;
  // The slot is still ours to read: its children hold it, or this thread completes it below.
  const bool recorded = ref.slot->recorded;
  const bool progress = s->watchdog_on && StopMeansProgress(ref.fields.kind);
  const uint64_t nvtx_range = ref.slot->nvtx_range;
  if (recorded || progress) {
    // A KernelCh or KernelStep stopped right after its GPU stop state takes that state's time,
    // and writes the state's GPU stamp with its stop.
    const uint64_t done_ticks = ref.slot->done_ticks.load(std::memory_order_acquire);
    const uint64_t ticks = done_ticks != 0 ? done_ticks : NowTicks();
    if (progress) s->watchdog.NoteProgress(ticks);
    if (recorded) {
      const uint64_t id = ref.slot->id;
      const uint16_t context = static_cast<uint16_t>(ref.fields.context);
      const int kind = static_cast<int>(ref.fields.kind);
      if (done_ticks != 0) {
        const uint64_t gpu_stop = ref.slot->gpu_stop.load(std::memory_order_relaxed);
        AppendRecordInPlace<spool::StopWithGpuStopBody>(BufferForThisThread(s), s->policy, spool::RecordType::kStop,
                                                        kind, context, spool::kStopCarriesGpuStop,
                                                        [&](spool::StopWithGpuStopBody& body) {
                                                          body.id = id;
                                                          body.ticks = ticks;
                                                          body.gpu_stop = gpu_stop;
                                                        });
      } else {
        AppendRecordInPlace<spool::StopBody>(BufferForThisThread(s), s->policy, spool::RecordType::kStop, kind,
                                             context, 0, [&](spool::StopBody& body) {
                                               body.id = id;
                                               body.ticks = ticks;
                                             });
      }
    }
  }
  if (nvtx_range != 0) s->nvtx.End(nvtx_range);
  if (last) Complete(s, ref.pool, ref.index, static_cast<uint16_t>(ref.fields.context), ref.fields.kind);
  return ncclSuccess;
}

ncclResult_t CoreRecord(void* handle, int state, const ncclProfilerEventStateArgs_v6_t* args) {
  if (NamesNoSlot(handle)) return ncclSuccess;
  return RecordState(handle, state, args);
}

}  // namespace katrace
