// The session's life cycle: the first communicator's init starts a session (configuration, clock,
// spool writer, watchdog) and the last one's finalize closes it and builds the trace; the
// process's exit, or the library's unload, does the same for jobs that never finalize; a forked
// child lets its copy of the parent's session go; a session started after the last finalize gets
// a serial of its own. All of it is rare and runs under g_lifecycle: the callbacks never wait
// for it, they only load g_session.
#include "plugin/profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "common/event_mask.h"
#include "katrace/drain_counters.h"
#include "katrace/spool_format.h"
#include "plugin/capture/host_clock.h"
#include "plugin/capture/spool_writer.h"
#include "plugin/clock.h"
#include "plugin/comm_contexts.h"
#include "plugin/config.h"
#include "plugin/event_pool.h"
#include "plugin/flight_exports.h"
#include "plugin/hang_check.h"
#include "plugin/logger.h"
#include "plugin/process_identity.h"
#include "plugin/session_export.h"
#include "plugin/session_state.h"
#include "plugin/slot_links.h"
#include "plugin/thread_capture.h"

namespace katrace {
namespace core {

std::mutex g_lifecycle;
std::atomic<Session*> g_session{nullptr};
std::atomic<bool> g_forked_child{false};
SlotlessStarts g_slotless_starts;

namespace {

// Makes |s| the running session: the callbacks see it, its live mask and its slotless bits (the
// bits last, so that a callback that sees them sees the mask's address too).
void PublishSession(Session* s) {
  g_session.store(s, std::memory_order_release);
  g_slotless_starts.live_mask.store(s->live_mask, std::memory_order_release);
  g_slotless_starts.type_bits.store(s->slotless_bits, std::memory_order_release);
}

// No session runs from now on; the one that ran, or null. Its slotless bits go first, so that no
// callback answers a start from its mask alone once it is gone.
Session* UnpublishSession() {
  g_slotless_starts.type_bits.store(0, std::memory_order_release);
  return g_session.exchange(nullptr, std::memory_order_acq_rel);
}

std::string g_last_output_path;  // under g_lifecycle
uint64_t g_session_serial = 0;   // under g_lifecycle

uint64_t RandomSerialBase() {
  uint64_t r = 0;
  if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(r))) {
    r = NowRealtimeNs() ^ (static_cast<uint64_t>(getpid()) << 32);
  }
  return (r & ((1ull << 40) - 1)) | 1;
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
  // The lifecycle lock may have been held by a thread the child does not have (the last
  // finalize's export, an init): the child's copy would stay locked for good, and its next init,
  // finalize or exit would hang. Nothing else runs in the child yet: it is made anew.
  if (g_lifecycle.try_lock()) {
    g_lifecycle.unlock();
  } else {
    new (&g_lifecycle) std::mutex();
  }
  if (g_session.load(std::memory_order_acquire) == nullptr) return;
  g_forked_child.store(true, std::memory_order_relaxed);
  UnpublishSession();
}

// Registered when the library is loaded (glibc drops it again at dlclose), so that a fork at any
// moment, before the first session too, leaves the child a plugin it can use.
struct ForkHandler {
  ForkHandler() { pthread_atfork(nullptr, nullptr, ForkChild); }
} g_fork_handler;

// Pools are allocated whole, each the first time its kind is used on a communicator: sizes near
// the limit (KATRACE_POOL_SIZE=2097151) ask for gigabytes per communicator, which is said once,
// up front, rather than found by the out-of-memory killer.
void WarnIfPoolsAreHuge(const Config& config) {
  constexpr uint64_t kSaySizeAbove = 1ull << 30;
  uint64_t bytes = 0;
  for (uint32_t n : config.pool_size) bytes += static_cast<uint64_t>(n) * sizeof(EventSlot);
  if (bytes <= kSaySizeAbove) return;
  LogWarn("the event pools as sized (KATRACE_POOL_SIZE, KATRACE_POOL_*) take up to " +
          std::to_string(bytes >> 20) + " MiB per communicator, allocated as each kind is first used; lower them "
          "unless the job keeps that many events live");
}

Session* StartSession(const InitArgs& a) {
  auto s = std::make_unique<Session>();
  std::vector<std::string> warnings;
  s->config = ReadConfig([](const char* n) { return getenv(n); },
                         [&](const std::string& w) { warnings.push_back(w); });
  for (const std::string& w : warnings) LogWarn(w);
  WarnIfPoolsAreHuge(s->config);
  InstallThreadExitHook();
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
  __atomic_store_n(&s->config_mask, mask & a.mask_allowed, __ATOMIC_RELAXED);
  // Said for kinds asked by name; "all" asks for nothing in particular.
  if (s->config.mask_from_env && mask != kAllKindsMask && (mask & ~a.mask_allowed) != 0) {
    LogWarn("KATRACE_MASK asks for " + DescribeEventMask(mask & ~a.mask_allowed) + ", which NCCL's profiler API v" +
            std::to_string(a.abi_version) + " (this NCCL's) does not report: those events will not appear");
  }
  s->window.Configure(s->config, s->base_monotonic_ns, a.abi_version == 4 ? Kind::kGroup : Kind::kGroupApi);
  s->slotless_bits = s->window.active() ? 0 : kSlotlessWhenMaskedBits;
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
  p.mask = __atomic_load_n(&s->config_mask, __ATOMIC_RELAXED);
  // Armed before the writer starts: its periodic hook reads it from then on.
  if (s->config.hang_timeout_ns != 0) {
    s->report_hang = ReportHangFromSpool;
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
  if (s->window.waiting_for_delay()) {
    LogWarn("the job ended before KATRACE_DELAY had passed: nothing was captured, the trace holds no events");
  }
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
    RemoveThreadExitHook();
    Session* s = UnpublishSession();
    if (s == nullptr) return;
    g_session_closed_at_exit.store(s);
    // NCCL may be tearing itself down too: report on stderr, not through its logger.
    ClearNcclLogger();
    for (uint32_t i = 0; i < kMaxContexts; ++i) WriteHeldGpuStops(s, ContextAt(s, i));
    WritePendingNotices(s);
    CloseSession(s);
  }
};
ExitFlush g_exit_flush;

// Sessions whose last communicator was finalized. A callback on another thread (NCCL's proxy
// thread may still report after finalize) can have loaded the session just before it was
// unpublished: it is freed, with its pools, only once such a callback is long out of it (the
// grace period of a finalized communicator's pools). At most kMaxRetiredSessions wait, so that a
// job that starts and ends sessions in a loop keeps its memory bounded. Under g_lifecycle.
struct RetiredSession {
  Session* session;
  uint64_t retired_ns;
};
std::deque<RetiredSession> g_retired_sessions;
constexpr size_t kMaxRetiredSessions = 4;

void FreeSession(Session* s) {
  FreeRetiredPools(s, UINT64_MAX);
  for (auto& p : s->context_storage[kForeignContext].pools) delete p.load();
  delete s;
}

// When the library is unloaded (or the process exits) the sessions still retired are freed:
// after an unload nothing could reach them. A callback that loaded one just before its last
// finalize is out of it within microseconds; the oldest waits are cut to 10 ms here, so that a
// job's exit does not wait out the full grace period.
struct FreeRetiredSessionsAtUnload {
  ~FreeRetiredSessionsAtUnload() {
    constexpr uint64_t kLeastAgeNs = 10 * 1000 * 1000;
    for (const RetiredSession& r : g_retired_sessions) {
      const uint64_t now = NowMonotonicNs();
      if (now < r.retired_ns + kLeastAgeNs) {
        const timespec pause = {0, static_cast<long>(r.retired_ns + kLeastAgeNs - now)};
        nanosleep(&pause, nullptr);
      }
      FreeSession(r.session);
    }
    g_retired_sessions.clear();
  }
} g_free_retired_sessions_at_unload;

// Frees the retired sessions past their grace period; when too many wait, waits out the oldest.
void FreeRetiredSessions() {
  while (!g_retired_sessions.empty()) {
    const RetiredSession& oldest = g_retired_sessions.front();
    const uint64_t free_at = oldest.retired_ns + kRetireGraceNs;
    const uint64_t now = NowMonotonicNs();
    if (now < free_at) {
      if (g_retired_sessions.size() < kMaxRetiredSessions) return;
      const uint64_t wait = free_at - now;
      const timespec pause = {static_cast<time_t>(wait / 1000000000ull), static_cast<long>(wait % 1000000000ull)};
      nanosleep(&pause, nullptr);
    }
    FreeSession(oldest.session);
    g_retired_sessions.pop_front();
  }
}

void RetireSession(Session* s) {
  g_retired_sessions.push_back({s, NowMonotonicNs()});
  FreeRetiredSessions();
}

ncclResult_t InitLocked(void** context, const InitArgs& a) {
  FreeRetiredSessions();
  Session* s = g_session.load(std::memory_order_acquire);
  if (s == nullptr) {
    s = StartSession(a);
    PublishSession(s);
  }
  return OpenContext(s, a, context);
}

}  // namespace
}  // namespace core

// The entry points profiler.h declares, written in the core's own terms.
using namespace core;

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
  UnpublishSession();
  CloseSession(s);
  RetireSession(s);
  return ncclSuccess;
}

}  // namespace katrace
