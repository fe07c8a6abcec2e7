// The KernelStep drain (proxy_drain/) against a fake v6 plugin that records every call: events
// emitted once with the right parent and fields, stop pairing, abandonment, overrun accounting,
// reports, the activation mask, and late steps after RetireWork. Runs under ThreadSanitizer.
#include <gtest/gtest.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "katrace/drain_counters.h"
#include "katrace/step_ring.h"
#include "katrace/step_stamper.h"
#include "nccl_profiler/v6.h"
#include "proxy_drain/emulated_step_writer.h"
#include "proxy_drain/realtime_step_clock.h"
#include "proxy_drain/step_drain.h"
#include "proxy_drain/step_ring_buffers.h"

namespace katrace {
namespace {

// A v6 plugin that records calls. Handles are 1-based indices into |events|. Only the drain
// thread calls it, as in NCCL.
class FakePlugin {
 public:
  struct Event {
    ncclProfilerEventDescr_v6_t descr;
    int num_states = 0;
    int last_state = -1;
    uint64_t stop_ns = 0;
    int num_stops = 0;
    bool state_before_stop = true;
  };

  FakePlugin() {
    table_.name = "fake";
    table_.init = &Init;
    table_.startEvent = &StartEvent;
    table_.stopEvent = &StopEvent;
    table_.recordEventState = &RecordEventState;
    table_.finalize = &Finalize;
    current_ = this;
  }
  ~FakePlugin() { current_ = nullptr; }

  const ncclProfiler_v6_t* table() const { return &table_; }
  void* context() { return this; }
  const int* mask() const { return &mask_; }
  void SetMask(int mask) { __atomic_store_n(&mask_, mask, __ATOMIC_RELAXED); }

  std::vector<Event> events;
  int num_bad_calls = 0;

  // KernelSteps proper, then drain reports, each in emission order.
  std::vector<const Event*> Steps() const {
    std::vector<const Event*> out;
    for (const Event& e : events) {
      if (e.descr.kernelStep.isSend != ncclProfilerKernelStepReport) out.push_back(&e);
    }
    return out;
  }
  std::vector<const Event*> Reports() const {
    std::vector<const Event*> out;
    for (const Event& e : events) {
      if (e.descr.kernelStep.isSend == ncclProfilerKernelStepReport) out.push_back(&e);
    }
    return out;
  }

 private:
  static ncclResult_t Init(void** context, uint64_t, int*, const char*, int, int, int,
                           ncclDebugLogger_t) {
    *context = current_;
    return ncclSuccess;
  }
  static ncclResult_t StartEvent(void* context, void** handle, ncclProfilerEventDescr_v6_t* descr) {
    FakePlugin* self = static_cast<FakePlugin*>(context);
    if (self != current_ || descr == nullptr || descr->type != uint64_t(ncclProfileKernelStep)) {
      ++current_->num_bad_calls;
      *handle = nullptr;
      return ncclSuccess;
    }
    Event event;
    event.descr = *descr;
    self->events.push_back(event);
    *handle = reinterpret_cast<void*>(uintptr_t(self->events.size()));
    return ncclSuccess;
  }
  static Event* Lookup(void* handle) {
    const uintptr_t index = reinterpret_cast<uintptr_t>(handle);
    if (index == 0 || index > current_->events.size()) {
      ++current_->num_bad_calls;
      return nullptr;
    }
    return &current_->events[index - 1];
  }
  static ncclResult_t StopEvent(void* handle) {
    Event* event = Lookup(handle);
    if (event != nullptr) {
      if (event->num_states == 0 &&
          event->descr.kernelStep.isSend != ncclProfilerKernelStepReport) {
        event->state_before_stop = false;
      }
      ++event->num_stops;
    }
    return ncclSuccess;
  }
  static ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v6_t state,
                                       ncclProfilerEventStateArgs_v6_t* args) {
    Event* event = Lookup(handle);
    if (event != nullptr) {
      ++event->num_states;
      event->last_state = int(state);
      event->stop_ns = args != nullptr ? args->kernelStep.pTimer : ~uint64_t{0};
      if (event->num_stops != 0) event->state_before_stop = false;
    }
    return ncclSuccess;
  }
  static ncclResult_t Finalize(void*) { return ncclSuccess; }

