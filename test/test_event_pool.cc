// The pool's free list: one thread has it to itself until another uses it, then it is shared.
// Under contention and across that hand-over no slot may be lost or handed out twice (a lost
// slot is a live slot forever, and then the pool starves), the capacity stays exact and the
// order stays first in, first out.
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "plugin/event_pool.h"

namespace katrace {
namespace {

// This thread, where the kernel lets one thread have a free list to itself.
uintptr_t OwnerToken() { return AsymmetricFenceAvailable() ? ThisThreadToken() : 0; }

// Takes every free slot; each must be new.
std::vector<uint32_t> TakeAll(EventPool* pool) {
  std::vector<uint32_t> taken;
  std::set<uint32_t> seen;
  uint32_t index = 0;
  while (pool->Acquire(&index)) {
    EXPECT_TRUE(seen.insert(index).second) << "slot " << index << " twice";
    taken.push_back(index);
  }
  return taken;
}

TEST(EventPool, ItsFirstThreadHasItToItselfWithExactCapacityAndFifoOrder) {
  if (!AsymmetricFenceAvailable()) GTEST_SKIP() << "the kernel grants no process-wide barrier: every pool is shared";
  EventPool pool(16, 0, OwnerToken());
  std::vector<uint32_t> taken = TakeAll(&pool);
  EXPECT_EQ(taken.size(), 16u);
  const std::vector<uint32_t> order = {5, 3, 15, 0, 9};
  for (uint32_t i : order) pool.Release(i);
  for (uint32_t expected : order) {
    uint32_t index = 99;
    ASSERT_TRUE(pool.Acquire(&index));
    EXPECT_EQ(index, expected) << "a just-freed slot is reused last";
  }
  uint32_t index = 0;
  EXPECT_FALSE(pool.Acquire(&index));
  EXPECT_TRUE(pool.single_threaded());
}

TEST(EventPool, ASecondThreadTakesItOverWithItsOrderAndCapacity) {
  EventPool pool(8, 0, OwnerToken());
  std::vector<uint32_t> taken = TakeAll(&pool);
  ASSERT_EQ(taken.size(), 8u);
  pool.Release(6);
  pool.Release(2);
  pool.Release(7);
  std::vector<uint32_t> other;
  std::thread([&] {
    // The first slot the other thread gives back hands the list over; it goes to the end.
    pool.Release(1);
    other = TakeAll(&pool);
  }).join();
  EXPECT_FALSE(pool.single_threaded());
  EXPECT_EQ(other, (std::vector<uint32_t>{6, 2, 7, 1}));
  uint32_t index = 0;
  EXPECT_FALSE(pool.Acquire(&index)) << "4 slots are still taken by this thread";
  for (uint32_t i : {0u, 3u, 4u, 5u}) pool.Release(i);
  EXPECT_EQ(TakeAll(&pool).size(), 4u);
}

// The owner runs as fast as it can while, at a moment that changes from round to round, another
// thread starts using the pool too: whatever the owner was doing when its list was taken over,
// every slot is still there exactly once afterwards.
TEST(EventPool, AHandOverInTheMiddleOfTheOwnersWorkLosesNoSlot) {
  constexpr uint32_t kSize = 6;
  for (int round = 0; round < 40; ++round) {
    std::atomic<bool> owner_ready{false};
    std::atomic<bool> stop{false};
    EventPool* pool = nullptr;
    std::thread owner([&] {
      EventPool own(kSize, 0, OwnerToken());
      pool = &own;
      owner_ready.store(true, std::memory_order_release);
      uint32_t held[3];
      while (!stop.load(std::memory_order_acquire)) {
        int n = 0;
        for (; n < 3 && own.Acquire(&held[n]); ++n) {
        }
        while (n > 0) own.Release(held[--n]);
      }
      // Wait for the other thread to be done with it before the pool goes out of scope.
      while (owner_ready.load(std::memory_order_acquire)) std::this_thread::yield();
      std::vector<uint32_t> all = TakeAll(&own);
      EXPECT_EQ(all.size(), kSize) << "round " << round;
    });
    while (!owner_ready.load(std::memory_order_acquire)) std::this_thread::yield();
    for (int spin = 0; spin < round * 25; ++spin) std::this_thread::yield();
    std::thread other([&] {
      for (int i = 0; i < 200; ++i) {
        uint32_t index = 0;
        if (pool->Acquire(&index)) pool->Release(index);
      }
      stop.store(true, std::memory_order_release);
    });
    other.join();
    owner_ready.store(false, std::memory_order_release);
    owner.join();
  }
}

TEST(EventPool, NoSlotIsLostUnderContention) {
  constexpr uint32_t kSize = 8;  // small, so the free list is often nearly full or nearly empty
  EventPool pool(kSize, 0, OwnerToken());
  std::atomic<uint64_t> acquired{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200000; ++i) {
        uint32_t a = 0, b = 0;
        bool got_a = pool.Acquire(&a);
        bool got_b = pool.Acquire(&b);
        if (got_a) pool.Release(a);
        if (got_b) pool.Release(b);
        acquired.fetch_add(got_a + got_b, std::memory_order_relaxed);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GT(acquired.load(), 0u);
  // Every slot comes back exactly once.
  std::set<uint32_t> slots;
  uint32_t index = 0;
  while (pool.Acquire(&index)) ASSERT_TRUE(slots.insert(index).second) << "slot " << index << " twice";
  EXPECT_EQ(slots.size(), kSize);
}

}  // namespace
}  // namespace katrace
