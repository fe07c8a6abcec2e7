// Writer throughput and memory: N events through the real .so's exported ABI into a JSON trace
// on disk. Reports wall time from the first callback until finalize returned (the writer has
// drained its queue and committed the file), events per second, file size, and the process's
// peak resident memory, which must not grow with N.
//
//   writer_bench PLUGIN.so EVENTS OUTPUT.json [channels]
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "nccl_profiler/v6.h"

static double Seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s PLUGIN.so EVENTS OUTPUT.json [kernelch-per-coll]\n", argv[0]);
    return 2;
  }
  const long long events = atoll(argv[2]);
  const int channels = argc > 4 ? atoi(argv[4]) : 0;
  if (events <= 0 || channels < 0 || channels > 64) {
    fprintf(stderr, "EVENTS must be positive and kernelch-per-coll in 0..64\n");
    return 2;
  }
  setenv("KATRACE_OUTPUT", argv[3], 1);
  setenv("KATRACE_SUMMARY", "0", 1);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  ncclProfiler_v6_t* p = lib ? static_cast<ncclProfiler_v6_t*>(dlsym(lib, "ncclProfiler_v6")) : nullptr;
  if (p == nullptr) {
    fprintf(stderr, "cannot load ncclProfiler_v6 from %s: %s\n", argv[1], dlerror());
    return 2;
  }
  int mask = 0;
  void* ctx = nullptr;
  double t0 = Seconds();
  p->init(&ctx, 0x77, &mask, "writer-bench", 1, 1, 0, nullptr);
  ncclProfilerEventDescr_v6_t coll;
  memset(&coll, 0, sizeof(coll));
  coll.type = ncclProfileColl;
  coll.coll.func = "AllReduce";
  coll.coll.datatype = "ncclFloat32";
  coll.coll.algo = "RING";
  coll.coll.proto = "SIMPLE";
  coll.coll.nChannels = static_cast<uint8_t>(channels);
  ncclProfilerEventDescr_v6_t kch;
  memset(&kch, 0, sizeof(kch));
  kch.type = ncclProfileKernelCh;
  ncclProfilerEventStateArgs_v6_t args;
  memset(&args, 0, sizeof(args));
  uint64_t gpu = 1ull << 60;
  long long recorded = 0;
  for (long long i = 0; recorded < events; ++i) {
    void* h = nullptr;
    coll.coll.seqNumber = static_cast<uint64_t>(i);
    coll.coll.count = static_cast<size_t>(1024 + (i & 1023));
    p->startEvent(ctx, &h, &coll);
    p->stopEvent(h);
    ++recorded;
    for (int c = 0; c < channels && recorded < events; ++c, ++recorded) {
      void* k = nullptr;
      kch.parentObj = h;
      kch.kernelCh.channelId = static_cast<uint8_t>(c);
      kch.kernelCh.pTimer = gpu;
      p->startEvent(ctx, &k, &kch);
      args.kernelCh.pTimer = gpu + 1000;
      gpu += 2048;
      p->recordEventState(k, ncclProfilerKernelChStop, &args);
      p->stopEvent(k);
    }
  }
  double t_calls = Seconds() - t0;
  p->finalize(ctx);
  double t_total = Seconds() - t0;
  struct stat st;
  long long bytes = stat(argv[3], &st) == 0 ? static_cast<long long>(st.st_size) : -1;
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("events %lld  callbacks %.2f s  total (writer drained, file committed) %.2f s  %.2f M events/s  "
         "file %.1f MiB  peak RSS %.1f MiB\n",
         events, t_calls, t_total, static_cast<double>(events) / t_total / 1e6, static_cast<double>(bytes) / (1 << 20),
         static_cast<double>(ru.ru_maxrss) / 1024.0);
  return bytes > 0 ? 0 : 1;
}