  static FakePlugin* current_;
  ncclProfiler_v6_t table_;
  int mask_ = ncclProfileColl | ncclProfileP2p | ncclProfileKernelStep;
};
FakePlugin* FakePlugin::current_ = nullptr;

// Stand-ins for Coll/P2p handles the plugin returned.
void* Parent(int channel, bool is_send, uint32_t tag) {
  return reinterpret_cast<void*>(
      uintptr_t(0x10000000u + channel * 0x100000u + is_send * 0x10000u + tag));
}

StepStart MakeStart(uint64_t seq, uint16_t tag, uint32_t step, bool is_send = true,
                    int32_t peer = 1) {
  StepStart start;
  start.seq = seq;
  start.ready_ns = 1000000 + seq * 100;
  start.wait_start_ns = start.ready_ns - 40;
  start.step = step;
  start.size_bytes = 4096;
  start.peer = peer;
  start.work_tag = tag;
  start.is_send = is_send;
  return start;
}

// Writes step |seq| of work |tag| as a GPU would; |with_stop| false leaves its stop missing.
void WriteStep(const StepRingView& ring, uint64_t seq, uint16_t tag, uint32_t step,
               bool with_stop = true) {
  const StepStart start = MakeStart(seq, tag, step);
  WriteStart(ring, start);
  if (with_stop) WriteStop(ring, seq, start.ready_ns + 70);
}

class StepDrainTest : public ::testing::Test {
 protected:
  StepDrainConfig Config() const {
    StepDrainConfig config;
    config.rank = 5;
    config.report_every_polls = 0;
    return config;
  }
  FakePlugin plugin_;
};

TEST_F(StepDrainTest, EveryStepEmittedOnceWithItsParentAndFields) {
  constexpr int kChannels = 2;
  constexpr uint32_t kSteps = 50;
  // Peers 255 and below travel exactly; 300 does not fit PR #2316's byte: its steps are left out
  // and counted, never emitted with a wrapped peer.
  const std::vector<EmulatedRole> roles = {{true, 1}, {false, 3}, {true, 255}, {false, 300}};
  StepRingBuffers buffers(kChannels, kStepRingDefaultDepthLog2);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  std::vector<EmulatedChannel> channels;
  for (int c = 0; c < kChannels; ++c) {
    EmulatedChannel channel;
    channel.ring = buffers.view(c);
    channel.roles = roles;
    for (uint32_t tag = 10; tag < 13; ++tag) {
      channel.works.push_back({tag, kSteps, 1024u * (tag - 9)});
      drain.RegisterWork(c, true, tag, Parent(c, true, tag));
      drain.RegisterWork(c, false, tag, Parent(c, false, tag));
    }
    channels.push_back(channel);
  }
  EmulatedStepWriterOptions options;
  options.transfer_ns = 2000;
  EmulatedStepWriter writer(channels, options);
  const uint64_t before_ns = RealtimeStepClock::NowNs();
  writer.Start();
  while (!writer.Done()) drain.Poll();
  writer.Join();
  drain.Flush();
  const uint64_t after_ns = RealtimeStepClock::NowNs();

  const uint64_t per_role = kChannels * 3 * kSteps;
  const uint64_t total = per_role * (roles.size() - 1);
  const DrainCounters counters = drain.Counters();
  EXPECT_EQ(counters.seen, per_role * roles.size());
  EXPECT_EQ(counters.lost_overrun, 0u);
  EXPECT_EQ(counters.abandoned, 0u);
  EXPECT_EQ(counters.late, 0u);
  EXPECT_EQ(counters.sampled_out, per_role) << "the peer-300 role";
  EXPECT_EQ(drain.num_open_steps(), 0u);
  EXPECT_EQ(plugin_.num_bad_calls, 0);

  std::set<std::tuple<int, int, int, uint32_t, uint32_t>> keys;
  for (const FakePlugin::Event* e : plugin_.Steps()) {
    const auto& ks = e->descr.kernelStep;
    const uint32_t tag = ks.size / 1024 + 9;
    EXPECT_EQ(e->descr.rank, 5);
    EXPECT_EQ(e->descr.parentObj, Parent(ks.channelId, ks.isSend, tag));
    EXPECT_TRUE(keys.emplace(ks.channelId, ks.isSend, ks.peer, tag, ks.step).second)
        << "emitted twice";
    EXPECT_LT(ks.step, kSteps);
    EXPECT_EQ(ks.isSend, ks.peer == 1 || ks.peer == 255);
    EXPECT_GE(ks.startTs, before_ns);
    EXPECT_LE(ks.startTs, ks.readyTs);
    EXPECT_EQ(e->num_states, 1);
    EXPECT_EQ(e->last_state, int(ncclProfilerKernelStepStop));
    EXPECT_GE(e->stop_ns, ks.readyTs + 2000);
    EXPECT_LE(e->stop_ns, after_ns);
    EXPECT_EQ(e->num_stops, 1);
    EXPECT_TRUE(e->state_before_stop);
  }
  EXPECT_EQ(keys.size(), total);
}

TEST_F(StepDrainTest, LostCompletionIsAbandonedAfterTheLagAndNeverBlocksLaterStops) {
  StepRingBuffers buffers(1, 10);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, true, 1, Parent(0, true, 1));
  for (uint64_t seq = 0; seq <= 68; ++seq) WriteStep(ring, seq, 1, uint32_t(seq), seq != 5);
  drain.Poll();
  // 63 later starts: step 5 is still in flight; all the others are done despite it.
  ASSERT_EQ(plugin_.Steps().size(), 69u);
  EXPECT_EQ(plugin_.events[5].num_stops, 0);
  for (size_t i = 0; i < plugin_.events.size(); ++i) {
    if (i != 5) {
      EXPECT_EQ(plugin_.events[i].num_stops, 1) << i;
    }
  }
  EXPECT_EQ(drain.num_open_steps(), 1u);
  WriteStep(ring, 69, 1, 69);
  drain.Poll();
  // The 64th later start: abandoned, marked by pTimer 0.
  EXPECT_EQ(plugin_.events[5].num_states, 1);
  EXPECT_EQ(plugin_.events[5].stop_ns, 0u);
  EXPECT_EQ(plugin_.events[5].num_stops, 1);
  EXPECT_EQ(drain.Counters().abandoned, 1u);
  // Its stop arriving now changes nothing.
  WriteStop(ring, 5, MakeStart(5, 1, 5).ready_ns + 70);
  drain.Poll();
  EXPECT_EQ(plugin_.events[5].num_stops, 1);
  EXPECT_EQ(drain.num_open_steps(), 0u);
  EXPECT_EQ(drain.Counters().seen, 70u);
  EXPECT_EQ(plugin_.num_bad_calls, 0);
}

