// The KernelStep ring protocol (include/katrace/step_ring.h) with the drain's start scanner:
// field round trips, out-of-order publication, torn copies, overrun accounting, and concurrent
// writers with one reader. Runs under ThreadSanitizer.
#include <gtest/gtest.h>
#include <stdint.h>

#include <atomic>
#include <thread>
#include <vector>

#include "katrace/step_ring.h"
#include "proxy_drain/emulated_step_writer.h"
#include "proxy_drain/start_ring_scanner.h"
#include "proxy_drain/step_ring_buffers.h"

namespace katrace {
namespace {

// Every field derived from the sequence number, so a reader can tell a torn record.
StepStart StartFor(uint64_t seq) {
  StepStart start;
  start.seq = seq;
  start.ready_ns = 1700000000000000000ull + seq * 1000;
  start.wait_start_ns = start.ready_ns - (seq % 977) - 1;
  start.step = uint32_t(seq * 7);
  start.size_bytes = uint32_t(seq ^ 0x5a5a5a);
  start.peer = int32_t(seq % (uint64_t(kStepPeerMax) + 1));
  start.work_tag = uint16_t(seq * 3);
  start.is_send = (seq & 1) != 0;
  return start;
}

void ExpectSameStart(const StepStart& want, const StepStart& got) {
  EXPECT_EQ(want.seq, got.seq);
  EXPECT_EQ(want.ready_ns, got.ready_ns);
  EXPECT_EQ(want.wait_start_ns, got.wait_start_ns);
  EXPECT_EQ(want.step, got.step);
  EXPECT_EQ(want.size_bytes, got.size_bytes);
  EXPECT_EQ(want.peer, got.peer);
  EXPECT_EQ(want.work_tag, got.work_tag);
  EXPECT_EQ(want.is_send, got.is_send);
}

bool SameStart(const StepStart& a, const StepStart& b) {
  return a.seq == b.seq && a.ready_ns == b.ready_ns && a.wait_start_ns == b.wait_start_ns &&
         a.step == b.step && a.size_bytes == b.size_bytes && a.peer == b.peer &&
         a.work_tag == b.work_tag && a.is_send == b.is_send;
}

TEST(StepRingTest, RecordFitsThirtyTwoBytesAndDefaultRingOneMebibyte) {
  EXPECT_EQ(sizeof(StepStartRecord), 32u);
  EXPECT_LE(StepRingBytes(kStepRingDefaultDepthLog2), size_t{1} << 20);
}

TEST(StepRingTest, EveryFieldRoundTrips) {
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  StepStart start = StartFor(3);
  start.ready_ns = ~uint64_t{0} - 5;  // all 64 bits of the stamp travel
  start.wait_start_ns = start.ready_ns - 123456789;
  start.step = 0xFFFFFFFFu;
  start.size_bytes = 0xFFFFFFFFu;
  start.work_tag = 0xFFFF;
  WriteStart(ring, start);
  StepStart got;
  ASSERT_EQ(ReadStart(ring, 3, &got), StepSlotState::kReady);
  ExpectSameStart(start, got);
}

TEST(StepRingTest, PeersAbove255SurviveAndUnrepresentablePeersReadAsUnknown) {
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  const int32_t peers[] = {0, 255, 256, 300, 4095, 65536, 1000000, kStepPeerMax};
  uint64_t seq = 0;
  for (int32_t peer : peers) {
    StepStart start = StartFor(seq);
    start.peer = peer;
    WriteStart(ring, start);
    StepStart got;
    ASSERT_EQ(ReadStart(ring, seq, &got), StepSlotState::kReady);
    EXPECT_EQ(got.peer, peer);
    ++seq;
  }
  for (int32_t peer : {-1, -7, kStepPeerMax + 1, 0x7FFFFFFF}) {
    StepStart start = StartFor(seq);
    start.peer = peer;
    WriteStart(ring, start);
    StepStart got;
    ASSERT_EQ(ReadStart(ring, seq, &got), StepSlotState::kReady);
    EXPECT_EQ(got.peer, kStepPeerUnknown);
    ++seq;
  }
}

TEST(StepRingTest, WaitIsOptionalAndSaturatesInsteadOfWrapping) {
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  StepStart start = StartFor(0);
  start.wait_start_ns = 0;
  WriteStart(ring, start);
  StepStart got;
  ASSERT_EQ(ReadStart(ring, 0, &got), StepSlotState::kReady);
  EXPECT_EQ(got.wait_start_ns, 0u);

  start = StartFor(1);
  start.wait_start_ns = start.ready_ns;  // same tick: measured, zero long
  WriteStart(ring, start);
  ASSERT_EQ(ReadStart(ring, 1, &got), StepSlotState::kReady);
  EXPECT_EQ(got.wait_start_ns, start.ready_ns);

  start = StartFor(2);
  start.wait_start_ns = start.ready_ns - kStepWaitMaxNs - 1000;
  WriteStart(ring, start);
  ASSERT_EQ(ReadStart(ring, 2, &got), StepSlotState::kReady);
  EXPECT_EQ(got.wait_start_ns, start.ready_ns - kStepWaitMaxNs);
}

TEST(StepRingTest, StopTimeIsRebuiltAcrossTheLowBitsBoundary) {
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  const uint64_t boundary = uint64_t{1} << 40;
  const uint64_t ready = 1700000000000000000ull / boundary * boundary + boundary - 10;
  WriteStop(ring, 9, ready + 25);  // crosses a 2^40 boundary
  uint64_t stop = 0;
  ASSERT_EQ(ReadStop(ring, 9, ready, &stop), StepSlotState::kReady);
  EXPECT_EQ(stop, ready + 25);
  WriteStop(ring, 10, ready);
  ASSERT_EQ(ReadStop(ring, 10, ready, &stop), StepSlotState::kReady);
  EXPECT_EQ(stop, ready);
}

TEST(StepRingTest, ZeroedMemoryIsNotYetWritten) {
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  StepStart got;
  uint64_t stop = 0;
  for (uint64_t seq = 0; seq < 16; ++seq) {
    EXPECT_EQ(ReadStart(ring, seq, &got), StepSlotState::kNotYet);
    EXPECT_EQ(ReadStop(ring, seq, 1, &stop), StepSlotState::kNotYet);
  }
}

TEST(StepRingTest, SequenceComparisonSurvivesThirtyTwoBitWrap) {
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  const uint64_t seq = (uint64_t{1} << 32) - 2;  // stored seq + 1 wraps to 0 at the next one
  for (uint64_t s = seq; s < seq + 4; ++s) {
    WriteStart(ring, StartFor(s));
    WriteStop(ring, s, StartFor(s).ready_ns + 5);
  }
  for (uint64_t s = seq; s < seq + 4; ++s) {
    StepStart got;
    ASSERT_EQ(ReadStart(ring, s, &got), StepSlotState::kReady) << s;
    ExpectSameStart(StartFor(s), got);
    uint64_t stop = 0;
    ASSERT_EQ(ReadStop(ring, s, got.ready_ns, &stop), StepSlotState::kReady);
    EXPECT_EQ(stop, got.ready_ns + 5);
  }
  EXPECT_EQ(ReadStart(ring, seq - 16, nullptr), StepSlotState::kOverwritten);
  StepStart got;
  EXPECT_EQ(ReadStart(ring, seq + 16, &got), StepSlotState::kNotYet);
}

TEST(StepRingTest, OutOfOrderPublicationNeverBlocksLaterRecords) {
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  StartRingScanner scanner(ring, 8);
  std::vector<uint64_t> seen;
  uint64_t lost = 0;
  auto scan = [&] {
    scanner.Scan([&](const StepStart& s) { seen.push_back(s.seq); }, [&](uint64_t count) { lost += count; });
  };
  // Three writers reserved 0, 1, 2; they finish in the order 2, 0, 1.
  WriteStart(ring, StartFor(2));
  scan();
  EXPECT_EQ(seen, (std::vector<uint64_t>{2}));
  EXPECT_EQ(scanner.num_pending(), 2u);
  WriteStart(ring, StartFor(0));
  scan();
  EXPECT_EQ(seen, (std::vector<uint64_t>{2, 0}));
  WriteStart(ring, StartFor(4));  // and 3 is still being written
  scan();
  EXPECT_EQ(seen, (std::vector<uint64_t>{2, 0, 4}));
  WriteStart(ring, StartFor(1));
  WriteStart(ring, StartFor(3));
  scan();
  EXPECT_EQ(seen, (std::vector<uint64_t>{2, 0, 4, 1, 3}));
  EXPECT_EQ(scanner.num_pending(), 0u);
  EXPECT_EQ(lost, 0u);
}

TEST(StepRingTest, CopyMixedWithANewerWriterIsDetectedForEveryWord) {
  StepRingBuffers buffers(1, 3);
  const StepRingView ring = buffers.view(0);
  const uint64_t depth = 8;
  for (int word = 1; word <= 3; ++word) {
    const uint64_t seq = 5 + depth * uint64_t(word);
    WriteStart(ring, StartFor(seq));
    StepStart got;
    ASSERT_EQ(ReadStart(ring, seq, &got), StepSlotState::kReady);
    // A writer of the next lap has stored this one word, not yet its sequence number.
    const StepStart newer = StartFor(seq + depth);
    const uint64_t lap = step_record::LapTag(newer.seq, ring.depth_log2);
    const uint64_t packed = word == 1   ? step_record::PackWord1(newer, lap)
                            : word == 2 ? step_record::PackWord2(newer, lap)
                                        : step_record::PackWord3(newer, lap);
    step_atomic::StoreRelaxed(&StartSlot(ring, seq).word[word], packed);
    EXPECT_EQ(ReadStart(ring, seq, &got), StepSlotState::kOverwritten) << "word " << word;
  }
  // The whole payload of the newer writer, sequence not yet published.
  WriteStart(ring, StartFor(100));
  WriteStartPayload(ring, StartFor(108));
  StepStart got;
  EXPECT_EQ(ReadStart(ring, 100, &got), StepSlotState::kOverwritten);
  PublishStart(ring, StartFor(108));
  ASSERT_EQ(ReadStart(ring, 108, &got), StepSlotState::kReady);
  ExpectSameStart(StartFor(108), got);
}

// Round barrier for writer threads, like a GPU CTA's barrier per slice; yields while waiting.
// Returns the value of |stop| as the last thread of the round saw it, the same for every thread.
class RoundBarrier {
 public:
  explicit RoundBarrier(int parties) : parties_(parties) {}
  bool ArriveAndWait(const std::atomic<bool>& stop) {
    const uint64_t round = round_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      arrived_.store(0, std::memory_order_relaxed);
      stop_seen_.store(stop.load(std::memory_order_relaxed), std::memory_order_relaxed);
      round_.store(round + 1, std::memory_order_release);
    } else {
      while (round_.load(std::memory_order_acquire) == round) std::this_thread::yield();
    }
    return stop_seen_.load(std::memory_order_relaxed);
  }

