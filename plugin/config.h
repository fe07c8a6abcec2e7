// Configuration read once per process from the environment. Every bad value is reported (one line
// naming the variable, the value and what is used instead) and replaced by its default.
#ifndef KATRACE_PLUGIN_CONFIG_H_
#define KATRACE_PLUGIN_CONFIG_H_

#include <stdint.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/event_mask.h"  // kDefaultMask; the mask grammar, shared with katrace-sim
#include "common/trace_format.h"
#include "katrace/event_kinds.h"

namespace katrace {

// A capture window edge (KATRACE_DELAY, KATRACE_DURATION): a time, or a number of collectives
// (Coll and P2p tasks) counted over the whole process. kNone: no edge (from the start / to the end).
struct CaptureSpan {
  enum Unit : uint8_t { kNone, kNanoseconds, kCollectives };
  Unit unit = kNone;
  uint64_t value = 0;
};

// Parses a time in the duration grammar of common/duration.h ("30s", "1.5s", "500ms", "2m"; a bare
// number is seconds, as in Nsight Systems) or, when |allow_collectives|, a count of collectives
// ("2000colls"). False with |*error| (phrased to follow the value) on anything else.
bool ParseCaptureSpan(const std::string& text, bool allow_collectives, CaptureSpan* out, std::string* error);

struct Config {
  int mask = kDefaultMask;
  bool mask_from_env = false;
  // Output path template: {rank}, {pid}, {host} are substituted. ".gz" at the end, or gzip=true,
  // writes gzip.
  std::string output = "katrace-{host}-{pid}.json";
  bool gzip = false;
  // KATRACE_FORMAT=json|perfetto|nvtxt; unset: the output name's extension says (JSON when it
  // has none of ours). Set, it also makes the name's trace extension its own.
  std::optional<TraceFormat> format;
  bool summary = true;
  std::string summary_path;  // empty: next to the trace, "<trace>.summary.txt"
  bool nvtx = true;
  uint32_t pool_size[kKindCount] = {};
  // Capture buffers: one per thread (a power of two), all of them within the budget.
  uint64_t thread_buffer_bytes = 1u << 20;
  uint64_t buffer_budget_bytes = 64u << 20;
  bool drop_when_full = false;  // KATRACE_ON_FULL=drop; default wait
  bool compress_spool = true;   // KATRACE_SPOOL_COMPRESS=lz4|none
  bool export_trace = true;     // KATRACE_EXPORT=on|off: build the trace at the end, or keep the spool
  bool keep_spool = false;      // KATRACE_KEEP_SPOOL=1: keep the spool after a successful export
  std::string clock = "auto";   // KATRACE_CLOCK=auto|tsc|monotonic

  // Capture window (see README "Tracing a window of a long job").
  CaptureSpan delay;            // KATRACE_DELAY: nothing is recorded before it ends
  CaptureSpan duration;         // KATRACE_DURATION: nothing is recorded after it runs out
  uint32_t sample_every = 1;    // KATRACE_SAMPLE=N: one root event (a group) in N, with everything under it
  std::string control_path;     // KATRACE_CONTROL: a file; "start", "stop" or "dump" written into it
  int toggle_signal = 0;        // KATRACE_SIGNAL=USR1|USR2: that signal toggles capture (0: off)
  // Flight recorder (KATRACE_MODE=flight): the last flight_bytes of records stay in memory and
  // are written only on a dump.
  bool flight = false;
  uint64_t flight_bytes = 64u << 20;  // KATRACE_FLIGHT_MB
  bool flight_dump_at_exit = false;   // KATRACE_FLIGHT_AT_EXIT=1
  bool flight_dump_on_crash = true;   // KATRACE_FLIGHT_ON_CRASH=0 leaves SIGSEGV/SIGBUS/SIGABRT alone
  // Hang watchdog (KATRACE_HANG_TIMEOUT): no event completed for this long while collectives are
  // in flight writes "<trace>.hang.json". 0: off.
  uint64_t hang_timeout_ns = 0;
};

// Lookup of an environment variable; returns nullptr when unset. Injected so tests need not
// touch the real environment.
using EnvLookup = std::function<const char*(const char*)>;
using WarnSink = std::function<void(const std::string&)>;

Config ReadConfig(const EnvLookup& env, const WarnSink& warn);

// Substitutes {rank}, {pid}, {host} (and {comm} when given) in |tmpl|.
std::string ExpandOutputTemplate(const std::string& tmpl, int rank, int pid, const std::string& host);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CONFIG_H_
