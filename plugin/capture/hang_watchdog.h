// The hang watchdog's bookkeeping (KATRACE_HANG_TIMEOUT): when the last event completed. Callbacks
// feed it; the spool writer thread asks it every 20 ms whether the job hangs: work in flight (the
// writer finds that out itself, from the pools' live Coll/P2p slots, so the callbacks keep no
// counter) and no completion for the timeout. It says so once per hang; once completions resume,
// or nothing is in flight, it is armed again, with the timeout doubled: a hang that ends was most
// likely work longer than the timeout (a timeout shorter than a collective reported every one,
// and in flight mode dumped the ring each time), so the false reports of a job are at most
// log2(its longest work / the timeout), and a real hang is still reported.
//
// The progress time is kept coarsely so the hot path stays cheap: a completing callback reads one
// shared word and writes it only when it moved by a millisecond or more, so the cache line is
// written about a thousand times a second however fast events complete.
#ifndef KATRACE_PLUGIN_CAPTURE_HANG_WATCHDOG_H_
#define KATRACE_PLUGIN_CAPTURE_HANG_WATCHDOG_H_

#include <stdint.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "katrace/event_kinds.h"

namespace katrace {

// Kinds whose stop means the job moved on (KindInfo::stop_is_progress says which, and why).
inline bool StopMeansProgress(Kind kind) { return kKindInfo[static_cast<int>(kind)].stop_is_progress; }

// What the watchdog saw when it fired.
struct HangSighting {
  uint64_t last_progress_monotonic_ns = 0;  // the last completion, to within the coarse step
  uint64_t detected_monotonic_ns = 0;
};

// What a hang's report is built from (docs/hang-report.md): the dump the capture made readable
// when the watchdog fired, and what the watchdog saw.
struct HangReportRequest {
  std::string spool_path;
  std::string report_path;  // "<trace>.hang.json"
  uint64_t timeout_ns = 0;
  uint64_t last_progress_monotonic_ns = 0;
  int64_t in_flight = 0;  // Coll/P2p in flight in the whole process
  // One reading of both clocks when the hang was detected.
  uint64_t detected_monotonic_ns = 0;
  uint64_t detected_realtime_ns = 0;
};

// Builds the report and says on stderr what it found; never throws. Runs on a thread of its own,
// off the writer. Reading the dump is the export's business: the session registers the function
// that does it (session_export.cc), so the capture side never reaches into the export.
using HangReporter = void (*)(const HangReportRequest& request);

class HangWatchdog {
 public:
  // |now_ticks| and |now_monotonic_ns| are one reading of both clocks.
  void Arm(uint64_t timeout_ns, uint64_t now_ticks, uint64_t now_monotonic_ns);

  // Hot path: an event whose stop counts as progress stopped at |ticks|.
  void NoteProgress(uint64_t ticks) {
    const uint64_t last = last_progress_ticks_.load(std::memory_order_relaxed);
    if (static_cast<int64_t>(ticks - last) >= static_cast<int64_t>(step_ticks_.load(std::memory_order_relaxed))) {
      last_progress_ticks_.store(ticks, std::memory_order_relaxed);
    }
  }
  // Writer thread: whether a check is due (every 20 ms); the caller then looks for work in flight.
  bool Due(uint64_t now_monotonic_ns) const { return timeout_ns_ != 0 && now_monotonic_ns >= next_check_ns_; }
  // Writer thread: true once per hang, with what it saw. While nothing is in flight the clock
  // restarts at every check: the idle time before work arrives is no hang.
  bool Check(uint64_t now_ticks, uint64_t now_monotonic_ns, bool work_in_flight, HangSighting* sighting);
  // Writer thread: true once after a reported hang ended (a completion came, or nothing is in
  // flight any more), with how long it had lasted by then; its report stays on disk, so the
  // caller says it is over.
  // The timeout now: the configured one, doubled after each reported hang that ended, to at most
  // an hour (or the configured one, when longer).
  uint64_t timeout_ns() const { return timeout_ns_; }
  bool TakeCleared(uint64_t* lasted_ns) {
    if (cleared_ns_ == 0) return false;
    *lasted_ns = cleared_ns_;
    cleared_ns_ = 0;
    return true;
  }

 private:
  uint64_t TicksToNs(uint64_t ticks) const;

  std::atomic<uint64_t> last_progress_ticks_{0};
  std::atomic<uint64_t> step_ticks_{1000000};  // about 1 ms; refined once the tick rate is known
  // Writer thread only.
  uint64_t timeout_ns_ = 0;
  uint64_t origin_ticks_ = 0, origin_ns_ = 0;  // tick rate: measured against this first reading
  double ns_per_tick_ = 1.0;
  uint64_t next_check_ns_ = 0;
  bool fired_ = false;
  uint64_t fired_progress_ticks_ = 0;
  uint64_t fired_progress_ns_ = 0;  // the sighting's last progress
  uint64_t cleared_ns_ = 0;         // a reported hang ended, after this long (0: none to say)
  void Clear(uint64_t now_monotonic_ns) {
    if (!fired_) return;
    fired_ = false;
    cleared_ns_ = now_monotonic_ns > fired_progress_ns_ ? now_monotonic_ns - fired_progress_ns_ : 1;
    constexpr uint64_t kLongestBackoffNs = 3600ull * 1000 * 1000 * 1000;
    if (timeout_ns_ < kLongestBackoffNs) timeout_ns_ = std::min(2 * timeout_ns_, kLongestBackoffNs);
  }
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_HANG_WATCHDOG_H_
