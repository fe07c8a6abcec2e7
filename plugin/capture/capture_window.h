// The capture window: which events are recorded in a long job (KATRACE_DELAY, KATRACE_DURATION,
// KATRACE_SAMPLE, and the run-time triggers of capture_triggers.h).
//
// The verdict is taken once per root event (one whose parent katrace does not know: GroupApi,
// the legacy Group, ProxyCtrl; under ABI v4, Group) when it starts; every descendant inherits it
// through its handle (handle_codec.h, HandleFields::outside), so an event that straddles an edge is kept
// or left out whole, with everything under it. Outside the window an event is treated like a
// masked-out one: its handle, slot and parent links work as usual, nothing is recorded.
//
// Edges:
//   - a time edge counts from the session start (DELAY) or from the window's opening
//     (DURATION); the writer thread sees it in its periodic hook (about every millisecond);
//   - a collective edge counts Coll and P2p starts over the whole process: after DELAY=N
//     collectives started, roots are admitted; after DURATION=N admitted collectives, new roots
//     are refused. Roots of the kind that holds collectives (GroupApi; Group under ABI v4) also
//     reserve one collective each when admitted, so that threads racing at the edge cannot
//     overshoot: a run of one collective per group gets exactly N. The callback that crosses an
//     edge switches (one CAS) and writes the marker;
//   - a trigger (control file, signal) sets capture on or off from then on: DELAY and DURATION
//     no longer apply once one has fired.
//
// Hot path: AdmitRoot and CountCollective are a few relaxed atomics, no lock, no clock read but
// the marker's ticks when it switches. The counting atomics are touched only while the edge they
// serve is pending.
#ifndef KATRACE_PLUGIN_CAPTURE_CAPTURE_WINDOW_H_
#define KATRACE_PLUGIN_CAPTURE_CAPTURE_WINDOW_H_

#include <stdint.h>

#include <atomic>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "plugin/config.h"

namespace katrace {

class CaptureWindow {
 public:
  // At session start, before any callback. |session_start_ns|: CLOCK_MONOTONIC of the first init;
  // |collective_root|: the root kind whose events hold the collectives (GroupApi, or Group when
  // the ABI has no API events).
  void Configure(const Config& config, uint64_t session_start_ns, Kind collective_root);

  // Whether any window setting is in effect; when not, every event is inside and nothing here
  // needs to be called.
  bool active() const { return active_; }
  // Capture is on now (new roots may be admitted, sampling aside).
  bool open() const { return IsOpen(phase_.load(std::memory_order_relaxed)); }
  // KATRACE_DELAY has not passed yet (nor did a trigger open the capture): so far nothing was
  // captured.
  bool waiting_for_delay() const { return active_ && phase_.load(std::memory_order_relaxed) == kBeforeDelay; }

  // Hot path: the verdict for a root event of kind |kind| that starts now. When this call
  // switched capture (a collective edge), |*edge| is the marker to write (edge->what != 0).
  bool AdmitRoot(Kind kind, spool::MarkerBody* edge);

  // Hot path: a Coll or P2p started, inside the window or not.
  void CountCollective(bool inside) {
    if (count_started_ && phase_.load(std::memory_order_relaxed) == kBeforeDelay) {
      started_.fetch_add(1, std::memory_order_relaxed);
    }
    if (count_admitted_ && inside) admitted_.fetch_add(1, std::memory_order_relaxed);
  }

  // Writer thread: the time edges. True with |*edge| when one was crossed now.
  bool PollTime(uint64_t now_ns, spool::MarkerBody* edge);

  // A trigger: capture on or off from now on, whatever DELAY and DURATION say. True with
  // |*edge| when capture changed. A trigger that leaves capture as it was still ends DELAY's or
  // DURATION's say over it: |*ended| is then that variable's name (else null), for the caller to
  // tell the user (a `start` inside DURATION's window keeps capture on past it).
  bool Trigger(bool on, spool::MarkerReason reason, spool::MarkerBody* edge, const char** ended);

 private:
  enum Phase : uint32_t {
    kBeforeDelay,    // waiting for KATRACE_DELAY
    kOpen,           // inside DELAY..DURATION
    kAfterDuration,  // KATRACE_DURATION ran out
    kTriggeredOn,    // a trigger switched capture on; no edge applies any more
    kTriggeredOff,   // a trigger switched it off
  };
  static bool IsOpen(uint32_t phase) { return phase == kOpen || phase == kTriggeredOn; }
  // KATRACE_DURATION's collectives are spent: kOpen -> kAfterDuration, marked by whoever wins.
  // Returns false (the root's verdict).
  bool Close(uint32_t phase, spool::MarkerBody* edge);

  bool active_ = false;
  CaptureSpan delay_, duration_;
  uint32_t sample_every_ = 1;
  bool count_started_ = false;   // KATRACE_DELAY is a number of collectives
  bool count_admitted_ = false;  // KATRACE_DURATION is a number of collectives
  Kind collective_root_ = Kind::kGroupApi;
  uint64_t session_start_ns_ = 0;
  uint64_t opened_ns_ = 0;       // writer thread: when it first saw kOpen (0: not yet)

  alignas(64) std::atomic<uint32_t> phase_{kOpen};
  alignas(64) std::atomic<uint64_t> started_{0};
  alignas(64) std::atomic<uint64_t> admitted_{0};
  std::atomic<uint64_t> reserved_{0};  // collective roots admitted while DURATION counts
  // One count per root kind, so that interleaved roots of different kinds (GroupApi and the
  // legacy Group, ProxyCtrl) are each kept one in N.
  alignas(64) std::atomic<uint64_t> sampled_[kKindCount] = {};
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_CAPTURE_WINDOW_H_
