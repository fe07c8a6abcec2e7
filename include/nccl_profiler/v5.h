// NCCL profiler ABI v5 (NCCL 2.28.x). v5 added the API events (GroupApi, CollApi, P2pApi,
// KernelLaunch), widened |type| to 64 bits, moved the legacy Group handle of Coll/P2p into
// |parentGroup| and moved commId to init's second argument.
#ifndef NCCL_PROFILER_V5_H_
#define NCCL_PROFILER_V5_H_

#include <stdbool.h>
#include "nccl_profiler/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef ncclProfilerEventState_t ncclProfilerEventState_v5_t;

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
  };
} ncclProfilerEventDescr_v5_t;

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
} ncclProfilerEventStateArgs_v5_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask,
                       const char* commName, int nNodes, int nranks, int rank,
                       ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_v5_t eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#if defined(__x86_64__) || defined(__aarch64__)
#define NCCL_PROFILER_V5_OFFSET(member, off) \
  NCCL_PROFILER_ABI_ASSERT(offsetof(ncclProfilerEventDescr_v5_t, member) == off, "v5 " #member)
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfilerEventDescr_v5_t) == 112, "v5 descriptor size");
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfilerEventStateArgs_v5_t) == 8, "v5 state args size");
NCCL_PROFILER_ABI_ASSERT(sizeof(ncclProfiler_v5_t) == 48, "v5 function table size");
NCCL_PROFILER_V5_OFFSET(type, 0);
NCCL_PROFILER_V5_OFFSET(parentObj, 8);
NCCL_PROFILER_V5_OFFSET(rank, 16);
NCCL_PROFILER_V5_OFFSET(groupApi.graphCaptured, 24);
NCCL_PROFILER_V5_OFFSET(groupApi.groupDepth, 28);
NCCL_PROFILER_V5_OFFSET(collApi.func, 24);
NCCL_PROFILER_V5_OFFSET(collApi.count, 32);
NCCL_PROFILER_V5_OFFSET(collApi.datatype, 40);
NCCL_PROFILER_V5_OFFSET(collApi.root, 48);
NCCL_PROFILER_V5_OFFSET(collApi.stream, 56);
NCCL_PROFILER_V5_OFFSET(collApi.graphCaptured, 64);
NCCL_PROFILER_V5_OFFSET(p2pApi.func, 24);
NCCL_PROFILER_V5_OFFSET(p2pApi.count, 32);
NCCL_PROFILER_V5_OFFSET(p2pApi.datatype, 40);
NCCL_PROFILER_V5_OFFSET(p2pApi.stream, 48);
NCCL_PROFILER_V5_OFFSET(p2pApi.graphCaptured, 56);
NCCL_PROFILER_V5_OFFSET(kernelLaunch.stream, 24);
NCCL_PROFILER_V5_OFFSET(coll.seqNumber, 24);
NCCL_PROFILER_V5_OFFSET(coll.func, 32);
NCCL_PROFILER_V5_OFFSET(coll.sendBuff, 40);
NCCL_PROFILER_V5_OFFSET(coll.recvBuff, 48);
NCCL_PROFILER_V5_OFFSET(coll.count, 56);
NCCL_PROFILER_V5_OFFSET(coll.root, 64);
NCCL_PROFILER_V5_OFFSET(coll.datatype, 72);
NCCL_PROFILER_V5_OFFSET(coll.nChannels, 80);
NCCL_PROFILER_V5_OFFSET(coll.nWarps, 81);
NCCL_PROFILER_V5_OFFSET(coll.algo, 88);
NCCL_PROFILER_V5_OFFSET(coll.proto, 96);
NCCL_PROFILER_V5_OFFSET(coll.parentGroup, 104);
NCCL_PROFILER_V5_OFFSET(p2p.func, 24);
NCCL_PROFILER_V5_OFFSET(p2p.buff, 32);
NCCL_PROFILER_V5_OFFSET(p2p.datatype, 40);
NCCL_PROFILER_V5_OFFSET(p2p.count, 48);
NCCL_PROFILER_V5_OFFSET(p2p.peer, 56);
NCCL_PROFILER_V5_OFFSET(p2p.nChannels, 60);
NCCL_PROFILER_V5_OFFSET(p2p.parentGroup, 64);
NCCL_PROFILER_V5_OFFSET(proxyOp.pid, 24);
NCCL_PROFILER_V5_OFFSET(proxyOp.channelId, 28);
NCCL_PROFILER_V5_OFFSET(proxyOp.peer, 32);
NCCL_PROFILER_V5_OFFSET(proxyOp.nSteps, 36);
NCCL_PROFILER_V5_OFFSET(proxyOp.chunkSize, 40);
NCCL_PROFILER_V5_OFFSET(proxyOp.isSend, 44);
NCCL_PROFILER_V5_OFFSET(proxyStep.step, 24);
NCCL_PROFILER_V5_OFFSET(kernelCh.channelId, 24);
NCCL_PROFILER_V5_OFFSET(kernelCh.pTimer, 32);
NCCL_PROFILER_V5_OFFSET(netPlugin.id, 24);
NCCL_PROFILER_V5_OFFSET(netPlugin.data, 32);
#undef NCCL_PROFILER_V5_OFFSET
#endif

#endif  // NCCL_PROFILER_V5_H_
