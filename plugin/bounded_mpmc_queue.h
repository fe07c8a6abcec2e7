// A bounded lock-free multi-producer multi-consumer queue (sequence number per cell, after
// Dmitry Vyukov's well-known design). Used for pool free lists and the writer's record queue:
// one CAS per push or pop, no lock, no allocation after construction.
#ifndef KATRACE_PLUGIN_BOUNDED_MPMC_QUEUE_H_
#define KATRACE_PLUGIN_BOUNDED_MPMC_QUEUE_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <memory>

namespace katrace {

template <typename T>
class BoundedMpmcQueue {
 public:
  // |capacity| is rounded up to a power of two.
  explicit BoundedMpmcQueue(size_t capacity) {
    size_t cap = 1;
    while (cap < capacity) cap <<= 1;
    mask_ = cap - 1;
    cells_.reset(new Cell[cap]);
    for (size_t i = 0; i < cap; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  BoundedMpmcQueue(const BoundedMpmcQueue&) = delete;
  BoundedMpmcQueue& operator=(const BoundedMpmcQueue&) = delete;

  size_t capacity() const { return mask_ + 1; }

  // Returns false when full.
  bool TryPush(const T& value) {
    size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      size_t seq = cell.seq.load(std::memory_order_acquire);
      intptr_t diff = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.value = value;
          cell.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Returns false when empty.
  bool TryPop(T* value) {
    size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      size_t seq = cell.seq.load(std::memory_order_acquire);
      intptr_t diff = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          *value = cell.value;
          cell.seq.store(pos + mask_ + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // Approximate; for progress and stall heuristics only.
  size_t ApproxSize() const {
    size_t t = tail_.load(std::memory_order_relaxed);
    size_t h = head_.load(std::memory_order_relaxed);
    return t >= h ? t - h : 0;
  }

 private:
  struct Cell {
    std::atomic<size_t> seq;
    T value;
  };
  std::unique_ptr<Cell[]> cells_;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> head_{0};
  alignas(64) std::atomic<size_t> tail_{0};
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_BOUNDED_MPMC_QUEUE_H_
