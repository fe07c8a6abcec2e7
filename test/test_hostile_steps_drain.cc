// The KernelStep drain (proxy_drain/) fed what a broken or hostile GPU side, configuration or
// caller can produce: channels the descriptor's byte cannot name, stop stamps that are zero or
// wrap, absurd configuration values, ring memory far larger than what gets written. Each case:
// no crash, nothing emitted wrong, everything not emitted counted. Runs under ThreadSanitizer.
#include <gtest/gtest.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "katrace/drain_counters.h"
#include "katrace/step_ring.h"
#include "nccl_profiler/v6.h"
#include "proxy_drain/step_drain.h"
#include "proxy_drain/step_ring_buffers.h"

namespace katrace {
namespace {

// A v6 plugin that records every call. Handles are 1-based indices into |events|; the drain
// calls from one thread.
class RecordingPlugin {
 public:
  struct Event {
    ncclProfilerEventDescr_v6_t descr;
    uint64_t stop_ns = ~uint64_t{0};
    int num_states = 0;
    int num_stops = 0;
  };

  RecordingPlugin() {
    table_.name = "hostile-recording";
    table_.init = nullptr;
    table_.startEvent = &StartEvent;
    table_.stopEvent = &StopEvent;
    table_.recordEventState = &RecordEventState;
    table_.finalize = nullptr;
    current_ = this;
  }
  ~RecordingPlugin() { current_ = nullptr; }

  const ncclProfiler_v6_t* table() const { return &table_; }
  void* context() { return this; }
  const int* mask() const { return &mask_; }

  std::vector<const Event*> Steps() const {
    std::vector<const Event*> out;
    for (const Event& e : events) {
      if (e.descr.kernelStep.isSend != ncclProfilerKernelStepReport) out.push_back(&e);
    }
    return out;
  }
  // The sum of every report's counters.
  DrainCounters Reported() const {
    DrainCounters total;
    for (const Event& e : events) {
      if (e.descr.kernelStep.isSend == ncclProfilerKernelStepReport) {
        total += DecodeDrainReport(e.descr.kernelStep);
      }
    }
    return total;
  }

  std::vector<Event> events;

 private:
  static ncclResult_t StartEvent(void*, void** handle, ncclProfilerEventDescr_v6_t* descr) {
    Event event;
    event.descr = *descr;
    current_->events.push_back(event);
    *handle = reinterpret_cast<void*>(uintptr_t(current_->events.size()));
    return ncclSuccess;
  }
  static ncclResult_t StopEvent(void* handle) {
    ++current_->events[reinterpret_cast<uintptr_t>(handle) - 1].num_stops;
    return ncclSuccess;
  }
  static ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t,
                                       ncclProfilerEventStateArgs_v6_t* args) {
    Event& e = current_->events[reinterpret_cast<uintptr_t>(handle) - 1];
    ++e.num_states;
    e.stop_ns = args->kernelStep.pTimer;
    return ncclSuccess;
  }

