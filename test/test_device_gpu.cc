// The device side on a real GPU: the demo ring kernel stamps KernelSteps into host-mapped rings;
// every record must arrive, ordered and complete, and the drain must emit them all. Skips (with
// the reason) where no GPU is present. Prints the measured %globaltimer tick and the stamping
// slowdown for 128 KiB slices; asserts nothing about time.
#include <gtest/gtest.h>
#include <stdint.h>
#include <stdio.h>

#include <set>
#include <string>
#include <vector>

#include "device/demo_ring.h"
#include "device/globaltimer_tick.h"
#include "katrace/step_ring.h"
#include "nccl_profiler/v6.h"
#include "proxy_drain/step_drain.h"

namespace katrace {
namespace {

class DeviceGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!DemoRing::GpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  }
};

// Runs without a GPU: the options are checked before any CUDA call. A depth outside the ring's
// limits used to reach the kernel (a shift by 64 or more in its slot arithmetic).
TEST(DemoRingOptionsTest, RingDepthOutsideTheRingsLimitsIsRefusedFirst) {
  for (uint32_t depth : {0u, kStepRingMaxDepthLog2 + 1, 64u, 0xFFFFFFFFu}) {
    DemoRingOptions options;
    options.ring_depth_log2 = depth;
    DemoRing demo(options);
    std::string error;
    EXPECT_FALSE(demo.Init(&error)) << depth;
    EXPECT_NE(error.find("ring_depth_log2 " + std::to_string(depth)), std::string::npos) << error;
  }
}

// Reads one launch's records from every ring and checks them: count, fields, stamp order, and the
// per-ring sequence complete from |first_seq|.
void ExpectLaunchRecords(const DemoRing& demo, uint64_t first_seq, uint32_t work_tag) {
  const DemoRingOptions& o = demo.options();
  std::vector<uint32_t> kept;
  for (uint32_t step = 0; step < o.slices_per_launch; ++step) {
    if (o.sample_every <= 1 || step % o.sample_every == 0) kept.push_back(step);
  }
  const uint64_t per_ring = 2 * kept.size();
  for (int rank = 0; rank < o.num_ranks; ++rank) {
    for (int channel = 0; channel < o.num_channels; ++channel) {
      SCOPED_TRACE("rank " + std::to_string(rank) + " channel " + std::to_string(channel));
      const StepRingView ring = demo.HostRing(rank, channel);
      std::set<uint32_t> send_steps;
      std::set<uint32_t> recv_steps;
      for (uint64_t seq = first_seq; seq < first_seq + per_ring; ++seq) {
        StepStart start;
        ASSERT_EQ(ReadStart(ring, seq, &start), StepSlotState::kReady) << "seq " << seq;
        uint64_t stop_ns = 0;
        ASSERT_EQ(ReadStop(ring, seq, start.ready_ns, &stop_ns), StepSlotState::kReady);
        EXPECT_EQ(start.work_tag, uint16_t(work_tag));
        EXPECT_EQ(start.size_bytes, o.slice_bytes);
        EXPECT_NE(start.wait_start_ns, 0u);
        EXPECT_LE(start.wait_start_ns, start.ready_ns);
        EXPECT_LE(start.ready_ns, stop_ns);
        if (start.is_send) {
          EXPECT_EQ(start.peer, (rank + 1) % o.num_ranks);
          EXPECT_TRUE(send_steps.insert(start.step).second) << "send step twice " << start.step;
        } else {
          EXPECT_EQ(start.peer, (rank + o.num_ranks - 1) % o.num_ranks);
          EXPECT_TRUE(recv_steps.insert(start.step).second) << "recv step twice " << start.step;
        }
      }
      EXPECT_EQ(send_steps, std::set<uint32_t>(kept.begin(), kept.end()));
      EXPECT_EQ(recv_steps, std::set<uint32_t>(kept.begin(), kept.end()));
      StepStart beyond;
      EXPECT_EQ(ReadStart(ring, first_seq + per_ring, &beyond), StepSlotState::kNotYet);
    }
  }
}

TEST_F(DeviceGpuTest, EveryStepRecordArrivesCompleteAndOrdered) {
  DemoRing demo(DemoRingOptions{});
  std::string error;
  ASSERT_TRUE(demo.Init(&error)) << error;
  const uint64_t per_ring = 2 * demo.options().slices_per_launch;
  for (int launch = 0; launch < 3; ++launch) {
    ASSERT_TRUE(demo.Run(true, &error)) << error;
    ASSERT_TRUE(demo.VerifyLastRun(&error)) << error;
    ExpectLaunchRecords(demo, launch * per_ring, demo.last_work_tag());
  }
}

TEST_F(DeviceGpuTest, SamplingKeepsStepZeroAndEveryKth) {
  DemoRingOptions options;
  options.sample_every = 8;
  DemoRing demo(options);
  std::string error;
  ASSERT_TRUE(demo.Init(&error)) << error;
  ASSERT_TRUE(demo.Run(true, &error)) << error;
  ExpectLaunchRecords(demo, 0, demo.last_work_tag());
}