TEST_F(StepDrainTest, AbandonLagIsConfigurable) {
  StepRingBuffers buffers(1, 10);
  const StepRingView ring = buffers.view(0);
  StepDrainConfig config = Config();
  config.abandon_lag = 3;
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), config);
  drain.RegisterWork(0, true, 1, Parent(0, true, 1));
  for (uint64_t seq = 0; seq < 3; ++seq) WriteStep(ring, seq, 1, uint32_t(seq), seq != 0);
  drain.Poll();
  EXPECT_EQ(drain.Counters().abandoned, 0u);
  WriteStep(ring, 3, 1, 3);
  drain.Poll();
  EXPECT_EQ(drain.Counters().abandoned, 1u);
  EXPECT_EQ(plugin_.events[0].stop_ns, 0u);
}

TEST_F(StepDrainTest, StartOverrunCountsExactlyTheOverwrittenRecords) {
  StepRingBuffers buffers(1, 4);  // 16 slots
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, true, 2, Parent(0, true, 2));
  for (uint64_t seq = 0; seq < 100; ++seq) WriteStep(ring, seq, 2, uint32_t(seq));
  drain.Poll();
  DrainCounters counters = drain.Counters();
  EXPECT_EQ(counters.lost_overrun, 84u);
  EXPECT_EQ(counters.seen, 16u);
  ASSERT_EQ(plugin_.Steps().size(), 16u);
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(plugin_.events[i].descr.kernelStep.step, 84 + i);
    EXPECT_EQ(plugin_.events[i].stop_ns, plugin_.events[i].descr.kernelStep.readyTs + 70);
  }
  // 20 more with polls in between: nothing further lost.
  for (uint64_t seq = 100; seq < 120; ++seq) {
    WriteStep(ring, seq, 2, uint32_t(seq));
    if (seq % 8 == 0) drain.Poll();
  }
  drain.Poll();
  counters = drain.Counters();
  EXPECT_EQ(counters.lost_overrun, 84u);
  EXPECT_EQ(counters.seen, 36u);
}

