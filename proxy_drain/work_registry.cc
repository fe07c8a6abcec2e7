// Parent routing for KernelSteps; see work_registry.h.
#include "proxy_drain/work_registry.h"

namespace katrace {

WorkRegistry::WorkRegistry(int num_channels, uint32_t slots_log2)
    : num_channels_(num_channels > 0 ? num_channels : 0),
      // A tag has 16 bits, so more slots than tags could never be used; a larger request (up to
      // 2^32 from a hostile configuration) would only throw bad_alloc or shift past 64 bits.
      slots_log2_(slots_log2 < kMaxSlotsLog2 ? slots_log2 : kMaxSlotsLog2),
      slots_(size_t(num_channels_) * 2 << slots_log2_) {}

void WorkRegistry::Register(int channel, bool is_send, uint32_t work_tag, void* parent) {
  if (channel < 0 || channel >= num_channels_) return;
  std::lock_guard<std::mutex> lock(queue_mutex_);
  queue_.push_back(Queued{WorkKey{channel, is_send, uint16_t(work_tag)}, parent});
  num_queued_.fetch_add(1, std::memory_order_release);
}

WorkRegistry::Slot& WorkRegistry::SlotFor(const WorkKey& key) {
  const size_t per_direction = size_t{1} << slots_log2_;
  return slots_[(size_t(key.channel) * 2 + key.is_send) * per_direction +
                (key.tag & (per_direction - 1))];
}

const WorkRegistry::Slot& WorkRegistry::SlotFor(const WorkKey& key) const {
  return const_cast<WorkRegistry*>(this)->SlotFor(key);
}

void WorkRegistry::ApplyQueued(std::vector<WorkKey>* evicted) {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    applying_.swap(queue_);
    num_queued_.store(0, std::memory_order_relaxed);
  }
  for (const Queued& queued : applying_) {
    Slot& slot = SlotFor(queued.key);
    if (slot.live && slot.tag != queued.key.tag) {
      evicted->push_back(WorkKey{queued.key.channel, queued.key.is_send, slot.tag});
    }
    slot.parent = queued.parent;
    slot.tag = queued.key.tag;
    slot.live = true;
  }
  applying_.clear();
}

bool WorkRegistry::Find(const WorkKey& key, void** parent) const {
  if (key.channel < 0 || key.channel >= num_channels_) return false;
  const Slot& slot = SlotFor(key);
  if (!slot.live || slot.tag != key.tag) return false;
  *parent = slot.parent;
  return true;
}

bool WorkRegistry::Retire(const WorkKey& key) {
  if (key.channel < 0 || key.channel >= num_channels_) return false;
  Slot& slot = SlotFor(key);
  if (!slot.live || slot.tag != key.tag) return false;
  slot.live = false;
  slot.parent = nullptr;
  return true;
}

}  // namespace katrace
