// Pools: a slot is reused exactly when its event and all its children are done, never while
// live; a leaked event costs one slot; every drop is counted, warned once and written down.
#include <stdio.h>
#include <stdlib.h>

#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "test/support/plugin_test.h"

namespace katrace_test {
namespace {

class PoolTest : public PluginTest {
 protected:
  std::string Summary() {
    std::ifstream in(dir_ + "/summary.txt");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // "katrace: N events recorded, M dropped ..." from the finalize summary.
  void RecordedAndDropped(uint64_t* recorded, uint64_t* dropped) {
    std::string s = Summary();
    size_t at = s.find("katrace: ");
    ASSERT_NE(at, std::string::npos) << s;
    unsigned long long r = 0, d = 0;
    ASSERT_EQ(sscanf(s.c_str() + at, "katrace: %llu events recorded, %llu dropped", &r, &d), 2) << s;
    *recorded = r;
    *dropped = d;
  }
};

// A bounded hand-off from the "application" thread to the "proxy" thread.
class CollQueue {
 public:
  explicit CollQueue(size_t capacity) : capacity_(capacity) {}
  void Push(void* coll) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back(coll);
    not_empty_.notify_one();
  }
  // Returns nullptr once closed and empty.
  void* Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return nullptr;
    void* c = items_.front();
    items_.pop_front();
    not_full_.notify_one();
    return c;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<void*> items_;
  bool closed_ = false;
};

TEST_F(PoolTest, MillionCollsThroughSixtyFourSlotsCompletingOutOfOrderOnTwoThreads) {
  // Slot reuse is exercised from the 65th Coll on, so the scaled-down sanitizer runs still test it.
  const uint64_t kColls = TestScaled(1000000, 10000);
  constexpr int kChannels = 2;
  setenv("KATRACE_POOL_SIZE", "64", 1);
  // The trace itself (gigabytes at this count) is not the point: the writer still formats every
  // event and counts it in the summary.
  setenv("KATRACE_OUTPUT", "/dev/null", 1);
  Comm c = InitComm(0x1000000, 0, 1);
  // The proxy side holds up to 24 Colls at once and finishes their channels in random order, so
  // Colls complete out of allocation order and slots are freed out of order.
  CollQueue queue(8);
  std::thread proxy([&] {
    std::mt19937 rng(42);
    struct Pending {
      void* coll;
      int next_channel;
    };
    std::vector<Pending> window;
    bool open = true;
    while (open || !window.empty()) {
      while (open && window.size() < 24) {
        void* coll = queue.Pop();
        if (coll == nullptr) {
          open = false;
          break;
        }
        window.push_back({coll, 0});
      }
      if (window.empty()) continue;
      size_t i = rng() % window.size();
      KernelCh(c.ctx, window[i].coll, window[i].next_channel++);
      if (window[i].next_channel == kChannels) {
        window[i] = window.back();
        window.pop_back();
      }
    }
  });
  for (uint64_t i = 0; i < kColls; ++i) {
    void* coll = nullptr;
    auto d = CollDescr(nullptr, "AllReduce", i, 4096, kChannels);
    v6().startEvent(c.ctx, &coll, &d);
    ASSERT_NE(coll, nullptr) << "dropped Coll " << i;
    v6().stopEvent(coll);
    queue.Push(coll);
  }
  queue.Close();
  proxy.join();
  v6().finalize(c.ctx);
  uint64_t recorded = 0, dropped = 0;
  RecordedAndDropped(&recorded, &dropped);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(recorded, kColls * (1 + kChannels));
  std::string s = Summary();
  std::string count = std::to_string(kColls);
  for (int at = static_cast<int>(count.size()) - 3; at > 0; at -= 3) count.insert(static_cast<size_t>(at), ",");
  EXPECT_NE(s.find(count + "  "), std::string::npos) << "the Coll row counts every instance:\n" << s;
  EXPECT_NE(s.find("0 incomplete"), std::string::npos);
}

TEST_F(PoolTest, AnEventThatNeverStopsCostsOneSlotNotThePool) {
  setenv("KATRACE_POOL_COLL", "64", 1);
  Comm c = InitComm(0x2000000, 0, 1);
  void* leaked = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 0, 1, 0);
  v6().startEvent(c.ctx, &leaked, &d);  // NCCL never stops some events
  ASSERT_NE(leaked, nullptr);
  for (int i = 1; i <= 10000; ++i) CollWithChannels(c.ctx, nullptr, static_cast<uint64_t>(i), 1);
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 10001);
  EXPECT_EQ(Footer(trace)["drops"]["Coll"], 0);
  EXPECT_EQ(Footer(trace)["incomplete"], 1);
  int incomplete = 0;
  for (const auto& e : Slices(trace, "Coll")) incomplete += e["args"].value("incomplete", false);
  EXPECT_EQ(incomplete, 1);
}