TEST_F(StepDrainTest, StopOverrunClosesTheStepAsAbandonedAndCountsItLost) {
  StepRingBuffers buffers(1, 4);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, true, 2, Parent(0, true, 2));
  for (uint64_t seq = 0; seq < 16; ++seq) WriteStep(ring, seq, 2, uint32_t(seq), false);
  drain.Poll();
  EXPECT_EQ(drain.num_open_steps(), 16u);
  // The next lap's stops land before the drain saw these.
  for (uint64_t seq = 16; seq < 20; ++seq) WriteStop(ring, seq, MakeStart(seq, 2, 0).ready_ns + 1);
  drain.Poll();
  EXPECT_EQ(drain.Counters().lost_overrun, 4u);
  EXPECT_EQ(drain.num_open_steps(), 12u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plugin_.events[i].num_stops, 1);
    EXPECT_EQ(plugin_.events[i].stop_ns, 0u);
  }
}

TEST_F(StepDrainTest, OutOfOrderStartsAreEmittedWithoutWaitingForTheGap) {
  StepRingBuffers buffers(1, 6);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, true, 3, Parent(0, true, 3));
  WriteStep(ring, 1, 3, 1);
  WriteStep(ring, 2, 3, 2);
  drain.Poll();
  ASSERT_EQ(plugin_.Steps().size(), 2u);
  EXPECT_EQ(plugin_.events[0].descr.kernelStep.step, 1u);
  EXPECT_EQ(plugin_.events[1].num_stops, 1);
  WriteStep(ring, 0, 3, 0);
  drain.Poll();
  ASSERT_EQ(plugin_.Steps().size(), 3u);
  EXPECT_EQ(plugin_.events[2].descr.kernelStep.step, 0u);
  EXPECT_EQ(drain.Counters().lost_overrun, 0u);
}

TEST_F(StepDrainTest, ReportsCarryTheCountersSinceThePreviousReport) {
  StepRingBuffers buffers(2, 4);
  const StepRingView ring = buffers.view(1);
  StepDrainConfig config = Config();
  config.abandon_lag = 4;
  config.sample_every = 4;
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), config);
  drain.RegisterWork(1, true, 9, Parent(1, true, 9));
  // Kept steps 0, 4, ... of a stream sampled every 4th, then one step of an unregistered work:
  // 101 records through 16 slots, so the drain reads the last 16 (seqs 85-100).
  for (uint64_t seq = 0; seq < 100; ++seq) WriteStep(ring, seq, 9, uint32_t(seq * 4), seq != 90);
  WriteStep(ring, 100, 77, 0);
  drain.Flush();
  const DrainCounters counters = drain.ChannelCounters(1);
  EXPECT_EQ(counters.seen, 16u);
  EXPECT_EQ(counters.lost_overrun, 85u);
  EXPECT_EQ(counters.abandoned, 1u);     // seq 90: no stop, 10 later starts, lag 4
  EXPECT_EQ(counters.sampled_out, 45u);  // 3 skipped before each of the 15 kept steps read
  EXPECT_EQ(counters.late, 1u);          // seq 100
  const auto reports = plugin_.Reports();
  ASSERT_EQ(reports.size(), 1u);
  const FakePlugin::Event& report = *reports[0];
  EXPECT_EQ(report.descr.type, uint64_t(ncclProfileKernelStep));
  EXPECT_EQ(report.descr.parentObj, nullptr);
  EXPECT_EQ(report.descr.rank, 5);
  EXPECT_EQ(report.descr.kernelStep.channelId, 1);
  const DrainCounters reported = DecodeDrainReport(report.descr.kernelStep);
  for (const DrainCounterField& f : kDrainCounterFields) {
    EXPECT_EQ(reported.*f.member, counters.*f.member) << f.name;
  }
  EXPECT_EQ(report.num_states, 0);
  EXPECT_EQ(report.num_stops, 1);
  // Nothing new: no report. Something new: a report with only the difference.
  drain.Flush();
  EXPECT_EQ(plugin_.Reports().size(), 1u);
  WriteStep(ring, 101, 77, 0);
  drain.Flush();
  ASSERT_EQ(plugin_.Reports().size(), 2u);
  const DrainCounters second = DecodeDrainReport(plugin_.Reports()[1]->descr.kernelStep);
  EXPECT_EQ(second.seen, 1u);
  EXPECT_EQ(second.late, 1u);
  EXPECT_EQ(second.lost_overrun, 0u);
}