 private:
  const int parties_;
  std::atomic<int> arrived_{0};
  std::atomic<uint64_t> round_{0};
  std::atomic<bool> stop_seen_{false};
};

TEST(StepRingTest, ReaderRacingOverwritingWritersNeverAcceptsATornRecord) {
  // Four writers rewrite an eight-slot ring in rounds (one record each per round, a barrier
  // between rounds, as GPU roles do per slice), while the reader copies whatever sequence each
  // slot currently announces: copies often overlap a writer of the next lap. Every record the
  // reader accepts must be intact.
  StepRingBuffers buffers(1, 3);
  const StepRingView ring = buffers.view(0);
  constexpr int kWriters = 4;
  constexpr uint64_t kRecords = 40000;
  std::atomic<bool> stop{false};
  RoundBarrier barrier(kWriters);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&] {
      do {
        WriteStart(ring, StartFor(ReserveStepSeq(ring)));
      } while (!barrier.ArriveAndWait(stop));
    });
  }
  uint64_t accepted = 0;
  uint64_t overwritten = 0;
  uint64_t torn = 0;
  uint64_t first_torn_seq = 0;
  StepStart got;
  constexpr uint64_t kMinReads = 100000;
  for (uint64_t i = 0; i < kMinReads || step_atomic::LoadRelaxed(ring.next_seq) < kRecords; ++i) {
    if (i % 64 == 0) std::this_thread::yield();  // writers may outnumber cores
    const uint64_t announced = step_atomic::LoadAcquire(&ring.starts[i & 7].word[0]) & 0xFFFFFFFFu;
    if (announced == 0) continue;  // never written
    const uint64_t seq = announced - 1;
    switch (ReadStart(ring, seq, &got)) {
      case StepSlotState::kReady:
        ++accepted;
        if (!SameStart(StartFor(seq), got) && torn++ == 0) first_torn_seq = seq;
        break;
      case StepSlotState::kOverwritten:
        ++overwritten;
        break;
      case StepSlotState::kNotYet:
        break;
    }
  }
  stop.store(true, std::memory_order_relaxed);
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(torn, 0u) << "torn records accepted, first at seq " << first_torn_seq;
  EXPECT_GT(accepted, 0u);
  printf("accepted %llu intact copies, rejected %llu overlapping a writer\n",
         (unsigned long long)accepted, (unsigned long long)overwritten);
}