TEST_F(PoolTest, DropsAreCountedWarnedOnceAndWrittenIntoTheTrace) {
  setenv("KATRACE_POOL_COLL", "64", 1);
  Comm c = InitComm(0x3000000, 0, 1);
  std::vector<void*> live;
  int dropped = 0;
  for (int i = 0; i < 100; ++i) {
    void* h = nullptr;
    auto d = CollDescr(nullptr, "AllReduce", static_cast<uint64_t>(i), 1, 0);
    v6().startEvent(c.ctx, &h, &d);
    if (h == nullptr) ++dropped;
    else live.push_back(h);
  }
  EXPECT_EQ(dropped, 36);
  for (void* h : live) v6().stopEvent(h);
  // Slots are back: nothing is dropped any more.
  for (int i = 0; i < 200; ++i) CollWithChannels(c.ctx, nullptr, static_cast<uint64_t>(i), 0);
  v6().finalize(c.ctx);
  int warnings = 0;
  for (const auto& w : CapturedWarnings()) warnings += w.find("Coll pool") != std::string::npos;
  EXPECT_EQ(warnings, 1);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["drops"]["Coll"], 36);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 264);
  bool counter = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "C" && e["name"] == "katrace drops" && e["args"].value("Coll", 0) == 36) counter = true;
  }
  EXPECT_TRUE(counter) << "drops must show as a counter track";
}

// The Coll pool's first thread takes its slots without locked operations; a second thread taking
// slots too hands the free list over. The capacity stays exact across the hand-over: no slot is
// hidden from the second thread, none is handed out twice, and the drops are exactly the excess.
TEST_F(PoolTest, TheCapacityIsExactWhenASecondThreadJoinsThePoolsFirst) {
  setenv("KATRACE_POOL_COLL", "64", 1);
  Comm c = InitComm(0x3100000, 0, 1);
  auto start = [&](uint64_t seq) {
    void* h = nullptr;
    auto d = CollDescr(nullptr, "AllReduce", seq, 1, 0);
    v6().startEvent(c.ctx, &h, &d);
    return h;
  };
  std::vector<void*> mine, theirs;
  for (int i = 0; i < 40; ++i) mine.push_back(start(static_cast<uint64_t>(i)));
  // Half of them back, on this thread: they go to the end of its free list.
  for (int i = 0; i < 20; ++i) v6().stopEvent(mine[static_cast<size_t>(i)]);
  int dropped = 0;
  std::thread([&] {
    for (int i = 0; i < 60; ++i) {
      void* h = start(static_cast<uint64_t>(100 + i));
      if (h == nullptr) ++dropped;
      else theirs.push_back(h);
    }
    // Given back by the other thread: the slots this thread took at first among them.
    for (int i = 20; i < 40; ++i) v6().stopEvent(mine[static_cast<size_t>(i)]);
  }).join();
  EXPECT_EQ(dropped, 16) << "64 slots, 20 live here, 60 asked for there";
  std::set<void*> distinct(theirs.begin(), theirs.end());
  EXPECT_EQ(distinct.size(), theirs.size());
  for (int i = 0; i < 20; ++i) EXPECT_NE(start(static_cast<uint64_t>(200 + i)), nullptr) << i;
  for (void* h : theirs) v6().stopEvent(h);
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["drops"]["Coll"], 16);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 40 + 44 + 20);
}

TEST_F(PoolTest, ParentWaitsForItsChildrenBeforeItsSlotIsReused) {
  setenv("KATRACE_POOL_COLL", "1", 1);
  Comm c = InitComm(0x4000000, 0, 1);
  void* coll = nullptr;
  auto d = CollDescr(nullptr, "AllReduce", 1, 1, 2);
  v6().startEvent(c.ctx, &coll, &d);
  v6().stopEvent(coll);  // enqueued, GPU work not done: the slot stays live
  void* other = nullptr;
  auto d2 = CollDescr(nullptr, "AllGather", 2, 1, 0);
  v6().startEvent(c.ctx, &other, &d2);
  EXPECT_EQ(other, nullptr) << "the only slot is still live and must not be reused";
  KernelCh(c.ctx, coll, 0);
  KernelCh(c.ctx, coll, 1);
  v6().startEvent(c.ctx, &other, &d2);
  EXPECT_NE(other, nullptr) << "both children done: the slot is free again";
  v6().stopEvent(other);
  v6().finalize(c.ctx);
  auto trace = ExpectValidTrace(trace_path_);
  EXPECT_EQ(Footer(trace)["drops"]["Coll"], 1);
  EXPECT_EQ(Footer(trace)["events"]["Coll"], 2);
  EXPECT_EQ(Footer(trace)["incomplete"], 0);
}

}  // namespace
}  // namespace katrace_test
