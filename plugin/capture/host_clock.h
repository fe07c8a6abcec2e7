// The capture clock: raw ticks read once at callback entry. On x86-64 with an invariant TSC that
// the kernel itself uses as its clocksource, the TSC (a few ns, no vDSO call); elsewhere
// CLOCK_MONOTONIC ns. The spool writer records (ticks, monotonic, realtime) pairs every flush, and
// the exporter turns ticks into ns with them, so the hot path never converts.
#ifndef KATRACE_PLUGIN_CAPTURE_HOST_CLOCK_H_
#define KATRACE_PLUGIN_CAPTURE_HOST_CLOCK_H_

#include <stdint.h>

#include <string>

#include "katrace/spool_format.h"
#include "plugin/clock.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace katrace {

// Chosen once per process before the first session publishes itself; read-only afterwards.
extern spool::ClockSource g_clock_source;

// Inlined into every callback: a call would cost more than the read.
__attribute__((always_inline)) inline uint64_t NowTicks() {
#if defined(__x86_64__)
  if (g_clock_source == spool::kClockTsc) return __rdtsc();
#endif
  return NowMonotonicNs();
}

// |request|: "auto" (TSC when it is invariant and the kernel's clocksource), "tsc" or
// "monotonic". Returns what is used; |note| says why when the request could not be honoured.
spool::ClockSource ChooseClockSource(const std::string& request, std::string* note);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_HOST_CLOCK_H_
