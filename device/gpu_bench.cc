// GPU benchmark of KernelStep stamping: the demo ring kernel with stamping compiled off and on
// (every step, and every 8th), per launch and per step, plus the measured %globaltimer tick.
//
//   build/device/gpu_bench [--bench] [--launches N] [--ranks R] [--channels C]
//
// Prints a small table; exits 0 with "no GPU: ..." when none is present.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>

#include "device/demo_ring.h"
#include "device/globaltimer_tick.h"

namespace katrace {
namespace {

struct BenchArgs {
  int launches = 200;
  int ranks = 4;
  int channels = 4;
};

bool ParseArgs(int argc, char** argv, BenchArgs* args) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (strcmp(argv[i], "--bench") == 0) continue;
    if (strcmp(argv[i], "--launches") == 0 && has_value) {
      args->launches = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--ranks") == 0 && has_value) {
      args->ranks = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--channels") == 0 && has_value) {
      args->channels = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--bench] [--launches N] [--ranks R] [--channels C]\n", argv[0]);
      return false;
    }
  }
  return args->launches > 0 && args->ranks >= 2 && args->channels >= 1;
}

// Best of three rounds of |launches| launches, after a warm-up.
bool TimeBest(DemoRing* demo, bool stamping, int launches, double* us, std::string* error) {
  double ignored = 0;
  if (!demo->TimeLaunches(stamping, 5, &ignored, error)) return false;
  *us = 1e300;
  for (int round = 0; round < 3; ++round) {
    double round_us = 0;
    if (!demo->TimeLaunches(stamping, launches, &round_us, error)) return false;
    *us = std::min(*us, round_us);
  }
  return true;
}

int Run(const BenchArgs& args) {
  std::string why;
  if (!DemoRing::GpuAvailable(&why)) {
    printf("no GPU: %s\n", why.c_str());
    return 0;
  }
  GlobaltimerTick tick;
  if (!MeasureGlobaltimerTick(&tick, &why)) {
    fprintf(stderr, "tick: %s\n", why.c_str());
    return 1;
  }
  printf("gpu: %s\n", DemoRing::GpuName().c_str());
  printf("globaltimer tick: min %llu ns, mean %llu ns over %d changes\n",
         (unsigned long long)tick.min_ns, (unsigned long long)tick.mean_ns, tick.num_changes);
  printf(
      "demo: %d ranks x %d channels (one CTA each), 64 slices per launch, 256 threads, "
      "%d launches per round, best of 3\n",
      args.ranks, args.channels, args.launches);
  printf("%10s %14s %14s %10s %16s %14s %10s\n", "slice", "off us/launch", "on us/launch",
         "slowdown", "on ns/step/CTA", "on/8 us/launch", "slowdown");
  for (uint32_t slice_kib : {32u, 128u, 512u}) {
    DemoRingOptions options;
    options.num_ranks = args.ranks;
    options.num_channels = args.channels;
    options.slice_bytes = slice_kib << 10;
    DemoRingOptions sampled = options;
    sampled.sample_every = 8;
    DemoRing demo(options);
    DemoRing demo_sampled(sampled);
    double off_us = 0, on_us = 0, sampled_us = 0;
    if (!demo.Init(&why) || !TimeBest(&demo, false, args.launches, &off_us, &why) ||
        !TimeBest(&demo, true, args.launches, &on_us, &why) || !demo_sampled.Init(&why) ||
        !TimeBest(&demo_sampled, true, args.launches, &sampled_us, &why)) {
      fprintf(stderr, "slice %u KiB: %s\n", slice_kib, why.c_str());
      return 1;
    }
    // Each CTA stamps a send and a receive step per slice.
    const double steps_per_cta = 2.0 * options.slices_per_launch;
    printf("%7u KiB %14.1f %14.1f %9.2f%% %16.1f %14.1f %9.2f%%\n", slice_kib, off_us, on_us,
           100.0 * (on_us / off_us - 1.0), (on_us - off_us) * 1000.0 / steps_per_cta, sampled_us,
           100.0 * (sampled_us / off_us - 1.0));
  }
  return 0;
}

}  // namespace
}  // namespace katrace

int main(int argc, char** argv) {
  katrace::BenchArgs args;
  if (!katrace::ParseArgs(argc, argv, &args)) return 2;
  return katrace::Run(args);
}