// The report's wire format, pinned here once (the ABI NCCL-side readers rely on): each counter in
// its descriptor field, saturating at that field's width, and decoded back unchanged.
TEST(DrainReportEncoding, EachCounterHasItsFieldAndSaturates) {
  DrainCounters delta;
  delta.seen = 16;
  delta.lost_overrun = 85;
  delta.abandoned = 1;
  delta.sampled_out = 45;
  delta.late = 2;
  ncclProfilerKernelStepDescr_t d;
  memset(&d, 0, sizeof(d));
  DrainCounters carried = EncodeDrainReport(delta, &d);
  EXPECT_EQ(d.startTs, 16u);
  EXPECT_EQ(d.step, 85u);
  EXPECT_EQ(d.size, 1u);
  EXPECT_EQ(d.peer, 0) << "a byte now: no counter travels there";
  EXPECT_EQ(d.readyTs, (uint64_t{45} << 32) | 2u) << "sampled_out high, late low";
  const DrainCounters decoded = DecodeDrainReport(d);
  for (const DrainCounterField& f : kDrainCounterFields) {
    EXPECT_EQ(carried.*f.member, delta.*f.member) << f.name;
    EXPECT_EQ(decoded.*f.member, delta.*f.member) << f.name;
  }
  for (const DrainCounterField& f : kDrainCounterFields) delta.*f.member = uint64_t{1} << 40;
  carried = EncodeDrainReport(delta, &d);
  for (const DrainCounterField& f : kDrainCounterFields) {
    EXPECT_EQ(carried.*f.member, std::min(delta.*f.member, f.report_max)) << f.name;
    EXPECT_EQ(DecodeDrainReport(d).*f.member, carried.*f.member) << f.name;
  }
  EXPECT_EQ(d.readyTs, UINT64_MAX);
  EXPECT_EQ(d.step, UINT32_MAX);
}

TEST_F(StepDrainTest, ReportsComeEveryNPolls) {
  StepRingBuffers buffers(1, 4);
  StepDrainConfig config = Config();
  config.report_every_polls = 3;
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), config);
  WriteStep(buffers.view(0), 0, 1, 0);  // late: counted
  drain.Poll();
  drain.Poll();
  EXPECT_EQ(plugin_.Reports().size(), 0u);
  drain.Poll();
  EXPECT_EQ(plugin_.Reports().size(), 1u);
}

TEST_F(StepDrainTest, MaskWithoutKernelStepEmitsNothingAndReportsLater) {
  plugin_.SetMask(ncclProfileColl | ncclProfileKernelCh);
  StepRingBuffers buffers(1, 6);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, true, 4, Parent(0, true, 4));
  for (uint64_t seq = 0; seq < 10; ++seq) WriteStep(ring, seq, 4, uint32_t(seq));
  drain.Flush();
  EXPECT_TRUE(plugin_.events.empty());
  EXPECT_EQ(drain.Counters().seen, 10u);

  // Switched on at run time: new steps are emitted, and the first report carries everything.
  plugin_.SetMask(ncclProfileColl | ncclProfileKernelStep);
  for (uint64_t seq = 10; seq < 15; ++seq) WriteStep(ring, seq, 4, uint32_t(seq));
  drain.Flush();
  EXPECT_EQ(plugin_.Steps().size(), 5u);
  ASSERT_EQ(plugin_.Reports().size(), 1u);
  EXPECT_EQ(plugin_.Reports()[0]->descr.kernelStep.startTs, 15u);
}

// Close is the drain's end (the plugin is finalized next): a proxy loop that polls, flushes,
// registers or retires once more calls nothing in the plugin.
TEST_F(StepDrainTest, NothingReachesThePluginAfterClose) {
  StepRingBuffers buffers(1, 6);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, true, 4, Parent(0, true, 4));
  for (uint64_t seq = 0; seq < 3; ++seq) WriteStep(ring, seq, 4, uint32_t(seq));
  drain.Close();
  const size_t events = plugin_.events.size();
  ASSERT_EQ(plugin_.Steps().size(), 3u);
  ASSERT_EQ(plugin_.Reports().size(), 1u);
  drain.RegisterWork(0, true, 5, Parent(0, true, 5));
  for (uint64_t seq = 3; seq < 6; ++seq) WriteStep(ring, seq, 5, uint32_t(seq));
  drain.Poll();
  drain.RetireWork(0, true, 5);
  drain.Flush();
  drain.Close();
  EXPECT_EQ(plugin_.events.size(), events);
  EXPECT_EQ(drain.Counters().seen, 3u);
}