  static RecordingPlugin* current_;
  ncclProfiler_v6_t table_;
  int mask_ = ncclProfileColl | ncclProfileKernelStep;
};
RecordingPlugin* RecordingPlugin::current_ = nullptr;

int g_parent = 0;

StepStart Start(uint64_t seq, uint16_t tag, uint64_t ready_ns) {
  StepStart start;
  start.seq = seq;
  start.ready_ns = ready_ns;
  start.wait_start_ns = 0;
  start.step = uint32_t(seq);
  start.size_bytes = 4096;
  start.peer = 1;
  start.work_tag = tag;
  start.is_send = true;
  return start;
}

StepDrainConfig Config() {
  StepDrainConfig config;
  config.report_every_polls = 0;
  return config;
}

// NCCL's channelId is a byte: a channel above 255 used to be emitted as channel & 255, on
// another channel's track and with that channel's peers. Its steps are now left out and counted
// (as peers above 255 are), and its counters still reach the plugin.
TEST(HostileStepsDrainTest, ChannelsAbove255AreCountedNeverEmittedAsAnotherChannel) {
  RecordingPlugin plugin;
  constexpr int kChannels = 258;
  StepRingBuffers buffers(kChannels, 2);
  StepDrain drain(buffers.views(), plugin.table(), plugin.context(), plugin.mask(), Config());
  for (int c : {0, 255, 256, 257}) {
    drain.RegisterWork(c, true, 3, &g_parent);
    const StepStart start = Start(0, 3, 1000000 + c);
    WriteStart(buffers.view(c), start);
    WriteStop(buffers.view(c), 0, start.ready_ns + 10);
  }
  drain.Flush();
  const std::vector<const RecordingPlugin::Event*> steps = plugin.Steps();
  ASSERT_EQ(steps.size(), 2u);
  for (const RecordingPlugin::Event* e : steps) {
    const int channel = e->descr.kernelStep.channelId;
    EXPECT_TRUE(channel == 0 || channel == 255) << channel;
    EXPECT_EQ(e->descr.kernelStep.readyTs, uint64_t(1000000 + channel)) << "another channel's step";
    EXPECT_EQ(e->num_stops, 1);
  }
  for (int c : {256, 257}) {
    EXPECT_EQ(drain.ChannelCounters(c).seen, 1u) << c;
    EXPECT_EQ(drain.ChannelCounters(c).sampled_out, 1u) << c;
  }
  // Nothing lost on the way to the plugin: the reports add up to the drain's counters.
  const DrainCounters reported = plugin.Reported();
  const DrainCounters counted = drain.Counters();
  for (const DrainCounterField& f : kDrainCounterFields) {
    EXPECT_EQ(reported.*f.member, counted.*f.member) << f.name;
  }
  EXPECT_EQ(counted.seen, 4u);
  EXPECT_EQ(counted.sampled_out, 2u);
}

// pTimer 0 is the ABI's "abandoned" mark: a stop stamp that rebuilds to 0 (a zero %globaltimer)
// reached the plugin as abandoned while the drain counted nothing, so the trace held abandoned
// steps no counter explained. A stop that rebuilds across zero (before a ready near 0) or past
// 2^64 (after a ready near the top) came out as a stamp 2^64 ns away. All three are unusable
// stops: the step is closed abandoned and counted.
TEST(HostileStepsDrainTest, ZeroOrWrappingStopStampsAreAbandonedAndCounted) {
  RecordingPlugin plugin;
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin.table(), plugin.context(), plugin.mask(), Config());
  drain.RegisterWork(0, true, 1, &g_parent);
  struct Case {
    uint64_t ready_ns;
    uint64_t stop_ns;
    bool usable;
  };
  const Case cases[] = {
      {5, 0, false},                                  // zero %globaltimer at the stop
      {5, 3, true},                                   // stop 2 ns before ready: reported as is
      {5, (uint64_t{1} << 40) - 1, false},            // rebuilt "6 ns before 5": wraps below 0
      {~uint64_t{0} - 2, 2, false},                   // ready near 2^64, stop past it: wraps
      {~uint64_t{0} - 20, ~uint64_t{0} - 10, true},   // near the top, no wrap
      {1700000000000000000ull, 1700000000000000070ull, true},
  };
  uint64_t seq = 0;
  for (const Case& c : cases) {
    WriteStart(ring, Start(seq, 1, c.ready_ns));
    WriteStop(ring, seq, c.stop_ns);
    ++seq;
  }
  drain.Poll();
  const std::vector<const RecordingPlugin::Event*> steps = plugin.Steps();
  ASSERT_EQ(steps.size(), seq);
  uint64_t unusable = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Case& c = cases[i];
    EXPECT_EQ(steps[i]->num_states, 1) << i;
    EXPECT_EQ(steps[i]->num_stops, 1) << i;
    if (c.usable) {
      EXPECT_EQ(steps[i]->stop_ns, c.stop_ns) << i;
    } else {
      ++unusable;
      EXPECT_EQ(steps[i]->stop_ns, kKernelStepAbandonedStopNs) << i;
    }
  }
  EXPECT_EQ(drain.Counters().abandoned, unusable);
  EXPECT_EQ(drain.Counters().seen, seq);
}

