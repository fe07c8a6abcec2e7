#include "plugin/capture/hang_watchdog.h"

namespace katrace {
namespace {

// Checked this often: far inside the promise of a report within the timeout plus 1 s, and rare
// enough to cost the writer nothing.
constexpr uint64_t kCheckEveryNs = 20 * 1000 * 1000;
constexpr uint64_t kProgressStepNs = 1000 * 1000;
// The tick rate is trusted once measured over this long (TSC: well under 0.1% off by then).
constexpr uint64_t kRateWindowNs = 50 * 1000 * 1000;

}  // namespace

void HangWatchdog::Arm(uint64_t timeout_ns, uint64_t now_ticks, uint64_t now_monotonic_ns) {
  timeout_ns_ = timeout_ns;
  origin_ticks_ = now_ticks;
  origin_ns_ = now_monotonic_ns;
  ns_per_tick_ = 1.0;
  last_progress_ticks_.store(now_ticks, std::memory_order_relaxed);
  next_check_ns_ = now_monotonic_ns;
}

uint64_t HangWatchdog::TicksToNs(uint64_t ticks) const {
  return static_cast<uint64_t>(static_cast<double>(ticks) * ns_per_tick_);
}

bool HangWatchdog::Check(uint64_t now_ticks, uint64_t now_monotonic_ns, bool work_in_flight, HangSighting* sighting) {
  if (!Due(now_monotonic_ns)) return false;
  next_check_ns_ = now_monotonic_ns + kCheckEveryNs;
  const uint64_t span_ns = now_monotonic_ns - origin_ns_;
  if (span_ns >= kRateWindowNs && now_ticks > origin_ticks_) {
    ns_per_tick_ = static_cast<double>(span_ns) / static_cast<double>(now_ticks - origin_ticks_);
    const double step = static_cast<double>(kProgressStepNs) / ns_per_tick_;
    step_ticks_.store(step < 1 ? 1 : static_cast<uint64_t>(step), std::memory_order_relaxed);
  }
  if (!work_in_flight) {
    // Nothing waits: an idle job does not hang, and the next hang is a new one.
    last_progress_ticks_.store(now_ticks, std::memory_order_relaxed);
    Clear(now_monotonic_ns);
    return false;
  }
  const uint64_t last = last_progress_ticks_.load(std::memory_order_relaxed);
  if (fired_) {
    if (last != fired_progress_ticks_) Clear(now_monotonic_ns);  // completions resumed: armed again
    return false;
  }
  uint64_t idle_ns = static_cast<int64_t>(now_ticks - last) > 0 ? TicksToNs(now_ticks - last) : 0;
  // Until the tick rate is measured a tick counts as a nanosecond, which a TSC at 3 GHz makes
  // three times too long: the first checks would call 40 ms of a first collective a hang of
  // 120 ms. No progress is older than the watchdog's arming, so what passed since bounds it.
  const uint64_t since_armed_ns = now_monotonic_ns - origin_ns_;
  if (idle_ns > since_armed_ns) idle_ns = since_armed_ns;
  if (idle_ns < timeout_ns_) return false;
  fired_ = true;
  fired_progress_ticks_ = last;
  sighting->last_progress_monotonic_ns = now_monotonic_ns - idle_ns;
  fired_progress_ns_ = sighting->last_progress_monotonic_ns;
  sighting->detected_monotonic_ns = now_monotonic_ns;
  return true;
}

}  // namespace katrace
