// The pool's free list under contention: threads taking and giving back slots as fast as they
// can must never lose one (a lost slot is a live slot forever, and then the pool starves).
#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "plugin/event_pool.h"

namespace katrace {
namespace {

TEST(EventPool, NoSlotIsLostUnderContention) {
  constexpr uint32_t kSize = 8;  // small, so the free list is often nearly full or nearly empty
  EventPool pool(kSize, 0);
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