TEST(StepRingTest, ForcedOverrunLosesExactlyWhatWasOverwritten) {
  StepRingBuffers buffers(1, 4);  // 16 slots
  const StepRingView ring = buffers.view(0);
  StartRingScanner scanner(ring, 16);
  std::vector<uint64_t> seen;
  uint64_t lost = 0;
  auto scan = [&] {
    scanner.Scan(
        [&](const StepStart& s) {
          EXPECT_TRUE(SameStart(StartFor(s.seq), s));
          seen.push_back(s.seq);
        },
        [&](uint64_t count) { lost += count; });
  };
  for (uint64_t i = 0; i < 1000; ++i) WriteStart(ring, StartFor(ReserveStepSeq(ring)));
  scan();
  EXPECT_EQ(lost, 1000u - 16u);
  ASSERT_EQ(seen.size(), 16u);
  for (uint64_t i = 0; i < 16; ++i) EXPECT_EQ(seen[i], 984 + i);
  // Less than a lap behind: nothing more is lost.
  for (uint64_t i = 0; i < 10; ++i) WriteStart(ring, StartFor(ReserveStepSeq(ring)));
  scan();
  EXPECT_EQ(lost, 984u);
  EXPECT_EQ(seen.size(), 26u);
  // Exactly one lap plus three behind: three lost.
  for (uint64_t i = 0; i < 19; ++i) WriteStart(ring, StartFor(ReserveStepSeq(ring)));
  scan();
  EXPECT_EQ(lost, 987u);
  EXPECT_EQ(seen.size() + lost, 1029u);
  EXPECT_EQ(scanner.num_pending(), 0u);
}

