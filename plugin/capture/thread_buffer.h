// A capture buffer: a byte ring written by one thread (the producer: NCCL's thread inside a
// callback) and read by the spool writer thread (the consumer). The producer never locks, never
// allocates and never waits on the consumer unless the ring is full; the consumer copies whole
// records out and frees their bytes.
//
// Positions are 64-bit byte counters that only grow; the byte at position p lives at
// data[p % capacity]. A record never straddles the end of the ring: when it would, the producer
// skips to the start of the next lap and notes where the skipped bytes begin (wrap_at), so the
// consumer copies only records. head is published with release after the record bytes, so the
// consumer sees whole records; tail is published after the consumer has copied them out.
//
// The producer checks each record against one precomputed limit. Reaching it (about every quarter
// of the ring) it reads the consumer's tail again and, once a quarter of the ring waits to be
// taken, rings the writer's doorbell (writer_doorbell.h), so the writer drains the ring long
// before it is full.
#ifndef KATRACE_PLUGIN_CAPTURE_THREAD_BUFFER_H_
#define KATRACE_PLUGIN_CAPTURE_THREAD_BUFFER_H_

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "plugin/capture/string_table.h"
#include "plugin/capture/writer_doorbell.h"

namespace katrace {

class ThreadBuffer {
 public:
  // |capacity| must be a power of two. |doorbell|: the writer's, rung when a quarter of the ring
  // waits for it; none for a ring whose consumer polls.
  ThreadBuffer(uint32_t stream, uint64_t capacity, WriterDoorbell* doorbell = nullptr)
      : stream_(stream),
        capacity_(capacity),
        mask_(capacity - 1),
        data_(new uint8_t[capacity]),
        doorbell_(doorbell),
        limit_(doorbell != nullptr ? capacity / 4 : capacity) {}

  uint32_t stream() const { return stream_; }
  uint64_t capacity() const { return capacity_; }

  // Producer: room for |n| bytes (a multiple of 8, at most capacity / 4), or nullptr when the
  // consumer has not freed enough yet. Follow with Commit(n) before the next Reserve.
  __attribute__((always_inline)) uint8_t* Reserve(uint64_t n) {
    uint64_t pos = head_local_;
    uint64_t offset = pos & mask_;
    uint64_t skip = offset + n > capacity_ ? capacity_ - offset : 0;
    if (pos + skip + n > limit_ && !MakeRoom(pos + skip + n)) return nullptr;
    if (skip != 0) {
      // Published by the release store of head in Commit.
      wrap_at_.store(pos, std::memory_order_relaxed);
      pos += skip;
    }
    reserved_ = pos;
    return data_.get() + (pos & mask_);
  }
  __attribute__((always_inline)) void Commit(uint64_t n) {
    head_local_ = reserved_ + n;
    head_.store(head_local_, std::memory_order_release);
  }

  // Producer, past the limit: reads the consumer's tail again and sets the next limit; rings the
  // doorbell when a quarter of the ring is committed and not yet freed, and looks again a quarter
  // later. False when the ring has no room for bytes up to |end|.
  __attribute__((noinline)) bool MakeRoom(uint64_t end) {
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    const uint64_t full = tail + capacity_;
    uint64_t limit = full;
    if (doorbell_ != nullptr) {
      const uint64_t quarter = tail + capacity_ / 4;
      if (head_local_ >= quarter) {
        doorbell_->Ring();
        limit = std::max(end, head_local_ + capacity_ / 4);  // a quarter later: has the writer freed it?
      } else {
        limit = std::max(end, quarter);  // back here once the committed bytes reach a quarter
      }
    }
    limit_ = std::min(limit, full);
    return end <= full;
  }

  // Consumer: appends every committed record to |out| (a buffer with room for capacity() bytes)
  // and returns the number of bytes appended. Call Release() once they are no longer needed
  // in the ring (right after, since they were copied).
  uint64_t Take(uint8_t* out) {
    uint64_t head = head_.load(std::memory_order_acquire);
    uint64_t wrap = wrap_at_.load(std::memory_order_relaxed);
    uint64_t t = taken_;
    uint64_t copied = 0;
    while (t < head) {
      uint64_t lap_end = (t | mask_) + 1;
      uint64_t limit = head < lap_end ? head : lap_end;
      bool skips = wrap >= t && wrap < limit;
      if (skips) limit = wrap;
      memcpy(out + copied, data_.get() + (t & mask_), limit - t);
      copied += limit - t;
      t = skips ? lap_end : limit;
    }
    taken_ = t;
    return copied;
  }
  void Release() { tail_.store(taken_, std::memory_order_release); }

  // Consumer: bytes committed and not yet taken (an upper bound: skipped bytes count too).
  uint64_t Pending() const { return head_.load(std::memory_order_acquire) - taken_; }

  // Producer: the ids of the strings this buffer's threads interned (string_table.h).
  StringIdCache strings;

  // Which OS thread owns the ring now; 0 when its thread exited (the ring is then drained and
  // given to the next new thread).
  std::atomic<uint32_t> os_tid{0};
  std::atomic<bool> orphaned{false};

 private:
  const uint32_t stream_;
  const uint64_t capacity_;
  const uint64_t mask_;
  std::unique_ptr<uint8_t[]> data_;

  WriterDoorbell* const doorbell_;

  // Producer side (one cache line).
  alignas(64) uint64_t head_local_ = 0;
  uint64_t reserved_ = 0;
  uint64_t limit_;  // positions below it are free: no need to read tail_
  // Shared.
  alignas(64) std::atomic<uint64_t> head_{0};
  std::atomic<uint64_t> wrap_at_{UINT64_MAX};
  alignas(64) std::atomic<uint64_t> tail_{0};
  // Consumer side.
  uint64_t taken_ = 0;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_THREAD_BUFFER_H_
