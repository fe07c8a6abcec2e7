// HostileWatchdog suite: the hang watchdog (plugin/capture/hang_watchdog.h) driven with synthetic
// readings of both clocks, as the writer thread would feed them, so that the tick rate is the
// test's to choose: a TSC counts about three ticks per nanosecond on a 3 GHz host, and the
// watchdog knows that only once it has measured it.
#include <stdint.h>

#include <gtest/gtest.h>

#include "plugin/capture/hang_watchdog.h"

namespace katrace {
namespace {

constexpr uint64_t kMs = 1000 * 1000;

// One reading of both clocks |ns| after the origin, the ticks running |ticks_per_ns| as fast.
struct Host {
  uint64_t origin_ns = 1000000 * kMs;
  uint64_t origin_ticks = 77 * kMs;
  uint64_t ticks_per_ns = 3;
  uint64_t Ns(uint64_t ns) const { return origin_ns + ns; }
  uint64_t Ticks(uint64_t ns) const { return origin_ticks + ns * ticks_per_ns; }
};

// Regression: before the rate was measured (its first 50 ms) a tick counted as a nanosecond, so
// on a 3 GHz TSC the check 40 ms after arming took a first collective still running for a hang
// of 120 ms and reported it, with KATRACE_HANG_TIMEOUT=100ms (the least it takes).
TEST(HostileWatchdog, AnUnmeasuredTickRateCallsNoEarlyHang) {
  Host h;
  HangWatchdog w;
  w.Arm(100 * kMs, h.Ticks(0), h.Ns(0));
  HangSighting s;
  for (uint64_t at : {uint64_t{0}, 20 * kMs, 40 * kMs}) {
    EXPECT_FALSE(w.Check(h.Ticks(at), h.Ns(at), true, &s)) << "only " << at / kMs << " ms since arming";
  }
  // Measured by now: no completion for 100 ms is the hang it is.
  EXPECT_FALSE(w.Check(h.Ticks(60 * kMs), h.Ns(60 * kMs), true, &s));
  EXPECT_FALSE(w.Check(h.Ticks(80 * kMs), h.Ns(80 * kMs), true, &s));
  ASSERT_TRUE(w.Check(h.Ticks(100 * kMs), h.Ns(100 * kMs), true, &s));
  EXPECT_EQ(s.detected_monotonic_ns, h.Ns(100 * kMs));
  EXPECT_NEAR(static_cast<double>(s.last_progress_monotonic_ns), static_cast<double>(h.Ns(0)), 1e6)
      << "the last progress is placed at the arming, to within a millisecond";
}

// A tick rate slower than a nanosecond (ticks of 4 ns) does not hide a hang either: once
// measured, 100 ms without progress is reported at 100 ms.
TEST(HostileWatchdog, ASlowTickRateStillReportsOnTime) {
  HangWatchdog w;
  const uint64_t origin = 5000 * kMs;
  auto ticks = [&](uint64_t ns) { return 1000 + ns / 4; };
  w.Arm(100 * kMs, ticks(0), origin);
  HangSighting s;
  bool fired = false;
  uint64_t fired_at = 0;
  for (uint64_t at = 0; at <= 200 * kMs && !fired; at += 20 * kMs) {
    fired = w.Check(ticks(at), origin + at, true, &s);
    fired_at = at;
  }
  ASSERT_TRUE(fired);
  EXPECT_EQ(fired_at, 100 * kMs);
}

// A reported hang that ends is said to have ended, once, whichever way it ends: a completion,
// or nothing left in flight; one that was never reported is not.
TEST(HostileWatchdog, TheEndOfAReportedHangIsSaidOnce) {
  Host h;
  h.ticks_per_ns = 1;
  HangWatchdog w;
  w.Arm(100 * kMs, h.Ticks(0), h.Ns(0));
  HangSighting s;
  uint64_t lasted = 0;
  uint64_t at = 0;
  for (; at <= 100 * kMs; at += 20 * kMs) w.Check(h.Ticks(at), h.Ns(at), true, &s);
  EXPECT_FALSE(w.TakeCleared(&lasted)) << "still hung";
  w.NoteProgress(h.Ticks(at));  // 120 ms: a completion
  at += 20 * kMs;
  EXPECT_FALSE(w.Check(h.Ticks(at), h.Ns(at), true, &s));
  ASSERT_TRUE(w.TakeCleared(&lasted));
  EXPECT_EQ(lasted, 140 * kMs) << "from the last completion before the hang to the check that saw it end";
  EXPECT_FALSE(w.TakeCleared(&lasted)) << "once";
  // Hung again (for the doubled timeout, 200 ms), then nothing left in flight: over too.
  for (at += 20 * kMs; at <= 340 * kMs; at += 20 * kMs) w.Check(h.Ticks(at), h.Ns(at), true, &s);
  EXPECT_FALSE(w.TakeCleared(&lasted));
  w.Check(h.Ticks(at), h.Ns(at), false, &s);
  EXPECT_TRUE(w.TakeCleared(&lasted));
  // Idle, or busy below the timeout: no hang, so no end of one.
  for (at += 20 * kMs; at <= 440 * kMs; at += 20 * kMs) {
    w.Check(h.Ticks(at), h.Ns(at), false, &s);
    EXPECT_FALSE(w.TakeCleared(&lasted));
  }
}

// A timeout shorter than the job's collectives reported every one (and in flight mode dumped
// the ring each time, without end): after each reported hang that ends, the timeout doubles, so
// the same 150 ms collective is reported once, and a longer stall is still reported.
TEST(HostileWatchdog, AHangThatEndsDoublesTheTimeout) {
  Host h;
  h.ticks_per_ns = 1;
  HangWatchdog w;
  w.Arm(100 * kMs, h.Ticks(0), h.Ns(0));
  HangSighting s;
  uint64_t at = 0;
  int reports = 0;
  // Four collectives of 150 ms each, back to back: a completion every 150 ms.
  for (uint64_t done = 150 * kMs; done <= 600 * kMs; done += 150 * kMs) {
    for (; at < done; at += 10 * kMs) reports += w.Check(h.Ticks(at), h.Ns(at), true, &s) ? 1 : 0;
    w.NoteProgress(h.Ticks(done));
  }
  EXPECT_EQ(reports, 1) << "only the first 150 ms collective is taken for a hang";
  EXPECT_EQ(w.timeout_ns(), 200 * kMs);
  // A real stall: reported after the doubled timeout.
  const uint64_t stalled = at;
  bool fired = false;
  for (; at <= stalled + 300 * kMs && !fired; at += 10 * kMs) fired = w.Check(h.Ticks(at), h.Ns(at), true, &s);
  ASSERT_TRUE(fired);
  EXPECT_GE(at - 10 * kMs - stalled, 200 * kMs);
  EXPECT_LE(at - 10 * kMs - stalled, 230 * kMs);
}

}  // namespace
}  // namespace katrace
