// One event as the assembler hands it to the layout: joined from its Start, State and Stop
// records, with host times in CLOCK_MONOTONIC ns, GPU stamps raw, strings resolved (null = none)
// and the completion facts (incomplete, late, GPU extent) decided with the whole run in view.
#ifndef KATRACE_PLUGIN_EXPORT_ASSEMBLED_EVENT_H_
#define KATRACE_PLUGIN_EXPORT_ASSEMBLED_EVENT_H_

#include <stdint.h>

#include <string>

#include "katrace/event_kinds.h"

namespace katrace {
namespace exporting {

enum EventFlags : uint16_t {
  kEvIncomplete = 1 << 0,     // no Stop before the end of the spool
  kEvSend = 1 << 1,           // ProxyOp/ProxyStep/KernelStep direction
  kEvGraphCaptured = 1 << 2,
  kEvAbandoned = 1 << 3,      // KernelStep whose stop never came
  kEvLateChild = 1 << 4,      // its parent had completed before it started
  kEvHasGpuExtent = 1 << 5,   // Coll/P2p: gpu_start/gpu_stop hold the children's extent
  kEvGpuStopSeen = 1 << 6,    // KernelCh/KernelStep: the GPU stop stamp arrived
  kEvDirectionKnown = 1 << 7,
};

constexpr int kMaxStates = 4;

struct AssembledEvent {
  uint64_t id = 0;
  uint64_t parent_id = 0;  // 0 = no recorded parent
  uint64_t comm_hash = 0;
  uint64_t start_ns = 0;
  uint64_t stop_ns = 0;
  uint64_t gpu_start = 0;
  uint64_t gpu_stop = 0;
  uint64_t gpu_ready = 0;
  int64_t gpu_offset = 0;  // host_monotonic = gpu + gpu_offset, per communicator
  const std::string* func = nullptr;
  const std::string* datatype = nullptr;
  const std::string* algo = nullptr;
  const std::string* proto = nullptr;
  uint64_t count = 0;
  uint64_t seq = 0;    // Coll seq, NetPlugin id
  uint64_t bytes = 0;  // ProxyStep transSize, Coll/P2p payload, KernelStep size, CeBatch bytes
  uint64_t state_ns[kMaxStates] = {};
  int32_t state_id[kMaxStates] = {};  // NCCL state numbers, any int
  int32_t rank = 0;
  int32_t peer = 0;
  int32_t root = 0;
  int32_t value = 0;   // ProxyOp nSteps, ProxyStep step, GroupApi depth, ProxyCtrl appended ops, NetPlugin updates, CeBatch ops
  int32_t value2 = 0;  // ProxyOp chunkSize, KernelStep step
  uint32_t os_tid = 0;
  uint16_t context = 0;
  uint16_t flags = 0;
  Kind kind = Kind::kGroup;
  uint8_t channel = 0;
  uint8_t nchannels = 0;
  uint8_t nwarps = 0;
  uint8_t nstates = 0;
  int32_t comm_index = -1;  // into SpoolIndex::comms, -1 = unknown communicator
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_ASSEMBLED_EVENT_H_