// A reader 2^30 sequences behind (its proxy thread stalled, or the rings hold an earlier run's
// records) counts them lost in a few steps: it used to probe each one, 2^30 probes in one Poll.
TEST(StepRingTest, AReaderFarBehindCountsTheLostInBulkAndReadsTheLastLap) {
  StepRingBuffers buffers(1, 4);  // 16 slots
  const StepRingView ring = buffers.view(0);
  constexpr uint64_t kNewest = uint64_t{1} << 30;
  for (uint64_t seq = kNewest - 16; seq < kNewest; ++seq) WriteStart(ring, StartFor(seq));
  StartRingScanner scanner(ring, 16);
  std::vector<uint64_t> seen;
  uint64_t lost = 0, lost_calls = 0;
  scanner.Scan([&](const StepStart& s) { seen.push_back(s.seq); },
               [&](uint64_t count) {
                 lost += count;
                 ++lost_calls;
               });
  EXPECT_EQ(lost, kNewest - 16);
  EXPECT_LE(lost_calls, StartRingScanner::kCertainlyOverwrittenLaps * 16 + 1);
  ASSERT_EQ(seen.size(), 16u);
  for (uint64_t i = 0; i < 16; ++i) EXPECT_EQ(seen[i], kNewest - 16 + i);
  EXPECT_EQ(scanner.next_seq(), kNewest);
}

