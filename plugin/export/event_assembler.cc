#include "plugin/export/event_assembler.h"
#include "plugin/export/kind_args.h"

#include <string.h>

#include <algorithm>
#include <new>

namespace katrace {
namespace exporting {
namespace {

using spool::RecordType;

constexpr uint32_t kDenseStrings = 1u << 20;

// A GPU event's GPU stop state (spool::GpuStopStateOf), from a State or folded into its Stop: a
// KernelCh's stamp (0: NCCL gave none), a KernelStep's (0: the drain gave up waiting for it).
void NoteGpuStop(AssembledEvent* e, uint64_t gpu_stop) {
  if (e->kind == Kind::kKernelStep && gpu_stop == 0) {
    e->flags |= kEvAbandoned;
    return;
  }
  e->gpu_stop = gpu_stop;
  if (gpu_stop != 0) e->flags |= kEvGpuStopSeen;
}

}  // namespace

EventAssembler::EventAssembler(const SpoolIndex& index, size_t max_live, Sink sink)
    : index_(index), max_live_(max_live), sink_(std::move(sink)) {
  uint32_t max_id = 0;
  for (const auto& s : index.strings) {
    if (s.first < kDenseStrings && s.first > max_id) max_id = s.first;
  }
  dense_strings_.assign(static_cast<size_t>(max_id) + 1, nullptr);
  for (const auto& s : index.strings) {
    if (s.first < kDenseStrings) dense_strings_[s.first] = &s.second;
  }
  slot_comm_.assign(65536, -1);
  for (const auto& e : index.comms_by_slot) slot_comm_[e.first] = e.second.size() == 1 ? e.second[0] : -2;
}

const std::string* EventAssembler::Str(uint32_t id) const {
  if (id == 0) return nullptr;
  if (id < dense_strings_.size()) return dense_strings_[id];
  auto it = index_.strings.find(id);
  return it == index_.strings.end() ? nullptr : &it->second;
}

int EventAssembler::CommAt(uint16_t slot, uint64_t ticks) {
  int c = slot_comm_[slot];
  return c == -2 ? index_.CommIndexAt(slot, ticks) : c;
}

void EventAssembler::Add(const MergedRecord& r) {
  if (r.key > last_ticks_) last_ticks_ = r.key;
  switch (r.header.type) {
    case RecordType::kStart: OnStart(r); break;
    case RecordType::kState: OnState(r); break;
    case RecordType::kStop: OnStop(r); break;
    default: break;
  }
}

void EventAssembler::OnStart(const MergedRecord& r) {
  if (r.header.kind >= kKindCount) {
    ++counts_.unknown_kinds;
    return;
  }
  if (r.body_size < sizeof(spool::StartBody)) {
    ++counts_.short_records;
    return;
  }
  spool::StartBody sb = ReadBody<spool::StartBody>(r.body, r.body_size);
  // A flight dump starts, whole, after the last event record its ring let go.
  if (index_.flight && sb.ticks <= index_.flight_body.cut_ticks) {
    ++counts_.cut_starts;
    return;
  }
  if (sb.id == 0 || live_.Find(sb.id) != IdMap::kMissing) {
    ++counts_.duplicates;
    return;
  }
  if (live_.size() >= max_live_) {
    ++counts_.over_budget;
    return;
  }
  uint32_t idx;
  if (!free_.empty()) {
    idx = free_.back();
    free_.pop_back();
  } else {
    idx = static_cast<uint32_t>(pool_.size());
    pool_.emplace_back();
  }
  // Built in place: assigning a Live{} zeroes a temporary on the stack and copies it over, which
  // was most of a Start's cost.
  Live& l = *new (&pool_[idx]) Live;
  l.in_use = true;
  AssembledEvent& e = l.ev;
  Kind kind = static_cast<Kind>(r.header.kind);
  e.id = sb.id;
  e.kind = kind;
  e.start_ns = index_.clock.Ns(sb.ticks);
  e.os_tid = r.os_tid;
  e.context = r.header.context;
  e.comm_index = CommAt(r.header.context, sb.ticks);
  if (e.comm_index >= 0) {
    const CommInstance& c = index_.comms[static_cast<size_t>(e.comm_index)];
    e.comm_hash = c.comm_hash;
    e.rank = c.rank;
  }
  uint16_t f = r.header.flags;
  // The kind's own fields, as recorded (a short record leaves the rest zero); the schema says
  // which of them name, locate and time it.
  const size_t at = sizeof(spool::StartBody);
  const size_t have = std::min<size_t>(r.body_size - at, spool::kStartFieldsBytes[r.header.kind]);
  if (have != 0) memcpy(e.fields, r.body + at, have);
  ReadSchemaFields([this](uint32_t id) { return Str(id); }, &e);
  if (f & spool::kStartGraphCaptured) e.flags |= kEvGraphCaptured;
  // The direction: the capture's flag where NCCL gave one, a ProxyStep's copy of its ProxyOp's.
  if (kind == Kind::kProxyOp || kind == Kind::kKernelStep) {
    e.flags |= kEvDirectionKnown | ((f & spool::kStartSend) ? kEvSend : 0);
  } else if (kind == Kind::kProxyStep) {
    const uint8_t direction = e.Fields<Kind::kProxyStep>().direction;
    if (direction == 1 || direction == 2) e.flags |= kEvDirectionKnown | (direction == 1 ? kEvSend : 0);
  }
  // The parent: live (it then waits for us), recently completed, or not recorded (no parent
  // written). Late is the capture's verdict (kStartLateChild: the parent's work was retired
  // before this started), not "the parent completed first", which is NCCL's normal order for a
  // ProxyOp after its Coll's stop.
  if (sb.parent_id != 0) {
    uint32_t p = live_.Find(sb.parent_id);
    if (p != IdMap::kMissing) {
      Live& pl = pool_[p];
      l.parent = p;
      e.parent_id = sb.parent_id;
      if (kind == Kind::kKernelCh && pl.expected > 0) {
        --pl.expected;  // takes over one announced hold
      } else {
        ++pl.holds;
      }
      ++pl.children;
      if ((kind == Kind::kKernelCh || kind == Kind::kKernelStep) && e.func == nullptr) e.func = pl.ev.func;
      // A step without a direction of its own takes its ProxyOp's channel, peer and direction.
      if (kind == Kind::kProxyStep && pl.ev.kind == Kind::kProxyOp && (e.flags & kEvDirectionKnown) == 0) {
        e.channel = pl.ev.channel;
        e.peer = pl.ev.peer;
        e.flags |= kEvDirectionKnown | (pl.ev.flags & kEvSend);
      }
    } else {
      Kind parent_kind;
      if (done_.Find(sb.parent_id, &parent_kind)) {
        e.parent_id = sb.parent_id;
      } else {
        ++counts_.unknown_parents;
      }
    }
  }
  if (f & spool::kStartLateChild) {
    e.flags |= kEvLateChild;
    ++counts_.late;
  }
  // The capture flags a task whose KernelCh bit was in NCCL's live mask: only then do its
  // channels announce themselves (the process-wide mask may have changed during the run).
  if ((kind == Kind::kColl || kind == Kind::kP2p) && (f & spool::kStartAwaitsKernelCh)) {
    l.expected = kind == Kind::kColl ? e.Fields<Kind::kColl>().nchannels : e.Fields<Kind::kP2p>().nchannels;
  }
  l.holds += 1 + l.expected;
  live_.Put(e.id, idx);
  starts_.emplace_back(e.start_ns, e.id);
  if (starts_.size() > kMaxTrackedStarts) starts_.pop_front();
}

uint64_t EventAssembler::Watermark() {
  while (!starts_.empty() && live_.Find(starts_.front().second) == IdMap::kMissing) starts_.pop_front();
  const uint64_t newest = index_.clock.Ns(last_ticks_);
  return starts_.empty() ? newest : std::min(starts_.front().first, newest);
}

void EventAssembler::OnState(const MergedRecord& r) {
  if (r.body_size < offsetof(spool::StateBody, value) + sizeof(uint64_t)) {
    ++counts_.short_records;
    return;
  }
  spool::StateBody s = ReadBody<spool::StateBody>(r.body, r.body_size);
  uint32_t idx = live_.Find(s.id);
  if (idx == IdMap::kMissing) {
    ++counts_.orphans;
    return;
  }
  Live& l = pool_[idx];
  const int32_t state = s.state;
  // The capture's word that announced KernelCh children were dropped: stop waiting for them.
  // It comes when the event completed in the plugin, so usually after its stop.
  if (state == spool::kStateUnrecordedChildren) {
    uint64_t n = s.value < l.expected ? s.value : l.expected;
    l.expected -= static_cast<uint32_t>(n);
    l.holds -= static_cast<uint32_t>(n);
    if (l.holds == 0) Complete(idx);
    return;
  }
  if (l.stopped) return;  // as the plugin did: states after the stop are ignored
  AssembledEvent& e = l.ev;
  // Kept as plain ints: NCCL's state numbers are open-ended.
  if (state == static_cast<int32_t>(ncclProfilerKernelChStop) || state == static_cast<int32_t>(ncclProfilerKernelStepStop)) {
    if (state == spool::GpuStopStateOf(e.kind)) NoteGpuStop(&e, s.value);
    return;
  }
  if (state == static_cast<int32_t>(ncclProfilerNetPluginUpdate)) {
    if (e.kind == Kind::kNetPlugin) ++e.updates;
    return;
  }
  // The states that carry a value (kind_schema.h: kStateValue): the ops a ProxyCtrl appended,
  // the bytes a ProxyStep moved.
  if (e.kind == Kind::kProxyCtrl && state == static_cast<int32_t>(ncclProfilerProxyCtrlAppendEnd)) {
    e.state_value = s.value;
  } else if (e.kind == Kind::kProxyStep && (state == static_cast<int32_t>(ncclProfilerProxyStepSendWait) ||
                                           state == static_cast<int32_t>(ncclProfilerProxyStepRecvFlushWait))) {
    e.state_value = s.value;
  }
  if (e.kind == Kind::kProxyStep && (e.flags & kEvDirectionKnown) == 0) {
    bool send = state == static_cast<int32_t>(ncclProfilerProxyStepSendGPUWait) ||
                state == static_cast<int32_t>(ncclProfilerProxyStepSendWait) ||
                state == static_cast<int32_t>(ncclProfilerProxyStepSendPeerWait_v4);
    e.flags |= kEvDirectionKnown | (send ? kEvSend : 0);
  }
  // A repeated state (SendPeerWait on every retry) keeps its first occurrence.
  for (int i = 0; i < e.nstates; ++i) {
    if (e.state_id[i] == state) return;
  }
  if (e.nstates < kMaxStates) {
    e.state_id[e.nstates] = state;
    e.state_ns[e.nstates] = index_.clock.Ns(s.ticks);
    ++e.nstates;
  }
}

void EventAssembler::OnStop(const MergedRecord& r) {
  if (r.body_size < sizeof(spool::StopBody)) {
    ++counts_.short_records;
    return;
  }
  spool::StopBody s = ReadBody<spool::StopBody>(r.body, r.body_size);
  uint32_t idx = live_.Find(s.id);
  if (idx == IdMap::kMissing) {
    ++counts_.orphans;
    return;
  }
  Live& l = pool_[idx];
  if (l.stopped) return;  // only the first stop counts
  l.stopped = true;
  // A GPU event's stop with its GPU stop state folded in: the state, then the stop. The flag on
  // a stop too short for the stamp, or of a kind without one, is malformed.
  if (r.header.flags & spool::kStopCarriesGpuStop) {
    if (r.body_size < sizeof(spool::StopWithGpuStopBody) || spool::GpuStopStateOf(l.ev.kind) < 0) {
      ++counts_.short_records;
    } else {
      NoteGpuStop(&l.ev, ReadBody<spool::StopWithGpuStopBody>(r.body, r.body_size).gpu_stop);
    }
  }
  l.ev.stop_ns = index_.clock.Ns(s.ticks);
  if (--l.holds == 0) Complete(idx);
}

void EventAssembler::Complete(uint32_t idx) {
  for (;;) {
    Live& l = pool_[idx];
    AssembledEvent& e = l.ev;
    if ((e.kind == Kind::kColl || e.kind == Kind::kP2p) && l.gpu_min <= l.gpu_max) {
      e.gpu_start = l.gpu_min;
      e.gpu_stop = l.gpu_max;
      e.flags |= kEvHasGpuExtent;
    }
    // Its collective's launch, where GpuPlacement reads its GPU clock's fit.
    uint32_t launch = idx;
    while (IsGpuKind(pool_[launch].ev.kind) && pool_[launch].parent != kNone) launch = pool_[launch].parent;
    e.launch_ns = pool_[launch].ev.start_ns;
    if (e.stop_ns < e.start_ns) e.stop_ns = e.start_ns;
    uint32_t parent = l.parent;
    // A GPU child widens its parent's GPU extent before letting the parent complete.
    if (parent != kNone && IsGpuKind(e.kind) && (e.flags & kEvGpuStopSeen)) {
      uint64_t begin = e.kind == Kind::kKernelStep && e.gpu_start == 0 ? e.gpu_ready : e.gpu_start;
      uint64_t end = e.gpu_stop;
      if (e.kind == Kind::kKernelStep && e.gpu_stop < e.gpu_ready) {
        // Its stop precedes its transfer start: the step is drawn with zero length where it
        // begins (gpu_placement.cc), which its collective's extent must hold too.
        begin = e.gpu_start != 0 && e.gpu_ready >= e.gpu_start ? e.gpu_start : e.gpu_ready;
        end = begin;
      }
      if (begin != 0 && end >= begin) {
        Live& p = pool_[parent];
        if (begin < p.gpu_min) p.gpu_min = begin;
        if (end > p.gpu_max) p.gpu_max = end;
      }
    }
    ++counts_.events;
    if (e.flags & kEvIncomplete) ++counts_.incomplete;
    sink_(e);
    done_.Add(e.id, e.kind);
    live_.Erase(e.id);
    l.in_use = false;
    free_.push_back(idx);
    if (parent == kNone) return;
    Live& p = pool_[parent];
    --p.children;
    if (--p.holds != 0) return;
    idx = parent;
  }
}

void EventAssembler::Finish(uint64_t last_ns) {
  for (Live& l : pool_) {
    if (!l.in_use) continue;
    if (!l.stopped) {
      l.ev.flags |= kEvIncomplete;
      uint64_t stop = last_ns;
      if (l.ev.comm_index >= 0) {
        const CommInstance& c = index_.comms[static_cast<size_t>(l.ev.comm_index)];
        if (c.ended) stop = index_.clock.Ns(c.end_ticks);
      }
      l.ev.stop_ns = stop;
      l.stopped = true;
    }
    // Announced KernelCh children that never started no longer hold the event, which is then
    // incomplete: its GPU work was never seen whole, as the live plugin's held slot said.
    if (l.expected != 0) l.ev.flags |= kEvIncomplete;
    l.expected = 0;
    l.holds = l.children;
  }
  for (uint32_t i = 0; i < pool_.size(); ++i) {
    if (pool_[i].in_use && pool_[i].holds == 0) Complete(i);
  }
}

}  // namespace exporting
}  // namespace katrace
