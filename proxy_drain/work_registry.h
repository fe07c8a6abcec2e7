// Routes a KernelStep to its parent: (channel, direction, work tag) -> the Coll/P2p handle the
// plugin returned. Direction is part of the key because P2P send and recv share a work counter.
// Direct-mapped by tag (work tags count up per channel), so a lookup is one table read.
//
// Thread safety: Register may be called from any thread (the launching thread registers work
// before the GPU can stamp it); it queues under a mutex. Everything else runs on the drain thread,
// which applies the queue at each poll and on a lookup miss.
#ifndef KATRACE_PROXY_DRAIN_WORK_REGISTRY_H_
#define KATRACE_PROXY_DRAIN_WORK_REGISTRY_H_

#include <stdint.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace katrace {

struct WorkKey {
  int channel;
  bool is_send;
  uint16_t tag;
};

class WorkRegistry {
 public:
  // At most one slot per work tag.
  static constexpr uint32_t kMaxSlotsLog2 = 16;

  // |slots_log2|: works that may be live at once per (channel, direction), as a power of two
  // (at most kMaxSlotsLog2).
  WorkRegistry(int num_channels, uint32_t slots_log2);

  // The work tag is truncated to the 16 bits a ring record carries.
  void Register(int channel, bool is_send, uint32_t work_tag, void* parent);

  // ---- Drain thread only ----
  bool HasQueued() const { return num_queued_.load(std::memory_order_acquire) != 0; }
  // Applies queued registrations. A live work displaced by a newer tag in its slot is appended to
  // |evicted|: the caller closes its open steps, as if it had been retired.
  void ApplyQueued(std::vector<WorkKey>* evicted);
  // True when the work is live; |*parent| is its handle (which may itself be NULL).
  bool Find(const WorkKey& key, void** parent) const;
  // After this, steps for |key| are late. Returns false when |key| was not live.
  bool Retire(const WorkKey& key);

 private:
  struct Slot {
    void* parent = nullptr;
    uint16_t tag = 0;
    bool live = false;
  };
  struct Queued {
    WorkKey key;
    void* parent;
  };

  Slot& SlotFor(const WorkKey& key);
  const Slot& SlotFor(const WorkKey& key) const;

  const int num_channels_;
  const uint32_t slots_log2_;
  std::vector<Slot> slots_;  // [channel][direction][tag & mask]

  std::mutex queue_mutex_;
  std::vector<Queued> queue_;
  // Lets the drain skip the mutex when nothing is queued; release/acquire with Register's push.
  std::atomic<uint64_t> num_queued_{0};
  std::vector<Queued> applying_;  // drain-thread scratch, kept to avoid reallocating
};

}  // namespace katrace

#endif  // KATRACE_PROXY_DRAIN_WORK_REGISTRY_H_
