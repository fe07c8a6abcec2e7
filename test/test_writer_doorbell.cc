// WriterDoorbell suite: the spool writer's doorbell wakes a sleeping writer at once and keeps a
// ring that comes while the writer works; a capture ring rings it once a quarter of the ring waits
// for the writer, not before, and again only after the writer has freed that quarter.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "plugin/capture/thread_buffer.h"
#include "plugin/capture/writer_doorbell.h"

namespace katrace {
namespace {

using Clock = std::chrono::steady_clock;

// Far longer than any test here may take: a sleep that runs its course fails the test.
constexpr uint32_t kMinuteMicros = 60u * 1000 * 1000;
constexpr auto kPrompt = std::chrono::seconds(20);

TEST(WriterDoorbell, ARingWakesASleepingWriter) {
  WriterDoorbell bell;
  std::atomic<bool> asleep{false};
  Clock::duration slept{};
  std::thread writer([&] {
    asleep.store(true);
    const auto t0 = Clock::now();
    bell.Sleep(kMinuteMicros);
    slept = Clock::now() - t0;
  });
  while (!asleep.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // most likely in the futex wait by now
  bell.Ring();
  writer.join();
  EXPECT_LT(slept, kPrompt);
  EXPECT_FALSE(bell.rung()) << "the ring that woke the writer is used up";
}

TEST(WriterDoorbell, ARingWhileTheWriterWorksEndsItsNextSleepAtOnce) {
  WriterDoorbell bell;
  bell.Ring();
  bell.Ring();  // a second ring before the writer sleeps is the same ring
  EXPECT_TRUE(bell.rung());
  const auto t0 = Clock::now();
  bell.Sleep(kMinuteMicros);
  EXPECT_LT(Clock::now() - t0, kPrompt);
  EXPECT_FALSE(bell.rung());
}

TEST(WriterDoorbell, WithoutARingTheWriterSleepsItsPollInterval) {
  WriterDoorbell bell;
  const auto t0 = Clock::now();
  bell.Sleep(2000);
  EXPECT_GE(Clock::now() - t0, std::chrono::microseconds(2000));
}

// Commits |bytes| of 64-byte records to |b|; false when the ring had no room.
bool Write(ThreadBuffer* b, uint64_t bytes) {
  for (uint64_t done = 0; done < bytes; done += 64) {
    uint8_t* p = b->Reserve(64);
    if (p == nullptr) return false;
    memset(p, 0xab, 64);
    b->Commit(64);
  }
  return true;
}

TEST(WriterDoorbell, ACaptureRingRingsOnceAQuarterOfItWaitsForTheWriter) {
  constexpr uint64_t kCapacity = 4096, kQuarter = kCapacity / 4;
  WriterDoorbell bell;
  ThreadBuffer b(1, kCapacity, &bell);
  ASSERT_TRUE(Write(&b, kQuarter));
  EXPECT_FALSE(bell.rung()) << "a quarter committed, but no record past it yet";
  ASSERT_TRUE(Write(&b, 64));
  EXPECT_TRUE(bell.rung()) << "the first record past a quarter rings";
  bell.Sleep(kMinuteMicros);  // the writer takes the ring...
  std::vector<uint8_t> out(kCapacity);
  EXPECT_EQ(b.Take(out.data()), kQuarter + 64);  // ...and drains the ring
  b.Release();

  // The next quarter counts from what the writer freed.
  ASSERT_TRUE(Write(&b, kQuarter));
  EXPECT_FALSE(bell.rung());
  ASSERT_TRUE(Write(&b, 64));
  EXPECT_TRUE(bell.rung());
}

TEST(WriterDoorbell, AFullCaptureRingRingsAtEveryTryAndTakesRecordsOnceFreed) {
  constexpr uint64_t kCapacity = 4096;
  WriterDoorbell bell;
  ThreadBuffer b(1, kCapacity, &bell);
  ASSERT_TRUE(Write(&b, kCapacity));
  bell.Sleep(kMinuteMicros);  // used up: the writer has not drained yet
  EXPECT_EQ(b.Reserve(64), nullptr);
  EXPECT_TRUE(bell.rung()) << "a thread that must wait rings";
  std::vector<uint8_t> out(kCapacity);
  EXPECT_EQ(b.Take(out.data()), kCapacity);
  b.Release();
  EXPECT_TRUE(Write(&b, kCapacity)) << "the whole ring is free again";
}

TEST(WriterDoorbell, ARingWithoutADoorbellWorksAsBefore) {
  ThreadBuffer b(1, 4096);
  ASSERT_TRUE(Write(&b, 4096));
  EXPECT_EQ(b.Reserve(64), nullptr);
  std::vector<uint8_t> out(4096);
  EXPECT_EQ(b.Take(out.data()), 4096u);
  b.Release();
  EXPECT_TRUE(Write(&b, 4096));
}

}  // namespace
}  // namespace katrace
