// Scalar types, event type bits and event states shared by every profiler ABI version.
// Written from the documented NCCL profiler ABI facts (numbers and layouts only); NCCL's own
// headers are never included, so a plugin or a driver builds without NCCL installed.
#ifndef NCCL_PROFILER_COMMON_H_
#define NCCL_PROFILER_COMMON_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
#define NCCL_PROFILER_ABI_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define NCCL_PROFILER_ABI_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

// Guarded so that a translation unit that also includes nccl.h does not see two definitions.
#ifndef NCCL_H_
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
} ncclResult_t;
#endif

typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5,
} ncclDebugLogLevel;

// Subsystem flags passed as the logger's |flags| argument. Only the one we log under is named.
enum { NCCL_PROFILE = 0x4000 };

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file,
                                  int line, const char* fmt, ...);

typedef pid_t ncclPid_t;

// Event type bits: the descriptor's |type| holds exactly one; the activation mask is their OR.
enum {
  ncclProfileGroup = 1 << 0,
  ncclProfileColl = 1 << 1,
  ncclProfileP2p = 1 << 2,
  ncclProfileProxyOp = 1 << 3,
  ncclProfileProxyStep = 1 << 4,
  ncclProfileProxyCtrl = 1 << 5,
  ncclProfileKernelCh = 1 << 6,      // v3+
  ncclProfileNetPlugin = 1 << 7,     // v3+
  ncclProfileGroupApi = 1 << 8,      // v5+
  ncclProfileCollApi = 1 << 9,       // v5+
  ncclProfileP2pApi = 1 << 10,       // v5+
  ncclProfileKernelLaunch = 1 << 11, // v5+
  ncclProfileCeColl = 1 << 12,       // v6+
  ncclProfileCeSync = 1 << 13,       // v6+
  ncclProfileCeBatch = 1 << 14,      // v6+
};

// One enum for every version; numbers are what crosses the ABI, names differ between releases.
typedef enum {
  // 0-7: legacy ProxyOp states, deprecated since v4 and never emitted by current cores.
  ncclProfilerProxyOpSendPosted = 0,
  ncclProfilerProxyOpSendRemFifoWait = 1,
  ncclProfilerProxyOpSendTransmitted = 2,
  ncclProfilerProxyOpSendDone = 3,
  ncclProfilerProxyOpRecvPosted = 4,
  ncclProfilerProxyOpRecvReceived = 5,
  ncclProfilerProxyOpRecvTransmitted = 6,
  ncclProfilerProxyOpRecvDone = 7,
  ncclProfilerProxyStepSendGPUWait = 8,
  ncclProfilerProxyStepSendWait = 9,        // args: transSize
  ncclProfilerProxyStepRecvWait = 10,
  ncclProfilerProxyStepRecvFlushWait = 11,  // args: transSize
  ncclProfilerProxyStepRecvGPUWait = 12,
  ncclProfilerProxyCtrlIdle = 13,
  ncclProfilerProxyCtrlActive = 14,
  ncclProfilerProxyCtrlSleep = 15,
  ncclProfilerProxyCtrlWakeup = 16,
  ncclProfilerProxyCtrlAppend = 17,
  ncclProfilerProxyCtrlAppendEnd = 18,      // args: appendedProxyOps
  ncclProfilerProxyOpInProgress_v4 = 19,
  ncclProfilerProxyStepSendPeerWait_v4 = 20,  // may repeat for one step
  ncclProfilerNetPluginUpdate = 21,           // args: netPlugin.data
  ncclProfilerKernelChStop = 22,              // args: kernelCh.pTimer = GPU stop ns
  ncclProfilerGroupStartApiStop = 23,         // args pointer is NULL
  ncclProfilerGroupEndApiStart = 24,          // args pointer is NULL
  ncclProfilerCeCollStart = 25,               // 25-30: defined in v6, never emitted
  ncclProfilerCeCollComplete = 26,
  ncclProfilerCeSyncStart = 27,
  ncclProfilerCeSyncComplete = 28,
  ncclProfilerCeBatchStart = 29,
  ncclProfilerCeBatchComplete = 30,
} ncclProfilerEventState_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // NCCL_PROFILER_COMMON_H_