TEST_F(StepDrainTest, StepsAfterRetireWorkAreCountedLateNotEmitted) {
  StepRingBuffers buffers(1, 6);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, false, 7, Parent(0, false, 7));
  drain.RegisterWork(0, true, 7, Parent(0, true, 7));  // same tag, other direction
  for (uint64_t seq = 0; seq < 10; ++seq) WriteStep(ring, seq, 7, uint32_t(seq));  // sends
  drain.Poll();
  EXPECT_EQ(plugin_.Steps().size(), 10u);
  for (const FakePlugin::Event* e : plugin_.Steps())
    EXPECT_EQ(e->descr.parentObj, Parent(0, true, 7));
  drain.RetireWork(0, true, 7);
  for (uint64_t seq = 10; seq < 15; ++seq) WriteStep(ring, seq, 7, uint32_t(seq));
  drain.Poll();
  EXPECT_EQ(plugin_.Steps().size(), 10u);
  EXPECT_EQ(drain.Counters().late, 5u);
  // The receive side of tag 7 is still live.
  StepStart recv = MakeStart(15, 7, 0, false, 6);
  WriteStart(ring, recv);
  WriteStop(ring, 15, recv.ready_ns + 1);
  drain.Poll();
  ASSERT_EQ(plugin_.Steps().size(), 11u);
  EXPECT_EQ(plugin_.events[10].descr.parentObj, Parent(0, false, 7));
}

TEST_F(StepDrainTest, RetireWorkClosesItsOpenStepsButNoOtherWorks) {
  StepRingBuffers buffers(1, 6);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, true, 1, Parent(0, true, 1));
  drain.RegisterWork(0, true, 2, Parent(0, true, 2));
  WriteStep(ring, 0, 1, 0, false);
  WriteStep(ring, 1, 2, 0, false);
  drain.Poll();
  EXPECT_EQ(drain.num_open_steps(), 2u);
  drain.RetireWork(0, true, 1);
  EXPECT_EQ(plugin_.events[0].num_stops, 1);
  EXPECT_EQ(plugin_.events[0].stop_ns, 0u);
  EXPECT_EQ(plugin_.events[1].num_stops, 0);
  EXPECT_EQ(drain.Counters().abandoned, 1u);
  drain.Close();
  EXPECT_EQ(plugin_.events[1].num_stops, 1);
  EXPECT_EQ(drain.Counters().abandoned, 2u);
}

TEST_F(StepDrainTest, RetireWorkPicksUpStopsWrittenBeforeIt) {
  StepRingBuffers buffers(1, 6);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  drain.RegisterWork(0, true, 1, Parent(0, true, 1));
  WriteStep(ring, 0, 1, 0, false);
  drain.Poll();
  WriteStop(ring, 0, MakeStart(0, 1, 0).ready_ns + 70);
  drain.RetireWork(0, true, 1);
  EXPECT_EQ(plugin_.events[0].stop_ns, plugin_.events[0].descr.kernelStep.readyTs + 70);
  EXPECT_EQ(drain.Counters().abandoned, 0u);
}

TEST_F(StepDrainTest, DisplacedWorkIsClosedAndItsLaterStepsAreLate) {
  StepRingBuffers buffers(1, 6);
  const StepRingView ring = buffers.view(0);
  StepDrainConfig config = Config();
  config.work_slots_log2 = 1;  // two works per direction
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), config);
  drain.RegisterWork(0, true, 0, Parent(0, true, 0));
  WriteStep(ring, 0, 0, 0, false);
  drain.Poll();
  drain.RegisterWork(0, true, 2, Parent(0, true, 2));  // same slot as tag 0
  drain.Poll();
  EXPECT_EQ(plugin_.events[0].num_stops, 1);
  EXPECT_EQ(drain.Counters().abandoned, 1u);
  WriteStep(ring, 1, 0, 1);
  WriteStep(ring, 2, 2, 0);
  drain.Poll();
  EXPECT_EQ(drain.Counters().late, 1u);
  ASSERT_EQ(plugin_.Steps().size(), 2u);
  EXPECT_EQ(plugin_.events[1].descr.parentObj, Parent(0, true, 2));
}

