// Capture, spool and export: N events through the real .so's exported ABI, back to back on one
// thread, into the spool on disk; finalize then closes the spool and builds the JSON trace.
// Reports the capture time (first to last callback: records reach the spool as fast as the
// writer thread moves them), the finalize time (the export), records per second into the spool,
// spool bytes per event, trace size, and the process's peak resident memory, which must not grow
// with N. The spool is kept next to the trace (KATRACE_KEEP_SPOOL=1) so its size can be read.
//
//   writer_bench PLUGIN.so EVENTS OUTPUT.json [channels]
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "bench/enqueue_collective.h"
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
  setenv("KATRACE_KEEP_SPOOL", "1", 1);
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
  // The emulated %globaltimer follows realtime, as a GPU's does (a timer running apart from the
  // host's would measure the export of garbage stamps): set from the host's clock every 64
  // collectives, advanced 200 ns a channel in between, each kernel running 100 ns.
  uint64_t gpu = 0;
  long long recorded = 0;
  for (long long i = 0; recorded < events; ++i) {
    void* h = nullptr;
    coll.coll.seqNumber = static_cast<uint64_t>(i);
    coll.coll.count = static_cast<size_t>(1024 + (i & 1023));
    if ((i & 63) == 0) gpu = katrace_bench::RealtimeNs();
    p->startEvent(ctx, &h, &coll);
    p->stopEvent(h);
    ++recorded;
    for (int c = 0; c < channels && recorded < events; ++c, ++recorded) {
      void* k = nullptr;
      kch.parentObj = h;
      kch.kernelCh.channelId = static_cast<uint8_t>(c);
      kch.kernelCh.pTimer = gpu;
      p->startEvent(ctx, &k, &kch);
      args.kernelCh.pTimer = gpu + 100;
      gpu += 200;
      p->recordEventState(k, ncclProfilerKernelChStop, &args);
      p->stopEvent(k);
    }
  }
  double t_calls = Seconds() - t0;
  p->finalize(ctx);
  double t_total = Seconds() - t0;
  struct stat st;
  long long bytes = stat(argv[3], &st) == 0 ? static_cast<long long>(st.st_size) : -1;
  std::string spool = std::string(argv[3]) + ".kspool";
  long long spool_bytes = stat(spool.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
  unlink(spool.c_str());
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  // Coll: start + stop; KernelCh: start + state + stop.
  long long colls = channels == 0 ? events : (events + channels) / (channels + 1);
  long long records = 2 * colls + 3 * (events - colls);
  printf("events %lld  capture %.2f s (%.1f M records/s into the spool)  finalize (export) %.2f s  "
         "spool %.1f B/event  trace %.1f MiB  peak RSS %.1f MiB\n",
         events, t_calls, static_cast<double>(records) / t_calls / 1e6, t_total - t_calls,
         static_cast<double>(spool_bytes) / static_cast<double>(events), static_cast<double>(bytes) / (1 << 20),
         static_cast<double>(ru.ru_maxrss) / 1024.0);
  return bytes > 0 ? 0 : 1;
}
