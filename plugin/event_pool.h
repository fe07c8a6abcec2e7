// Fixed-capacity pool of live events of one kind in one communicator. A slot is taken at start
// and given back exactly when the event and all its children are done (holds reach zero), so a
// live slot is never reused; the free list is a FIFO so a just-freed slot is reused last, which
// keeps its tombstone (the last occupant's record id) readable for late children as long as
// possible. An event that never stops keeps one slot and nothing else. The free list belongs to
// the pool's first thread, without locked operations, until a second thread uses it
// (thread_biased_free_list.h).
#ifndef KATRACE_PLUGIN_EVENT_POOL_H_
#define KATRACE_PLUGIN_EVENT_POOL_H_

#include <sched.h>
#include <unistd.h>
#include <stdint.h>

#include <atomic>
#include <memory>

#include "plugin/slot_state.h"
#include "plugin/thread_biased_free_list.h"

namespace katrace {

// The fixed tag at offset 0 of every slot: "KATRACE" + format version.
constexpr uint64_t kSlotTag = 0x4b41545241434501ull;

// What a live event needs while NCCL holds its handle: the event itself is in the capture
// buffer, so a slot carries only identity, life state and the few facts its children copy.
struct EventSlot {
  uint64_t tag = kSlotTag;
  std::atomic<uint64_t> state{0};  // see slot_state.h
  // (generation << 40) | record id of the last completed occupant.
  std::atomic<uint64_t> tombstone{0};
  // (generation << 40) | the task's mask snapshot, packed (slot_links.h): what NCCL's mask was for
  // this event's task, which its children follow. Written at start, readable after completion.
  std::atomic<uint64_t> task_mask{0};
  // Announced KernelCh children that were not recorded (dropped): the export must stop waiting.
  std::atomic<uint32_t> unrecorded_awaited{0};
  // KernelCh, KernelStep: the host time of its GPU stop state (0 before it; spool::GpuStopStateOf)
  // and the state's GPU stop stamp, which its stop writes in its own record
  // (spool::kStopCarriesGpuStop): NCCL's proxy reports the two back to back, and a second clock
  // read or record would tell the export nothing. |gpu_stop| is written first; |done_ticks|
  // publishes it.
  std::atomic<uint64_t> done_ticks{0};
  std::atomic<uint64_t> gpu_stop{0};
  // The parent whose hold this event owns, as its handle decoded (|holds_parent| false: none).
  HandleFields parent{};
  bool holds_parent = false;
  uint64_t id = 0;
  uint64_t nvtx_range = 0;
  uint32_t func = 0;      // interned func name, copied by KernelCh/KernelStep children
  int32_t peer = 0;       // ProxyOp: copied by its ProxySteps
  uint8_t channel = 0;    // ProxyOp
  uint8_t direction = 0;  // ProxyOp: 1 send, 2 recv
  bool recorded = false;  // its Start reached the capture buffer, so its State/Stop go there too
};

class EventPool {
 public:
  // |owner|: the thread that has the free list to itself at first (ThisThreadToken()), or 0.
  EventPool(uint32_t size, uint32_t first_generation, uintptr_t owner)
      : size_(size), slots_(new EventSlot[size]), free_(size, owner) {
    for (uint32_t i = 0; i < size; ++i) {
      slots_[i].state.store(SlotState::Free(first_generation), std::memory_order_relaxed);
      free_.TryPush(i);
    }
  }

  uint32_t size() const { return size_; }
  // Memory the pool holds (slots and free list), for the retired-pool budget.
  size_t bytes() const { return static_cast<size_t>(size_) * (sizeof(EventSlot) + 2 * sizeof(uint64_t) + sizeof(uint32_t)); }
  EventSlot& slot(uint32_t i) { return slots_[i]; }
  // Whether its first thread still has the free list to itself.
  bool single_threaded() const { return free_.owned(); }

  // Returns false when every slot is live. A pop also fails while the next free slot sits behind
  // a push another thread has begun and not yet published: the free list is a FIFO, so once that
  // thread is preempted, every slot freed after it waits behind it. The free list then still
  // counts slots (ApproxSize), and the caller waits for that thread rather than drop the event:
  // a few yields, then short sleeps, up to about 100 ms, so that a state nothing explains costs
  // a drop, never a hang. The first pop is inline: the common case pays for no call and no
  // stack frame.
  bool Acquire(uint32_t* index) {
    if (__builtin_expect(free_.TryPop(index), 1)) return true;
    return AcquireAfterMiss(index);
  }
  // The free list can never hold more than every slot, so a push that finds it "full" only met a
  // pop still in progress on that cell (one lap behind): wait for it rather than lose the slot.
  void Release(uint32_t index) {
    while (!free_.TryPush(index)) sched_yield();
  }

 private:
  __attribute__((noinline)) bool AcquireAfterMiss(uint32_t* index) {
    constexpr int kYields = 64, kSleeps = 2000;
    for (int attempt = 0; attempt < kYields + kSleeps; ++attempt) {
      if (free_.ApproxSize() == 0) return false;
      if (attempt < kYields) {
        sched_yield();
      } else {
        usleep(50);
      }
      if (free_.TryPop(index)) return true;
    }
    return false;
  }

  uint32_t size_;
  std::unique_ptr<EventSlot[]> slots_;
  ThreadBiasedFreeList free_;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_EVENT_POOL_H_
