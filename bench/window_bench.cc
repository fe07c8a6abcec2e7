// What a callback costs outside the capture window, against a masked-out callback, in one run:
// NCCL's 13-callback collective (GroupApi start, two states, stop; CollApi; Group; Coll; one
// KernelCh start, KernelChStop, stop), back to back on one thread, through the real .so.
//
//   masked-out: no window configured; NCCL's mask is 0 after init, so every event is masked out
//               (the Coll still keeps a slot for its children's sake, as always);
//   outside:    KATRACE_DELAY=<never>colls with the default mask: every root is refused, every
//               descendant inherits that verdict through its handle.
//
// Each mode is its own session (init, the loop, finalize) and the modes alternate for |rounds|,
// so their ratio is taken under the same machine load.
//
//   window_bench COLLECTIVES ROUNDS PLUGIN.so OUTPUT_DIR
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench/enqueue_collective.h"
#include "nccl_profiler/v6.h"

namespace {

using katrace_bench::EnqueueCollective;
using katrace_bench::NowNs;

enum class Mode { kMaskedOut, kOutside };

// ns per collective (13 callbacks).
double RunSession(ncclProfiler_v6_t* p, Mode mode, uint64_t collectives) {
  if (mode == Mode::kOutside) {
    setenv("KATRACE_DELAY", "1000000000000colls", 1);
  } else {
    unsetenv("KATRACE_DELAY");
  }
  static int mask = 0;
  void* ctx = nullptr;
  p->init(&ctx, 0x3e1f, &mask, "window", 1, 1, 0, nullptr);
  if (mode == Mode::kMaskedOut) __atomic_store_n(&mask, 0, __ATOMIC_RELAXED);
  uint64_t gpu = 0;  // set by EnqueueCollective
  const uint64_t t0 = NowNs();
  for (uint64_t i = 0; i < collectives; ++i) EnqueueCollective(p, ctx, i, &gpu);
  const uint64_t t1 = NowNs();
  p->finalize(ctx);
  return static_cast<double>(t1 - t0) / static_cast<double>(collectives);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s COLLECTIVES ROUNDS PLUGIN.so OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const uint64_t n = strtoull(argv[1], nullptr, 10);
  const int rounds = atoi(argv[2]);
  // Each session writes an (empty) trace of its own there.
  const std::string trace = std::string(argv[4]) + "/window-bench.json";
  setenv("KATRACE_OUTPUT", trace.c_str(), 1);
  setenv("KATRACE_SUMMARY", "0", 1);
  unsetenv("KATRACE_MASK");
  void* lib = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
  auto* p = lib != nullptr ? static_cast<ncclProfiler_v6_t*>(dlsym(lib, "ncclProfiler_v6")) : nullptr;
  if (p == nullptr) {
    fprintf(stderr, "cannot load ncclProfiler_v6 from %s: %s\n", argv[3], lib == nullptr ? dlerror() : "no symbol");
    return 2;
  }
  std::vector<double> masked, outside, ratios;
  for (int r = 0; r < rounds; ++r) {
    masked.push_back(RunSession(p, Mode::kMaskedOut, n));
    outside.push_back(RunSession(p, Mode::kOutside, n));
    ratios.push_back(outside.back() / masked.back());
    printf("round %d: masked-out %7.1f ns/collective, outside the window %7.1f; outside / masked-out %.2fx\n", r + 1,
           masked.back(), outside.back(), ratios.back());
  }
  printf("median of %d rounds (%llu collectives of 13 callbacks each): masked-out %.1f ns, outside %.1f ns "
         "(%.1f ns per callback); outside / masked-out %.2fx (target at most 1.5x)\n",
         rounds, static_cast<unsigned long long>(n), Median(masked), Median(outside), Median(outside) / 13,
         Median(ratios));
  return 0;
}