TEST_F(DeviceGpuTest, StampingCompiledOffWritesNothing) {
  DemoRing demo(DemoRingOptions{});
  std::string error;
  ASSERT_TRUE(demo.Init(&error)) << error;
  ASSERT_TRUE(demo.Run(false, &error)) << error;
  ASSERT_TRUE(demo.VerifyLastRun(&error)) << error;
  StepStart start;
  EXPECT_EQ(ReadStart(demo.HostRing(0, 0), 0, &start), StepSlotState::kNotYet);
}

// Counts what the drain emits; handles are 1-based indices.
struct CountingPlugin {
  static CountingPlugin* current;
  int mask = ncclProfileKernelStep;
  std::vector<ncclProfilerEventDescr_v6_t> starts;
  std::vector<uint64_t> stops_ns;
  int num_stops = 0;

  static ncclResult_t Start(void*, void** handle, ncclProfilerEventDescr_v6_t* descr) {
    current->starts.push_back(*descr);
    current->stops_ns.push_back(~uint64_t{0});
    *handle = reinterpret_cast<void*>(uintptr_t(current->starts.size()));
    return ncclSuccess;
  }
  static ncclResult_t Stop(void*) {
    ++current->num_stops;
    return ncclSuccess;
  }
  static ncclResult_t State(void* handle, ncclProfilerEventState_v6_t,
                            ncclProfilerEventStateArgs_v6_t* args) {
    current->stops_ns[reinterpret_cast<uintptr_t>(handle) - 1] = args->kernelStep.pTimer;
    return ncclSuccess;
  }
};
CountingPlugin* CountingPlugin::current = nullptr;

TEST_F(DeviceGpuTest, DrainEmitsEveryGpuStepUnderItsWork) {
  DemoRing demo(DemoRingOptions{});
  std::string error;
  ASSERT_TRUE(demo.Init(&error)) << error;
  CountingPlugin plugin;
  CountingPlugin::current = &plugin;
  ncclProfiler_v6_t table = {};
  table.name = "counting";
  table.startEvent = &CountingPlugin::Start;
  table.stopEvent = &CountingPlugin::Stop;
  table.recordEventState = &CountingPlugin::State;
  const int rank = 1;
  std::vector<StepRingView> rings;
  for (int c = 0; c < demo.options().num_channels; ++c) rings.push_back(demo.HostRing(rank, c));
  StepDrainConfig config;
  config.report_every_polls = 0;
  StepDrain drain(rings, &table, &plugin, &plugin.mask, config);
  int parent = 0;
  for (int c = 0; c < demo.options().num_channels; ++c) {
    drain.RegisterWork(c, true, 0, &parent);
    drain.RegisterWork(c, false, 0, &parent);
  }
  ASSERT_TRUE(demo.Run(true, &error)) << error;
  for (int c = 0; c < demo.options().num_channels; ++c) {
    drain.RetireWork(c, true, 0);
    drain.RetireWork(c, false, 0);
  }
  const uint64_t expected = 2ull * demo.options().slices_per_launch * demo.options().num_channels;
  EXPECT_EQ(drain.Counters().seen, expected);
  EXPECT_EQ(drain.Counters().abandoned, 0u);
  EXPECT_EQ(drain.Counters().lost_overrun, 0u);
  ASSERT_EQ(plugin.starts.size(), expected);
  EXPECT_EQ(plugin.num_stops, int(expected));
  for (size_t i = 0; i < plugin.starts.size(); ++i) {
    EXPECT_EQ(plugin.starts[i].parentObj, &parent);
    EXPECT_GE(plugin.stops_ns[i], plugin.starts[i].kernelStep.readyTs);
  }
  CountingPlugin::current = nullptr;
}

TEST_F(DeviceGpuTest, GlobaltimerTickAndStampingCostFor128KiBSlices) {
  GlobaltimerTick tick;
  std::string error;
  ASSERT_TRUE(MeasureGlobaltimerTick(&tick, &error)) << error;
  EXPECT_GT(tick.num_changes, 0);
  EXPECT_GT(tick.min_ns, 0u);
  DemoRing demo(DemoRingOptions{});
  ASSERT_TRUE(demo.Init(&error)) << error;
  double off_us = 0, on_us = 0, ignored = 0;
  ASSERT_TRUE(demo.TimeLaunches(false, 5, &ignored, &error)) << error;
  ASSERT_TRUE(demo.TimeLaunches(false, 50, &off_us, &error)) << error;
  ASSERT_TRUE(demo.TimeLaunches(true, 5, &ignored, &error)) << error;
  ASSERT_TRUE(demo.TimeLaunches(true, 50, &on_us, &error)) << error;
  printf(
      "%s: globaltimer tick min %llu ns, mean %llu ns; 128 KiB slices: off %.1f us/launch, "
      "on %.1f us/launch, slowdown %+.2f%%\n",
      DemoRing::GpuName().c_str(), (unsigned long long)tick.min_ns,
      (unsigned long long)tick.mean_ns, off_us, on_us, 100.0 * (on_us / off_us - 1.0));
}

}  // namespace
}  // namespace katrace
