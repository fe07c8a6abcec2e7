// Cost per event through the exported ABI of the real .so (dlopen, ncclProfiler_v6), on one
// thread and on two threads sharing one communicator (no global lock on the hot path: the two
// threads should cost about what one does): the capture alone, each callback appending its
// record to its thread's buffer.
//
// The callbacks run in bursts of kBurst events with a pause between bursts in which the spool
// writer empties the buffers, so this measures a callback without writer pressure.
// sustained_bench measures the sustained regime, back to back with no pause.
//
// BM_Floor* measure, in the same run, the two operations no callback design with per-event host
// times and CAS slot states can leave out: a clock read and a locked compare-and-swap.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include <benchmark/benchmark.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "nccl_profiler/v6.h"

namespace {

ncclProfiler_v6_t* g_plugin = nullptr;
void* g_ctx = nullptr;
int g_mask = 0;
constexpr int64_t kBurst = 4096;  // well under a 1 MiB thread buffer (about 112 bytes per KernelCh)

// Between bursts: untimed, long enough for the spool writer to empty the buffer.
void BetweenBursts(benchmark::State& state, int64_t* n) {
  if (++*n % kBurst != 0) return;
  state.PauseTiming();
  struct timespec ts = {0, 10 * 1000 * 1000};
  nanosleep(&ts, nullptr);
  state.ResumeTiming();
}

void Setup(const char* plugin_path) {
  setenv("KATRACE_OUTPUT", "/tmp/katrace-callback-bench.json", 0);
  setenv("KATRACE_EXPORT", "off", 0);
  setenv("KATRACE_SUMMARY", "0", 0);
  void* lib = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    fprintf(stderr, "cannot load %s: %s\n", plugin_path, dlerror());
    exit(2);
  }
  g_plugin = static_cast<ncclProfiler_v6_t*>(dlsym(lib, "ncclProfiler_v6"));
  if (g_plugin == nullptr) {
    fprintf(stderr, "%s exports no ncclProfiler_v6\n", plugin_path);
    exit(2);
  }
  g_plugin->init(&g_ctx, 0xbe9c, &g_mask, "bench", 1, 1, 0, nullptr);
}

ncclProfilerEventDescr_v6_t CollDescr() {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof(d));
  d.type = ncclProfileColl;
  d.coll.func = "AllReduce";
  d.coll.datatype = "ncclFloat32";
  d.coll.count = 1 << 20;
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  d.coll.nChannels = 0;  // host-only Coll: it completes at stop
  return d;
}

// Coll start + stop.
void BM_CollStartStop(benchmark::State& state) {
  ncclProfilerEventDescr_v6_t d = CollDescr();
  int64_t n = 0;
  for (auto _ : state) {
    void* h = nullptr;
    g_plugin->startEvent(g_ctx, &h, &d);
    g_plugin->stopEvent(h);
    benchmark::DoNotOptimize(h);
    BetweenBursts(state, &n);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CollStartStop)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// KernelCh start + KernelChStop state + stop, under a live Coll parent (the parent is looked up
// and held, as for every GPU child).
void BM_KernelChStartStateStop(benchmark::State& state) {
  ncclProfilerEventDescr_v6_t cd = CollDescr();
  void* coll = nullptr;
  g_plugin->startEvent(g_ctx, &coll, &cd);
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof(d));
  d.type = ncclProfileKernelCh;
  d.parentObj = coll;
  d.kernelCh.channelId = static_cast<uint8_t>(state.thread_index());
  ncclProfilerEventStateArgs_v6_t args;
  memset(&args, 0, sizeof(args));
  int64_t n = 0;
  // The emulated GPU timer is the thread's own: NCCL reads pTimer from the GPU's memory, so a
  // shared counter here (one locked add per iteration, its cache line bouncing between the two
  // threads) would be charged to the plugin.
  uint64_t t = (1ull << 60) + (static_cast<uint64_t>(state.thread_index()) << 50);
  for (auto _ : state) {
    t += 2048;
    d.kernelCh.pTimer = t;
    void* h = nullptr;
    g_plugin->startEvent(g_ctx, &h, &d);
    args.kernelCh.pTimer = t + 1024;
    g_plugin->recordEventState(h, ncclProfilerKernelChStop, &args);
    g_plugin->stopEvent(h);
    BetweenBursts(state, &n);
  }
  g_plugin->stopEvent(coll);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KernelChStartStateStop)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// KernelStep start + KernelStepStop state + stop, under a live Coll parent, as the proxy drain
