// The state of one profiling session, shared by the files of the profiler core: the session's
// life cycle (session_lifecycle.cc), the communicator table (comm_contexts), the threads' capture
// buffers (thread_capture), the slot links (slot_links), the hang check (hang_check.cc) and the
// callbacks (callbacks.cc). Only the data and the few process-wide globals live here; each file
// owns the functions of its job.
//
// Internal to the core: nothing here is exported from the .so (the build hides every symbol),
// and the globals are declared hidden so the callbacks load them directly, not through the GOT.
#ifndef KATRACE_PLUGIN_SESSION_STATE_H_
#define KATRACE_PLUGIN_SESSION_STATE_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "katrace/drain_counters.h"
#include "katrace/event_kinds.h"
#include "plugin/capture/capture_triggers.h"
#include "plugin/capture/capture_window.h"
#include "plugin/capture/hang_watchdog.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/spool_writer.h"
#include "plugin/capture/string_table.h"
#include "plugin/config.h"
#include "plugin/event_pool.h"
#include "plugin/flight_exports.h"
#include "plugin/handle_codec.h"
#include "plugin/nvtx_sink.h"

namespace katrace {
namespace core {

// Context slot 0 holds proxy ops that another process created (PXN): their context and parent
// pointers belong to that process and are never looked at.
constexpr uint32_t kForeignContext = 0;

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
  // The configured activation mask (written and read with __atomic builtins), and the mask the
  // callbacks read: NCCL's process-global one (it re-reads it per operation) once a communicator
  // gave it, else the configured one, so that the read needs no test.
  int config_mask = 0;
  int* live_mask = &config_mask;
  // The NCCL type bits whose masked-out starts CoreStart answers itself, without a slot:
  // kSlotlessWhenMaskedBits, or none under a capture window (a root then asks the window).
  // Set at the start, before any callback; published in g_slotless_starts.
  uint64_t slotless_bits = 0;
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
  // Builds a hang's report from its dump; registered at the start by the session, which alone
  // knows the export (session_export.cc).
  HangReporter report_hang = nullptr;
  // The report of a hang is built off the writer thread; one at a time (the writer's thread only
  // starts it, the close joins it).
  std::thread hang_reporter;
  std::atomic<bool> hang_reporting{false};
};

// Init and finalize are rare and may come from several threads at once; callbacks never lock.
extern std::mutex g_lifecycle __attribute__((visibility("hidden")));
// The running session, or null: callbacks load it once and use nothing else.
extern std::atomic<Session*> g_session __attribute__((visibility("hidden")));
// A forked child's copy of the plugin does nothing: its trace belongs to the parent.
extern std::atomic<bool> g_forked_child __attribute__((visibility("hidden")));

// What CoreStart's path for masked-out parents reads in place of the session, so that it loads two
// globals rather than the session and then its fields: the running session's slotless_bits (0
// while no session runs, so the path is never taken without one) and its live mask. Published
// and cleared with g_session (session_lifecycle.cc), the mask's address again when a
// communicator gives NCCL's (comm_contexts.cc).
struct SlotlessStarts {
  std::atomic<uint64_t> type_bits{0};
  std::atomic<const int*> live_mask{nullptr};
};
extern SlotlessStarts g_slotless_starts __attribute__((visibility("hidden")));

}  // namespace core
}  // namespace katrace

#endif  // KATRACE_PLUGIN_SESSION_STATE_H_
