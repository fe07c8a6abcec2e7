// NCCL profiler ABI v6 (NCCL 2.29.2+): v5 plus the copy-engine events (CeColl, CeSync, CeBatch),
// plus the KernelStep extension (PR #2316's layout) as one more union member (32 bytes, so the
// descriptor stays 112 bytes and every v5 offset is unchanged).
#ifndef NCCL_PROFILER_V6_H_
#define NCCL_PROFILER_V6_H_

#include <stdbool.h>
#include "nccl_profiler/common.h"
#include "nccl_profiler/kernel_step.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef ncclProfilerEventState_t ncclProfilerEventState_v6_t;

typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
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
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
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
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      const char* syncStrategy;  // "MC" or "UC"
      bool intraBatchSync;
      uint32_t batchSize;
      uint32_t numBatches;
      uint32_t ceSeqNum;
      void* stream;
    } ceColl;
    struct {
      bool isComplete;
      int nRanks;
    } ceCollSync;
    struct {
      int numOps;
      size_t totalBytes;
      bool useIntraSync;
    } ceCollBatch;
    ncclProfilerKernelStepDescr_t kernelStep;  // PR #2316's fork (kernel_step.h)
  };
} ncclProfilerEventDescr_v6_t;

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
  struct {
    uint64_t pTimer;  // GPU stop of the slice, %globaltimer ns (katrace extension)
  } kernelStep;
} ncclProfilerEventStateArgs_v6_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask,
                       const char* commName, int nNodes, int nranks, int rank,
                       ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_v6_t eState,
                                   ncclProfilerEventStateArgs_v6_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v6_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#if defined(__x86_64__) || defined(__aarch64__)
