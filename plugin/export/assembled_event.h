// One event as the assembler hands it to the layout: joined from its Start, State and Stop
// records, with host times in CLOCK_MONOTONIC ns, GPU stamps raw, strings resolved (null = none)
// and the completion facts (incomplete, late, GPU extent) decided with the whole run in view.
// What is particular to its kind stays in its Start fields as recorded (StartFieldsOf), read by
// the kind schema (katrace/kind_schema.h); the members here are what every kind has, or what
// places it (track coordinates, GPU stamps).
#ifndef KATRACE_PLUGIN_EXPORT_ASSEMBLED_EVENT_H_
#define KATRACE_PLUGIN_EXPORT_ASSEMBLED_EVENT_H_

#include <stdint.h>
#include <string.h>

#include <string>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"

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
// Interned strings of a kind's fields other than func (Coll: datatype, algo, proto), resolved in
// the order its schema lists them.
constexpr int kMaxTexts = 3;

struct AssembledEvent {
  uint64_t id = 0;
  uint64_t parent_id = 0;  // 0 = no recorded parent
  uint64_t comm_hash = 0;
  uint64_t start_ns = 0;
  uint64_t stop_ns = 0;
  uint64_t launch_ns = 0;  // host start of the Coll/P2p that launched its GPU work (itself for those)
  uint64_t gpu_start = 0;
  uint64_t gpu_stop = 0;
  uint64_t gpu_ready = 0;
  const std::string* func = nullptr;
  const std::string* text[kMaxTexts] = {};
  uint64_t state_value = 0;  // the value a state carried: ProxyStep transSize, ProxyCtrl appended ops
  uint64_t state_ns[kMaxStates] = {};
  int32_t state_id[kMaxStates] = {};  // NCCL state numbers, any int
  int32_t rank = 0;
  int32_t peer = 0;        // track coordinates (kind_schema.h: peer_at, channel_at), inherited by a ProxyStep
  uint32_t updates = 0;    // NetPlugin update states
  uint32_t os_tid = 0;
  uint16_t context = 0;
  uint16_t flags = 0;
  Kind kind = Kind::kGroup;
  uint8_t channel = 0;
  uint8_t nstates = 0;
  // The bytes of one element of its datatype, read off the datatype's name when its Start fields
  // were read (ReadSchemaFields), so the layout's thread need not; 1 without a datatype.
  uint8_t element_bytes = 1;
  int32_t comm_index = -1;  // into SpoolIndex::comms, -1 = unknown communicator
  // The Start fields of its kind, as recorded (zero past a short record).
  alignas(8) uint8_t fields[spool::kMaxStartFieldsBytes] = {};

  template <Kind K>
  spool::StartFields<K> Fields() const {
    spool::StartFields<K> f;
    memcpy(&f, fields, sizeof(f));
    return f;
  }
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_ASSEMBLED_EVENT_H_
