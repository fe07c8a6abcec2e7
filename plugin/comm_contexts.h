// The communicator table: the slot each communicator holds from init to finalize, its event pools,
// and the retirement of both. Kept apart from the callbacks because everything here but the
// lookups is cold (init, finalize, the writer's pass); the lookups are inline so the callbacks
// pay nothing for the split.
#ifndef KATRACE_PLUGIN_COMM_CONTEXTS_H_
#define KATRACE_PLUGIN_COMM_CONTEXTS_H_

#include <stdint.h>

#include "plugin/profiler.h"
#include "plugin/session_state.h"

namespace katrace {
namespace core {

// A finalized communicator's pools are freed this long after its finalize, by the spool writer
// thread: a callback that resolved a handle just before the finalize has long left by then.
constexpr uint64_t kRetireGraceNs = 200 * 1000 * 1000;

inline Context* ContextAt(Session* s, uint32_t index) {
  return index < kMaxContexts ? s->contexts[index].load(std::memory_order_acquire) : nullptr;
}

// The live communicator a context value names, or null (stale, foreign, garbage or the foreign
// slot itself).
__attribute__((always_inline)) inline Context* LookupContext(Session* s, void* value) {
  uint32_t index = 0;
  uint64_t serial = 0;
  if (value == nullptr || !DecodeContext(value, &index, &serial) || index == kForeignContext) return nullptr;
  Context* ctx = ContextAt(s, index);
  return ctx != nullptr && (ctx->serial & kContextSerialMask) == serial ? ctx : nullptr;
}

// The first event of a kind in a communicator makes its pool (a lock, once); null when out of
// memory. Out of line, so the common case below inlines into the callbacks.
EventPool* MakePool(Session* s, Context* ctx, Kind kind);

inline EventPool* GetPool(Session* s, Context* ctx, Kind kind) {
  EventPool* pool = ctx->pools[static_cast<int>(kind)].load(std::memory_order_acquire);
  return __builtin_expect(pool != nullptr, 1) ? pool : MakePool(s, ctx, kind);
}

// Init, under g_lifecycle: gives the communicator a slot, writes its Comm record and sets NCCL's
// mask for the first one. *context stays null when no slot could be had (it is not profiled).
ncclResult_t OpenContext(Session* s, const InitArgs& a, void** context);

// Finalize, under g_lifecycle: the communicator is gone. No lookup finds it any more, and its pools
// are freed after the grace period, after which the slot can take a new communicator.
void RetireContext(Session* s, Context* ctx);

// Frees the pools retired before |older_than_ns| (monotonic) and makes their slots reusable.
void FreeRetiredPools(Session* s, uint64_t older_than_ns);

// Coll/P2p tasks holding a slot (started, not completed), counted from the pools on the writer
// thread so the callbacks keep no shared counter; |enough| stops the count early. A pool read here
// cannot be freed meanwhile: the writer thread frees retired pools itself, and others only after
// the grace period.
int64_t TasksInFlight(Session* s, int64_t enough);

}  // namespace core
}  // namespace katrace

#endif  // KATRACE_PLUGIN_COMM_CONTEXTS_H_