// work_slots_log2 sizes a table of 2^n slots per (channel, direction); work tags are 16 bits, so
// a larger n only wasted memory, and a hostile one (40) threw bad_alloc from the constructor, or
// shifted past 64 bits (undefined).
TEST(HostileStepsDrainTest, HugeWorkSlotCountIsClampedToTheTagWidth) {
  RecordingPlugin plugin;
  StepRingBuffers buffers(2, 4);
  for (uint32_t slots_log2 : {40u, 64u, 200u, 0xFFFFFFFFu}) {
    StepDrainConfig config = Config();
    config.work_slots_log2 = slots_log2;
    StepDrain drain(buffers.views(), plugin.table(), plugin.context(), plugin.mask(), config);
    drain.RegisterWork(1, true, 0xFFFF, &g_parent);
    drain.RegisterWork(1, false, 7, &g_parent);
    WriteStart(buffers.view(1), Start(0, 0xFFFF, 100));
    StepStart recv = Start(1, 7, 200);
    recv.is_send = false;
    WriteStart(buffers.view(1), recv);
    drain.Poll();
    EXPECT_EQ(drain.Counters().seen, 2u) << slots_log2;
    EXPECT_EQ(drain.Counters().late, 0u) << slots_log2;
    drain.RetireWork(1, true, 0xFFFF);
    drain.RetireWork(1, false, 7);
    EXPECT_EQ(drain.num_open_steps(), 0u);
    buffers = StepRingBuffers(2, 4);  // fresh, zeroed rings for the next drain
  }
}

// Resident set size of this process, in bytes.
uint64_t ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0, resident = 0;
  const int n = fscanf(f, "%llu %llu", &pages, &resident);
  fclose(f);
  return n == 2 ? resident * uint64_t(sysconf(_SC_PAGESIZE)) : 0;
}

// Rings are sized for the worst burst, and the sim lets a user ask for 2^20 slots on each of 64
// channels of 256 ranks: 640 GiB. The rings were zeroed by touching every byte, so the whole
// size became resident up front (the sim was OOM-killed without a word). Zero pages are now
// mapped lazily: only what writers touch costs memory.
TEST(HostileStepsDrainTest, RingMemoryIsResidentOnlyWhereWritten) {
  const uint64_t before = ResidentBytes();
  if (before == 0) GTEST_SKIP() << "no /proc/self/statm";
  StepRingBuffers buffers(64, kStepRingMaxDepthLog2);  // 64 x 40 MiB
  ASSERT_EQ(buffers.num_channels(), 64);
  ASSERT_EQ(buffers.depth_log2(), kStepRingMaxDepthLog2);
  // Reads and writes work anywhere in it.
  const StepRingView last = buffers.view(63);
  const uint64_t seq = (uint64_t{1} << kStepRingMaxDepthLog2) - 1;
  StepStart got;
  EXPECT_EQ(ReadStart(last, seq, &got), StepSlotState::kNotYet);
  WriteStart(last, Start(seq, 9, 12345));
  ASSERT_EQ(ReadStart(last, seq, &got), StepSlotState::kReady);
  EXPECT_EQ(got.ready_ns, 12345u);
  const uint64_t grown = ResidentBytes() - before;
  EXPECT_LT(grown, uint64_t{256} << 20) << "2.5 GiB of rings made " << (grown >> 20)
                                         << " MiB resident";
}

// A ring count of zero or below, or rings too large to map, leave no channels instead of
// crashing (negative counts threw from operator new[]; a failed allocation was read through a
// null pointer).
TEST(HostileStepsDrainTest, UnallocatableRingsLeaveNoChannels) {
  for (int channels : {0, -1, -1000}) {
    StepRingBuffers buffers(channels, 4);
    EXPECT_EQ(buffers.num_channels(), 0) << channels;
    EXPECT_TRUE(buffers.views().empty()) << channels;
  }
  // 2^31 channels of 40 MiB: 80 PiB, more address space than any machine maps.
  StepRingBuffers huge(0x7FFFFFFF, kStepRingMaxDepthLog2);
  EXPECT_EQ(huge.num_channels(), 0);
  EXPECT_TRUE(huge.views().empty());
  RecordingPlugin plugin;
  StepDrain drain(huge.views(), plugin.table(), plugin.context(), plugin.mask(), Config());
  drain.RegisterWork(0, true, 1, &g_parent);
  drain.Close();
  EXPECT_EQ(drain.num_channels(), 0);
  EXPECT_TRUE(plugin.events.empty());
}

}  // namespace
}  // namespace katrace
