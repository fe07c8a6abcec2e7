// A pool's free list (slot indices, first in first out) that the thread which made the pool has
// to itself, with no locked instruction, for as long as no other thread takes or gives back a
// slot; from the first time one does, it is a lock-free MPMC FIFO shared by all (one
// compare-and-swap per push or pop), for good. Most pools are used by one thread only (a Coll's
// by the application's, a KernelCh's or a ProxyOp's by the proxy thread's), so most slots come
// and go without a locked operation, and the cross-thread cases keep today's atomics.
//
// The hand-over is the asymmetric Dekker pattern: the owner brackets each operation with a plain
// store to its busy flag and a load of the revoked flag (LightFence between them); the thread
// that revokes sets the flag, runs HeavyFence, after which the owner either sees the flag or has
// its busy flag visible, and waits until the owner is not busy before it moves the owner's FIFO,
// in order, into the shared one. So there is only ever one free list: the pool's capacity is
// exact (a slot is never hidden from another thread) and its FIFO order, which keeps a freed
// slot's tombstone readable as long as possible, is the same as it always was.
#ifndef KATRACE_PLUGIN_THREAD_BIASED_FREE_LIST_H_
#define KATRACE_PLUGIN_THREAD_BIASED_FREE_LIST_H_

#include <sched.h>
#include <stdint.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "plugin/asymmetric_fence.h"
#include "plugin/bounded_mpmc_queue.h"

namespace katrace {

// The calling thread, as a value no other live thread has: its thread pointer.
inline uintptr_t ThisThreadToken() { return reinterpret_cast<uintptr_t>(__builtin_thread_pointer()); }

class ThreadBiasedFreeList {
 public:
  // |owner|: the token of the thread that has the list to itself at first, or 0 for a list shared
  // from the start (where AsymmetricFenceAvailable() is false).
  ThreadBiasedFreeList(uint32_t capacity, uintptr_t owner) : shared_(capacity), owner_(owner) {
    if (owner != 0) {
      uint32_t ring = 1;
      while (ring < capacity) ring <<= 1;
      owned_storage_.reset(new uint32_t[ring]);
      owned_ = owned_storage_.get();
      owned_mask_ = ring - 1;
    } else {
      revoked_.store(true, std::memory_order_relaxed);
      shared_ready_.store(true, std::memory_order_relaxed);
    }
  }

  // True when a slot was taken; false when the list is empty (shared: or a push is in progress).
  bool TryPop(uint32_t* index) {
    if (owner_.load(std::memory_order_relaxed) == ThisThreadToken()) {
      if (EnterOwned()) {
        const bool got = owned_count_ != 0;
        if (got) {
          *index = owned_[owned_head_ & owned_mask_];
          ++owned_head_;
          --owned_count_;
        }
        LeaveOwned();
        return got;
      }
      LeaveOwned();
    }
    Share();
    return shared_.TryPop(index);
  }

  // False only when a shared list met a pop still in progress on the cell (try again).
  bool TryPush(uint32_t index) {
    if (owner_.load(std::memory_order_relaxed) == ThisThreadToken()) {
      if (EnterOwned()) {
        owned_[(owned_head_ + owned_count_) & owned_mask_] = index;
        ++owned_count_;
        LeaveOwned();
        return true;
      }
      LeaveOwned();
    }
    Share();
    return shared_.TryPush(index);
  }

  // Free slots in the shared list, approximately (0 while the owner has the list): for telling an
  // empty list from a push in progress.
  size_t ApproxSize() const {
    return shared_ready_.load(std::memory_order_acquire) ? shared_.ApproxSize() : 0;
  }

  // Whether one thread still has the list to itself (for tests).
  bool owned() const { return !revoked_.load(std::memory_order_acquire); }

 private:
  // The owner's side of the hand-over, around each use of its FIFO: true when the FIFO is still
  // the owner's; LeaveOwned() follows either way.
  __attribute__((always_inline)) bool EnterOwned() {
    busy_.store(1, std::memory_order_relaxed);
    LightFence();
    return !revoked_.load(std::memory_order_acquire);
  }
  __attribute__((always_inline)) void LeaveOwned() { busy_.store(0, std::memory_order_release); }

  // Makes the list shared, once; every thread but a still-running owner passes here before it
  // uses the shared list, and waits for a hand-over in progress.
  void Share() {
    if (shared_ready_.load(std::memory_order_acquire)) return;
    ShareSlow();
  }

  __attribute__((noinline, cold)) void ShareSlow() {
    std::lock_guard<std::mutex> lock(share_mu_);
    if (shared_ready_.load(std::memory_order_relaxed)) return;
    revoked_.store(true, std::memory_order_seq_cst);
    HeavyFence();
    // The owner saw the flag, or its busy flag is visible now: wait for its last operation.
    while (busy_.load(std::memory_order_acquire) != 0) sched_yield();
    for (; owned_count_ != 0; --owned_count_, ++owned_head_) {
      shared_.TryPush(owned_[owned_head_ & owned_mask_]);  // cannot fail: no other thread uses it yet
    }
    owner_.store(0, std::memory_order_relaxed);
    shared_ready_.store(true, std::memory_order_release);
  }

  BoundedMpmcQueue<uint32_t> shared_;
  // The owner's FIFO, a ring of a power-of-two size: touched by the owner between EnterOwned and
  // LeaveOwned, and by the hand-over once the owner is known to be out of it.
  std::unique_ptr<uint32_t[]> owned_storage_;
  uint32_t* owned_ = nullptr;
  uint32_t owned_mask_ = 0;
  uint32_t owned_head_ = 0;  // counts up; its low bits index the ring
  uint32_t owned_count_ = 0;
  std::atomic<uintptr_t> owner_;
  std::atomic<uint32_t> busy_{0};
  std::atomic<bool> revoked_{false};
  std::atomic<bool> shared_ready_{false};
  std::mutex share_mu_;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_THREAD_BIASED_FREE_LIST_H_
