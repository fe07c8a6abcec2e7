#include "plugin/export/trace_layout.h"

#include <stdio.h>

#include "plugin/export/event_naming.h"

namespace katrace {
namespace exporting {
namespace {

std::string HexComm(uint64_t hash) {
  char b[17];
  snprintf(b, sizeof(b), "%016llx", static_cast<unsigned long long>(hash));
  return b;
}

int64_t Dur(uint64_t start, uint64_t stop) { return stop >= start ? static_cast<int64_t>(stop - start) : 0; }

}  // namespace

TraceLayout::TraceLayout(const TraceProcess& process, TraceEncoder* encoder)
    : process_(process),
      enc_(encoder),
      tracks_([this](int tid, const std::string& name, int sort_index) { enc_->Track(tid, name, sort_index); }) {
  enc_->Begin(process_);
}

std::string TraceLayout::TrackName(const TrackKey& key, const AssembledEvent& e) const {
  std::string comm = "comm " + HexComm(e.comm_hash).substr(0, 8) + " rank " + std::to_string(e.rank);
  std::string dir = key.send ? " send" : " recv";
  std::string peer = " peer " + std::to_string(key.peer);
  std::string ch = " ch " + std::to_string(key.channel);
  switch (key.type) {
    case TrackType::kHost: return "host " + std::to_string(key.os_tid);
    case TrackType::kProxyOp: return "proxy " + comm + ch + dir + peer;
    case TrackType::kProxyStep: return "proxy " + comm + ch + dir + peer + " step lane " + std::to_string(key.lane);
    case TrackType::kProxyCtrl: return "proxy ctrl " + comm;
    case TrackType::kNet: return "net " + comm;
    case TrackType::kGpuComm: return "GPU " + comm;
    case TrackType::kGpuChannel: return "GPU " + comm + ch;
    case TrackType::kGpuStep: return "GPU " + comm + ch + dir + peer;
  }
  return "track";
}

int TraceLayout::Place(const TrackKey& key, uint64_t start, uint64_t end, const AssembledEvent& e) {
  return tracks_.Place(key, start, end, [&] { return TrackName(key, e); });
}

void TraceLayout::Emit(std::string_view name, const char* cat, int tid, uint64_t start, uint64_t stop, const Arg* args,
                       size_t n) {
  int64_t ts = Rel(start), dur = Dur(start, stop);
  // Garbage ticks or stamps can put a slice's end past 2^62 ns (146 years) from the base, where
  // ts + dur no longer fits a signed 64-bit ns count in readers; such an end is cut there.
  constexpr int64_t kMaxEnd = int64_t{1} << 62;
  if (dur > 0 && ts >= 0 && dur > kMaxEnd - ts) dur = ts >= kMaxEnd ? 0 : kMaxEnd - ts;
  enc_->Slice(SliceEvent{name, cat, tid, ts, dur, args, n});
}

size_t TraceLayout::CommonArgs(const AssembledEvent& e, Arg* a) const {
  size_t n = 0;
  a[n++] = Arg::Uint("id", e.id);
  if (e.parent_id != 0) a[n++] = Arg::Uint("parent", e.parent_id);
  a[n++] = Arg::Hex("comm", e.comm_hash);
  a[n++] = Arg::Int("rank", e.rank);
  if (e.flags & kEvIncomplete) a[n++] = Arg::Bool("incomplete", true);
  if (e.flags & kEvLateChild) a[n++] = Arg::Bool("late", true);
  return n;
}

void TraceLayout::Add(const AssembledEvent& e) {
  ++events_[static_cast<int>(e.kind)];
  if (e.flags & kEvIncomplete) ++incomplete_;
  if (e.flags & kEvLateChild) ++late_children_;
  if (IsGpuKind(e.kind) && (e.gpu_start != 0 || e.gpu_ready != 0)) ++gpu_stamped_;
  uint64_t stop_ns = e.stop_ns < e.start_ns ? e.start_ns : e.stop_ns;
  switch (e.kind) {
    case Kind::kProxyOp: ProxyOp(e, stop_ns); break;
    case Kind::kProxyStep: ProxyStep(e, stop_ns); break;
    case Kind::kKernelCh: KernelCh(e, stop_ns); break;
    case Kind::kKernelStep: KernelStep(e); break;
    case Kind::kProxyCtrl: OtherProxy(e, stop_ns, TrackType::kProxyCtrl); break;
    case Kind::kNetPlugin: OtherProxy(e, stop_ns, TrackType::kNet); break;
    default: HostEvent(e, stop_ns); break;
  }
}

void TraceLayout::HostEvent(const AssembledEvent& e, uint64_t stop_ns) {
  TrackKey key{TrackType::kHost};
  key.os_tid = e.os_tid;
  int tid = Place(key, e.start_ns, stop_ns, e);
  Arg a[32];
  size_t n = CommonArgs(e, a);
  switch (e.kind) {
    case Kind::kGroupApi:
      a[n++] = Arg::Int("depth", e.value);
      a[n++] = Arg::Bool("graph_captured", e.flags & kEvGraphCaptured);
      break;
    case Kind::kCollApi:
    case Kind::kP2pApi:
      a[n++] = Arg::Str("func", Text(e.func));
      a[n++] = Arg::Uint("count", e.count);
      a[n++] = Arg::Str("datatype", Text(e.datatype));
      if (e.kind == Kind::kCollApi) a[n++] = Arg::Int("root", e.root);
      a[n++] = Arg::Bool("graph_captured", e.flags & kEvGraphCaptured);
      break;
    case Kind::kColl:
    case Kind::kP2p:
    case Kind::kCeColl:
      a[n++] = Arg::Str("func", Text(e.func));
      a[n++] = Arg::Uint("count", e.count);
      a[n++] = Arg::Str("datatype", Text(e.datatype));
      a[n++] = Arg::Uint("bytes", e.bytes);
      if (e.kind == Kind::kP2p) {
        a[n++] = Arg::Int("peer", e.peer);
      } else {
        a[n++] = Arg::Uint("seq", e.seq);
        a[n++] = Arg::Int("root", e.root);
        if (e.kind == Kind::kColl) {
          a[n++] = Arg::Str("algo", Text(e.algo));
          a[n++] = Arg::Str("proto", Text(e.proto));
          a[n++] = Arg::Int("warps", e.nwarps);
        }
      }
      a[n++] = Arg::Int("channels", e.nchannels);
      if (e.flags & kEvHasGpuExtent) {
        a[n++] = Arg::Time("gpu_start", Rel(GpuToHost(e, e.gpu_start)));
        a[n++] = Arg::Time("gpu_end", Rel(GpuToHost(e, e.gpu_stop)));
      }
      break;
    case Kind::kCeBatch:
      a[n++] = Arg::Int("ops", e.value);
      a[n++] = Arg::Uint("bytes", e.bytes);
      break;
    default:
      break;
  }
  if (e.kind == Kind::kGroupApi) {
    for (int i = 0; i < e.nstates; ++i) {
      const char* name = e.state_id[i] == ncclProfilerGroupStartApiStop ? "group_start_done" : "group_end_entered";
      a[n++] = Arg::Time(name, Rel(e.state_ns[i]));
    }
  }
  Emit(EventName(e), KindName(e.kind), tid, e.start_ns, stop_ns, a, n);
  if ((e.kind == Kind::kColl || e.kind == Kind::kP2p) && (e.flags & kEvHasGpuExtent)) GpuExtent(e, tid);
}

// The Coll/P2p's GPU extent on its communicator's GPU track, with a flow arrow from the host slice.
void TraceLayout::GpuExtent(const AssembledEvent& e, int host_tid) {
  TrackKey key{TrackType::kGpuComm};
  key.context = e.context;
  uint64_t start = GpuToHost(e, e.gpu_start), stop = GpuToHost(e, e.gpu_stop);
  int tid = Place(key, start, stop, e);
  Arg a[4] = {Arg::Str("func", Text(e.func)), Arg::Uint("coll", e.id), Arg::Hex("comm", e.comm_hash),
              Arg::Int("rank", e.rank)};
  Emit(EventName(e), "CollGpu", tid, start, stop, a, 4);
  enc_->Flow(e.id, host_tid, Rel(e.start_ns), tid, Rel(start));
}

void TraceLayout::ProxyOp(const AssembledEvent& e, uint64_t stop_ns) {
  TrackKey key{TrackType::kProxyOp};
  key.context = e.context;
  key.channel = e.channel;
  key.send = IsSend(e);
  key.peer = e.peer;
  int tid = Place(key, e.start_ns, stop_ns, e);
  Arg a[16];
  size_t n = CommonArgs(e, a);
  a[n++] = Arg::Int("channel", e.channel);
  a[n++] = Arg::Int("peer", e.peer);
  a[n++] = Arg::Int("steps", e.value);
  a[n++] = Arg::Int("chunk_size", e.value2);
  a[n++] = Arg::Bool("send", IsSend(e));
  if (e.nstates > 0) a[n++] = Arg::Time("in_progress", Rel(e.state_ns[0]));
  Emit(EventName(e), "ProxyOp", tid, e.start_ns, stop_ns, a, n);
}

void TraceLayout::ProxyStep(const AssembledEvent& e, uint64_t stop_ns) {
  TrackKey key{TrackType::kProxyStep};
  key.context = e.context;
  key.channel = e.channel;
  key.send = IsSend(e);
  key.peer = e.peer;
  key.lane = static_cast<uint8_t>(static_cast<uint32_t>(e.value) % 8);
  // The step, then one interval per state, each up to the next state or the stop.
  TrackTable::Span spans[1 + kMaxStates];
  spans[0] = {e.start_ns, stop_ns};
  for (int i = 0; i < e.nstates; ++i) {
    uint64_t s = e.state_ns[i] < e.start_ns ? e.start_ns : e.state_ns[i];
    uint64_t t = i + 1 < e.nstates ? e.state_ns[i + 1] : stop_ns;
    if (t > stop_ns) t = stop_ns;
    if (s > t) s = t;
    spans[1 + i] = {s, t};
  }
  int tid = tracks_.Place(key, spans, 1 + static_cast<size_t>(e.nstates), [&] { return TrackName(key, e); });
  Arg a[16];
  size_t n = CommonArgs(e, a);
  a[n++] = Arg::Int("step", e.value);
  a[n++] = Arg::Uint("trans_size", e.bytes);
  Emit(EventName(e), "ProxyStep", tid, e.start_ns, stop_ns, a, n);
  Arg step = Arg::Int("step", e.value);
  for (int i = 0; i < e.nstates; ++i) {
    Emit(StateName(e.state_id[i]), "ProxyStepState", tid, spans[1 + i].start, spans[1 + i].end, &step, 1);
  }
}

void TraceLayout::OtherProxy(const AssembledEvent& e, uint64_t stop_ns, TrackType type) {
  TrackKey key{type};
  key.context = e.context;
  int tid = Place(key, e.start_ns, stop_ns, e);
  Arg a[16];
  size_t n = CommonArgs(e, a);
  if (e.kind == Kind::kProxyCtrl) a[n++] = Arg::Int("appended", e.value);
  if (e.kind == Kind::kNetPlugin) {
    a[n++] = Arg::Uint("net_id", e.seq);
    a[n++] = Arg::Int("updates", e.value);
  }
  Emit(EventName(e), KindName(e.kind), tid, e.start_ns, stop_ns, a, n);
}

void TraceLayout::KernelCh(const AssembledEvent& e, uint64_t stop_ns) {
  TrackKey key{TrackType::kGpuChannel};
  key.context = e.context;
  key.channel = e.channel;
  bool gpu = e.gpu_start != 0 && (e.flags & kEvGpuStopSeen) && e.gpu_stop >= e.gpu_start;
  // Without both GPU stamps, the host times of the callbacks are the best we have.
  uint64_t start = gpu ? GpuToHost(e, e.gpu_start) : e.start_ns;
  uint64_t stop = gpu ? GpuToHost(e, e.gpu_stop) : stop_ns;
  if (stop < start) stop = start;
  int tid = Place(key, start, stop, e);
  Arg a[16];
  size_t n = CommonArgs(e, a);
  a[n++] = Arg::Int("channel", e.channel);
  // Only stamps that arrived are written: a missing one is absent, never 0.
  if (e.gpu_start != 0) a[n++] = Arg::Uint("gpu_start_ns", e.gpu_start);
  if (e.flags & kEvGpuStopSeen) a[n++] = Arg::Uint("gpu_stop_ns", e.gpu_stop);
  if (!gpu) a[n++] = Arg::Bool("host_timed", true);
  Emit(EventName(e), "KernelCh", tid, start, stop, a, n);
}

void TraceLayout::KernelStep(const AssembledEvent& e) {
  TrackKey key{TrackType::kGpuStep};
  key.context = e.context;
  key.channel = e.channel;
  key.send = IsSend(e);
  key.peer = e.peer;
  uint64_t begin_gpu = e.gpu_start != 0 ? e.gpu_start : e.gpu_ready;
  uint64_t stop_gpu = (e.flags & kEvGpuStopSeen) && e.gpu_stop >= e.gpu_ready ? e.gpu_stop : e.gpu_ready;
  // A wait stamp after the transfer start is garbage: the step then begins at the transfer.
  bool has_wait = e.gpu_start != 0 && e.gpu_ready >= e.gpu_start;
  if (!has_wait) begin_gpu = e.gpu_ready;
  uint64_t start = GpuToHost(e, begin_gpu), ready = GpuToHost(e, e.gpu_ready), stop = GpuToHost(e, stop_gpu);
  // The step, then its wait (when measured) and transfer (unless abandoned) halves.
  bool has_transfer = stop_gpu > e.gpu_ready || (e.flags & kEvAbandoned) == 0;
  TrackTable::Span spans[3] = {{start, stop}};
  size_t ns = 1;
  if (has_wait) spans[ns++] = {start, ready};
  if (has_transfer) spans[ns++] = {ready, stop};
  int tid = tracks_.Place(key, spans, ns, [&] { return TrackName(key, e); });
  Arg a[20];
  size_t n = CommonArgs(e, a);
  a[n++] = Arg::Int("channel", e.channel);
  a[n++] = Arg::Bool("send", IsSend(e));
  a[n++] = Arg::Int("peer", e.peer);
  a[n++] = Arg::Int("step", e.value2);
  a[n++] = Arg::Uint("size", e.bytes);
  a[n++] = Arg::Uint("gpu_start_ns", e.gpu_start);
  a[n++] = Arg::Uint("gpu_ready_ns", e.gpu_ready);
  if (e.flags & kEvGpuStopSeen) a[n++] = Arg::Uint("gpu_stop_ns", e.gpu_stop);
  if (e.flags & kEvAbandoned) a[n++] = Arg::Bool("abandoned", true);
  Emit(EventName(e), "KernelStep", tid, start, stop, a, n);
  Arg ks = Arg::Uint("kernel_step", e.id);
  if (has_wait) Emit(IsSend(e) ? "Send wait" : "Recv wait", "KernelStepWait", tid, start, ready, &ks, 1);
  if (has_transfer) Emit(IsSend(e) ? "Send transfer" : "Recv transfer", "KernelStepTransfer", tid, ready, stop, &ks, 1);
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

void TraceLayout::Finish(uint64_t end_host_ns, TraceTotals* t) {
  for (int k = 0; k < kKindCount; ++k) t->events[k] = events_[k];
  t->incomplete = incomplete_;
  t->late_children = late_children_;
  t->overflow_moves = tracks_.overflow_moves();
  t->gpu_offset_samples = gpu_stamped_;
  t->end_ts = Rel(end_host_ns);
  enc_->End(*t);
}

}  // namespace exporting
}  // namespace katrace
