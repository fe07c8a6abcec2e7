#include "plugin/trace_writer.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugin/clock.h"
#include "plugin/logger.h"

namespace katrace {
namespace {

constexpr size_t kFlushBytes = 1 << 20;
constexpr uint64_t kCounterPollNs = 50 * 1000 * 1000;

const char* StateName(uint8_t state) {
  switch (state) {
    case ncclProfilerProxyStepSendGPUWait: return "SendGpuWait";
    case ncclProfilerProxyStepSendPeerWait_v4: return "SendPeerWait";
    case ncclProfilerProxyStepSendWait: return "SendWait";
    case ncclProfilerProxyStepRecvWait: return "RecvWait";
    case ncclProfilerProxyStepRecvFlushWait: return "RecvFlushWait";
    case ncclProfilerProxyStepRecvGPUWait: return "RecvGpuWait";
    case ncclProfilerProxyCtrlIdle: return "Idle";
    case ncclProfilerProxyCtrlActive: return "Active";
    case ncclProfilerProxyCtrlSleep: return "Sleep";
    case ncclProfilerProxyCtrlWakeup: return "Wakeup";
    case ncclProfilerProxyCtrlAppend: return "Append";
    case ncclProfilerProxyCtrlAppendEnd: return "AppendEnd";
    default: return "State";
  }
}

bool IsSend(const EventRecord& r) { return (r.flags & kFlagSend) != 0; }

// The slice name shown in Perfetto and used as the summary row name (after the kind).
const char* EventName(const EventRecord& r) {
  switch (r.kind) {
    case Kind::kGroupApi:
    case Kind::kGroup: return "Group";
    case Kind::kKernelLaunch: return "KernelLaunch";
    case Kind::kProxyOp: return IsSend(r) ? "Send" : "Recv";
    case Kind::kProxyStep:
      if ((r.flags & kFlagDirectionKnown) == 0) return "Step";
      return IsSend(r) ? "SendStep" : "RecvStep";
    case Kind::kProxyCtrl: return r.nstates > 0 ? StateName(r.state_id[0]) : "ProxyCtrl";
    case Kind::kNetPlugin: return "NetPlugin";
    case Kind::kKernelStep: return IsSend(r) ? "Send" : "Recv";
    case Kind::kCeSync: return "CeSync";
    case Kind::kCeBatch: return "CeBatch";
    default: return r.func != nullptr ? r.func : KindName(r.kind);
  }
}

std::string HexComm(uint64_t hash) {
  char b[17];
  snprintf(b, sizeof(b), "%016llx", static_cast<unsigned long long>(hash));
  return b;
}

}  // namespace

TraceWriter::TraceWriter(const Config& config, const ProcessInfo& process, CounterPoll poll)
    : config_(config),
      process_(process),
      poll_(std::move(poll)),
      queue_(config.queue_records),
      tracks_([this](int tid, const std::string& name, int sort_index) {
        BeginEvent();
        buf_.Raw("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":").Int(process_.rank);
        buf_.Raw(",\"tid\":").Int(tid).Raw(",\"args\":{\"name\":").String(name).Raw("}}");
        BeginEvent();
        buf_.Raw("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":").Int(process_.rank);
        buf_.Raw(",\"tid\":").Int(tid).Raw(",\"args\":{\"sort_index\":").Int(sort_index).Raw("}}");
      }) {}

TraceWriter::~TraceWriter() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }
}

void TraceWriter::Start() {
  sink_open_ = sink_.Open(process_.output_path, config_.gzip);
  WriteHeader();
  thread_ = std::thread([this] { Run(); });
}

void TraceWriter::Push(const EventRecord& record) {
  if (queue_.TryPush(record)) return;
  stalls_.fetch_add(1, std::memory_order_relaxed);
  // The writer always consumes (even after an I/O error), so this wait ends; once the trace is
  // closed nothing consumes, so a straggling callback gives up instead of spinning forever.
  while (!queue_.TryPush(record)) {
    if (closed_.load(std::memory_order_acquire)) return;
    sched_yield();
  }
}

void TraceWriter::Run() {
  EventRecord r;
  for (;;) {
    bool stopping = stop_.load(std::memory_order_acquire);
    int n = 0;
    while (n < 4096 && queue_.TryPop(&r)) {
      WriteRecord(r);
      ++n;
    }
    if (buf_.size() >= kFlushBytes) FlushBuffer();
    if (n == 0) {
      if (stopping) break;
      PollCounters(NowMonotonicNs(), false);
      FlushBuffer();
      usleep(200);
    }
  }
}

void TraceWriter::FlushBuffer() {
  if (buf_.size() == 0) return;
  sink_.Write(buf_.str().data(), buf_.size());
  buf_.clear();
}

void TraceWriter::BeginEvent() {
  if (!first_event_) buf_.Raw(",\n", 2);
  first_event_ = false;
}

void TraceWriter::WriteHeader() {
  buf_.Raw("{\"traceEvents\":[\n");
  BeginEvent();
  buf_.Raw("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":").Int(process_.rank);
  buf_.Raw(",\"tid\":0,\"args\":{\"name\":");
  buf_.String("rank " + std::to_string(process_.rank) + " (" + process_.host + ", pid " +
              std::to_string(process_.os_pid) + ")");
  buf_.Raw(",\"katrace\":{\"format\":\"katrace-trace\",\"version\":1,\"rank\":").Int(process_.rank);
  buf_.Raw(",\"host\":").String(process_.host).Raw(",\"os_pid\":").Int(process_.os_pid);
  buf_.Raw(",\"base_realtime_ns\":").Uint(process_.base_realtime_ns);
  buf_.Raw(",\"base_monotonic_ns\":").Uint(process_.base_monotonic_ns).Raw("}}}");
  BeginEvent();
  buf_.Raw("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":").Int(process_.rank);
  buf_.Raw(",\"tid\":0,\"args\":{\"sort_index\":").Int(process_.rank).Raw("}}");
}

void TraceWriter::PollCounters(uint64_t now_ns, bool force) {
  if (!force && now_ns - last_poll_ns_ < kCounterPollNs) return;
  last_poll_ns_ = now_ns;
  uint64_t drops[kKindCount] = {};
  DrainCounters drain;
  poll_(drops, &drain);
  uint64_t total = 0;
  for (uint64_t d : drops) total += d;
  if (force || total != last_drops_total_) {
    last_drops_total_ = total;
    BeginEvent();
    buf_.Raw("{\"name\":\"katrace drops\",\"ph\":\"C\",\"pid\":").Int(process_.rank);
    buf_.Raw(",\"tid\":0,\"ts\":").Micros(Rel(now_ns)).Raw(",\"args\":{\"total\":").Uint(total);
    for (int k = 0; k < kKindCount; ++k) {
      if (drops[k] != 0) buf_.Char(',').Key(kKindInfo[k].name).Uint(drops[k]);
    }
    buf_.Raw("}}");
  }
  uint64_t lost = drain.lost_overrun + drain.abandoned;
  if ((force && drain.seen != 0) || lost != last_drain_lost_) {
    last_drain_lost_ = lost;
    BeginEvent();
    buf_.Raw("{\"name\":\"katrace drain\",\"ph\":\"C\",\"pid\":").Int(process_.rank);
    buf_.Raw(",\"tid\":0,\"ts\":").Micros(Rel(now_ns));
    buf_.Raw(",\"args\":{\"lost_overrun\":").Uint(drain.lost_overrun);
    buf_.Raw(",\"abandoned\":").Uint(drain.abandoned).Raw("}}");
  }
}

uint64_t TraceWriter::GpuToHost(const EventRecord& r, uint64_t gpu_ns) const {
  return static_cast<uint64_t>(static_cast<int64_t>(gpu_ns) + r.gpu_offset);
}

std::string TraceWriter::TrackName(const TrackKey& key, const EventRecord& r) const {
  std::string comm = "comm " + HexComm(r.comm_hash).substr(0, 8) + " rank " + std::to_string(r.rank);
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

int TraceWriter::Place(const TrackKey& key, uint64_t start, uint64_t end, const EventRecord& r) {
  return tracks_.Place(key, start, end, [&] { return TrackName(key, r); });
}

void TraceWriter::Slice(const char* name, const char* cat, int tid, int64_t ts, int64_t dur) {
  if (dur < 0) dur = 0;
  BeginEvent();
  buf_.Raw("{\"name\":").String(name).Raw(",\"cat\":\"").Raw(cat).Raw("\",\"ph\":\"X\",\"pid\":");
  buf_.Int(process_.rank).Raw(",\"tid\":").Int(tid).Raw(",\"ts\":").Micros(ts);
  buf_.Raw(",\"dur\":").Micros(dur);
}

void TraceWriter::CommonArgs(const EventRecord& r) {
  buf_.Raw(",\"args\":{\"id\":").Uint(r.id);
  if (r.parent_id != 0) buf_.Raw(",\"parent\":").Uint(r.parent_id);
  buf_.Raw(",\"comm\":\"").Hex64(r.comm_hash).Raw("\",\"rank\":").Int(r.rank);
  if (r.flags & kFlagIncomplete) buf_.Raw(",\"incomplete\":true");
  if (r.flags & kFlagLateChild) buf_.Raw(",\"late\":true");
}

void TraceWriter::EndEvent() { buf_.Raw("}}"); }

void TraceWriter::WriteRecord(const EventRecord& r) {
  ++events_[static_cast<int>(r.kind)];
  if (r.flags & kFlagIncomplete) ++incomplete_;
  if (r.flags & kFlagLateChild) ++late_children_;
  if (IsGpuKind(r.kind) && (r.gpu_start != 0 || r.gpu_ready != 0)) ++gpu_stamped_;
  uint64_t stop_ns = (r.flags & kFlagIncomplete) && r.stop_ns == 0 ? close_ns_ : r.stop_ns;
  if (stop_ns < r.start_ns) stop_ns = r.start_ns;
  switch (r.kind) {
    case Kind::kProxyOp: WriteProxyOp(r, stop_ns); break;
    case Kind::kProxyStep: WriteProxyStep(r, stop_ns); break;
    case Kind::kKernelCh: WriteKernelCh(r, stop_ns); break;
    case Kind::kKernelStep: WriteKernelStep(r); break;
    case Kind::kProxyCtrl: WriteOtherProxy(r, stop_ns, TrackType::kProxyCtrl); break;
    case Kind::kNetPlugin: WriteOtherProxy(r, stop_ns, TrackType::kNet); break;
    default: WriteHostEvent(r, stop_ns); break;
  }
  bool summarize = (r.flags & kFlagIncomplete) == 0;
  if (summarize) {
    const char* cat = KindName(r.kind);
    std::string row = std::string(cat) + " " + EventName(r);
    if (IsGpuKind(r.kind)) {
      if (r.flags & kFlagGpuStopSeen) gpu_summary_.Add(row, r.gpu_stop - (r.kind == Kind::kKernelStep && r.gpu_start == 0 ? r.gpu_ready : r.gpu_start));
    } else {
      host_summary_.Add(row, stop_ns - r.start_ns);
    }
  }
}

void TraceWriter::WriteHostEvent(const EventRecord& r, uint64_t stop_ns) {
  TrackKey key{TrackType::kHost};
  key.os_tid = r.os_tid;
  int tid = Place(key, r.start_ns, stop_ns, r);
  Slice(EventName(r), KindName(r.kind), tid, Rel(r.start_ns), static_cast<int64_t>(stop_ns - r.start_ns));
  CommonArgs(r);
  switch (r.kind) {
    case Kind::kGroupApi:
      buf_.Raw(",\"depth\":").Int(r.value);
      buf_.Raw(",\"graph_captured\":").Raw(r.flags & kFlagGraphCaptured ? "true" : "false");
      break;
    case Kind::kCollApi:
    case Kind::kP2pApi:
      buf_.Raw(",\"func\":").String(r.func).Raw(",\"count\":").Uint(r.count);
      buf_.Raw(",\"datatype\":").String(r.datatype);
      if (r.kind == Kind::kCollApi) buf_.Raw(",\"root\":").Int(r.root);
      buf_.Raw(",\"graph_captured\":").Raw(r.flags & kFlagGraphCaptured ? "true" : "false");
      break;
    case Kind::kColl:
    case Kind::kP2p:
    case Kind::kCeColl:
      buf_.Raw(",\"func\":").String(r.func).Raw(",\"count\":").Uint(r.count);
      buf_.Raw(",\"datatype\":").String(r.datatype).Raw(",\"bytes\":").Uint(r.bytes);
      if (r.kind == Kind::kP2p) {
        buf_.Raw(",\"peer\":").Int(r.peer);
      } else {
        buf_.Raw(",\"seq\":").Uint(r.seq).Raw(",\"root\":").Int(r.root);
        if (r.kind == Kind::kColl) {
          buf_.Raw(",\"algo\":").String(r.algo).Raw(",\"proto\":").String(r.proto);
          buf_.Raw(",\"warps\":").Int(r.nwarps);
        }
      }
      buf_.Raw(",\"channels\":").Int(r.nchannels);
      if (r.flags & kFlagHasGpuExtent) {
        buf_.Raw(",\"gpu_start\":").Micros(Rel(GpuToHost(r, r.gpu_start)));
        buf_.Raw(",\"gpu_end\":").Micros(Rel(GpuToHost(r, r.gpu_stop)));
      }
      break;
    case Kind::kCeBatch:
      buf_.Raw(",\"ops\":").Int(r.value).Raw(",\"bytes\":").Uint(r.bytes);
      break;
    default:
      break;
  }
  if (r.kind == Kind::kGroupApi) {
    for (int i = 0; i < r.nstates; ++i) {
      const char* key_name = r.state_id[i] == ncclProfilerGroupStartApiStop ? "group_start_done" : "group_end_entered";
      buf_.Raw(",\"").Raw(key_name).Raw("\":").Micros(Rel(r.state_ns[i]));
    }
  }
  EndEvent();
  if ((r.kind == Kind::kColl || r.kind == Kind::kP2p) && (r.flags & kFlagHasGpuExtent)) WriteGpuExtent(r, tid);
}

// The Coll/P2p's GPU extent on its communicator's GPU track, with a flow arrow from the host slice.
void TraceWriter::WriteGpuExtent(const EventRecord& r, int host_tid) {
  TrackKey key{TrackType::kGpuComm};
  key.context = r.context;
  uint64_t start = GpuToHost(r, r.gpu_start), stop = GpuToHost(r, r.gpu_stop);
  int tid = Place(key, start, stop, r);
  Slice(EventName(r), "CollGpu", tid, Rel(start), static_cast<int64_t>(stop - start));
  buf_.Raw(",\"args\":{\"func\":").String(r.func).Raw(",\"coll\":").Uint(r.id);
  buf_.Raw(",\"comm\":\"").Hex64(r.comm_hash).Raw("\",\"rank\":").Int(r.rank).Raw("}}");
  if ((r.flags & kFlagIncomplete) == 0) gpu_summary_.Add(std::string("CollGpu ") + EventName(r), r.gpu_stop - r.gpu_start);
  BeginEvent();
  buf_.Raw("{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":").Uint(r.id);
  buf_.Raw(",\"pid\":").Int(process_.rank).Raw(",\"tid\":").Int(host_tid);
  buf_.Raw(",\"ts\":").Micros(Rel(r.start_ns)).Raw("}");
  BeginEvent();
  buf_.Raw("{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":").Uint(r.id);
  buf_.Raw(",\"pid\":").Int(process_.rank).Raw(",\"tid\":").Int(tid);
  buf_.Raw(",\"ts\":").Micros(Rel(start)).Raw("}");
}

void TraceWriter::WriteProxyOp(const EventRecord& r, uint64_t stop_ns) {
  TrackKey key{TrackType::kProxyOp};
  key.context = r.context;
  key.channel = r.channel;
  key.send = IsSend(r);
  key.peer = r.peer;
  int tid = Place(key, r.start_ns, stop_ns, r);
  Slice(EventName(r), "ProxyOp", tid, Rel(r.start_ns), static_cast<int64_t>(stop_ns - r.start_ns));
  CommonArgs(r);
  buf_.Raw(",\"channel\":").Int(r.channel).Raw(",\"peer\":").Int(r.peer);
  buf_.Raw(",\"steps\":").Int(r.value).Raw(",\"chunk_size\":").Int(r.value2);
  buf_.Raw(",\"send\":").Raw(IsSend(r) ? "true" : "false");
  if (r.nstates > 0) buf_.Raw(",\"in_progress\":").Micros(Rel(r.state_ns[0]));
  EndEvent();
}

void TraceWriter::WriteProxyStep(const EventRecord& r, uint64_t stop_ns) {
  TrackKey key{TrackType::kProxyStep};
  key.context = r.context;
  key.channel = r.channel;
  key.send = IsSend(r);
  key.peer = r.peer;
  key.lane = static_cast<uint8_t>(static_cast<uint32_t>(r.value) % 8);
  // The step, then one interval per state, each up to the next state or the stop.
  TrackTable::Span spans[1 + kMaxStates];
  spans[0] = {r.start_ns, stop_ns};
  for (int i = 0; i < r.nstates; ++i) {
    uint64_t s = r.state_ns[i] < r.start_ns ? r.start_ns : r.state_ns[i];
    uint64_t e = i + 1 < r.nstates ? r.state_ns[i + 1] : stop_ns;
    if (e > stop_ns) e = stop_ns;
    if (s > e) s = e;
    spans[1 + i] = {s, e};
  }
  int tid = tracks_.Place(key, spans, 1 + static_cast<size_t>(r.nstates), [&] { return TrackName(key, r); });
  Slice(EventName(r), "ProxyStep", tid, Rel(r.start_ns), static_cast<int64_t>(stop_ns - r.start_ns));
  CommonArgs(r);
  buf_.Raw(",\"step\":").Int(r.value).Raw(",\"trans_size\":").Uint(r.bytes);
  EndEvent();
  for (int i = 0; i < r.nstates; ++i) {
    const TrackTable::Span& span = spans[1 + i];
    Slice(StateName(r.state_id[i]), "ProxyStepState", tid, Rel(span.start), static_cast<int64_t>(span.end - span.start));
    buf_.Raw(",\"args\":{\"step\":").Int(r.value).Raw("}}");
  }
}

void TraceWriter::WriteOtherProxy(const EventRecord& r, uint64_t stop_ns, TrackType type) {
  TrackKey key{type};
  key.context = r.context;
  int tid = Place(key, r.start_ns, stop_ns, r);
  Slice(EventName(r), KindName(r.kind), tid, Rel(r.start_ns), static_cast<int64_t>(stop_ns - r.start_ns));
  CommonArgs(r);
  if (r.kind == Kind::kProxyCtrl) buf_.Raw(",\"appended\":").Int(r.value);
  if (r.kind == Kind::kNetPlugin) buf_.Raw(",\"net_id\":").Uint(r.seq).Raw(",\"updates\":").Int(r.value);
  EndEvent();
}

void TraceWriter::WriteKernelCh(const EventRecord& r, uint64_t stop_ns) {
  TrackKey key{TrackType::kGpuChannel};
  key.context = r.context;
  key.channel = r.channel;
  bool gpu = r.gpu_start != 0 && (r.flags & kFlagGpuStopSeen) && r.gpu_stop >= r.gpu_start;
  // Without both GPU stamps, the host times of the callbacks are the best we have.
  uint64_t start = gpu ? GpuToHost(r, r.gpu_start) : r.start_ns;
  uint64_t stop = gpu ? GpuToHost(r, r.gpu_stop) : stop_ns;
  int tid = Place(key, start, stop, r);
  Slice(EventName(r), "KernelCh", tid, Rel(start), static_cast<int64_t>(stop - start));
  CommonArgs(r);
  buf_.Raw(",\"channel\":").Int(r.channel);
  // Only stamps that arrived are written: a missing one is absent, never 0.
  if (r.gpu_start != 0) buf_.Raw(",\"gpu_start_ns\":").Uint(r.gpu_start);
  if (r.flags & kFlagGpuStopSeen) buf_.Raw(",\"gpu_stop_ns\":").Uint(r.gpu_stop);
  if (!gpu) buf_.Raw(",\"host_timed\":true");
  EndEvent();
}

void TraceWriter::WriteKernelStep(const EventRecord& r) {
  TrackKey key{TrackType::kGpuStep};
  key.context = r.context;
  key.channel = r.channel;
  key.send = IsSend(r);
  key.peer = r.peer;
  uint64_t begin_gpu = r.gpu_start != 0 ? r.gpu_start : r.gpu_ready;
  uint64_t stop_gpu = (r.flags & kFlagGpuStopSeen) && r.gpu_stop >= r.gpu_ready ? r.gpu_stop : r.gpu_ready;
  uint64_t start = GpuToHost(r, begin_gpu), ready = GpuToHost(r, r.gpu_ready), stop = GpuToHost(r, stop_gpu);
  // The step, then its wait (when measured) and transfer (unless abandoned) halves.
  bool has_wait = r.gpu_start != 0 && r.gpu_ready >= r.gpu_start;
  bool has_transfer = stop_gpu > r.gpu_ready || (r.flags & kFlagAbandoned) == 0;
  TrackTable::Span spans[3] = {{start, stop}};
  size_t n = 1;
  if (has_wait) spans[n++] = {start, ready};
  if (has_transfer) spans[n++] = {ready, stop};
  int tid = tracks_.Place(key, spans, n, [&] { return TrackName(key, r); });
  Slice(EventName(r), "KernelStep", tid, Rel(start), static_cast<int64_t>(stop - start));
  CommonArgs(r);
  buf_.Raw(",\"channel\":").Int(r.channel).Raw(",\"send\":").Raw(IsSend(r) ? "true" : "false");
  buf_.Raw(",\"peer\":").Int(r.peer).Raw(",\"step\":").Int(r.value2).Raw(",\"size\":").Uint(r.bytes);
  buf_.Raw(",\"gpu_start_ns\":").Uint(r.gpu_start).Raw(",\"gpu_ready_ns\":").Uint(r.gpu_ready);
  if (r.flags & kFlagGpuStopSeen) buf_.Raw(",\"gpu_stop_ns\":").Uint(r.gpu_stop);
  if (r.flags & kFlagAbandoned) buf_.Raw(",\"abandoned\":true");
  EndEvent();
  bool summarize = (r.flags & kFlagIncomplete) == 0;
  if (has_wait) {
    Slice(IsSend(r) ? "Send wait" : "Recv wait", "KernelStepWait", tid, Rel(start), static_cast<int64_t>(ready - start));
    buf_.Raw(",\"args\":{\"kernel_step\":").Uint(r.id).Raw("}}");
    if (summarize) gpu_summary_.Add(IsSend(r) ? "KernelStepWait Send wait" : "KernelStepWait Recv wait", r.gpu_ready - r.gpu_start);
  }
  if (has_transfer) {
    Slice(IsSend(r) ? "Send transfer" : "Recv transfer", "KernelStepTransfer", tid, Rel(ready), static_cast<int64_t>(stop - ready));
    buf_.Raw(",\"args\":{\"kernel_step\":").Uint(r.id).Raw("}}");
    if (summarize) {
      gpu_summary_.Add(IsSend(r) ? "KernelStepTransfer Send transfer" : "KernelStepTransfer Recv transfer",
                       stop_gpu - r.gpu_ready);
    }
  }
}

void TraceWriter::Close(const TraceFooter& footer) {
  close_ns_ = NowMonotonicNs();
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  // Whatever producers pushed after the thread's last look.
  EventRecord r;
  while (queue_.TryPop(&r)) WriteRecord(r);
  PollCounters(NowMonotonicNs(), true);
  closed_.store(true, std::memory_order_release);
  WriteFooter(footer);
  FlushBuffer();
  bool committed = sink_open_ && sink_.Commit();
  if (committed) LogInfo("trace written to " + sink_.path());
  if (config_.summary) WriteSummary(footer);
}

void TraceWriter::WriteFooter(const TraceFooter& f) {
  uint64_t total_drops = 0;
  for (uint64_t d : f.drops) total_drops += d;
  // A closing instant on the process track, so the counters are visible in Perfetto too.
  BeginEvent();
  buf_.Raw("{\"name\":\"katrace trace end\",\"ph\":\"i\",\"s\":\"g\",\"pid\":").Int(process_.rank);
  buf_.Raw(",\"tid\":0,\"ts\":").Micros(Rel(close_ns_));
  buf_.Raw(",\"args\":{\"drops\":").Uint(total_drops).Raw(",\"incomplete\":").Uint(incomplete_);
  buf_.Raw(",\"overflow_moves\":").Uint(tracks_.overflow_moves()).Raw("}}");
  buf_.Raw("\n],\n\"otherData\":{\"katrace\":{\"format\":\"katrace-trace\",\"version\":1,\"rank\":").Int(process_.rank);
  buf_.Raw(",\"host\":").String(process_.host).Raw(",\"os_pid\":").Int(process_.os_pid);
  buf_.Raw(",\"base_realtime_ns\":").Uint(process_.base_realtime_ns);
  buf_.Raw(",\"base_monotonic_ns\":").Uint(process_.base_monotonic_ns);
  buf_.Raw(",\"mask\":").Int(f.mask);
  buf_.Raw(",\n\"events\":{");
  for (int k = 0; k < kKindCount; ++k) buf_.Raw(k ? "," : "").Key(kKindInfo[k].name).Uint(events_[k]);
  buf_.Raw("},\n\"drops\":{");
  for (int k = 0; k < kKindCount; ++k) buf_.Raw(k ? "," : "").Key(kKindInfo[k].name).Uint(f.drops[k]);
  buf_.Raw("},\n\"incomplete\":").Uint(incomplete_).Raw(",\"late_children\":").Uint(late_children_);
  buf_.Raw(",\"overflow_moves\":").Uint(tracks_.overflow_moves());
  buf_.Raw(",\"writer_stalls\":").Uint(stalls());
  buf_.Raw(",\"io_errors\":").Uint(sink_.io_errors());
  // The placement offset (of the first communicator that saw GPU stamps) and how far any
  // communicator's placement lies from its best observation.
  int64_t offset = 0, error = 0;
  bool any = false;
  for (const CommunicatorFooter& c : f.comms) {
    if (!c.gpu_offset_known) continue;
    if (!any) offset = c.gpu_offset_ns;
    int64_t e = c.gpu_offset_ns > c.gpu_offset_best_ns ? c.gpu_offset_ns - c.gpu_offset_best_ns
                                                       : c.gpu_offset_best_ns - c.gpu_offset_ns;
    if (e > error) error = e;
    any = true;
  }
  buf_.Raw(",\"gpu_offset_ns\":").Int(offset).Raw(",\"gpu_offset_error_ns\":").Int(error);
  buf_.Raw(",\"gpu_offset_samples\":").Uint(gpu_stamped_);
  buf_.Raw(",\n\"drain\":{\"seen\":").Uint(f.drain.seen).Raw(",\"lost_overrun\":").Uint(f.drain.lost_overrun);
  buf_.Raw(",\"abandoned\":").Uint(f.drain.abandoned).Raw(",\"sampled_out\":").Uint(f.drain.sampled_out);
  buf_.Raw(",\"late\":").Uint(f.drain.late);
  buf_.Raw("},\n\"communicators\":[");
  for (size_t i = 0; i < f.comms.size(); ++i) {
    const CommunicatorFooter& c = f.comms[i];
    buf_.Raw(i ? ",\n" : "\n").Raw("{\"comm\":\"").Hex64(c.comm_hash).Raw("\",\"name\":").String(c.name);
    buf_.Raw(",\"rank\":").Int(c.rank).Raw(",\"nranks\":").Int(c.nranks).Raw(",\"abi\":").Int(c.abi_version);
    buf_.Raw(",\"gpu_offset_ns\":").Int(c.gpu_offset_ns).Raw(",\"gpu_offset_best_ns\":").Int(c.gpu_offset_best_ns);
    buf_.Raw("}");
  }
  buf_.Raw("]}}}\n");
}

void TraceWriter::WriteSummary(const TraceFooter& f) {
  std::string text;
  text += host_summary_.empty() ? "" : host_summary_.ToText() + "\n";
  text += gpu_summary_.empty() ? "" : gpu_summary_.ToText() + "\n";
  uint64_t total_drops = 0;
  std::string drops;
  for (int k = 0; k < kKindCount; ++k) {
    total_drops += f.drops[k];
    if (f.drops[k] != 0) drops += std::string(" ") + kKindInfo[k].name + "=" + std::to_string(f.drops[k]);
  }
  uint64_t recorded = 0;
  for (uint64_t e : events_) recorded += e;
  text += "katrace: " + std::to_string(recorded) + " events recorded, " + std::to_string(total_drops) +
          " dropped (pool full)" + (drops.empty() ? "" : ":" + drops) + ", " + std::to_string(incomplete_) +
          " incomplete, " + std::to_string(tracks_.overflow_moves()) + " moved to overflow tracks";
  if (f.drain.seen != 0 || f.drain.lost_overrun != 0) {
    text += "; KernelStep drain: " + std::to_string(f.drain.seen) + " seen, " +
            std::to_string(f.drain.lost_overrun) + " lost to overrun, " + std::to_string(f.drain.abandoned) +
            " abandoned, " + std::to_string(f.drain.sampled_out) + " sampled out, " + std::to_string(f.drain.late) +
            " late";
  }
  text += "\n";
  if (sink_open_) text += "katrace: trace " + (sink_.failed() ? sink_.path() + ".tmp (incomplete: I/O error)" : sink_.path()) + "\n";
  fputs(text.c_str(), stderr);
  std::string path = config_.summary_path;
  if (path.empty() && sink_open_ && sink_.path().compare(0, 5, "/dev/") != 0) path = sink_.path() + ".summary.txt";
  if (path.empty()) return;
  FILE* f_out = fopen(path.c_str(), "w");
  if (f_out == nullptr || fputs(text.c_str(), f_out) < 0) {
    LogWarn("cannot write the summary to '" + path + "' (" + strerror(errno) + ")");
  }
  if (f_out != nullptr) fclose(f_out);
}

}  // namespace katrace
