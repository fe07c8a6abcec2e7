// The flight recorder's memory in a sustained run: a real plugin .so in KATRACE_MODE=flight (set
// here) is driven through its exported ABI with collectives back to back (Coll, then two KernelCh
// with their GPU stop state), long enough for the ring to fill and evict many times over. The
// process's resident memory is sampled throughout: the target is that, once the ring is full, it
// stays within the flight budget (KATRACE_FLIGHT_MB) plus 16 MiB.
//
//   flight_rss_bench PLUGIN.so SECONDS
//
// Prints the RSS before the plugin was loaded, the budget, the steady-state RSS (the largest
// sample of the run's second half) and the peak (VmHWM).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <string>

#include "nccl_profiler/v6.h"
#include "test/fixtures/reported_collective.h"

namespace {

using katrace_fixture::ReportCollective;

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

long StatusKib(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  size_t n = strlen(field);
  while (f != nullptr && fgets(line, sizeof(line), f) != nullptr) {
    if (strncmp(line, field, n) == 0) kib = strtol(line + n, nullptr, 10);
  }
  if (f != nullptr) fclose(f);
  return kib;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PLUGIN.so SECONDS\n", argv[0]);
    return 2;
  }
  setenv("KATRACE_MODE", "flight", 1);
  const char* mb_text = getenv("KATRACE_FLIGHT_MB");
  const long budget_mib = mb_text != nullptr ? atol(mb_text) : 64;
  const double seconds = atof(argv[2]);
  const long before_kib = StatusKib("VmRSS:");
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  auto* p = static_cast<ncclProfiler_v6_t*>(dlsym(lib, "ncclProfiler_v6"));
  if (p == nullptr) return 2;
  int mask = 0;
  void* ctx = nullptr;
  p->init(&ctx, 0xf1, &mask, "bench", 1, 1, 0, nullptr);
  const uint64_t start = NowNs();
  uint64_t next_sample = start, colls = 0;
  long steady_kib = 0;
  for (;;) {
    for (int i = 0; i < 1000; ++i, ++colls) ReportCollective(p, ctx, colls, 1024 + colls % 4096);
    uint64_t now = NowNs();
    if (now >= next_sample) {
      next_sample = now + 250 * 1000 * 1000;
      if (static_cast<double>(now - start) > seconds * 0.5e9) {
        long kib = StatusKib("VmRSS:");
        if (kib > steady_kib) steady_kib = kib;
      }
    }
    if (static_cast<double>(now - start) > seconds * 1e9) break;
  }
  const double elapsed = static_cast<double>(NowNs() - start) * 1e-9;
  p->finalize(ctx);
  printf("flight recorder, KATRACE_FLIGHT_MB=%ld: %llu collectives in %.1f s (%.0f ns each); RSS before load %.1f MiB, "
         "steady state %.1f MiB (budget + %.1f MiB), peak %.1f MiB\n",
         budget_mib, static_cast<unsigned long long>(colls), elapsed, elapsed * 1e9 / static_cast<double>(colls),
         static_cast<double>(before_kib) / 1024, static_cast<double>(steady_kib) / 1024,
         static_cast<double>(steady_kib) / 1024 - static_cast<double>(budget_mib),
         static_cast<double>(StatusKib("VmHWM:")) / 1024);
  return 0;
}