TEST_F(StepDrainTest, NoPluginContextCountsButCallsNothing) {
  StepRingBuffers buffers(1, 6);
  StepDrain drain(buffers.views(), plugin_.table(), nullptr, plugin_.mask(), Config());
  drain.RegisterWork(0, true, 1, Parent(0, true, 1));
  WriteStep(buffers.view(0), 0, 1, 0);
  drain.Close();
  EXPECT_TRUE(plugin_.events.empty());
  EXPECT_EQ(drain.Counters().seen, 1u);
}

TEST_F(StepDrainTest, RegistrationsFromAnotherThreadRaceTheDrain) {
  // The launching thread registers each work just before its steps are stamped; the proxy thread
  // drains meanwhile. No step may be late.
  StepRingBuffers buffers(1, kStepRingDefaultDepthLog2);
  const StepRingView ring = buffers.view(0);
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), Config());
  constexpr uint32_t kWorks = 200;
  constexpr uint32_t kSteps = 8;
  std::atomic<bool> done{false};
  std::thread launcher([&] {
    for (uint32_t tag = 0; tag < kWorks; ++tag) {
      drain.RegisterWork(0, true, tag, Parent(0, true, tag));
      StepStamper<true, RealtimeStepClock> stamper(ring, tag, 2, true, 1);
      for (uint32_t step = 0; step < kSteps; ++step) {
        stamper.WaitStart(step);
        stamper.TransferStart(step, 512);
        stamper.SliceEnd();
      }
    }
    done.store(true, std::memory_order_release);
  });
  while (!done.load(std::memory_order_acquire)) drain.Poll();
  launcher.join();
  drain.Flush();
  EXPECT_EQ(drain.Counters().seen, kWorks * kSteps);
  EXPECT_EQ(drain.Counters().late, 0u);
  ASSERT_EQ(plugin_.Steps().size(), size_t(kWorks * kSteps));
  for (const FakePlugin::Event* e : plugin_.Steps()) {
    EXPECT_EQ(e->num_stops, 1);
    EXPECT_GE(e->stop_ns, e->descr.kernelStep.readyTs);
  }
}

TEST_F(StepDrainTest, EmulatedSamplingAndLostCompletionsEndToEnd) {
  // Two roles, 13 steps per work sampled every 4th (kept 0, 4, 8, 12), every 3rd kept stop never
  // written: all kept steps emitted, sampled-out counted exactly, lost stops abandoned.
  StepRingBuffers buffers(1, 8);
  StepDrainConfig config = Config();
  config.sample_every = 4;
  config.abandon_lag = 8;
  StepDrain drain(buffers.views(), plugin_.table(), plugin_.context(), plugin_.mask(), config);
  EmulatedChannel channel;
  channel.ring = buffers.view(0);
  channel.roles = {{true, 1}, {false, 255}};
  for (uint32_t tag = 0; tag < 10; ++tag) {
    channel.works.push_back({tag, 13, 2048});
    drain.RegisterWork(0, true, tag, Parent(0, true, tag));
    drain.RegisterWork(0, false, tag, Parent(0, false, tag));
  }
  EmulatedStepWriterOptions options;
  options.sample_every = 4;
  options.drop_stop_every = 3;
  EmulatedStepWriter writer({channel}, options);
  writer.Start();
  while (!writer.Done()) drain.Poll();
  writer.Join();
  drain.Close();
  const DrainCounters counters = drain.Counters();
  EXPECT_EQ(counters.seen, 2u * 10 * 4);
  EXPECT_EQ(counters.sampled_out, 2u * 10 * 9);
  EXPECT_EQ(counters.abandoned, writer.num_starts_written() - writer.num_stops_written());
  EXPECT_EQ(counters.lost_overrun, 0u);
  size_t abandoned = 0;
  for (const FakePlugin::Event* e : plugin_.Steps()) {
    EXPECT_EQ(e->descr.kernelStep.step % 4, 0u);
    EXPECT_EQ(e->num_stops, 1);
    if (e->stop_ns == 0) ++abandoned;
  }
  EXPECT_EQ(abandoned, counters.abandoned);
}

}  // namespace
}  // namespace katrace
