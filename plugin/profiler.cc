#include "plugin/profiler.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "plugin/clock.h"
#include "plugin/config.h"
#include "plugin/event_pool.h"
#include "plugin/handle_codec.h"
#include "plugin/logger.h"
#include "plugin/nvtx_sink.h"
#include "plugin/slot_state.h"
#include "plugin/trace_writer.h"

namespace katrace {
namespace {

// Context slot 0 holds proxy ops that another process created (PXN): their context and parent
// pointers belong to that process and are never looked at.
constexpr uint32_t kForeignContext = 0;

struct Context {
  uint64_t serial = 0;
  uint32_t index = 0;
  uint64_t comm_hash = 0;
  int rank = 0;
  int nranks = 0;
  int abi_version = 0;
  std::string name;
  uint32_t pool_size[kKindCount] = {};
  std::atomic<EventPool*> pools[kKindCount] = {};
  std::mutex pool_mu;  // only taken to create a pool, once per kind
  // Smallest (host time a GPU stamp was seen − the stamp) so far: an upper bound of the true
  // offset that tightens with every observation. INT64_MAX until the first one.
  std::atomic<int64_t> gpu_offset_best{INT64_MAX};
  // The offset every GPU slice of this communicator is placed with, fixed at the first
  // observation so that GPU tracks never shift against themselves (INT64_MAX until then).
  std::atomic<int64_t> gpu_offset_placement{INT64_MAX};
  std::atomic<bool> finalized{false};