// reports a simple-prims slice (tools/sim and proxy_drain/kernel_step_emitter.cc): a send step
// with a measured wait, the GPU stamps the thread's own. One thread: the drain is per proxy.
void BM_KernelStepStartStateStop(benchmark::State& state) {
  ncclProfilerEventDescr_v6_t cd = CollDescr();
  void* coll = nullptr;
  g_plugin->startEvent(g_ctx, &coll, &cd);
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof(d));
  d.type = ncclProfileKernelStep;
  d.parentObj = coll;
  d.kernelStep.isSend = 1;
  d.kernelStep.peer = 1;
  d.kernelStep.size = 1 << 16;
  ncclProfilerEventStateArgs_v6_t args;
  memset(&args, 0, sizeof(args));
  int64_t n = 0;
  uint64_t t = 1ull << 60;
  for (auto _ : state) {
    t += 2048;
    d.kernelStep.step = static_cast<uint32_t>(n);
    d.kernelStep.startTs = t;
    d.kernelStep.readyTs = t + 256;
    void* h = nullptr;
    g_plugin->startEvent(g_ctx, &h, &d);
    args.kernelStep.pTimer = t + 1024;
    g_plugin->recordEventState(h, static_cast<ncclProfilerEventState_v6_t>(ncclProfilerKernelStepStop), &args);
    g_plugin->stopEvent(h);
    BetweenBursts(state, &n);
  }
  g_plugin->stopEvent(coll);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KernelStepStartStateStop)->UseRealTime();

// The floor under the two benchmarks above, on one thread. A Coll start + stop reads the clock
// twice and takes one locked operation (the stop's state CAS: the pool's own thread takes and gives
// back its slot without one); a KernelCh start + state + stop reads it twice (its stop takes its
// state's time) and takes three (the parent hold, the stop's state CAS, the parent's release).
// Their sum is what the callbacks cost before any instruction of their own. With more threads on
// one communicator the pools are shared, and a take and a give-back cost one locked operation
// each, as they all did before.
//
// One read of the plugin's host clock: rdtsc where it has an invariant TSC (plugin/capture/
// host_clock.h), clock_gettime(CLOCK_MONOTONIC) elsewhere.
void BM_FloorClockRead(benchmark::State& state) {
  for (auto _ : state) {
#if defined(__x86_64__)
    benchmark::DoNotOptimize(__rdtsc());
#else
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    benchmark::DoNotOptimize(ts);
#endif
  }
}
BENCHMARK(BM_FloorClockRead);

// One uncontended locked compare-and-swap on a line this thread owns, each depending on the last
// (as the slot state's CAS depends on the load before it).
void BM_FloorLockedCas(benchmark::State& state) {
  alignas(64) std::atomic<uint64_t> word{0};
  uint64_t expected = 0;
  for (auto _ : state) {
    while (!word.compare_exchange_strong(expected, expected + 1, std::memory_order_acq_rel)) {
    }
    ++expected;
  }
  benchmark::DoNotOptimize(expected);
}
BENCHMARK(BM_FloorLockedCas);

}  // namespace

int main(int argc, char** argv) {
  std::string plugin = argc > 1 && strncmp(argv[1], "--", 2) != 0 ? argv[1] : "build/libnccl-profiler-katrace.so";
  if (argc > 1 && strncmp(argv[1], "--", 2) != 0) {
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  benchmark::Initialize(&argc, argv);  // first: --help exits here, before a capture starts
  Setup(plugin.c_str());
  benchmark::RunSpecifiedBenchmarks();
  g_plugin->finalize(g_ctx);
  // The capture is only the benchmark's by-product; KATRACE_KEEP_SPOOL=1 keeps it for a look.
  const std::string spool = std::string(getenv("KATRACE_OUTPUT")) + ".kspool";
  const char* keep = getenv("KATRACE_KEEP_SPOOL");
  if (keep != nullptr && strcmp(keep, "1") == 0) {
    printf("plugin_callback_bench: the capture is kept in %s\n", spool.c_str());
  } else {
    unlink(spool.c_str());
    printf("plugin_callback_bench: the capture was removed (KATRACE_KEEP_SPOOL=1 keeps it)\n");
  }
  return 0;
}
