// The hang watchdog's wiring: on the writer thread, counts the work in flight for the watchdog
// and, when it fires, dumps the capture and starts the session's reporter on a thread of its own.
// Apart from the callbacks, which only note progress (capture/hang_watchdog.h), and from the
// export, which the registered reporter alone reaches.
#include "plugin/hang_check.h"

#include <stdint.h>
#include <stdio.h>

#include <string>
#include <system_error>

#include "common/in_place_path.h"
#include "common/paths.h"
#include "plugin/capture/host_clock.h"
#include "plugin/clock.h"
#include "plugin/comm_contexts.h"
#include "plugin/logger.h"

namespace katrace {
namespace core {

namespace {

// A trace written in place (/dev/null, /dev/stdout, a FIFO) has nothing "next to" it: the report
// goes to $TMPDIR under the trace's name, as the spool and the flight dumps do, never into /dev
// (which root could write).
std::string ReportPath(const Session& s) {
  return (IsWrittenInPlace(s.trace_path) ? InTempDir(s.trace_path) : s.trace_path) + ".hang.json";
}

}  // namespace

void CheckForHang(Session* s) {
  HangSighting sighting;
  const uint64_t now_ns = NowMonotonicNs();
  // While the last report is still being written the next check waits, so no hang goes unreported.
  if (!s->watchdog.Due(now_ns) || s->hang_reporting.load(std::memory_order_acquire)) return;
  if (!s->watchdog.Check(NowTicks(), now_ns, TasksInFlight(s, 1) > 0, &sighting)) {
    // The report of a hang that ended stays on disk and reads like one that did not (katrace-stats
    // --hang merges it as such): the end is said where the hang was.
    uint64_t lasted_ns = 0;
    if (s->watchdog.TakeCleared(&lasted_ns)) {
      fprintf(stderr,
              "katrace: the hang is over after %.3f s: work completes again, or none is left in flight (%s "
              "describes the stall); the next hang is reported after %.3f s without a completion (the "
              "timeout doubles after each hang that ends)\n",
              static_cast<double>(lasted_ns) * 1e-9, ReportPath(*s).c_str(),
              static_cast<double>(s->watchdog.timeout_ns()) * 1e-9);
    }
    return;
  }
  if (s->hang_reporter.joinable()) s->hang_reporter.join();
  HangReportRequest in;
  in.spool_path = s->spool->DumpNow("hang");
  in.report_path = ReportPath(*s);
  in.timeout_ns = s->watchdog.timeout_ns();
  in.last_progress_monotonic_ns = sighting.last_progress_monotonic_ns;
  in.in_flight = TasksInFlight(s, INT64_MAX);
  in.detected_monotonic_ns = NowMonotonicNs();
  in.detected_realtime_ns = NowRealtimeNs();
  s->hang_reporting.store(true, std::memory_order_release);
  try {
    s->hang_reporter = std::thread([s, in] {
      s->report_hang(in);
      s->hang_reporting.store(false, std::memory_order_release);
    });
  } catch (const std::system_error&) {
    s->hang_reporting.store(false, std::memory_order_release);
    LogWarn("a hang was detected but no thread could be started to report it");
  }
}

}  // namespace core
}  // namespace katrace
