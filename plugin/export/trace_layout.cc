#include "plugin/export/trace_layout.h"

#include <algorithm>
#include <new>

#include "common/hex16.h"
#include "plugin/export/event_naming.h"
#include "plugin/export/kind_args.h"

namespace katrace {
namespace exporting {
namespace {

int64_t Dur(uint64_t start, uint64_t stop) { return stop >= start ? static_cast<int64_t>(stop - start) : 0; }

// A sub-slice of one event (a ProxyStep state, a KernelStep half), written after its event in
// (start, longer first) order so that same-start parts come out as Perfetto nests them.
struct SubSlice {
  uint64_t start, end;
  std::string_view name;
  std::string_view cat;
};

void SortSubSlices(SubSlice* s, size_t n) {
  std::stable_sort(s, s + n, [](const SubSlice& a, const SubSlice& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
}

}  // namespace

TraceLayout::TraceLayout(const TraceProcess& process, TraceEncoder* encoder) : process_(process), enc_(encoder) {
  if (process_.ranks.empty()) {
    TraceRank r;
    r.pid = process_.rank;
    r.label = "rank " + std::to_string(process_.rank);
    process_.ranks.push_back(r);
  }
  enc_->Begin(process_);
}

int TraceLayout::RankOf(const AssembledEvent& e) const {
  if (e.comm_index < 0 || static_cast<size_t>(e.comm_index) >= process_.comm_rank.size()) return 0;
  int r = process_.comm_rank[static_cast<size_t>(e.comm_index)];
  return r >= 0 && static_cast<size_t>(r) < process_.ranks.size() ? r : 0;
}

// ---- Arrival: each event becomes one or two pending slices ----

void TraceLayout::Add(const AssembledEvent& e, const GpuSpan& gpu) {
  ++events_[static_cast<int>(e.kind)];
  if (e.flags & kEvIncomplete) ++incomplete_;
  if (e.flags & kEvLateChild) ++late_children_;
  if (IsGpuKind(e.kind) && (e.gpu_start != 0 || e.gpu_ready != 0)) ++gpu_stamped_;
  uint32_t slot = TakeSlot();
  Prepare(e, gpu, &SlotAt(slot));
  Enqueue(slot);
  if ((e.kind == Kind::kColl || e.kind == Kind::kP2p) && (e.flags & kEvHasGpuExtent)) {
    if (gpu.host_timed) {  // the extent lies outside the run at both ends
      ++outside_run_;
      return;
    }
    const uint32_t host_slot = slot;
    slot = TakeSlot();
    Pending& extent = SlotAt(slot);
    PrepareGpuExtent(e, gpu, &extent);
    // The launch arrow, decided with both ends in hand so each end's slice carries it. An arrow
    // into the past would claim the GPU ran the work before the host launched it: only a clock
    // whose bounds contradict each other (the fit warns about it) places it so. It is counted in
    // the footer instead of drawn.
    Pending& host = SlotAt(host_slot);
    if (extent.start < host.start) {
      ++gpu_before_launch_;
    } else {
      host.flow_out = e.id;
      extent.flow_in = e.id;
    }
    Enqueue(slot);
  }
}

uint32_t TraceLayout::TakeSlot() {
  if (!free_slots_.empty()) {
    const uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  if ((slot_count_ & (kChunkSlots - 1)) == 0) chunks_.push_back(std::make_unique<Pending[]>(kChunkSlots));
  return slot_count_++;
}

void TraceLayout::Enqueue(uint32_t slot) {
  const Pending& p = SlotAt(slot);
  // Prepare has just stored start and end one at a time: loaded together (the compiler would
  // make them one 16-byte load) they would wait for both stores to reach the cache, a
  // store-forwarding stall that was most of this function's time. The empty asm keeps them apart.
  uint64_t start = p.start;
  asm("" : "+r"(start));
  const uint64_t end = p.end;
  // By track type: each type's slices arrive in about their start order, all of them together not.
  queue_.Push(start, end, slot, static_cast<size_t>(p.type));
  if (queue_.size() > kMaxReorder) PlaceSlot(queue_.PopFirst());
}

void TraceLayout::Advance(uint64_t watermark_ns) {
  if (watermark_ns < kWatermarkMarginNs) return;
  ready_.clear();
  queue_.TakeBefore(watermark_ns - kWatermarkMarginNs, &ready_);
  PlaceReady();
}

void TraceLayout::PlaceReady() {
  // A slot waited through thousands of others (and megabytes of JSON) since it was filled: it
  // is loaded a few slices ahead, so placing it does not stall on memory.
  constexpr size_t kAhead = 4;
  const size_t n = ready_.size();
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const char* next = reinterpret_cast<const char*>(&SlotAt(ready_[i + kAhead]));
      for (size_t line = 0; line < sizeof(Pending); line += 64) __builtin_prefetch(next + line);
    }
    PlaceSlot(ready_[i]);
  }
}

void TraceLayout::PlaceSlot(uint32_t slot) {
  Place(SlotAt(slot));
  free_slots_.push_back(slot);
}

void TraceLayout::Prepare(const AssembledEvent& e, const GpuSpan& gpu, Pending* p) const {
  new (p) Pending(e);  // in place: no zeroed temporary copied over, e not zeroed first
  p->role = Role::kEvent;
  p->type = TrackTypeOf(SchemaOf(e.kind).family);
  p->gpu = gpu;  // a Coll/P2p: its extent, which its args report
  p->start = e.start_ns;
  p->end = e.stop_ns < e.start_ns ? e.start_ns : e.stop_ns;
  switch (e.kind) {
    case Kind::kProxyStep: {
      // One interval per state, each up to the next state or the stop.
      for (int i = 0; i < e.nstates; ++i) {
        uint64_t s = std::min(std::max(e.state_ns[i], p->start), p->end);
        uint64_t t = i + 1 < e.nstates ? e.state_ns[i + 1] : p->end;
        t = std::min(t, p->end);
        if (s > t) s = t;
        p->parts[p->nparts++] = Span{s, t};
      }
      break;
    }
    case Kind::kKernelCh:
    case Kind::kKernelStep: {
      if (gpu.host_timed) break;
      p->start = gpu.start;
      p->end = gpu.end;
      if (gpu.has_wait) p->parts[p->nparts++] = Span{gpu.start, gpu.ready};
      if (gpu.has_transfer) p->parts[p->nparts++] = Span{gpu.ready, gpu.end};
      break;
    }
    default: break;
  }
}

void TraceLayout::PrepareGpuExtent(const AssembledEvent& e, const GpuSpan& gpu, Pending* p) const {
  new (p) Pending(e);
  p->role = Role::kGpuExtent;
  p->type = TrackType::kGpuComm;
  p->gpu = gpu;
  p->start = gpu.start;
  p->end = gpu.end;
}

// ---- Placement, in start order ----

TrackKey TraceLayout::KeyOf(const Pending& p) const {
  const AssembledEvent& e = p.e;
  TrackKey key;
  key.type = p.type;
  key.rank = RankOf(e);
  if (IsHostTrack(p.type)) {
    key.os_tid = e.os_tid;
    return key;
  }
  key.comm = e.comm_index;
  if (p.type == TrackType::kProxyOp || p.type == TrackType::kProxyStep || p.type == TrackType::kGpuStep) {
    key.channel = e.channel;
    key.send = IsSend(e);
    key.peer = e.peer;
  } else if (p.type == TrackType::kGpuChannel) {
    key.channel = e.channel;
  }
  return key;
}

std::string TraceLayout::GroupName(const TrackKey& key, const AssembledEvent& e) const {
  std::string comm = "comm " + Hex16(e.comm_hash).substr(0, 8) + " rank " + std::to_string(e.rank);
  std::string conn = comm + " ch " + std::to_string(key.channel) + (key.send ? " send" : " recv") + " peer " +
                     std::to_string(key.peer);
  std::string host = "host " + std::to_string(key.os_tid);
  switch (key.type) {
    case TrackType::kHost: return host;
    case TrackType::kHostLanes: return host + " unnested";
    case TrackType::kHostTasks: return host + " enqueue";
    case TrackType::kProxyOp: return "proxy " + conn;
    case TrackType::kProxyStep: return "proxy " + conn + " step";
    case TrackType::kProxyCtrl: return "proxy ctrl " + comm;
    case TrackType::kNet: return "net " + comm;
    case TrackType::kGpuComm: return "GPU " + comm;
    case TrackType::kGpuChannel: return "GPU " + comm + " ch " + std::to_string(key.channel);
    case TrackType::kGpuStep: return "GPU " + conn;
  }
  return "track";
}

int TraceLayout::SortBase(const TrackKey& key) {
  // A host thread's tracks side by side (calls, enqueued tasks, unnested calls), threads in order
  // of appearance; then proxy, then GPU groups in creation order; lanes in order within a group.
  if (IsHostTrack(key.type)) {
    uint64_t thread = (static_cast<uint64_t>(static_cast<uint32_t>(key.rank)) << 32) | key.os_tid;
    auto it = host_ordinal_.emplace(thread, static_cast<int>(host_ordinal_.size())).first;
    int sub = key.type == TrackType::kHost ? 0 : key.type == TrackType::kHostTasks ? 1 : 2;
    return std::min(it->second, 20000) * 4000 + sub * 1000;
  }
  int type = static_cast<int>(key.type);
  int ordinal = std::min(ordinals_[type]++, 99999);
  return (type - static_cast<int>(TrackType::kProxyOp) + 1) * 100000000 + ordinal * 1000;
}

TraceLayout::Group* TraceLayout::FindGroup(const TrackKey& key, const AssembledEvent& e) {
  // A few dozen groups take nearly every slice: a direct-mapped cache in front of the map.
  uint64_t h = static_cast<uint64_t>(TrackKeyHash()(key)) * 0x9e3779b97f4a7c15ull;
  CacheEntry& c = cache_[(h >> 56) % kCacheSize];
  if (c.group != nullptr && c.key == key) return c.group;
  auto found = groups_.find(key);
  if (found == groups_.end()) {
    std::unique_ptr<Group> g(new Group);
    g->name = GroupName(key, e);
    g->pid = process_.ranks[static_cast<size_t>(key.rank)].pid;
    g->sort_base = SortBase(key);
    found = groups_.emplace(key, std::move(g)).first;
  }
  c.key = key;
  c.group = found->second.get();
  return c.group;
}

int TraceLayout::LaneTid(Group* g, int lane) {
  while (g->tids.size() <= static_cast<size_t>(lane)) {
    int n = static_cast<int>(g->tids.size());
    int tid = next_tid_++;
    std::string name = n == 0 ? g->name : g->name + " lane " + std::to_string(n);
    const int family_track = n == 0 ? tid : g->tids[0];
    enc_->Track(TrackInfo{tid, g->pid, name, g->name, n, g->sort_base + std::min(n, 999), family_track});
    g->tids.push_back(tid);
  }
  return g->tids[static_cast<size_t>(lane)];
}

int TraceLayout::HostTid(const TrackKey& key, const Pending& p) {
  Group* g = FindGroup(key, p.e);
  // Start order (longer first at equal starts) is what makes a stack enough; a call that arrives
  // behind it, or that would partially overlap an open call, goes to the thread's lanes.
  bool in_order = !g->placed_any || p.start > g->last_start || (p.start == g->last_start && p.end <= g->last_end);
  if (in_order) {
    while (!g->open_ends.empty() && g->open_ends.back() <= p.start) g->open_ends.pop_back();
    if (g->open_ends.empty() || p.end <= g->open_ends.back()) {
      g->open_ends.push_back(p.end);
      g->placed_any = true;
      g->last_start = p.start;
      g->last_end = p.end;
      return LaneTid(g, 0);
    }
  }
  ++unnested_;
  TrackKey lanes_key = key;
  lanes_key.type = TrackType::kHostLanes;
  Group* lanes = FindGroup(lanes_key, p.e);
  return LaneTid(lanes, lanes->lanes.Place(p.start, p.end, p.end == p.start));
}

void TraceLayout::Place(const Pending& p) {
  if (p.start < last_placed_start_) ++out_of_order_;
  last_placed_start_ = std::max(last_placed_start_, p.start);
  TrackKey key = KeyOf(p);
  int tid;
  if (key.type == TrackType::kHost) {
    tid = HostTid(key, p);
  } else {
    bool zero_tail = p.end == p.start;
    for (size_t i = 0; i < p.nparts; ++i) zero_tail |= p.parts[i].start == p.end && p.parts[i].end == p.end;
    Group* g = FindGroup(key, p.e);
    tid = LaneTid(g, g->lanes.Place(p.start, p.end, zero_tail));
  }
  if (p.role == Role::kGpuExtent) {
    GpuExtent(p, tid);
    return;
  }
  EventSlice(p, tid);
  if (p.e.kind == Kind::kProxyStep) ProxyStepStates(p, tid);
  if (p.e.kind == Kind::kKernelStep) KernelStepHalves(p, tid);
}


// ---- Writing ----

void TraceLayout::Emit(std::string_view name, std::string_view cat, int tid, uint64_t start, uint64_t stop, const Arg* args,
                       size_t n, uint64_t flow_out, uint64_t flow_in, bool part) {
  int64_t ts = Rel(start), dur = Dur(start, stop);
  // Garbage ticks can put a host slice's end past 2^62 ns (146 years) from the base, where
  // ts + dur no longer fits a signed 64-bit ns count in readers; such an end is cut there.
  constexpr int64_t kMaxEnd = int64_t{1} << 62;
  if (dur > 0 && ts >= 0 && dur > kMaxEnd - ts) dur = ts >= kMaxEnd ? 0 : kMaxEnd - ts;
  enc_->Slice(SliceEvent{name, cat, tid, ts, dur, args, n, flow_out, flow_in, part});
}

// A recorded event's own slice: its kind's name rule and arguments (kind_args.h).
void TraceLayout::EventSlice(const Pending& p, int tid) {
  const AssembledEvent& e = p.e;
  SliceArgs args;
  Arg* a = args.a;
  const size_t n = EventArgs(ArgContext{e, process_.base_monotonic_ns, &p.gpu}, a);
  // GPU work drawn at host times because its stamps lie outside the run (not merely missing).
  if (e.kind == Kind::kKernelCh && p.gpu.host_timed && p.gpu.clamped) ++outside_run_;
  if (e.kind == Kind::kKernelStep && p.gpu.host_timed) ++outside_run_;
  Emit(EventName(e), KindNameView(e.kind), tid, p.start, p.end, a, n, p.flow_out);
}

// The Coll/P2p's GPU extent on its communicator's GPU track, with a flow arrow from the host slice.
void TraceLayout::GpuExtent(const Pending& p, int tid) {
  SliceArgs args;
  Arg* a = args.a;
  const size_t n = AppendArgs(kCollGpuArgs, sizeof(kCollGpuArgs) / sizeof(kCollGpuArgs[0]),
                              ArgContext{p.e, process_.base_monotonic_ns, &p.gpu}, a);
  Emit(EventName(p.e), "CollGpu", tid, p.start, p.end, a, n, 0, p.flow_in);
}

void TraceLayout::ProxyStepStates(const Pending& p, int tid) {
  const AssembledEvent& e = p.e;
  SubSlice parts[kMaxStates];
  for (size_t i = 0; i < p.nparts; ++i) {
    parts[i] = SubSlice{p.parts[i].start, p.parts[i].end, StateName(e.state_id[i]), "ProxyStepState"};
  }
  SortSubSlices(parts, p.nparts);
  // A state names its step by id: on its lane it is only ever inside that step.
  SliceArgs args;
  Arg* owner = args.a;
  const size_t n = AppendArgs(kProxyStepStateArgs, sizeof(kProxyStepStateArgs) / sizeof(kProxyStepStateArgs[0]),
                              ArgContext{e, process_.base_monotonic_ns, nullptr}, owner);
  for (size_t i = 0; i < p.nparts; ++i) {
    Emit(parts[i].name, parts[i].cat, tid, parts[i].start, parts[i].end, owner, n, 0, 0, true);
  }
}

// The wait (when measured) and transfer (unless abandoned) halves, in Perfetto's order.
void TraceLayout::KernelStepHalves(const Pending& p, int tid) {
  const AssembledEvent& e = p.e;
  SubSlice parts[2];
  size_t np = 0;
  size_t i = 0;
  if (p.gpu.has_wait) {
    parts[np++] = SubSlice{p.parts[i].start, p.parts[i].end, IsSend(e) ? "Send wait" : "Recv wait", "KernelStepWait"};
    ++i;
  }
  if (p.gpu.has_transfer) {
    parts[np++] = SubSlice{p.parts[i].start, p.parts[i].end, IsSend(e) ? "Send transfer" : "Recv transfer",
                           "KernelStepTransfer"};
  }
  SortSubSlices(parts, np);
  SliceArgs args;
  Arg* owner = args.a;
  const size_t n = AppendArgs(kKernelStepPartArgs, sizeof(kKernelStepPartArgs) / sizeof(kKernelStepPartArgs[0]),
                              ArgContext{e, process_.base_monotonic_ns, nullptr}, owner);
  for (size_t k = 0; k < np; ++k) {
    Emit(parts[k].name, parts[k].cat, tid, parts[k].start, parts[k].end, owner, n, 0, 0, true);
  }
}

void TraceLayout::Counters(uint64_t host_ns, const uint64_t drops[kKindCount], const DrainCounters& drain, bool force) {
  uint64_t total = 0;
  for (int k = 0; k < kKindCount; ++k) total += drops[k];
  if (force || total != last_drops_total_) {
    last_drops_total_ = total;
    Arg a[1 + kKindCount];
    size_t n = 0;
    a[n++] = Arg::Uint("total", total);
    for (int k = 0; k < kKindCount; ++k) {
      if (drops[k] != 0) a[n++] = Arg::Uint(kKindInfo[k].name, drops[k]);
    }
    enc_->Counter("katrace drops", Rel(host_ns), a, n);
  }
  uint64_t lost = drain.lost_overrun + drain.abandoned;
  if ((force && drain.seen != 0) || lost != last_drain_lost_) {
    last_drain_lost_ = lost;
    Arg a[2] = {Arg::Uint("lost_overrun", drain.lost_overrun), Arg::Uint("abandoned", drain.abandoned)};
    enc_->Counter("katrace drain", Rel(host_ns), a, 2);
  }
}

void TraceLayout::Marker(uint64_t host_ns, const spool::MarkerBody& m) {
  static const char* const kWhat[] = {"", "capture on", "capture off", "dump"};
  static const char* const kReason[] = {"", "KATRACE_DELAY", "KATRACE_DURATION", "control file", "signal"};
  if (!spool::IsKnownMarker(m.what, m.reason)) return;  // the index validated it; never index out of range
  Arg a = Arg::Str("reason", kReason[m.reason]);
  enc_->Instant(kWhat[m.what], Rel(host_ns), &a, 1);
}

void TraceLayout::Finish(uint64_t end_host_ns, TraceTotals* t) {
  ready_.clear();
  queue_.TakeAll(&ready_);
  PlaceReady();
  for (int k = 0; k < kKindCount; ++k) t->events[k] = events_[k];
  t->incomplete = incomplete_;
  t->late_children = late_children_;
  t->gpu_before_launch = gpu_before_launch_;
  t->gpu_offset_samples = gpu_stamped_;
  t->end_ts = Rel(end_host_ns);
  enc_->End(*t);
}

}  // namespace exporting
}  // namespace katrace
