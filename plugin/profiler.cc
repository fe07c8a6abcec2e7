// The profiler core: capture. Each callback validates its handle, keeps the pool slot's life state
// (holds, generations) and appends one compact record to the calling thread's capture buffer. It
// takes no shared lock, allocates nothing and formats nothing; the spool writer thread moves the
// buffers to disk and the exporter builds the trace at the end, with the whole run in view.
#include "plugin/profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "katrace/drain_counters.h"
#include "katrace/spool_format.h"
#include "plugin/capture/capture_triggers.h"
#include "plugin/capture/capture_window.h"
#include "plugin/capture/hang_watchdog.h"
#include "plugin/capture/host_clock.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/spool_writer.h"
#include "plugin/capture/start_record.h"
#include "plugin/capture/string_table.h"
#include "plugin/clock.h"
#include "plugin/config.h"
#include "plugin/event_pool.h"
#include "plugin/export/hang_report.h"
#include "plugin/flight_exports.h"
#include "plugin/handle_codec.h"
#include "plugin/logger.h"
#include "plugin/nvtx_sink.h"
#include "plugin/process_identity.h"
#include "plugin/session_export.h"
#include "plugin/slot_state.h"

namespace katrace {
namespace {

// Context slot 0 holds proxy ops that another process created (PXN): their context and parent
// pointers belong to that process and are never looked at.
constexpr uint32_t kForeignContext = 0;
// A finalized communicator's pools are freed this long after its finalize, by the spool writer
// thread: a callback that resolved a handle just before the finalize has long left by then.
constexpr uint64_t kRetireGraceNs = 200 * 1000 * 1000;
// Pools of finalized communicators waiting out their grace period. A job that creates
// communicators faster than that (sub-groups in a loop) waits at init once this is reached, so
// memory stays bounded however many communicators come and go.
constexpr size_t kRetiredBudgetBytes = 32u << 20;

struct Context {
  uint64_t serial = 0;
  uint32_t index = 0;
  uint64_t comm_hash = 0;
  int rank = 0;
  std::atomic<EventPool*> pools[kKindCount] = {};
  std::mutex pool_mu;  // only taken to create a pool, once per kind
  std::atomic<bool> finalized{false};
  // The serial of the communicator finalized last in this slot, so an event that still names it
  // is counted as lost rather than ignored (0: none).
  std::atomic<uint64_t> retired_serial{0};
  // The slot may take a new communicator: never used, or retired and its pools freed.
  std::atomic<bool> reusable{true};
};

struct RetiredPools {
  uint64_t since_ns;
  Context* ctx;
  std::vector<EventPool*> pools;
  size_t bytes;
};

// A kStateUnrecordedChildren notice that the completing thread could not write (it has no capture
// buffer: beyond KATRACE_BUFFER_MB). The next finalize writes it from its own thread.
struct PendingNotice {
  uint64_t id;
  uint32_t count;
  uint16_t context;
  Kind kind;
};
constexpr size_t kMaxPendingNotices = 256;

struct Session {
  uint64_t serial = 0;  // distinguishes this session's thread buffers from an earlier one's
  Config config;
  int os_pid = 0;
  int rank = 0;
  std::string host;
  std::string trace_path;
  uint64_t base_realtime_ns = 0;
  uint64_t base_monotonic_ns = 0;
  std::unique_ptr<Context[]> context_storage{new Context[kMaxContexts]};
  std::atomic<Context*> contexts[kMaxContexts] = {};
  int live_contexts = 0;     // under g_lifecycle
  uint64_t next_serial = 1;  // under g_lifecycle
  int* nccl_mask = nullptr;  // NCCL's process-global activation mask (it re-reads it per operation)
  std::atomic<int> config_mask{0};
  std::atomic<bool> drop_warned[kKindCount] = {};
  std::atomic<bool> after_finalize_warned{false};
  std::atomic<bool> budget_warned{false};
  std::atomic<uint64_t> drain[kDrainCounterCount] = {};  // kDrainCounterFields order
  CaptureCounters counters;
  StringTable strings;
  AppendPolicy policy;
  CaptureWindow window;      // configured before the first callback, then read-only but its atomics
  CaptureTriggers triggers;  // the writer thread's, after StartSession
  std::unique_ptr<SpoolWriter> spool;
  bool spooling = false;
  std::unique_ptr<FlightExports> flight_exports;  // flight mode: dumps become traces in the background
  std::mutex notices_mu;  // cold: taken only when a notice found no buffer
  PendingNotice pending_notices[kMaxPendingNotices];  // under notices_mu
  size_t num_pending_notices = 0;                     // under notices_mu
  std::mutex retire_mu;
  std::vector<RetiredPools> retired;  // under retire_mu
  size_t retired_bytes = 0;           // under retire_mu
  NvtxSink nvtx;
  // KATRACE_HANG_TIMEOUT: read-only after the start, so callbacks pay one predictable branch when
  // it is off.
  bool watchdog_on = false;
  HangWatchdog watchdog;
  // The report of a hang is built off the writer thread; one at a time (the writer's thread only
  // starts it, the close joins it).
  std::thread hang_reporter;
  std::atomic<bool> hang_reporting{false};
};

// Init and finalize are rare and may come from several threads at once; callbacks never lock.
std::mutex g_lifecycle;
std::atomic<Session*> g_session{nullptr};
std::string g_last_output_path;  // under g_lifecycle
std::atomic<uint64_t> g_next_id_block{0};
uint64_t g_session_serial = 0;  // under g_lifecycle
// A forked child's copy of the plugin does nothing: its trace belongs to the parent.
std::atomic<bool> g_forked_child{false};
pthread_key_t g_thread_exit_key;
bool g_thread_exit_key_made = false;  // under g_lifecycle

// The calling thread's capture buffer in the current session. initial-exec TLS: one load from
// the thread pointer, no __tls_get_addr on the hot path.
struct ThreadCapture {
  uint64_t session_serial;
  ThreadBuffer* buffer;
  uint32_t os_tid;
};
__attribute__((tls_model("initial-exec"))) thread_local ThreadCapture t_capture = {0, nullptr, 0};

uint32_t CurrentOsTid() {
  if (t_capture.os_tid == 0) t_capture.os_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_capture.os_tid;
}

// Runs when a thread that captured exits: its buffer is drained and reused by a later thread.
void OnThreadExit(void*) {
  if (g_forked_child.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_lifecycle);
  Session* s = g_session.load(std::memory_order_acquire);
  if (s != nullptr && s->spooling && t_capture.session_serial == s->serial && t_capture.buffer != nullptr) {
    s->spool->Orphan(t_capture.buffer);
  }
  t_capture.buffer = nullptr;
  t_capture.session_serial = 0;
}

// The first call of a thread in a session: takes a buffer from the writer (a lock, once).
__attribute__((noinline)) ThreadBuffer* AcquireBufferForThisThread(Session* s) {
  ThreadBuffer* b = s->spooling ? s->spool->Acquire(CurrentOsTid()) : nullptr;
  t_capture.buffer = b;
  t_capture.session_serial = s->serial;
  if (b != nullptr) {
    pthread_setspecific(g_thread_exit_key, reinterpret_cast<void*>(1));
  } else if (s->spooling) {
    WarnOnce(&s->budget_warned, "the capture buffer budget (KATRACE_BUFFER_MB) is spent by " +
                          std::to_string(s->config.buffer_budget_bytes / s->config.thread_buffer_bytes) +
                          " threads; events of further threads are dropped and counted");
  }
  return b;
}

inline ThreadBuffer* BufferForThisThread(Session* s) {
  if (__builtin_expect(t_capture.session_serial == s->serial, 1)) return t_capture.buffer;
  return AcquireBufferForThisThread(s);
}

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

inline Context* ContextAt(Session* s, uint32_t index) {
  return index < kMaxContexts ? s->contexts[index].load(std::memory_order_acquire) : nullptr;
}

__attribute__((always_inline)) inline Context* LookupContext(Session* s, void* value) {
  uint32_t index = 0;
  uint64_t serial = 0;
  if (value == nullptr || !DecodeContext(value, &index, &serial) || index == kForeignContext) return nullptr;
  Context* ctx = ContextAt(s, index);
  return ctx != nullptr && (ctx->serial & kContextSerialMask) == serial ? ctx : nullptr;
}

// The first event of a kind in a communicator: makes its pool (a lock, once).
__attribute__((noinline)) EventPool* MakePool(Session* s, Context* ctx, Kind kind) {
  int k = static_cast<int>(kind);
  std::lock_guard<std::mutex> lock(ctx->pool_mu);
  EventPool* pool = ctx->pools[k].load(std::memory_order_relaxed);
  if (pool == nullptr) {
    // Generations start at a per-context offset so that a handle of an earlier context that used
    // the same context slot does not match.
    try {
      pool = new EventPool(s->config.pool_size[k], static_cast<uint32_t>(ctx->serial * 0x9e3779b1u) & kGenerationMask);
    } catch (const std::bad_alloc&) {
      return nullptr;  // no exception crosses the C ABI: the caller counts a drop
    }
    ctx->pools[k].store(pool, std::memory_order_release);
  }
  return pool;
}

inline EventPool* GetPool(Session* s, Context* ctx, Kind kind) {
  EventPool* pool = ctx->pools[static_cast<int>(kind)].load(std::memory_order_acquire);
  return __builtin_expect(pool != nullptr, 1) ? pool : MakePool(s, ctx, kind);
}

struct SlotRef {
  Context* ctx = nullptr;
  EventPool* pool = nullptr;
  EventSlot* slot = nullptr;
  uint32_t index = 0;
  HandleFields fields{};
};

// Resolves a handle to its slot without trusting it: every field is range-checked. An untracked
// handle resolves to nothing.
__attribute__((always_inline)) inline bool Resolve(Session* s, const void* handle, SlotRef* out) {
  if (!DecodeHandle(handle, &out->fields) || out->fields.slot == kUntrackedSlot) return false;
  out->ctx = ContextAt(s, out->fields.context);
  if (out->ctx == nullptr) return false;
  out->pool = out->ctx->pools[static_cast<int>(out->fields.kind)].load(std::memory_order_acquire);
  if (out->pool == nullptr || out->fields.slot >= out->pool->size()) return false;
  out->index = out->fields.slot;
  out->slot = &out->pool->slot(out->index);
  return out->slot->tag == kSlotTag;
}

void ReleaseSlot(Session* s, const SlotRef& ref);

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

// Writes the notices threads without a buffer left behind (finalize and exit, cold).
void WritePendingNotices(Session* s) {
  std::lock_guard<std::mutex> lock(s->notices_mu);
  for (size_t i = 0; i < s->num_pending_notices; ++i) WriteNotice(s, s->pending_notices[i]);
  s->num_pending_notices = 0;
}

// Gives the slot back once the event and all its children are done. Runs on whichever thread
// released the last hold; no other thread touches the slot until it is acquired again.
void Complete(Session* s, EventPool* pool, uint32_t index, uint16_t context, Kind kind) {
  EventSlot& slot = pool->slot(index);
  // The export waits for every KernelCh a Coll/P2p announced; those dropped here are named once,
  // when nothing can be added any more. Never dropped while the writer runs: without it the
  // export would write a complete Coll as incomplete.
  const uint32_t unrecorded = slot.unrecorded_awaited.load(std::memory_order_relaxed);
  if (unrecorded != 0 && slot.recorded && !WriteNotice(s, {slot.id, unrecorded, context, kind})) {
    std::lock_guard<std::mutex> lock(s->notices_mu);
    if (s->num_pending_notices < kMaxPendingNotices) {
      s->pending_notices[s->num_pending_notices++] = {slot.id, unrecorded, context, kind};
    }
  }
  SlotRef parent;
  bool has_parent = slot.parent_handle != nullptr && Resolve(s, slot.parent_handle, &parent);
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

// A task's activation mask as NCCL snapshotted it, packed into 17 bits for the slot's task_mask
// word and for the generation field of an untracked handle (which names no slot): NCCL's 15
// bits, the KernelStep bit, and whether the event awaits KernelCh children.
constexpr uint32_t kPackedKernelStep = 1u << 15;
constexpr uint32_t kPackedAwaitsKernelCh = 1u << 16;
constexpr uint64_t kPackedMaskBits = (1u << 17) - 1;

uint32_t PackMask(int mask, bool awaits_kernel_ch) {
  return (static_cast<uint32_t>(mask) & 0x7fff) | ((mask & ncclProfileKernelStep) ? kPackedKernelStep : 0) |
         (awaits_kernel_ch ? kPackedAwaitsKernelCh : 0);
}

int UnpackMask(uint32_t packed) {
  return static_cast<int>(packed & 0x7fff) | ((packed & kPackedKernelStep) ? ncclProfileKernelStep : 0);
}

// NCCL reads its mask once per API call and copies it into the task: every event of that task
// (Coll/P2p, ProxyOp, ProxyStep, NetPlugin, KernelCh, KernelStep, KernelLaunch) follows that
// snapshot, however the mask changed since. Only ProxyCtrl and CE events read it afresh.
bool FollowsTaskMask(Kind kind) {
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

// The packed mask of the task |parent_obj| belongs to (|parent|: its slot, resolved by the caller,
// or null); false when the parent is not known (no parent, a foreign value, or a slot that has
// since held another event).
bool ParentTaskMask(void* parent_obj, const SlotRef* parent, uint32_t* packed) {
  HandleFields f;
  if (parent_obj == nullptr || !DecodeHandle(parent_obj, &f)) return false;
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
void ForgoAnnouncedChild(Session* s, void* parent_obj) {
  SlotRef p;
  if (parent_obj == nullptr || !Resolve(s, parent_obj, &p)) return;
  if (!SlotState::TryHold(&p.slot->state, p.fields.generation, false)) return;
  bool last = false;
  if (SlotState::ForgoExpected(&p.slot->state, p.fields.generation, &last)) {
    p.slot->unrecorded_awaited.fetch_add(1, std::memory_order_relaxed);  // ordered by the release below
  }
  ReleaseSlot(s, p);
}

// Links a new event to its parent (|parent|: the slot |parent_obj| resolved to, or null): takes a
// hold on a live parent (so it cannot complete first) and copies what the child inherits, or, if
// the parent already completed, keeps its record id from the slot's tombstone.
// |*took_announced|: the child took one of the KernelCh holds its parent announced.
uint16_t AttachParent(EventSlot* child, Kind kind, void* parent_obj, const SlotRef* parent, uint64_t* parent_id,
                      bool* took_announced) {
  *parent_id = 0;
  *took_announced = false;
  if (parent == nullptr) return 0;
  const SlotRef& p = *parent;
  if (SlotState::TryHold(&p.slot->state, p.fields.generation, kind == Kind::kKernelCh, took_announced)) {
    *parent_id = p.slot->id;
    child->parent_handle = parent_obj;
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

void HandleDrainReport(Session* s, const ncclProfilerKernelStepDescr_t& d) {
  const DrainCounters report = DecodeDrainReport(d);
  for (int i = 0; i < kDrainCounterCount; ++i) {
    s->drain[i].fetch_add(report.*kDrainCounterFields[i].member, std::memory_order_relaxed);
  }
}

// An event for a communicator that was already finalized (NCCL's shared proxy thread can still
// report for it) cannot be recorded: it is counted as lost against its kind, never ignored.
void CountIfFinalized(Session* s, void* context, Kind kind) {
  uint32_t index = 0;
  uint64_t serial = 0;
  if (context == nullptr || !DecodeContext(context, &index, &serial) || index == kForeignContext ||
      index >= kMaxContexts || serial == 0 ||
      s->context_storage[index].retired_serial.load(std::memory_order_relaxed) != serial) {
    return;
  }
  s->counters.dropped[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
  WarnOnce(&s->after_finalize_warned,
           "events for an already finalized communicator cannot be recorded: they are dropped and counted in the trace");
}

// Children copy facts from these parents (func, channel, peer, direction), so they keep a slot
// even when not recorded themselves.
bool PassesFactsToChildren(Kind kind) {
  return kind == Kind::kColl || kind == Kind::kP2p || kind == Kind::kProxyOp;
}

uint64_t RandomSerialBase() {
  uint64_t r = 0;
  if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(r))) {
    r = NowRealtimeNs() ^ (static_cast<uint64_t>(getpid()) << 32);
  }
  return (r & ((1ull << 40) - 1)) | 1;
}

void FreeRetiredPools(Session* s, uint64_t older_than_ns) {
  std::vector<RetiredPools> done;
  {
    std::lock_guard<std::mutex> lock(s->retire_mu);
    auto keep = std::partition(s->retired.begin(), s->retired.end(),
                               [&](const RetiredPools& r) { return r.since_ns > older_than_ns; });
    done.assign(std::make_move_iterator(keep), std::make_move_iterator(s->retired.end()));
    s->retired.erase(keep, s->retired.end());
    for (const RetiredPools& r : done) s->retired_bytes -= r.bytes;
  }
  for (RetiredPools& r : done) {
    for (EventPool* p : r.pools) delete p;
    r.ctx->reusable.store(true, std::memory_order_release);
  }
}

void FillCounters(Session* s, spool::CountersBody* c) {
  for (int k = 0; k < kKindCount && k < spool::kCounterKinds; ++k) {
    c->dropped[k] = s->counters.dropped[k].load(std::memory_order_relaxed);
  }
  c->waits = s->counters.waits.load(std::memory_order_relaxed);
  for (int i = 0; i < kDrainCounterCount; ++i) {
    c->drain.*kDrainCounterFields[i].member = s->drain[i].load(std::memory_order_relaxed);
  }
  c->strings_unnamed = s->strings.unnamed();
}

// In a child forked while a session runs, the session is the parent's copy: its writer thread
// does not exist there and its files are the parent's. The child forgets it (without freeing: a
// callback of the child may be using it) and stays silent for good. A child forked while nothing
// was being profiled is a process like any other.
void ForkChild() {
  if (g_session.load(std::memory_order_acquire) == nullptr) return;
  g_forked_child.store(true, std::memory_order_relaxed);
  g_session.store(nullptr, std::memory_order_release);
}

// Writer thread, every pass: on a hang, makes everything captured readable and has the report
// built on a thread of its own (reading a long spool takes a while; the writer must go on
// draining meanwhile). The job goes on whatever the report finds.
// Coll/P2p tasks holding a slot (started, not completed), counted from the pools on the writer
// thread so the callbacks keep no shared counter; |enough| stops the count early. A pool read here
// cannot be freed meanwhile: the writer thread frees retired pools itself, and others only after
// the grace period.
int64_t TasksInFlight(Session* s, int64_t enough) {
  int64_t n = 0;
  for (uint32_t i = 1; i < kMaxContexts && n < enough; ++i) {
    Context* ctx = ContextAt(s, i);
    if (ctx == nullptr) continue;
    for (Kind kind : {Kind::kColl, Kind::kP2p}) {
      EventPool* pool = ctx->pools[static_cast<int>(kind)].load(std::memory_order_acquire);
      if (pool == nullptr) continue;
      for (uint32_t k = 0; k < pool->size() && n < enough; ++k) {
        const uint64_t w = pool->slot(k).state.load(std::memory_order_relaxed);
        if ((w & SlotState::kLive) && SlotState::Holds(w) > 0) ++n;
      }
    }
  }
  return n;
}

void CheckForHang(Session* s) {
  HangSighting sighting;
  const uint64_t now_ns = NowMonotonicNs();
  // While the last report is still being written the next check waits, so no hang goes unreported.
  if (!s->watchdog.Due(now_ns) || s->hang_reporting.load(std::memory_order_acquire)) return;
  if (!s->watchdog.Check(NowTicks(), now_ns, TasksInFlight(s, 1) > 0, &sighting)) return;
  if (s->hang_reporter.joinable()) s->hang_reporter.join();
  HangReportInput in;
  in.spool_path = s->spool->DumpNow("hang");
  in.report_path = s->trace_path + ".hang.json";
  in.timeout_ns = s->config.hang_timeout_ns;
  in.last_progress_monotonic_ns = sighting.last_progress_monotonic_ns;
  in.in_flight = TasksInFlight(s, INT64_MAX);
  in.detected_monotonic_ns = NowMonotonicNs();
  in.detected_realtime_ns = NowRealtimeNs();
  s->hang_reporting.store(true, std::memory_order_release);
  try {
    s->hang_reporter = std::thread([s, in] {
      HangReportResult r = WriteHangReport(in);
      if (!r.summary.empty()) {
        fputs(r.summary.c_str(), stderr);
      } else {
        fprintf(stderr, "katrace: a hang was detected but its report could not be built (%s)\n", r.message.c_str());
      }
      s->hang_reporting.store(false, std::memory_order_release);
    });
  } catch (const std::system_error&) {
    s->hang_reporting.store(false, std::memory_order_release);
    LogWarn("a hang was detected but no thread could be started to report it");
  }
}

Session* StartSession(const InitArgs& a) {
  auto s = std::make_unique<Session>();
  std::vector<std::string> warnings;
  s->config = ReadConfig([](const char* n) { return getenv(n); },
                         [&](const std::string& w) { warnings.push_back(w); });
  for (const std::string& w : warnings) LogWarn(w);
  if (!g_thread_exit_key_made) {
    g_thread_exit_key_made = pthread_key_create(&g_thread_exit_key, OnThreadExit) == 0;
    pthread_atfork(nullptr, nullptr, ForkChild);
  }
  if (g_session_serial == 0) g_session_serial = RandomSerialBase();
  s->serial = ++g_session_serial;
  s->next_serial = RandomSerialBase();
  std::string clock_note;
  g_clock_source = ChooseClockSource(s->config.clock, &clock_note);
  if (!clock_note.empty()) LogWarn(clock_note);
  s->os_pid = getpid();
  s->host = HostName();
  if (!LauncherRank(&s->rank)) s->rank = a.rank;
  // The realtime read sits between two monotonic reads: the midpoint is the best estimate of the
  // same instant, and the realtime prior of the GPU clock placement depends on it.
  uint64_t mono_before = NowMonotonicNs();
  s->base_realtime_ns = NowRealtimeNs();
  s->base_monotonic_ns = mono_before + (NowMonotonicNs() - mono_before) / 2;
  s->trace_path = SessionTracePath(ExpandOutputTemplate(s->config.output, s->rank, s->os_pid, s->host), s->os_pid,
                                   &g_last_output_path);
  s->nvtx.Init(s->config.nvtx);
  int mask = s->config.mask;
  // ABI v4 has no API events: its Group event is the host-side parent users expect to see.
  if (!s->config.mask_from_env && a.abi_version == 4) mask |= ncclProfileGroup;
  s->config_mask.store(mask & a.mask_allowed);
  s->window.Configure(s->config, s->base_monotonic_ns, a.abi_version == 4 ? Kind::kGroup : Kind::kGroupApi);
  s->triggers.Start(s->config, &s->window);

  SpoolWriterOptions options;
  options.buffer_bytes = s->config.thread_buffer_bytes;
  options.budget_bytes = s->config.buffer_budget_bytes;
  options.compress = s->config.compress_spool;
  options.flight = s->config.flight;
  options.flight_bytes = s->config.flight_bytes;
  options.flight_dump_at_exit = s->config.flight_dump_at_exit;
  options.flight_dump_on_crash = s->config.flight_dump_on_crash;
  Session* raw = s.get();
  s->spool = std::make_unique<SpoolWriter>(
      options, [raw](spool::CountersBody* c) { FillCounters(raw, c); },
      [raw] {
        const uint64_t now = NowMonotonicNs();
        FreeRetiredPools(raw, now - kRetireGraceNs);
        raw->triggers.Poll(now, raw->spool.get());
        if (raw->watchdog_on) CheckForHang(raw);
      });
  if (s->config.flight) {
    s->flight_exports = std::make_unique<FlightExports>(s->config);
    FlightExports* exports = s->flight_exports.get();
    s->spool->SetDumpListener([exports](const std::string& spool, const std::string& trace) { exports->Submit(spool, trace); });
  }
  spool::ProcessBody p{};
  int launcher_rank = -1;
  p.rank = LauncherRank(&launcher_rank) ? launcher_rank : -1;
  p.os_pid = s->os_pid;
  p.base_realtime_ns = s->base_realtime_ns;
  p.base_monotonic_ns = s->base_monotonic_ns;
  p.clock_source = g_clock_source;
  p.mask = s->config_mask.load();
  // Armed before the writer starts: its periodic hook reads it from then on.
  if (s->config.hang_timeout_ns != 0) {
    s->watchdog.Arm(s->config.hang_timeout_ns, NowTicks(), NowMonotonicNs());
    s->watchdog_on = true;
  }
  std::string note, error;
  s->spooling = s->spool->Start(s->trace_path, p, s->host, &note, &error);
  if (!note.empty()) LogWarn(note);
  if (!s->spooling) LogWarn(error + "; nothing is recorded, the job goes on");
  s->policy.drop_when_full = s->config.drop_when_full;
  s->policy.counters = &s->counters;
  static const std::atomic<bool> kNotRunning{false};
  s->policy.writer_running = s->spooling ? s->spool->running_flag() : &kNotRunning;

  Context& foreign = s->context_storage[kForeignContext];
  foreign.index = kForeignContext;
  foreign.reusable.store(false);
  s->contexts[kForeignContext].store(&foreign, std::memory_order_release);
  return s.release();
}

// Claims every event still holding a slot of |ctx| (events that never stopped, or whose children
// never came) so their parents in other communicators are released. Their records stay as they
// are: the exporter writes an event without a stop as incomplete.
void ClaimLiveSlots(Session* s, Context* ctx) {
  for (int k = 0; k < kKindCount; ++k) {
    EventPool* pool = ctx->pools[k].load(std::memory_order_acquire);
    if (pool == nullptr) continue;
    for (uint32_t i = 0; i < pool->size(); ++i) {
      if (SlotState::TryClaimLive(&pool->slot(i).state)) Complete(s, pool, i, static_cast<uint16_t>(ctx->index), static_cast<Kind>(k));
    }
  }
}

// The communicator is gone: no lookup finds it any more, and its pools are freed after a grace
// period, after which the slot can take a new communicator.
void RetireContext(Session* s, Context* ctx) {
  ClaimLiveSlots(s, ctx);
  WritePendingNotices(s);
  ctx->retired_serial.store(ctx->serial & kContextSerialMask, std::memory_order_relaxed);
  ThreadBuffer* b = s->spooling ? BufferForThisThread(s) : nullptr;
  spool::CommEndBody end{NowTicks()};
  AppendRecord(b, s->policy, spool::RecordType::kCommEnd, 0, static_cast<uint16_t>(ctx->index), 0, end);
  s->contexts[ctx->index].store(nullptr, std::memory_order_release);
  RetiredPools r{NowMonotonicNs(), ctx, {}, 0};
  for (auto& p : ctx->pools) {
    EventPool* pool = p.exchange(nullptr, std::memory_order_acq_rel);
    if (pool != nullptr) {
      r.pools.push_back(pool);
      r.bytes += pool->bytes();
    }
  }
  std::lock_guard<std::mutex> lock(s->retire_mu);
  s->retired_bytes += r.bytes;
  s->retired.push_back(std::move(r));
}

// A flight session writes nothing at its end unless KATRACE_FLIGHT_AT_EXIT=1; the dumps made
// while it ran are exported first (in the background, waited for here).
void CloseFlightSession(Session* s) {
  if (s->flight_exports) s->flight_exports->Drain();
  const std::string& spool = s->spool->exit_dump_spool();
  if (spool.empty()) {
    FlightRingStats st = s->spool->flight_stats();
    if (s->config.flight_dump_at_exit) return;  // the failed dump was reported
    fprintf(stderr,
            "katrace: flight recorder: the session ended with %llu blocks (%.1f MiB) in memory, %llu older ones "
            "evicted; nothing written (KATRACE_FLIGHT_AT_EXIT=1 writes them at exit)\n",
            static_cast<unsigned long long>(st.held_blocks), static_cast<double>(st.held_bytes) / (1 << 20),
            static_cast<unsigned long long>(st.evicted_blocks));
    return;
  }
  if (ExportFlightDump(spool, s->spool->exit_dump_trace(), s->config, true)) unlink(spool.c_str());
}

// Ends the capture and builds the trace (unless KATRACE_EXPORT=off). One line on stderr says
// where the trace is and what was lost, whether or not NCCL's logger prints.
void CloseSession(Session* s) {
  if (s->spooling) s->spool->Close();
  s->triggers.Stop();
  // The writer is gone, so no new report starts; one still reading the spool finishes first.
  if (s->hang_reporter.joinable()) s->hang_reporter.join();
  if (!s->spooling) return;
  // The hang report has read its dump: the flight exports may now remove the dumps' spools.
  if (s->spool->flight()) {
    CloseFlightSession(s);
    return;
  }
  if (s->spool->uncompressed_blocks() != 0) {
    LogInfo("the spool writer fell behind the capture " + std::to_string(s->spool->uncompressed_blocks()) +
            " times and wrote those blocks uncompressed (" + std::to_string(s->spool->uncompressed_bytes() >> 20) +
            " MiB) rather than make NCCL's threads wait");
  }
  uint64_t dropped = 0;
  for (auto& d : s->counters.dropped) dropped += d.load();
  std::string spool_path = s->spool->path();
  if (!s->config.export_trace) {
    fprintf(stderr, "katrace: capture kept in %s (KATRACE_EXPORT=off, %llu events lost); build the trace with: katrace-export %s\n",
            spool_path.c_str(), static_cast<unsigned long long>(dropped), spool_path.c_str());
    return;
  }
  SessionExport job;
  job.spool = spool_path;
  job.trace = s->trace_path;
  if (ExportSessionSpool(job, s->config) && !s->config.keep_spool) unlink(spool_path.c_str());
}

// Many jobs exit without destroying their communicators, so NCCL never calls finalize. The
// capture is then closed and the trace built when the process exits (or the library is unloaded
// first). The session is not freed here, since threads NCCL never joined may still be inside a
// callback that holds it.
std::atomic<Session*> g_session_closed_at_exit{nullptr};  // kept reachable, never freed

struct ExitFlush {
  ~ExitFlush() {
    if (g_forked_child.load()) return;
    std::lock_guard<std::mutex> lock(g_lifecycle);
    if (g_thread_exit_key_made) {
      pthread_key_delete(g_thread_exit_key);
      g_thread_exit_key_made = false;
    }
    Session* s = g_session.exchange(nullptr, std::memory_order_acq_rel);
    if (s == nullptr) return;
    g_session_closed_at_exit.store(s);
    // NCCL may be tearing itself down too: report on stderr, not through its logger.
    ClearNcclLogger();
    WritePendingNotices(s);
    CloseSession(s);
  }
};
ExitFlush g_exit_flush;

ncclResult_t InitLocked(void** context, const InitArgs& a);

}  // namespace

ncclResult_t CoreInit(void** context, const InitArgs& a) {
  if (context == nullptr) return ncclSuccess;
  *context = nullptr;
  if (g_forked_child.load(std::memory_order_relaxed)) return ncclSuccess;
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

// A free context slot for a new communicator. When communicators come and go faster than the
// retirement grace period, waits (at most about one grace period) for retired ones.
Context* TakeContextSlot(Session* s) {
  for (int attempt = 0; attempt < 40; ++attempt) {
    bool over_budget;
    {
      std::lock_guard<std::mutex> lock(s->retire_mu);
      over_budget = s->retired_bytes > kRetiredBudgetBytes;
    }
    if (!over_budget) {
      for (uint32_t i = 1; i < kMaxContexts; ++i) {
        Context* c = &s->context_storage[i];
        if (c->reusable.load(std::memory_order_acquire)) {
          c->reusable.store(false, std::memory_order_relaxed);
          return c;
        }
      }
    }
    usleep(10 * 1000);
    FreeRetiredPools(s, NowMonotonicNs() - kRetireGraceNs);
  }
  return nullptr;
}

ncclResult_t InitLocked(void** context, const InitArgs& a) {
  Session* s = g_session.load(std::memory_order_acquire);
  if (s == nullptr) {
    s = StartSession(a);
    g_session.store(s, std::memory_order_release);
  }
  Context* ctx = TakeContextSlot(s);
  if (ctx == nullptr) {
    static std::atomic<bool> warned{false};
    WarnOnce(&warned, "more than " + std::to_string(kMaxContexts - 1) +
                          " live communicators; further ones are not profiled, the job goes on");
    return ncclSuccess;
  }
  ctx->serial = s->next_serial++;
  ctx->index = static_cast<uint32_t>(ctx - s->context_storage.get());
  ctx->comm_hash = a.comm_hash;
  ctx->rank = a.rank;
  ctx->finalized.store(false, std::memory_order_relaxed);
  if (s->spooling) {
    std::string name = a.comm_name != nullptr ? std::string(a.comm_name).substr(0, 1024) : "";
    spool::CommBody body{};
    body.comm_hash = a.comm_hash;
    body.ticks = NowTicks();
    body.rank = a.rank;
    body.nranks = a.nranks;
    body.nnodes = a.nnodes;
    body.abi_version = a.abi_version;
    body.cuda_device = CurrentCudaDevice();
    body.name_length = static_cast<uint32_t>(name.size());
    AppendPolicy waiting = s->policy;
    waiting.drop_when_full = false;
    AppendRecord(BufferForThisThread(s), waiting, spool::RecordType::kComm, 0, static_cast<uint16_t>(ctx->index), 0,
                 body, name.data(), name.size());
  }
  s->contexts[ctx->index].store(ctx, std::memory_order_release);
  *context = EncodeContext(ctx->index, ctx->serial);
  ++s->live_contexts;
  // The mask is process-global and NCCL re-reads it at every operation. Set it on the first
  // communicator only, so a value the application changed later is not reset by a new one.
  int mask = s->config_mask.load();
  if (a.mask != nullptr) {
    if (s->nccl_mask == nullptr) s->nccl_mask = a.mask;
    if (s->live_contexts == 1) __atomic_store_n(a.mask, mask, __ATOMIC_RELAXED);
  }
  LogInfo("profiling comm " + std::to_string(a.comm_hash) + " rank " + std::to_string(a.rank) + "/" +
          std::to_string(a.nranks) + " (ABI v" + std::to_string(a.abi_version) + ", mask " + std::to_string(mask) +
          ", trace " + s->trace_path + ")");
  return ncclSuccess;
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
int LiveMask(const Session* s) {
  return s->nccl_mask != nullptr ? __atomic_load_n(s->nccl_mask, __ATOMIC_RELAXED)
                                 : s->config_mask.load(std::memory_order_relaxed);
}

// A start lost because its pool is full (or could not be made): counted, and said once.
__attribute__((noinline, cold)) void DropForFullPool(Session* s, Kind kind, bool out_of_memory) {
  const int k = static_cast<int>(kind);
  s->counters.dropped[k].fetch_add(1, std::memory_order_relaxed);
  WarnOnce(&s->drop_warned[k],
           std::string("the ") + kKindInfo[k].name + " pool (" + std::to_string(s->config.pool_size[k]) +
               " live events per communicator) is full" + (out_of_memory ? " (out of memory)" : "") +
               ": further " + kKindInfo[k].name + " events are dropped and counted in the trace; raise KATRACE_POOL_" +
               kKindInfo[k].pool_env);
}

// A start that takes a slot: the event is recorded, or passes facts to its children. Inlined into
// CoreStart: out of line, the untracked starts saved 13 instructions each and the tracked ones
// paid 30 more.
__attribute__((always_inline)) inline ncclResult_t StartTracked(Session* s, Context* ctx, Kind kind, int mask,
                                                                bool record, bool outside, bool foreign,
                                                                const SlotRef* parent, void** handle,
                                                                const ncclProfilerEventDescr_v6_t* d) {
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
  slot.parent_handle = nullptr;
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
  // Published with the state below; read by children through their handle, also once completed.
  slot.task_mask.store((static_cast<uint64_t>(gen) << 40) | PackMask(mask, expected != 0), std::memory_order_relaxed);
  spool::StartBody start{slot.id, 0, ticks};
  bool took_announced = false;
  flags |= AttachParent(&slot, kind, d->parentObj, parent, &start.parent_id, &took_announced);
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
    if (Resolve(s, slot.parent_handle, &p)) p.slot->unrecorded_awaited.fetch_add(1, std::memory_order_relaxed);
  }
  slot.state.store(SlotState::Live(gen, expected), std::memory_order_release);
  *handle = EncodeHandle(ctx->index, kind, index, gen, outside);
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
  bool foreign = kind == Kind::kProxyOp && d->proxyOp.pid != s->os_pid;
  // The parent's slot, resolved once for everything below (a foreign parent is not ours).
  SlotRef parent_slot;
  const SlotRef* parent =
      !foreign && d->parentObj != nullptr && Resolve(s, d->parentObj, &parent_slot) ? &parent_slot : nullptr;
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
  int k = static_cast<int>(kind);
  // The mask NCCL used for this event's task: the parent's snapshot, else the live mask (NCCL
  // has just read it for an API call, ProxyCtrl or CE event).
  uint32_t parent_mask = 0;
  const int mask = !foreign && FollowsTaskMask(kind) && ParentTaskMask(d->parentObj, parent, &parent_mask)
                       ? UnpackMask(parent_mask)
                       : LiveMask(s);
  // The capture window's verdict: the parent's, read from its handle, whatever became of its
  // slot since; a root (no parent of ours) takes it now.
  bool outside = false;
  if (s->window.active()) {
    HandleFields parent_fields;
    outside = !foreign && d->parentObj != nullptr && DecodeHandle(d->parentObj, &parent_fields)
                  ? parent_fields.outside
                  : !AdmitRoot(s, kind);
    if (kind == Kind::kColl || kind == Kind::kP2p) s->window.CountCollective(!outside);
  }
  bool record = !outside && (mask & static_cast<int>(kKindInfo[k].type_bit)) != 0;
  if (!record && !PassesFactsToChildren(kind)) {
    // Its children still learn the task's mask and the window verdict from the handle.
    *handle = EncodeHandle(ctx->index, kind, kUntrackedSlot, PackMask(mask, false), outside);
    return ncclSuccess;
  }
  return StartTracked(s, ctx, kind, mask, record, outside, foreign, parent, handle, d);
}

ncclResult_t CoreStop(void* handle) {
  if (NamesNoSlot(handle)) return ncclSuccess;
  Session* s = g_session.load(std::memory_order_acquire);
  SlotRef ref;
  if (s == nullptr || handle == nullptr || !Resolve(s, handle, &ref)) return ncclSuccess;
  uint64_t ticks = NowTicks();
  // Only the first stop of the current occupant counts: a double stop or a stale handle is ignored.
  bool last = false;
  if (!SlotState::StopAndRelease(&ref.slot->state, ref.fields.generation, &last)) return ncclSuccess;
  // The slot is still ours to read: its children hold it, or this thread completes it below.
  const bool recorded = ref.slot->recorded;
  const uint64_t id = ref.slot->id;
  const uint64_t nvtx_range = ref.slot->nvtx_range;
  if (s->watchdog_on && StopMeansProgress(ref.fields.kind)) s->watchdog.NoteProgress(ticks);
  if (recorded) {
    spool::StopBody body{id, ticks};
    AppendRecord(BufferForThisThread(s), s->policy, spool::RecordType::kStop, static_cast<int>(ref.fields.kind),
                 static_cast<uint16_t>(ref.fields.context), 0, body);
  }
  if (nvtx_range != 0) s->nvtx.End(nvtx_range);
  if (last) Complete(s, ref.pool, ref.index, static_cast<uint16_t>(ref.fields.context), ref.fields.kind);
  return ncclSuccess;
}

ncclResult_t CoreRecord(void* handle, int state, const ncclProfilerEventStateArgs_v6_t* args) {
  if (NamesNoSlot(handle)) return ncclSuccess;
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
  spool::StateBody body{ref.slot->id, NowTicks(), state, 0, 0};
  if (args != nullptr) {
    switch (state) {
      case ncclProfilerKernelChStop: body.value = args->kernelCh.pTimer; break;
      case ncclProfilerKernelStepStop: body.value = args->kernelStep.pTimer; break;
      case ncclProfilerProxyCtrlAppendEnd: body.value = static_cast<uint64_t>(args->proxyCtrl.appendedProxyOps); break;
      case ncclProfilerProxyStepSendWait:
      case ncclProfilerProxyStepRecvFlushWait: body.value = args->proxyStep.transSize; break;
      default: break;
    }
  }
  AppendRecord(BufferForThisThread(s), s->policy, spool::RecordType::kState, static_cast<int>(ref.fields.kind),
               static_cast<uint16_t>(ref.fields.context), 0, body);
  return ncclSuccess;
}

ncclResult_t CoreFinalize(void* context) {
  if (g_forked_child.load(std::memory_order_relaxed)) return ncclSuccess;
  std::lock_guard<std::mutex> lock(g_lifecycle);
  Session* s = g_session.load(std::memory_order_acquire);
  if (s == nullptr) return ncclSuccess;
  Context* ctx = LookupContext(s, context);
  if (ctx == nullptr || ctx->finalized.exchange(true)) return ncclSuccess;
  RetireContext(s, ctx);
  if (--s->live_contexts > 0) return ncclSuccess;
  // Last communicator: the capture is closed and the trace built (NCCL unloads the library after
  // this returns), then everything is freed.
  ClaimLiveSlots(s, ContextAt(s, kForeignContext));
  WritePendingNotices(s);
  g_session.store(nullptr, std::memory_order_release);
  CloseSession(s);
  FreeRetiredPools(s, UINT64_MAX);
  for (auto& p : s->context_storage[kForeignContext].pools) delete p.load();
  delete s;
  return ncclSuccess;
}

}  // namespace katrace