#define NCCL_PROFILER_V6_OFFSET(member, off) \
  NCCL_PROFILER_ABI_ASSERT(offsetof(ncclProfilerEventDescr_v6_t, member) == off, "v6 " #member)
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfilerEventDescr_v6_t) == 112, "v6 descriptor size");
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfilerEventStateArgs_v6_t) == 8, "v6 state args size");
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfiler_v6_t) == 48, "v6 function table size");
NCCL_PROFILER_V6_OFFSET(type, 0);
NCCL_PROFILER_V6_OFFSET(parentObj, 8);
NCCL_PROFILER_V6_OFFSET(rank, 16);
NCCL_PROFILER_V6_OFFSET(groupApi.graphCaptured, 24);
NCCL_PROFILER_V6_OFFSET(groupApi.groupDepth, 28);
NCCL_PROFILER_V6_OFFSET(collApi.func, 24);
NCCL_PROFILER_V6_OFFSET(collApi.count, 32);
NCCL_PROFILER_V6_OFFSET(collApi.datatype, 40);
NCCL_PROFILER_V6_OFFSET(collApi.root, 48);
NCCL_PROFILER_V6_OFFSET(collApi.stream, 56);
NCCL_PROFILER_V6_OFFSET(collApi.graphCaptured, 64);
NCCL_PROFILER_V6_OFFSET(p2pApi.func, 24);
NCCL_PROFILER_V6_OFFSET(p2pApi.count, 32);
NCCL_PROFILER_V6_OFFSET(p2pApi.datatype, 40);
NCCL_PROFILER_V6_OFFSET(p2pApi.stream, 48);
NCCL_PROFILER_V6_OFFSET(p2pApi.graphCaptured, 56);
NCCL_PROFILER_V6_OFFSET(kernelLaunch.stream, 24);
NCCL_PROFILER_V6_OFFSET(coll.seqNumber, 24);
NCCL_PROFILER_V6_OFFSET(coll.func, 32);
NCCL_PROFILER_V6_OFFSET(coll.sendBuff, 40);
NCCL_PROFILER_V6_OFFSET(coll.recvBuff, 48);
NCCL_PROFILER_V6_OFFSET(coll.count, 56);
NCCL_PROFILER_V6_OFFSET(coll.root, 64);
NCCL_PROFILER_V6_OFFSET(coll.datatype, 72);
NCCL_PROFILER_V6_OFFSET(coll.nChannels, 80);
NCCL_PROFILER_V6_OFFSET(coll.nWarps, 81);
NCCL_PROFILER_V6_OFFSET(coll.algo, 88);
NCCL_PROFILER_V6_OFFSET(coll.proto, 96);
NCCL_PROFILER_V6_OFFSET(coll.parentGroup, 104);
NCCL_PROFILER_V6_OFFSET(p2p.func, 24);
NCCL_PROFILER_V6_OFFSET(p2p.buff, 32);
NCCL_PROFILER_V6_OFFSET(p2p.datatype, 40);
NCCL_PROFILER_V6_OFFSET(p2p.count, 48);
NCCL_PROFILER_V6_OFFSET(p2p.peer, 56);
NCCL_PROFILER_V6_OFFSET(p2p.nChannels, 60);
NCCL_PROFILER_V6_OFFSET(p2p.parentGroup, 64);
NCCL_PROFILER_V6_OFFSET(proxyOp.pid, 24);
NCCL_PROFILER_V6_OFFSET(proxyOp.channelId, 28);
NCCL_PROFILER_V6_OFFSET(proxyOp.peer, 32);
NCCL_PROFILER_V6_OFFSET(proxyOp.nSteps, 36);
NCCL_PROFILER_V6_OFFSET(proxyOp.chunkSize, 40);
NCCL_PROFILER_V6_OFFSET(proxyOp.isSend, 44);
NCCL_PROFILER_V6_OFFSET(proxyStep.step, 24);
NCCL_PROFILER_V6_OFFSET(kernelCh.channelId, 24);
NCCL_PROFILER_V6_OFFSET(kernelCh.pTimer, 32);
NCCL_PROFILER_V6_OFFSET(netPlugin.id, 24);
NCCL_PROFILER_V6_OFFSET(netPlugin.data, 32);
NCCL_PROFILER_V6_OFFSET(ceColl.seqNumber, 24);
NCCL_PROFILER_V6_OFFSET(ceColl.func, 32);
NCCL_PROFILER_V6_OFFSET(ceColl.sendBuff, 40);
NCCL_PROFILER_V6_OFFSET(ceColl.recvBuff, 48);
NCCL_PROFILER_V6_OFFSET(ceColl.count, 56);
NCCL_PROFILER_V6_OFFSET(ceColl.root, 64);
NCCL_PROFILER_V6_OFFSET(ceColl.datatype, 72);
NCCL_PROFILER_V6_OFFSET(ceColl.syncStrategy, 80);
NCCL_PROFILER_V6_OFFSET(ceColl.intraBatchSync, 88);
NCCL_PROFILER_V6_OFFSET(ceColl.batchSize, 92);
NCCL_PROFILER_V6_OFFSET(ceColl.numBatches, 96);
NCCL_PROFILER_V6_OFFSET(ceColl.ceSeqNum, 100);
NCCL_PROFILER_V6_OFFSET(ceColl.stream, 104);
NCCL_PROFILER_V6_OFFSET(ceCollSync.isComplete, 24);
NCCL_PROFILER_V6_OFFSET(ceCollSync.nRanks, 28);
NCCL_PROFILER_V6_OFFSET(ceCollBatch.numOps, 24);
NCCL_PROFILER_V6_OFFSET(ceCollBatch.totalBytes, 32);
NCCL_PROFILER_V6_OFFSET(ceCollBatch.useIntraSync, 40);
// KernelStep as PR #2316's fork lays it out (natural alignment). With isSend a byte (the default):
// channelId @24, isSend @25, peer @26, step @28, size @32, startTs @40, readyTs @48.
#define NCCL_PROFILER_V6_KERNEL_STEP(at_is_send, at_peer, at_step, at_size, at_start, at_ready) \
  NCCL_PROFILER_V6_OFFSET(kernelStep.channelId, 24);                                      \
  NCCL_PROFILER_V6_OFFSET(kernelStep.isSend, at_is_send);                                 \
  NCCL_PROFILER_V6_OFFSET(kernelStep.peer, at_peer);                                      \
  NCCL_PROFILER_V6_OFFSET(kernelStep.step, at_step);                                      \
  NCCL_PROFILER_V6_OFFSET(kernelStep.size, at_size);                                      \
  NCCL_PROFILER_V6_OFFSET(kernelStep.startTs, at_start);                                  \
  NCCL_PROFILER_V6_OFFSET(kernelStep.readyTs, at_ready)
#if KATRACE_KERNEL_STEP_IS_SEND_BYTES == 1
NCCL_PROFILER_V6_KERNEL_STEP(25, 26, 28, 32, 40, 48);
#elif KATRACE_KERNEL_STEP_IS_SEND_BYTES == 2
NCCL_PROFILER_V6_KERNEL_STEP(26, 28, 32, 36, 40, 48);
#else
NCCL_PROFILER_V6_KERNEL_STEP(28, 32, 36, 40, 48, 56);
#endif
#undef NCCL_PROFILER_V6_KERNEL_STEP
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfilerKernelStepIsSend_t) == KATRACE_KERNEL_STEP_IS_SEND_BYTES,
                         "isSend has the configured width");
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfilerKernelStepDescr_t) <= 88, "KernelStep member must fit the union");
#undef NCCL_PROFILER_V6_OFFSET
#endif

#endif  // NCCL_PROFILER_V6_H_
