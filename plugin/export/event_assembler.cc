#include "plugin/export/event_assembler.h"

#include <string.h>

#include <algorithm>
#include <new>

namespace katrace {
namespace exporting {
namespace {

using spool::RecordType;

constexpr uint32_t kDenseStrings = 1u << 20;

}  // namespace

uint64_t PayloadBytes(const std::string* datatype, uint64_t count) {
  if (datatype == nullptr) return count;
  // Unsigned multiplication: a garbage count wraps instead of overflowing.
  if (datatype->find("64") != std::string::npos) return count * 8u;
  if (datatype->find("32") != std::string::npos) return count * 4u;
  if (datatype->find("16") != std::string::npos) return count * 2u;
  return count;  // Int8, Uint8, Float8 variants
}

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
  const size_t at = sizeof(spool::StartBody);
  switch (kind) {
    case Kind::kGroupApi:
    case Kind::kCollApi:
    case Kind::kP2pApi: {
      auto a = ReadBody<spool::ApiFields>(r.body, r.body_size, at);
      if (kind == Kind::kGroupApi) {
        e.value = a.depth;
      } else {
        e.func = Str(a.func);
        e.count = a.count;
        e.datatype = Str(a.datatype);
        if (kind == Kind::kCollApi) e.root = a.root;
      }
      if (f & spool::kStartGraphCaptured) e.flags |= kEvGraphCaptured;
      break;
    }
    case Kind::kColl:
    case Kind::kCeColl: {
      auto c = ReadBody<spool::CollFields>(r.body, r.body_size, at);
      e.seq = c.seq;
      e.count = c.count;
      e.func = Str(c.func);
      e.datatype = Str(c.datatype);
      e.algo = Str(c.algo);
      e.proto = Str(c.proto);
      e.root = c.root;
      e.nchannels = c.nchannels;
      e.nwarps = c.nwarps;
      e.bytes = PayloadBytes(e.datatype, e.count);
      break;
    }
    case Kind::kP2p: {
      auto p = ReadBody<spool::P2pFields>(r.body, r.body_size, at);
      e.count = p.count;
      e.func = Str(p.func);
      e.datatype = Str(p.datatype);
      e.peer = p.peer;
      e.nchannels = p.nchannels;
      e.bytes = PayloadBytes(e.datatype, e.count);
      break;
    }
    case Kind::kProxyOp: {
      auto p = ReadBody<spool::ProxyOpFields>(r.body, r.body_size, at);
      e.peer = p.peer;
      e.value = p.nsteps;
      e.value2 = p.chunk_size;
      e.channel = p.channel;
      e.flags |= kEvDirectionKnown | ((f & spool::kStartSend) ? kEvSend : 0);
      break;
    }
    case Kind::kProxyStep: {
      auto p = ReadBody<spool::ProxyStepFields>(r.body, r.body_size, at);
      e.value = p.step;
      e.peer = p.peer;
      e.channel = p.channel;
      if (p.direction == 1 || p.direction == 2) e.flags |= kEvDirectionKnown | (p.direction == 1 ? kEvSend : 0);
      break;
    }
    case Kind::kKernelCh: {
      auto k = ReadBody<spool::KernelChFields>(r.body, r.body_size, at);
      e.gpu_start = k.gpu_start;
      e.func = Str(k.func);
      e.channel = k.channel;
      break;
    }
    case Kind::kKernelStep: {
      auto k = ReadBody<spool::KernelStepFields>(r.body, r.body_size, at);
      e.gpu_start = k.gpu_start;
      e.gpu_ready = k.gpu_ready;
      e.value2 = static_cast<int32_t>(k.step);
      e.bytes = k.size;
      e.peer = k.peer;
      e.func = Str(k.func);
      e.channel = k.channel;
      e.flags |= kEvDirectionKnown | ((f & spool::kStartSend) ? kEvSend : 0);
      break;
    }
    case Kind::kNetPlugin:
      e.seq = static_cast<uint64_t>(ReadBody<spool::NetPluginFields>(r.body, r.body_size, at).net_id);
      break;
    case Kind::kCeBatch: {
      auto b = ReadBody<spool::CeBatchFields>(r.body, r.body_size, at);
      e.bytes = b.bytes;
      e.value = b.ops;
      break;
    }
    default:
      break;
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
  if ((kind == Kind::kColl || kind == Kind::kP2p) && (f & spool::kStartAwaitsKernelCh)) l.expected = e.nchannels;
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
  if (state == static_cast<int32_t>(ncclProfilerKernelChStop)) {
    if (e.kind == Kind::kKernelCh) {
      e.gpu_stop = s.value;
      if (s.value != 0) e.flags |= kEvGpuStopSeen;
    }
    return;
  }
  if (state == static_cast<int32_t>(ncclProfilerKernelStepStop)) {
    if (e.kind == Kind::kKernelStep) {
      if (s.value == 0) {
        e.flags |= kEvAbandoned;  // the drain gave up waiting for this slice's stop
      } else {
        e.gpu_stop = s.value;
        e.flags |= kEvGpuStopSeen;
      }
    }
    return;
  }
  if (state == static_cast<int32_t>(ncclProfilerNetPluginUpdate)) {
    if (e.kind == Kind::kNetPlugin) ++e.value;
    return;
  }
  if (state == static_cast<int32_t>(ncclProfilerProxyCtrlAppendEnd)) {
    e.value = static_cast<int32_t>(s.value);
  } else if (state == static_cast<int32_t>(ncclProfilerProxyStepSendWait) ||
             state == static_cast<int32_t>(ncclProfilerProxyStepRecvFlushWait)) {
    e.bytes = s.value;
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
    // The GPU clock fit of the event's device (gpu_placement.h) at its collective's launch: one
    // offset for a Coll/P2p and all its GPU work, so they stay in step however the clock drifts.
    uint32_t launch = idx;
    while (IsGpuKind(pool_[launch].ev.kind) && pool_[launch].parent != kNone) launch = pool_[launch].parent;
    e.gpu_offset = index_.GpuOffset(e.comm_index, pool_[launch].ev.start_ns);
    if (e.stop_ns < e.start_ns) e.stop_ns = e.start_ns;
    uint32_t parent = l.parent;
    // A GPU child widens its parent's GPU extent before letting the parent complete.
    if (parent != kNone && IsGpuKind(e.kind) && (e.flags & kEvGpuStopSeen)) {
      uint64_t begin = e.kind == Kind::kKernelStep && e.gpu_start == 0 ? e.gpu_ready : e.gpu_start;
      if (begin != 0 && e.gpu_stop >= begin) {
        Live& p = pool_[parent];
        if (begin < p.gpu_min) p.gpu_min = begin;
        if (e.gpu_stop > p.gpu_max) p.gpu_max = e.gpu_stop;
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