  ~Context() {
    for (auto& p : pools) delete p.load(std::memory_order_relaxed);
  }
};

struct Session {
  Config config;
  ProcessInfo process;
  std::unique_ptr<TraceWriter> writer;
  std::atomic<Context*> contexts[kMaxContexts] = {};
  std::vector<std::unique_ptr<Context>> owned;  // under g_lifecycle
  int live_contexts = 0;                        // under g_lifecycle
  uint64_t next_serial = 1;                     // under g_lifecycle
  std::atomic<uint64_t> drops[kKindCount] = {};
  std::atomic<bool> drop_warned[kKindCount] = {};
  std::atomic<uint64_t> drain_seen{0}, drain_lost{0}, drain_abandoned{0}, drain_sampled_out{0}, drain_late{0};
  std::atomic<int> mask{0};
  NvtxSink nvtx;
};

// Init and finalize are rare and may come from several threads at once; callbacks never lock.
std::mutex g_lifecycle;
std::atomic<Session*> g_session{nullptr};
std::string g_last_output_path;  // under g_lifecycle
std::atomic<uint64_t> g_next_id_block{0};

uint32_t CurrentOsTid() {
  static thread_local uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

// Record ids are handed out in per-thread blocks so that threads do not share a counter.
uint64_t NextRecordId() {
  constexpr uint64_t kBlock = 1024;
  static thread_local uint64_t next = 0, end = 0;
  if (next == end) {
    next = g_next_id_block.fetch_add(kBlock, std::memory_order_relaxed) + 1;
    end = next + kBlock;
  }
  return next++;
}

Context* ContextAt(Session* s, uint32_t index) {
  return index < kMaxContexts ? s->contexts[index].load(std::memory_order_acquire) : nullptr;
}

// globaltimer is seeded from the host's realtime clock, so before any observation GPU stamps are
// taken as realtime.
int64_t RealtimePrior(const Session* s) {
  return static_cast<int64_t>(s->process.base_monotonic_ns - s->process.base_realtime_ns);
}

// Where GPU stamps of |ctx| go on the host timeline.
int64_t ContextGpuOffset(const Session* s, Context* ctx) {
  int64_t placement = ctx->gpu_offset_placement.load(std::memory_order_relaxed);
  return placement != INT64_MAX ? placement : RealtimePrior(s);
}

Context* LookupContext(Session* s, void* value) {
  uint32_t index = 0;
  uint64_t serial = 0;
  if (value == nullptr || !DecodeContext(value, &index, &serial) || index == kForeignContext) return nullptr;
  Context* ctx = ContextAt(s, index);
  return ctx != nullptr && (ctx->serial & kContextSerialMask) == serial ? ctx : nullptr;
}

EventPool* GetPool(Context* ctx, Kind kind) {
  int k = static_cast<int>(kind);
  EventPool* pool = ctx->pools[k].load(std::memory_order_acquire);
  if (pool != nullptr) return pool;
  std::lock_guard<std::mutex> lock(ctx->pool_mu);
  pool = ctx->pools[k].load(std::memory_order_relaxed);
  if (pool == nullptr) {
    // Generations start at a per-context offset so that a handle of an earlier context that used
    // the same context slot does not match.
    try {
      pool = new EventPool(ctx->pool_size[k], static_cast<uint32_t>(ctx->serial * 0x9e3779b1u) & kGenerationMask);
    } catch (const std::bad_alloc&) {
      return nullptr;  // no exception crosses the C ABI: the caller counts a drop
    }
    ctx->pools[k].store(pool, std::memory_order_release);
  }
  return pool;
}

struct SlotRef {
  Context* ctx = nullptr;
  EventPool* pool = nullptr;
  EventSlot* slot = nullptr;
  uint32_t index = 0;
  HandleFields fields{};
};

// Resolves a handle to its slot without trusting it: every field is range-checked.
bool Resolve(Session* s, const void* handle, SlotRef* out) {
  if (!DecodeHandle(handle, &out->fields)) return false;
  out->ctx = ContextAt(s, out->fields.context);
  if (out->ctx == nullptr) return false;
  out->pool = out->ctx->pools[static_cast<int>(out->fields.kind)].load(std::memory_order_acquire);
  if (out->pool == nullptr || out->fields.slot >= out->pool->size()) return false;
  out->index = out->fields.slot;
  out->slot = &out->pool->slot(out->index);
  return out->slot->tag == kSlotTag;
}

void AtomicMin(std::atomic<uint64_t>* a, uint64_t v) {
  uint64_t cur = a->load(std::memory_order_relaxed);
  while (v < cur && !a->compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

void AtomicMax(std::atomic<uint64_t>* a, uint64_t v) {
  uint64_t cur = a->load(std::memory_order_relaxed);
  while (v > cur && !a->compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

void ReleaseSlot(Session* s, const SlotRef& ref);

// Emits the finished event and gives its slot back. Runs on whichever thread released the last
// hold, after which no other thread touches the slot until it is acquired again.
void Complete(Session* s, Context* ctx, EventPool* pool, uint32_t index, bool incomplete) {
  EventSlot& slot = pool->slot(index);
  EventRecord& r = slot.rec;  // ours alone until the slot is freed below
  if (incomplete) {
    r.flags |= kFlagIncomplete;
    if (r.stop_ns == 0) r.stop_ns = NowMonotonicNs();
  }
  if (r.kind == Kind::kColl || r.kind == Kind::kP2p) {
    uint64_t lo = slot.gpu_min.load(std::memory_order_relaxed);
    uint64_t hi = slot.gpu_max.load(std::memory_order_relaxed);
    if (lo <= hi) {
      r.gpu_start = lo;
      r.gpu_stop = hi;
      r.flags |= kFlagHasGpuExtent;
    }
  }
  r.gpu_offset = ContextGpuOffset(s, ctx);
  SlotRef parent;
  bool has_parent = slot.parent_handle != nullptr && Resolve(s, slot.parent_handle, &parent);
  // A GPU child widens its parent's GPU extent before letting the parent complete.
  if (has_parent && IsGpuKind(r.kind) && (r.flags & kFlagGpuStopSeen)) {
    uint64_t begin = r.kind == Kind::kKernelStep && r.gpu_start == 0 ? r.gpu_ready : r.gpu_start;
    if (begin != 0 && r.gpu_stop >= begin) {
      AtomicMin(&parent.slot->gpu_min, begin);
      AtomicMax(&parent.slot->gpu_max, r.gpu_stop);
    }
  }
  s->writer->Push(r);
  uint32_t gen = SlotState::Generation(slot.state.load(std::memory_order_relaxed));
  slot.tombstone.store((static_cast<uint64_t>(gen) << 40) | (r.id & ((1ull << 40) - 1)), std::memory_order_release);
  slot.state.store(SlotState::Free(gen + 1), std::memory_order_release);
  pool->Release(index);
  if (has_parent) ReleaseSlot(s, parent);
}

void ReleaseSlot(Session* s, const SlotRef& ref) {
  if (SlotState::ReleaseHold(&ref.slot->state, ref.fields.generation)) {
    Complete(s, ref.ctx, ref.pool, ref.index, false);
  }
}

// |now_ns|: host monotonic time at which the stamp was seen (the start callback's own time).
// Each observation (seen − stamp) is an upper bound of the true offset; the smallest is kept as
// the best. Placement is fixed at the first one, or at the realtime prior when that lies below it
// (the prior is then consistent with the bound and not late by the first observation's lag).
void ObserveGpuStamp(const Session* s, Context* ctx, uint64_t gpu_ns, uint64_t now_ns) {
  if (gpu_ns == 0) return;
  int64_t offset = static_cast<int64_t>(now_ns - gpu_ns);
  int64_t best = ctx->gpu_offset_best.load(std::memory_order_relaxed);
  while (offset < best && !ctx->gpu_offset_best.compare_exchange_weak(best, offset, std::memory_order_relaxed)) {
  }
  if (ctx->gpu_offset_placement.load(std::memory_order_relaxed) == INT64_MAX) {
    int64_t unset = INT64_MAX;
    ctx->gpu_offset_placement.compare_exchange_strong(unset, std::min(offset, RealtimePrior(s)),
                                                      std::memory_order_relaxed);
  }
}

// Links a new event to its parent: takes a hold on a live parent (so it cannot complete first),
// or, if the parent already completed, keeps its record id from the slot's tombstone.
void AttachParent(Session* s, EventSlot* child, Kind kind, void* parent_obj) {
  SlotRef p;
  if (parent_obj == nullptr || !Resolve(s, parent_obj, &p)) return;
  EventRecord& r = child->rec;
  if (SlotState::TryHold(&p.slot->state, p.fields.generation, kind == Kind::kKernelCh)) {
    const EventRecord& pr = p.slot->rec;
    r.parent_id = pr.id;
    child->parent_handle = parent_obj;
    if (kind == Kind::kKernelCh || kind == Kind::kKernelStep) r.func = pr.func;
    if (kind == Kind::kProxyStep && pr.kind == Kind::kProxyOp) {
      r.channel = pr.channel;
      r.peer = pr.peer;
      r.flags |= (pr.flags & kFlagSend) | kFlagDirectionKnown;
    }
    return;
  }
  uint64_t t = p.slot->tombstone.load(std::memory_order_acquire);
  if ((t >> 40) == (p.fields.generation & kGenerationMask)) {
    r.parent_id = t & ((1ull << 40) - 1);
    // A Coll/P2p always starts after its API event stopped (enqueue, then launch): that is the
    // normal order, not a late child.
    bool api_parent = p.fields.kind == Kind::kGroupApi || p.fields.kind == Kind::kCollApi ||
                      p.fields.kind == Kind::kP2pApi;
    if (!api_parent) r.flags |= kFlagLateChild;
  }
}

void FillFields(EventRecord& r, const ncclProfilerEventDescr_v6_t* d, Kind kind) {
  switch (kind) {
    case Kind::kGroupApi:
      r.value = d->groupApi.groupDepth;
      if (d->groupApi.graphCaptured) r.flags |= kFlagGraphCaptured;
      break;
    case Kind::kCollApi:
      r.func = d->collApi.func;
      r.count = d->collApi.count;
      r.datatype = d->collApi.datatype;
      r.root = d->collApi.root;
      if (d->collApi.graphCaptured) r.flags |= kFlagGraphCaptured;
      break;
    case Kind::kP2pApi:
      r.func = d->p2pApi.func;
      r.count = d->p2pApi.count;
      r.datatype = d->p2pApi.datatype;
      if (d->p2pApi.graphCaptured) r.flags |= kFlagGraphCaptured;
      break;
    case Kind::kColl:
      r.seq = d->coll.seqNumber;
      r.func = d->coll.func;
      r.count = d->coll.count;
      r.root = d->coll.root;
      r.datatype = d->coll.datatype;
      r.nchannels = d->coll.nChannels;
      r.nwarps = d->coll.nWarps;
      r.algo = d->coll.algo;
      r.proto = d->coll.proto;
      break;
    case Kind::kP2p:
      r.func = d->p2p.func;
      r.datatype = d->p2p.datatype;
      r.count = d->p2p.count;
      r.peer = d->p2p.peer;
      r.nchannels = d->p2p.nChannels;
      break;
    case Kind::kProxyOp:
      r.channel = d->proxyOp.channelId;
      r.peer = d->proxyOp.peer;
      r.value = d->proxyOp.nSteps;
      r.value2 = d->proxyOp.chunkSize;
      if (d->proxyOp.isSend) r.flags |= kFlagSend;
      r.flags |= kFlagDirectionKnown;
      break;
    case Kind::kProxyStep:
      r.value = d->proxyStep.step;
      break;
    case Kind::kKernelCh:
      r.channel = d->kernelCh.channelId;
      r.gpu_start = d->kernelCh.pTimer;
      break;
    case Kind::kNetPlugin:
      r.seq = static_cast<uint64_t>(d->netPlugin.id);
      break;
    case Kind::kCeColl:
      r.seq = d->ceColl.seqNumber;
      r.func = d->ceColl.func;
      r.count = d->ceColl.count;
      r.root = d->ceColl.root;
      r.datatype = d->ceColl.datatype;
      break;
    case Kind::kCeBatch:
      r.value = d->ceCollBatch.numOps;
      r.bytes = d->ceCollBatch.totalBytes;
      break;
    case Kind::kKernelStep:
      r.channel = d->kernelStep.channelId;
      r.peer = d->kernelStep.peer;
      r.value2 = static_cast<int32_t>(d->kernelStep.step);
      r.bytes = d->kernelStep.size;
      r.gpu_start = d->kernelStep.startTs;
      r.gpu_ready = d->kernelStep.readyTs;
      if (d->kernelStep.isSend) r.flags |= kFlagSend;
      r.flags |= kFlagDirectionKnown;
      break;
    default:
      break;
  }
}

// Payload bytes of a Coll/P2p: count times the element size named by the datatype string.
uint64_t PayloadBytes(const char* datatype, uint64_t count) {
  if (datatype == nullptr) return count;
  if (strstr(datatype, "64") != nullptr) return count * 8;
  if (strstr(datatype, "32") != nullptr) return count * 4;
  if (strstr(datatype, "16") != nullptr) return count * 2;
  return count;  // Int8, Uint8 ("Unknown" in NCCL's table), Float8 variants
}

void HandleDrainReport(Session* s, const ncclProfilerKernelStepDescr_t& d) {
  s->drain_seen.fetch_add(d.startTs, std::memory_order_relaxed);
  s->drain_lost.fetch_add(d.step, std::memory_order_relaxed);
  s->drain_abandoned.fetch_add(d.size, std::memory_order_relaxed);
  s->drain_sampled_out.fetch_add(static_cast<uint32_t>(d.peer), std::memory_order_relaxed);
  s->drain_late.fetch_add(d.readyTs, std::memory_order_relaxed);
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "unknown-host";
  return host;
}

// The process's global rank from the launcher, if any launcher told us.
bool LauncherRank(int* rank) {
  static const char* const kVars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK", "PMIX_RANK",
                                      "MV2_COMM_WORLD_RANK"};
  for (const char* var : kVars) {
    const char* v = getenv(var);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    long r = strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r < (1L << 30)) {
      *rank = static_cast<int>(r);
      return true;
    }
  }
  return false;
}

Session* StartSession(const InitArgs& a) {
  auto s = std::make_unique<Session>();
  std::vector<std::string> warnings;
  s->config = ReadConfig([](const char* n) { return getenv(n); },
                         [&](const std::string& w) { warnings.push_back(w); });
  for (const std::string& w : warnings) LogWarn(w);
  s->process.os_pid = getpid();
  s->process.host = HostName();
  if (!LauncherRank(&s->process.rank)) s->process.rank = a.rank;
  s->process.base_realtime_ns = NowRealtimeNs();
  s->process.base_monotonic_ns = NowMonotonicNs();
  std::string path = ExpandOutputTemplate(s->config.output, s->process.rank, s->process.os_pid, s->process.host);
  // A process that profiles again after its last communicator was destroyed gets a new file
  // rather than overwriting the first one.
  static int sessions_on_path = 1;
  if (path == g_last_output_path && path.compare(0, 5, "/dev/") != 0) {
    size_t dot = path.find(".json");
    std::string suffix = "." + std::to_string(++sessions_on_path);
    path = dot == std::string::npos ? path + suffix : path.insert(dot, suffix);
  } else {
    g_last_output_path = path;
    sessions_on_path = 1;
  }
  s->process.output_path = path;
  s->nvtx.Init(s->config.nvtx);
  Session* raw = s.get();
  s->writer = std::make_unique<TraceWriter>(s->config, s->process, [raw](uint64_t drops[kKindCount], DrainCounters* d) {
    for (int k = 0; k < kKindCount; ++k) drops[k] = raw->drops[k].load(std::memory_order_relaxed);
    d->seen = raw->drain_seen.load(std::memory_order_relaxed);
    d->lost_overrun = raw->drain_lost.load(std::memory_order_relaxed);
    d->abandoned = raw->drain_abandoned.load(std::memory_order_relaxed);
    d->sampled_out = raw->drain_sampled_out.load(std::memory_order_relaxed);
    d->late = raw->drain_late.load(std::memory_order_relaxed);
  });
  s->writer->Start();
  auto foreign = std::make_unique<Context>();
  foreign->index = kForeignContext;
  foreign->serial = 0;
  foreign->name = "foreign proxy ops";
  for (int k = 0; k < kKindCount; ++k) foreign->pool_size[k] = s->config.pool_size[k];
  s->contexts[kForeignContext].store(foreign.get(), std::memory_order_release);
  s->owned.push_back(std::move(foreign));
  return s.release();
}

void CloseSession(Session* s) {
  TraceFooter footer;
  for (int k = 0; k < kKindCount; ++k) footer.drops[k] = s->drops[k].load();
  footer.drain.seen = s->drain_seen.load();
  footer.drain.lost_overrun = s->drain_lost.load();
  footer.drain.abandoned = s->drain_abandoned.load();
  footer.drain.sampled_out = s->drain_sampled_out.load();
  footer.drain.late = s->drain_late.load();
  footer.mask = s->mask.load();
  for (const auto& c : s->owned) {
    if (c->index == kForeignContext) continue;
    CommunicatorFooter f;
    f.comm_hash = c->comm_hash;
    f.rank = c->rank;
    f.nranks = c->nranks;
    f.abi_version = c->abi_version;
    f.name = c->name;
    int64_t best = c->gpu_offset_best.load();
    f.gpu_offset_known = best != INT64_MAX;
    f.gpu_offset_ns = f.gpu_offset_known ? c->gpu_offset_placement.load() : 0;
    f.gpu_offset_best_ns = f.gpu_offset_known ? best : 0;
    footer.comms.push_back(f);
  }
  s->writer->Close(footer);
}

// Closes every event still holding a slot of |ctx|: events that never stopped, or whose children
// never came. They are written with "incomplete": true rather than lost.
void FlushIncomplete(Session* s, Context* ctx) {
  for (int k = 0; k < kKindCount; ++k) {
    EventPool* pool = ctx->pools[k].load(std::memory_order_acquire);
    if (pool == nullptr) continue;
    for (uint32_t i = 0; i < pool->size(); ++i) {
      if (SlotState::TryClaimLive(&pool->slot(i).state)) {
        Complete(s, ctx, pool, i, true);
      }
    }
  }
}

// Many jobs exit without destroying their communicators, so NCCL never calls finalize. The
// trace is then completed when the process exits (or the library is unloaded first): open events
// are closed as incomplete and the file is committed. The session is not freed here, since
// threads NCCL never joined may still be inside a callback that holds it.
std::atomic<Session*> g_session_closed_at_exit{nullptr};  // kept reachable, never freed

struct ExitFlush {
  ~ExitFlush() {
    std::lock_guard<std::mutex> lock(g_lifecycle);
    Session* s = g_session.exchange(nullptr, std::memory_order_acq_rel);
    if (s == nullptr) return;
    g_session_closed_at_exit.store(s);
    // NCCL may be tearing itself down too: report on stderr, not through its logger.
    ClearNcclLogger();
    for (const auto& ctx : s->owned) {
      if (!ctx->finalized.exchange(true)) FlushIncomplete(s, ctx.get());
    }
    FlushIncomplete(s, ContextAt(s, kForeignContext));
    CloseSession(s);
  }
};
ExitFlush g_exit_flush;

ncclResult_t InitLocked(void** context, const InitArgs& a);

}  // namespace

ncclResult_t CoreInit(void** context, const InitArgs& a) {
  if (context == nullptr) return ncclSuccess;
  *context = nullptr;
  SetNcclLogger(a.logfn);
  std::lock_guard<std::mutex> lock(g_lifecycle);
  // init never fails NCCL and no exception crosses the C ABI: on trouble this communicator is
  // simply not profiled.
  try {
    return InitLocked(context, a);
  } catch (const std::exception& e) {
    LogWarn(std::string("profiler init failed (") + e.what() + "); this communicator is not profiled, the job goes on");
    *context = nullptr;
    return ncclSuccess;
  }
}

namespace {

ncclResult_t InitLocked(void** context, const InitArgs& a) {
  Session* s = g_session.load(std::memory_order_acquire);
  if (s == nullptr) {
    s = StartSession(a);
    g_session.store(s, std::memory_order_release);
  }
  uint32_t index = 0;
  for (uint32_t i = 1; i < kMaxContexts; ++i) {
    if (s->contexts[i].load(std::memory_order_relaxed) == nullptr) {
      index = i;
      break;
    }
  }
  if (index == 0) {
    LogWarn("more than " + std::to_string(kMaxContexts - 1) +
            " live communicators; this one is not profiled, the job goes on");
    return ncclSuccess;
  }
  auto ctx = std::make_unique<Context>();
  ctx->serial = s->next_serial++;
  ctx->index = index;
  ctx->comm_hash = a.comm_hash;
  ctx->rank = a.rank;
  ctx->nranks = a.nranks;
  ctx->abi_version = a.abi_version;
  ctx->name = a.comm_name != nullptr ? a.comm_name : "";
  for (int k = 0; k < kKindCount; ++k) ctx->pool_size[k] = s->config.pool_size[k];
  Context* raw = ctx.get();
  s->owned.push_back(std::move(ctx));  // may throw: before the context is visible anywhere
  s->contexts[index].store(raw, std::memory_order_release);
  *context = EncodeContext(index, raw->serial);
  ++s->live_contexts;
  // The mask is process-global and NCCL re-reads it at every operation. Set it on the first
  // communicator only, so a value the application changed later is not reset by a new one.
  int mask = s->config.mask & a.mask_allowed;
  if (a.mask != nullptr && s->live_contexts == 1) {
    __atomic_store_n(a.mask, mask, __ATOMIC_RELAXED);
    s->mask.store(mask);
  }
  LogInfo("profiling comm " + std::to_string(a.comm_hash) + " rank " + std::to_string(a.rank) + "/" +
          std::to_string(a.nranks) + " (ABI v" + std::to_string(a.abi_version) + ", mask " + std::to_string(mask) +
          ", trace " + s->process.output_path + ")");
  return ncclSuccess;
}

}  // namespace

ncclResult_t CoreStart(void* context, void** handle, const ncclProfilerEventDescr_v6_t* d) {
  if (handle == nullptr) return ncclSuccess;
  *handle = nullptr;
  Session* s = g_session.load(std::memory_order_acquire);
  Kind kind;
  if (s == nullptr || d == nullptr || !KindFromType(d->type, &kind)) return ncclSuccess;
  // A ProxyOp created by another process (PXN): its context and parent are that process's values.
  bool foreign = kind == Kind::kProxyOp && d->proxyOp.pid != s->process.os_pid;
  Context* ctx = foreign ? ContextAt(s, kForeignContext) : LookupContext(s, context);
  if (ctx == nullptr && !foreign) {
    // Steps of a foreign proxy op carry that process's context too; their parent is ours.
    SlotRef parent;
    if (d->parentObj != nullptr && Resolve(s, d->parentObj, &parent)) ctx = parent.ctx;
  }
  if (ctx == nullptr) return ncclSuccess;
  if (kind == Kind::kKernelStep && d->parentObj == nullptr && d->kernelStep.isSend == ncclProfilerKernelStepReport) {
    HandleDrainReport(s, d->kernelStep);
    return ncclSuccess;
  }
  EventPool* pool = GetPool(ctx, kind);
  uint32_t index = 0;
  int k = static_cast<int>(kind);
  if (pool == nullptr || !pool->Acquire(&index)) {
    s->drops[k].fetch_add(1, std::memory_order_relaxed);
    WarnOnce(&s->drop_warned[k],
             std::string("the ") + kKindInfo[k].name + " pool (" + std::to_string(ctx->pool_size[k]) +
                 " live events per communicator) is full" + (pool == nullptr ? " (out of memory)" : "") +
                 ": further " + kKindInfo[k].name + " events are dropped and counted in the trace; raise KATRACE_POOL_" +
                 kKindInfo[k].pool_env);
    return ncclSuccess;
  }
  EventSlot& slot = pool->slot(index);
  uint32_t gen = SlotState::Generation(slot.state.load(std::memory_order_relaxed));
  EventRecord& r = slot.rec;
  r = EventRecord{};
  r.id = NextRecordId();
  r.kind = kind;
  r.start_ns = NowMonotonicNs();
  r.os_tid = CurrentOsTid();
  r.context = static_cast<uint16_t>(ctx->index);
  r.comm_hash = ctx->comm_hash;
  r.rank = foreign ? d->rank : ctx->rank;
  slot.parent_handle = nullptr;
  slot.nvtx_range = 0;
  slot.gpu_min.store(UINT64_MAX, std::memory_order_relaxed);
  slot.gpu_max.store(0, std::memory_order_relaxed);
  int mask = s->mask.load(std::memory_order_relaxed);
  FillFields(r, d, kind);
  if (kind == Kind::kColl || kind == Kind::kP2p) r.bytes = PayloadBytes(r.datatype, r.count);
  if (kind == Kind::kKernelCh) ObserveGpuStamp(s, ctx, r.gpu_start, r.start_ns);
  if (kind == Kind::kKernelStep) ObserveGpuStamp(s, ctx, r.gpu_ready, r.start_ns);
  if (!foreign) AttachParent(s, &slot, kind, d->parentObj);
  // A Coll/P2p is done only when its GPU work is: with KernelCh on, one child per channel will
  // come, usually after this event's stop, so hold the slot for them now.
  uint32_t expected = 0;
  if ((kind == Kind::kColl || kind == Kind::kP2p) && (mask & ncclProfileKernelCh)) expected = r.nchannels;
  if (kind == Kind::kGroup || kind == Kind::kColl || kind == Kind::kP2p) slot.nvtx_range = s->nvtx.Start(r.func != nullptr ? r.func : "Group");
  slot.state.store(SlotState::Live(gen, expected), std::memory_order_release);
  *handle = EncodeHandle(ctx->index, kind, index, gen);
  return ncclSuccess;
}

ncclResult_t CoreStop(void* handle) {
  Session* s = g_session.load(std::memory_order_acquire);
  SlotRef ref;
  if (s == nullptr || handle == nullptr || !Resolve(s, handle, &ref)) return ncclSuccess;
  // Only the first stop of the current occupant counts: a double stop or a stale handle is ignored.
  if (!SlotState::MarkStopped(&ref.slot->state, ref.fields.generation)) return ncclSuccess;
  ref.slot->rec.stop_ns = NowMonotonicNs();
  s->nvtx.End(ref.slot->nvtx_range);
  ReleaseSlot(s, ref);
  return ncclSuccess;
}

ncclResult_t CoreRecord(void* handle, int state, const ncclProfilerEventStateArgs_v6_t* args) {
  Session* s = g_session.load(std::memory_order_acquire);
  SlotRef ref;
  if (s == nullptr || handle == nullptr || !Resolve(s, handle, &ref)) return ncclSuccess;
  if (!SlotState::IsLiveUnstopped(ref.slot->state.load(std::memory_order_acquire), ref.fields.generation)) {
    return ncclSuccess;
  }
  EventRecord& r = ref.slot->rec;
  switch (state) {
    case ncclProfilerKernelChStop:
      if (r.kind == Kind::kKernelCh && args != nullptr) {
        r.gpu_stop = args->kernelCh.pTimer;
        if (r.gpu_stop != 0) r.flags |= kFlagGpuStopSeen;
      }
      return ncclSuccess;
    case ncclProfilerKernelStepStop:
      if (r.kind == Kind::kKernelStep) {
        uint64_t stop = args != nullptr ? args->kernelStep.pTimer : 0;
        if (stop == 0) {
          r.flags |= kFlagAbandoned;  // the drain gave up waiting for this slice's stop
        } else {
          r.gpu_stop = stop;
          r.flags |= kFlagGpuStopSeen;
        }
      }
      return ncclSuccess;
    case ncclProfilerNetPluginUpdate:
      if (r.kind == Kind::kNetPlugin) ++r.value;
      return ncclSuccess;
    case ncclProfilerProxyCtrlAppendEnd:
      if (args != nullptr) r.value = args->proxyCtrl.appendedProxyOps;
      break;
    case ncclProfilerProxyStepSendWait:
    case ncclProfilerProxyStepRecvFlushWait:
      if (args != nullptr) r.bytes = args->proxyStep.transSize;
      break;
    default:
      break;
  }
  if (r.kind == Kind::kProxyStep && (r.flags & kFlagDirectionKnown) == 0) {
    bool send = state == ncclProfilerProxyStepSendGPUWait || state == ncclProfilerProxyStepSendWait ||
                state == ncclProfilerProxyStepSendPeerWait_v4;
    r.flags |= kFlagDirectionKnown | (send ? kFlagSend : 0);
  }
  uint64_t now = NowMonotonicNs();
  // SendPeerWait repeats on every retry; its first occurrence is the one that matters.
  for (int i = 0; i < r.nstates; ++i) {
    if (r.state_id[i] == state) return ncclSuccess;
  }
  if (r.nstates < kMaxStates && state >= 0 && state < 256) {
    r.state_id[r.nstates] = static_cast<uint8_t>(state);
    r.state_ns[r.nstates] = now;
    ++r.nstates;
  }
  return ncclSuccess;
}

ncclResult_t CoreFinalize(void* context) {
  std::lock_guard<std::mutex> lock(g_lifecycle);
  Session* s = g_session.load(std::memory_order_acquire);
  if (s == nullptr) return ncclSuccess;
  Context* ctx = LookupContext(s, context);
  if (ctx == nullptr || ctx->finalized.exchange(true)) return ncclSuccess;
  FlushIncomplete(s, ctx);
  if (--s->live_contexts > 0) return ncclSuccess;
  // Last communicator: events of proxy ops from other processes are closed too, the writer is
  // joined (NCCL unloads the library after this returns) and everything is freed.
  FlushIncomplete(s, ContextAt(s, kForeignContext));
  g_session.store(nullptr, std::memory_order_release);
  CloseSession(s);
  delete s;
  return ncclSuccess;
}

}  // namespace katrace
