// NCCL profiler ABI v4 (NCCL 2.27.x): no API events, an 8-bit |type|, Coll/P2p parented by the
// legacy Group event, and commHash as init's fourth argument.
#ifndef NCCL_PROFILER_V4_H_
#define NCCL_PROFILER_V4_H_

#include <stdbool.h>
#include "nccl_profiler/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef ncclProfilerEventState_t ncclProfilerEventState_v4_t;

typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    struct {
      ncclPid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;  // GPU start, %globaltimer ns
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} ncclProfilerEventDescr_v4_t;

typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;  // GPU stop, %globaltimer ns
  } kernelCh;
} ncclProfilerEventStateArgs_v4_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, int* eActivationMask, const char* commName,
                       uint64_t commHash, int nNodes, int nranks, int rank,
                       ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v4_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_v4_t eState,
                                   ncclProfilerEventStateArgs_v4_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v4_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#if defined(__x86_64__) || defined(__aarch64__)
#define NCCL_PROFILER_V4_OFFSET(member, off) \
  NCCL_PROFILER_ABI_ASSERT(offsetof(ncclProfilerEventDescr_v4_t, member) == off, "v4 " #member)
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfilerEventDescr_v4_t) == 104, "v4 descriptor size");
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfilerEventStateArgs_v4_t) == 8, "v4 state args size");
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfiler_v4_t) == 48, "v4 function table size");
NCCL_PROFILER_V4_OFFSET(type, 0);
NCCL_PROFILER_V4_OFFSET(parentObj, 8);
NCCL_PROFILER_V4_OFFSET(rank, 16);
NCCL_PROFILER_V4_OFFSET(coll.seqNumber, 24);
NCCL_PROFILER_V4_OFFSET(coll.func, 32);
NCCL_PROFILER_V4_OFFSET(coll.sendBuff, 40);
NCCL_PROFILER_V4_OFFSET(coll.recvBuff, 48);
NCCL_PROFILER_V4_OFFSET(coll.count, 56);
NCCL_PROFILER_V4_OFFSET(coll.root, 64);
NCCL_PROFILER_V4_OFFSET(coll.datatype, 72);
NCCL_PROFILER_V4_OFFSET(coll.nChannels, 80);
NCCL_PROFILER_V4_OFFSET(coll.nWarps, 81);
NCCL_PROFILER_V4_OFFSET(coll.algo, 88);
NCCL_PROFILER_V4_OFFSET(coll.proto, 96);
NCCL_PROFILER_V4_OFFSET(p2p.func, 24);
NCCL_PROFILER_V4_OFFSET(p2p.buff, 32);
NCCL_PROFILER_V4_OFFSET(p2p.datatype, 40);
NCCL_PROFILER_V4_OFFSET(p2p.count, 48);
NCCL_PROFILER_V4_OFFSET(p2p.peer, 56);
NCCL_PROFILER_V4_OFFSET(p2p.nChannels, 60);
NCCL_PROFILER_V4_OFFSET(proxyOp.pid, 24);
NCCL_PROFILER_V4_OFFSET(proxyOp.channelId, 28);
NCCL_PROFILER_V4_OFFSET(proxyOp.peer, 32);
NCCL_PROFILER_V4_OFFSET(proxyOp.nSteps, 36);
NCCL_PROFILER_V4_OFFSET(proxyOp.chunkSize, 40);
NCCL_PROFILER_V4_OFFSET(proxyOp.isSend, 44);
NCCL_PROFILER_V4_OFFSET(proxyStep.step, 24);
NCCL_PROFILER_V4_OFFSET(kernelCh.channelId, 24);
NCCL_PROFILER_V4_OFFSET(kernelCh.pTimer, 32);
NCCL_PROFILER_V4_OFFSET(netPlugin.id, 24);
NCCL_PROFILER_V4_OFFSET(netPlugin.data, 32);
#undef NCCL_PROFILER_V4_OFFSET
#endif

#endif  // NCCL_PROFILER_V4_H_
