// One collective the way NCCL's enqueue path reports it, shared by the callback benchmarks:
// GroupApi (start, two states, stop), CollApi (start, stop), Group (start, stop), Coll (start,
// stop) and one KernelCh (start, KernelChStop, stop): 13 callbacks through a plugin's v6 table.
#ifndef KATRACE_BENCH_ENQUEUE_COLLECTIVE_H_
#define KATRACE_BENCH_ENQUEUE_COLLECTIVE_H_

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "nccl_profiler/v6.h"

namespace katrace_bench {

inline uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline ncclProfilerEventDescr_v6_t Descr(uint64_t type, void* parent) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof(d));
  d.type = type;
  d.parentObj = parent;
  return d;
}

// Collective |seq|; |*gpu| is the emulated %globaltimer. It follows realtime as a GPU's does:
// set from the host's clock every 64 collectives (a read per collective would add to every
// plugin's figure), advanced 200 ns a collective in between, each kernel running 100 ns. A timer
// that ran apart from the host's would be placed outside the run and measure the exporter's
// handling of garbage stamps instead of its ordinary path.
inline void EnqueueCollective(const ncclProfiler_v6_t* p, void* ctx, uint64_t seq, uint64_t* gpu) {
  if ((seq & 63) == 0) *gpu = RealtimeNs();
  void *group_api = nullptr, *coll_api = nullptr, *group = nullptr, *coll = nullptr, *kch = nullptr;
  ncclProfilerEventDescr_v6_t ga = Descr(ncclProfileGroupApi, nullptr);
  ga.groupApi.groupDepth = 1;
  p->startEvent(ctx, &group_api, &ga);
  ncclProfilerEventDescr_v6_t ca = Descr(ncclProfileCollApi, group_api);
  ca.collApi.func = "AllReduce";
  ca.collApi.count = 1 << 20;
  ca.collApi.datatype = "ncclFloat32";
  p->startEvent(ctx, &coll_api, &ca);
  p->stopEvent(coll_api);
  p->recordEventState(group_api, ncclProfilerGroupStartApiStop, nullptr);
  p->recordEventState(group_api, ncclProfilerGroupEndApiStart, nullptr);
  ncclProfilerEventDescr_v6_t g = Descr(ncclProfileGroup, nullptr);
  p->startEvent(ctx, &group, &g);
  ncclProfilerEventDescr_v6_t c = Descr(ncclProfileColl, coll_api);
  c.coll.seqNumber = seq;
  c.coll.func = "AllReduce";
  c.coll.datatype = "ncclFloat32";
  c.coll.count = 1 << 20;
  c.coll.algo = "RING";
  c.coll.proto = "SIMPLE";
  c.coll.nChannels = 1;
  c.coll.parentGroup = group;
  p->startEvent(ctx, &coll, &c);
  p->stopEvent(coll);
  p->stopEvent(group);
  p->stopEvent(group_api);
  ncclProfilerEventDescr_v6_t k = Descr(ncclProfileKernelCh, coll);
  k.kernelCh.channelId = 0;
  k.kernelCh.pTimer = *gpu;
  p->startEvent(ctx, &kch, &k);
  ncclProfilerEventStateArgs_v6_t args;
  memset(&args, 0, sizeof(args));
  args.kernelCh.pTimer = *gpu + 100;
  p->recordEventState(kch, ncclProfilerKernelChStop, &args);
  p->stopEvent(kch);
  *gpu += 200;
}

}  // namespace katrace_bench

#endif  // KATRACE_BENCH_ENQUEUE_COLLECTIVE_H_