TEST(StepRingTest, ConcurrentWritersWrapManyTimesWithoutLossWhenTheReaderKeepsUp) {
  // Writers hold back while the ring is nearly full, so every record must arrive, each once.
  StepRingBuffers buffers(1, 6);  // 64 slots
  const StepRingView ring = buffers.view(0);
  constexpr int kWriters = 4;
  constexpr uint64_t kPerWriter = 20000;
  constexpr uint64_t kTotal = kWriters * kPerWriter;
  const uint64_t window = (uint64_t{1} << ring.depth_log2) - kWriters;
  std::atomic<uint64_t> consumed{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&] {
      for (uint64_t i = 0; i < kPerWriter; ++i) {
        while (step_atomic::LoadRelaxed(ring.next_seq) - consumed.load(std::memory_order_acquire) >=
               window) {
          std::this_thread::yield();
        }
        const StepStart start = StartFor(ReserveStepSeq(ring));
        WriteStart(ring, start);
        WriteStop(ring, start.seq, start.ready_ns + 10);
      }
    });
  }
  StartRingScanner scanner(ring, kWriters);
  std::vector<bool> seen(kTotal, false);
  uint64_t num_seen = 0;
  uint64_t lost = 0;
  uint64_t out_of_order = 0;
  uint64_t last_seq = 0;
  // The credit given back to the writers is the lowest unresolved sequence.
  while (num_seen + lost < kTotal) {
    scanner.Scan(
        [&](const StepStart& s) {
          // EXPECT, not ASSERT: every record must be counted or the writers never finish.
          ++num_seen;
          EXPECT_TRUE(SameStart(StartFor(s.seq), s));
          if (s.seq >= kTotal) return;
          EXPECT_FALSE(seen[s.seq]) << "seen twice: " << s.seq;
          seen[s.seq] = true;
          uint64_t stop = 0;
          while (ReadStop(ring, s.seq, s.ready_ns, &stop) == StepSlotState::kNotYet) {
            std::this_thread::yield();
          }
          EXPECT_EQ(ReadStop(ring, s.seq, s.ready_ns, &stop), StepSlotState::kReady);
          EXPECT_EQ(stop, s.ready_ns + 10);
          if (num_seen > 1 && s.seq < last_seq) ++out_of_order;
          last_seq = s.seq;
        },
        [&](uint64_t count) { lost += count; });
    consumed.store(scanner.resolved_floor(), std::memory_order_release);
    std::this_thread::yield();
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(num_seen, kTotal);
  EXPECT_EQ(lost, 0u);
  printf("%llu records through 64 slots (%llu laps), %llu seen out of order\n",
         (unsigned long long)kTotal, (unsigned long long)(kTotal / 64),
         (unsigned long long)out_of_order);
}

TEST(StepRingTest, LockstepWritersOverrunningTheReaderAccountForEveryRecord) {
  // The GPU's shape: four roles of one channel, a barrier per slice, a ring only twice as deep as
  // the writers, and a reader that falls behind. Every start ends as seen or lost, none twice.
  StepRingBuffers buffers(1, 3);
  constexpr uint32_t kSteps = 3000;
  EmulatedChannel channel;
  channel.ring = buffers.view(0);
  channel.roles = {{true, 1}, {false, 3}, {true, 300}, {false, 70000}};
  channel.works = {{7, kSteps, 4096}};
  EmulatedStepWriter writer({channel}, EmulatedStepWriterOptions());
  StartRingScanner scanner(channel.ring, 8);
  std::vector<int> times_seen(4 * kSteps, 0);
  uint64_t num_seen = 0;
  uint64_t lost = 0;
  auto scan = [&] {
    scanner.Scan(
        [&](const StepStart& s) {
          if (s.seq >= times_seen.size()) {
            ADD_FAILURE() << "sequence beyond what was written: " << s.seq;
            return;
          }
          ++times_seen[s.seq];
          ++num_seen;
          EXPECT_EQ(s.work_tag, 7);
          EXPECT_LT(s.step, kSteps);
          EXPECT_EQ(s.size_bytes, 4096u);
          EXPECT_NE(s.wait_start_ns, 0u);
          EXPECT_LE(s.wait_start_ns, s.ready_ns);
          EXPECT_TRUE(s.peer == 1 || s.peer == 3 || s.peer == 300 || s.peer == 70000) << s.peer;
          EXPECT_EQ(s.is_send, s.peer == 1 || s.peer == 300);
        },
        [&](uint64_t count) { lost += count; });
  };
  writer.Start();
  while (!writer.Done()) scan();
  writer.Join();
  scan();
  EXPECT_EQ(writer.num_starts_written(), 4u * kSteps);
  EXPECT_EQ(num_seen + lost, 4u * kSteps);
  EXPECT_EQ(scanner.num_pending(), 0u);
  for (size_t seq = 0; seq < times_seen.size(); ++seq) ASSERT_LE(times_seen[seq], 1) << seq;
  printf("seen %llu, lost %llu\n", (unsigned long long)num_seen, (unsigned long long)lost);
}

}  // namespace
}  // namespace katrace
