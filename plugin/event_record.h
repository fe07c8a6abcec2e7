// The compact, pointer-stable record of one event. It is built inside the event's pool slot while
// the event is live and copied into the writer queue when the event completes, so the trace never
// depends on the pool: pool slots are recycled at once. Strings are NCCL's static strings.
#ifndef KATRACE_PLUGIN_EVENT_RECORD_H_
#define KATRACE_PLUGIN_EVENT_RECORD_H_

#include <stdint.h>

#include "katrace/event_kinds.h"

namespace katrace {

enum RecordFlags : uint16_t {
  kFlagIncomplete = 1 << 0,     // never stopped; closed at finalize
  kFlagSend = 1 << 1,           // ProxyOp/ProxyStep/KernelStep direction
  kFlagGraphCaptured = 1 << 2,
  kFlagAbandoned = 1 << 3,      // KernelStep whose stop never came
  kFlagLateChild = 1 << 4,      // parent had already completed when this event started
  kFlagHasGpuExtent = 1 << 5,   // Coll/P2p: gpu_start/gpu_stop hold the children's extent
  kFlagGpuStopSeen = 1 << 6,    // KernelCh/KernelStep: the GPU stop stamp arrived
  kFlagDirectionKnown = 1 << 7,
};

constexpr int kMaxStates = 4;

struct EventRecord {
  uint64_t id;         // unique per process, never 0
  uint64_t parent_id;  // 0 = no recorded parent
  uint64_t comm_hash;
  uint64_t start_ns;   // host monotonic, when the start callback ran
  uint64_t stop_ns;    // host monotonic, when the stop callback ran
  uint64_t gpu_start;  // %globaltimer ns (KernelCh, KernelStep; Coll/P2p: children's extent)
  uint64_t gpu_stop;
  uint64_t gpu_ready;  // KernelStep: transfer start
  int64_t gpu_offset;  // host_monotonic = gpu + gpu_offset, one value per communicator
  const char* func;
  const char* datatype;
  const char* algo;
  const char* proto;
  uint64_t count;
  uint64_t seq;
  uint64_t bytes;      // ProxyStep transSize, P2p/Coll payload, KernelStep size, CeBatch bytes
  uint64_t state_ns[kMaxStates];
  int32_t rank;
  int32_t peer;
  int32_t root;
  int32_t value;       // ProxyOp nSteps, ProxyStep step, GroupApi depth, ProxyCtrl appended ops
  int32_t value2;      // ProxyOp chunkSize, KernelStep step
  uint32_t os_tid;     // host thread of the start callback
  uint16_t context;    // context slot index, for per-communicator tables
  uint16_t flags;
  Kind kind;
  uint8_t channel;
  uint8_t nchannels;
  uint8_t nwarps;
  uint8_t state_id[kMaxStates];
  uint8_t nstates;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_EVENT_RECORD_H_
