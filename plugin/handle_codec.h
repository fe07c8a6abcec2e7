// Event handles and context values are encoded integers, not pointers. NCCL treats both as opaque
// (it only compares them with NULL), so katrace never dereferences a value it did not make:
// a handle decodes to (context slot, kind, pool slot, generation) and is checked against the
// live tables. A stale handle (its slot recycled) fails the generation check; a foreign or
// garbage pointer fails the magic nibble, since user-space pointers have 0 in the top nibble.
#ifndef KATRACE_PLUGIN_HANDLE_CODEC_H_
#define KATRACE_PLUGIN_HANDLE_CODEC_H_

#include <stdint.h>

#include "katrace/event_kinds.h"

namespace katrace {

// Handle layout: [63:60] magic | [59:50] context slot | [49:45] kind | [44:24] pool slot |
// [23:0] generation. The magic has two values: an event inside the capture window, and one
// outside it (capture_window.h). The verdict travels in the handle value itself because a child
// may start after its parent's slot went to another event (a Coll starts after its CollApi
// stopped), and it must still inherit its root's verdict.
constexpr uint64_t kHandleMagic = 0xA;
constexpr uint64_t kHandleMagicOutside = 0xE;
constexpr int kContextBits = 10;
constexpr uint32_t kMaxContexts = 1u << kContextBits;
constexpr int kSlotBits = 21;
constexpr int kGenerationBits = 24;
constexpr uint32_t kGenerationMask = (1u << kGenerationBits) - 1;

// The slot of an event katrace neither records nor needs for its children's sake (an API or Group
// parent NCCL starts only because a descendant's bit is on): the handle is valid, names no slot,
// and stop/record on it return at once; its generation field carries the mask NCCL used for its
// task, for its children (slot_links.h, PackMask). Pool sizes stay below it.
constexpr uint32_t kUntrackedSlot = (1u << kSlotBits) - 1;

// True when |handle| cannot name a slot: its slot field is the untracked one (whatever its other
// bits say, stop and record on it would do nothing). The cheapest test, for stop and record to
// return at once on the handles NCCL passes most often.
inline bool NamesNoSlot(const void* handle) {
  return ((reinterpret_cast<uint64_t>(handle) >> 24) & kUntrackedSlot) == kUntrackedSlot;
}

struct HandleFields {
  uint32_t context;
  Kind kind;
  uint32_t slot;
  uint32_t generation;
  bool outside;  // the event's root was outside the capture window
};

inline void* EncodeHandle(uint32_t context, Kind kind, uint32_t slot, uint32_t generation, bool outside = false) {
  uint64_t v = ((outside ? kHandleMagicOutside : kHandleMagic) << 60) | (static_cast<uint64_t>(context) << 50) |
               (static_cast<uint64_t>(kind) << 45) | (static_cast<uint64_t>(slot) << 24) |
               (generation & kGenerationMask);
  return reinterpret_cast<void*>(v);
}

inline bool DecodeHandle(const void* handle, HandleFields* out) {
  uint64_t v = reinterpret_cast<uint64_t>(handle);
  if ((v >> 60) != kHandleMagic && (v >> 60) != kHandleMagicOutside) return false;
  out->outside = (v >> 60) == kHandleMagicOutside;
  uint32_t kind = static_cast<uint32_t>((v >> 45) & 0x1f);
  if (kind >= static_cast<uint32_t>(kKindCount)) return false;
  out->context = static_cast<uint32_t>((v >> 50) & (kMaxContexts - 1));
  out->kind = static_cast<Kind>(kind);
  out->slot = static_cast<uint32_t>((v >> 24) & ((1u << kSlotBits) - 1));
  out->generation = static_cast<uint32_t>(v & kGenerationMask);
  return true;
}

// Context values: [63:60] magic | [59:50] context slot | [49:0] serial of the context in that
// slot, so a context value from an earlier occupant of the slot is recognised as stale.
constexpr uint64_t kContextMagic = 0xB;
constexpr uint64_t kContextSerialMask = (1ull << 50) - 1;

inline void* EncodeContext(uint32_t slot, uint64_t serial) {
  return reinterpret_cast<void*>((kContextMagic << 60) | (static_cast<uint64_t>(slot) << 50) |
                                 (serial & kContextSerialMask));
}

// The context slot field of a context value, in place: a handle's sits at the same bits.
constexpr uint64_t kContextField = static_cast<uint64_t>(kMaxContexts - 1) << 50;

// The context value of a communicator that could not be profiled (every slot held a live one):
// slot 0, which no communicator of ours has, with a serial no communicator reaches. Its events are
// counted as dropped.
constexpr uint64_t kUnprofiledSerial = kContextSerialMask;
inline void* UnprofiledContext() { return EncodeContext(0, kUnprofiledSerial); }

inline bool DecodeContext(const void* context, uint32_t* slot, uint64_t* serial) {
  uint64_t v = reinterpret_cast<uint64_t>(context);
  if ((v >> 60) != kContextMagic) return false;
  *slot = static_cast<uint32_t>((v >> 50) & (kMaxContexts - 1));
  *serial = v & kContextSerialMask;
  return true;
}

}  // namespace katrace

#endif  // KATRACE_PLUGIN_HANDLE_CODEC_H_
