#include "plugin/capture/capture_window.h"

#include "plugin/capture/host_clock.h"

namespace katrace {
namespace {

void Mark(spool::MarkerBody* edge, spool::MarkerWhat what, spool::MarkerReason reason) {
  *edge = spool::MarkerBody{};
  edge->ticks = NowTicks();
  edge->what = what;
  edge->reason = reason;
}

}  // namespace

void CaptureWindow::Configure(const Config& config, uint64_t session_start_ns, Kind collective_root) {
  collective_root_ = collective_root;
  delay_ = config.delay;
  duration_ = config.duration;
  sample_every_ = config.sample_every < 1 ? 1 : config.sample_every;
  count_started_ = delay_.unit == CaptureSpan::kCollectives;
  count_admitted_ = duration_.unit == CaptureSpan::kCollectives;
  session_start_ns_ = session_start_ns;
  // "0colls" or "0s" of delay is no delay.
  const bool delayed = delay_.unit != CaptureSpan::kNone && delay_.value != 0;
  phase_.store(delayed ? kBeforeDelay : kOpen, std::memory_order_relaxed);
  opened_ns_ = delayed ? 0 : session_start_ns;
  active_ = delayed || duration_.unit != CaptureSpan::kNone || sample_every_ > 1 || !config.control_path.empty() ||
            config.toggle_signal != 0;
}

bool CaptureWindow::AdmitRoot(Kind kind, spool::MarkerBody* edge) {
  edge->what = 0;
  uint32_t phase = phase_.load(std::memory_order_relaxed);
  if (phase == kBeforeDelay) {
    if (!count_started_ || started_.load(std::memory_order_relaxed) < delay_.value) return false;
    // One caller wins the switch and writes the marker; a trigger may have come first.
    if (phase_.compare_exchange_strong(phase, kOpen, std::memory_order_relaxed)) {
      Mark(edge, spool::kMarkerCaptureOn, spool::kMarkerDelay);
      phase = kOpen;
    }
  }
  if (!IsOpen(phase)) return false;
  const bool counting = phase == kOpen && count_admitted_;
  // Any root is refused once N collectives were admitted (a group may hold several).
  if (counting && admitted_.load(std::memory_order_relaxed) >= duration_.value) return Close(phase, edge);
  if (sample_every_ > 1 &&
      sampled_[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed) % sample_every_ != 0) {
    return false;
  }
  // A collective root that is kept takes one of the N reservations.
  if (counting && kind == collective_root_) {
    uint64_t r = reserved_.load(std::memory_order_relaxed);
    do {
      if (r >= duration_.value) return Close(phase, edge);
    } while (!reserved_.compare_exchange_weak(r, r + 1, std::memory_order_relaxed));
  }
  return true;
}

bool CaptureWindow::Close(uint32_t phase, spool::MarkerBody* edge) {
  if (phase_.compare_exchange_strong(phase, kAfterDuration, std::memory_order_relaxed)) {
    Mark(edge, spool::kMarkerCaptureOff, spool::kMarkerDuration);
  }
  return false;
}

bool CaptureWindow::PollTime(uint64_t now_ns, spool::MarkerBody* edge) {
  uint32_t phase = phase_.load(std::memory_order_relaxed);
  if (phase == kBeforeDelay && delay_.unit == CaptureSpan::kNanoseconds &&
      now_ns - session_start_ns_ >= delay_.value) {
    if (phase_.compare_exchange_strong(phase, kOpen, std::memory_order_relaxed)) {
      opened_ns_ = session_start_ns_ + delay_.value;
      Mark(edge, spool::kMarkerCaptureOn, spool::kMarkerDelay);
      return true;
    }
  }
  if (phase != kOpen) return false;
  // Opened by a collective edge: the duration counts from when the writer first saw it.
  if (opened_ns_ == 0) opened_ns_ = now_ns;
  if (duration_.unit == CaptureSpan::kNanoseconds && now_ns - opened_ns_ >= duration_.value &&
      phase_.compare_exchange_strong(phase, kAfterDuration, std::memory_order_relaxed)) {
    Mark(edge, spool::kMarkerCaptureOff, spool::kMarkerDuration);
    return true;
  }
  return false;
}

bool CaptureWindow::Trigger(bool on, spool::MarkerReason reason, spool::MarkerBody* edge, const char** ended) {
  const uint32_t was = phase_.exchange(on ? kTriggeredOn : kTriggeredOff, std::memory_order_relaxed);
  *ended = nullptr;
  if (IsOpen(was) == on) {
    if (was == kOpen && duration_.unit != CaptureSpan::kNone) *ended = "KATRACE_DURATION";
    if (was == kBeforeDelay) *ended = "KATRACE_DELAY";
    return false;
  }
  Mark(edge, on ? spool::kMarkerCaptureOn : spool::kMarkerCaptureOff, reason);
  return true;
}

}  // namespace katrace
