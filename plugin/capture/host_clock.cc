#include "plugin/capture/host_clock.h"

#include <stdio.h>
#include <string.h>

#include <fstream>
#include <sstream>

namespace katrace {

spool::ClockSource g_clock_source = spool::kClockMonotonic;

namespace {

bool FileHas(const char* path, const char* word) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      if (w == word) return true;
    }
  }
  return false;
}

// The kernel only keeps "tsc" as its clocksource when the TSC is synchronised across CPUs and
// does not stop in idle states; constant_tsc and nonstop_tsc say the rate is fixed.
bool TscUsable() {
#if defined(__x86_64__)
  return FileHas("/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc") &&
         FileHas("/proc/cpuinfo", "constant_tsc") && FileHas("/proc/cpuinfo", "nonstop_tsc");
#else
  return false;
#endif
}

}  // namespace

spool::ClockSource ChooseClockSource(const std::string& request, std::string* note) {
  note->clear();
  if (request == "monotonic") return spool::kClockMonotonic;
  bool usable = TscUsable();
  if (request == "tsc" && !usable) {
    *note = "KATRACE_CLOCK=tsc: the TSC is not invariant or not the kernel's clocksource here; using CLOCK_MONOTONIC";
  }
  return usable ? spool::kClockTsc : spool::kClockMonotonic;
}

}  // namespace katrace
