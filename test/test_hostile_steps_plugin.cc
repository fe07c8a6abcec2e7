// Hostile KernelStep ring contents through the real drain into the real plugin: zero, wrapping
// and maximal %globaltimer stamps, stops before their start, a channel the descriptor cannot
// name, steps of a collective whose KernelCh never came. The trace must pass ValidateTrace and
// katrace-check, hold exactly the steps the drain emitted, and carry the drain's counters.
#include <stdint.h>

#include <vector>

#include "katrace/drain_counters.h"
#include "katrace/step_ring.h"
#include "proxy_drain/step_drain.h"
#include "proxy_drain/step_ring_buffers.h"
#include "test/support/plugin_test.h"

namespace katrace_test {
namespace {

using katrace::DrainCounters;
using katrace::StepRingBuffers;
using katrace::StepStart;

class HostileStepsPluginTest : public PluginTest {
 protected:
  // Writes one step on |channel|'s ring at its next sequence.
  void Write(int channel, uint16_t tag, uint64_t ready_ns, uint64_t wait_start_ns,
             uint64_t stop_ns, bool with_stop = true) {
    StepStart start;
    start.seq = next_seq_[channel]++;
    start.ready_ns = ready_ns;
    start.wait_start_ns = wait_start_ns;
    start.step = uint32_t(start.seq);
    start.size_bytes = 65536;
    start.peer = 1;
    start.work_tag = tag;
    start.is_send = true;
    katrace::WriteStart(rings_->view(channel), start);
    if (with_stop) katrace::WriteStop(rings_->view(channel), start.seq, stop_ns);
  }

  std::unique_ptr<StepRingBuffers> rings_;
  std::vector<uint64_t> next_seq_;
};

TEST_F(HostileStepsPluginTest, GarbageStampsAndUnnamableChannelsMakeAValidTrace) {
  Comm c = InitComm(0xBAD5, 0, 2);
  ASSERT_NE(c.mask & ncclProfileKernelStep, 0);
  constexpr int kChannels = 257;
  rings_ = std::make_unique<StepRingBuffers>(kChannels, 6);
  next_seq_.assign(kChannels, 0);
  katrace::StepDrainConfig config;
  config.report_every_polls = 0;
  katrace::StepDrain drain(rings_->views(), &v6(), c.ctx, NcclMask(), config);

  // A collective with KernelChs on channels 0 and 1, and one whose KernelCh never came.
  void* coll = nullptr;
  auto cd = CollDescr(nullptr, "AllReduce", 1, 1 << 20, 2);
  v6().startEvent(c.ctx, &coll, &cd);
  ASSERT_NE(coll, nullptr);
  v6().stopEvent(coll);
  void* lonely = nullptr;
  auto ld = CollDescr(nullptr, "AllGather", 2, 1 << 20, 1);
  v6().startEvent(c.ctx, &lonely, &ld);
  ASSERT_NE(lonely, nullptr);
  v6().stopEvent(lonely);

  const uint64_t t0 = GpuNow();
  void* kernel_ch[2] = {nullptr, nullptr};
  for (int ch = 0; ch < 2; ++ch) {
    auto kd = KernelChDescr(coll, uint8_t(ch), t0);
    v6().startEvent(c.ctx, &kernel_ch[ch], &kd);
    drain.RegisterWork(ch, true, 10, coll);
  }
  drain.RegisterWork(2, true, 11, lonely);
  drain.RegisterWork(256, true, 12, coll);

  Write(0, 10, t0 + 1000, t0 + 500, t0 + 2000);      // ordinary
  Write(0, 10, t0 + 3000, t0 + 2500, t0 + 2900);     // stop before ready
  Write(0, 10, t0 + 4000, t0 + 4500, t0 + 5000);     // wait start after ready
  // A zero stop stamp next to a real ready rebuilds (from its low 40 bits) to a time within 2^39
  // ns of it, like any real stop; next to a ready near 0 it rebuilds to 0, the abandoned mark.
  Write(0, 10, t0 + 6000, 0, 0);
  Write(0, 10, 5, 0, 0);
  Write(0, 10, 0, 0, 70);                            // zero ready stamp
  Write(1, 10, ~uint64_t{0} - 2, 0, 5);              // ready at the top, stop wraps past 2^64
  Write(1, 10, ~uint64_t{0} - 200, 0, ~uint64_t{0} - 100);  // maximal, in order
  Write(1, 10, 5, 0, (uint64_t{1} << 40) - 1);       // stop rebuilt below 0
  Write(1, 10, t0 + 7000, t0 + 6000, 0, false);      // stop never comes
  Write(2, 11, t0 + 1000, t0 + 900, t0 + 1500);      // under a Coll without KernelCh
  Write(256, 12, t0 + 1000, t0 + 900, t0 + 1500);    // channel 256
  drain.Poll();

  for (int ch = 0; ch < 2; ++ch) {
    drain.RetireWork(ch, true, 10);
    ncclProfilerEventStateArgs_v6_t ka{};
    ka.kernelCh.pTimer = t0 + 8192;
    v6().recordEventState(kernel_ch[ch], ncclProfilerKernelChStop, &ka);
    v6().stopEvent(kernel_ch[ch]);
  }
  drain.RetireWork(2, true, 11);
  drain.RetireWork(256, true, 12);
  drain.Close();
  const DrainCounters counted = drain.Counters();
  v6().finalize(c.ctx);

  const nlohmann::json trace = ExpectValidTrace(trace_path_);
  const nlohmann::json& footer = Footer(trace);
  EXPECT_EQ(counted.seen, 12u);
  EXPECT_EQ(counted.sampled_out, 1u) << "channel 256";
  EXPECT_EQ(counted.late, 0u);
  EXPECT_EQ(counted.lost_overrun, 0u);
  // The zero stop that rebuilt to 0, the two wrapping stops, and the one that never came.
  EXPECT_EQ(counted.abandoned, 4u);
  for (const katrace::DrainCounterField& f : katrace::kDrainCounterFields) {
    EXPECT_EQ(footer.at("drain").at(f.name).get<uint64_t>(), counted.*f.member) << f.name;
  }
  const std::vector<nlohmann::json> steps = Slices(trace, "KernelStep");
  EXPECT_EQ(steps.size(), 11u);
  EXPECT_EQ(footer["events"]["KernelStep"].get<uint64_t>(), 11u);
  uint64_t abandoned = 0;
  for (const nlohmann::json& e : steps) {
    EXPECT_LT(e["args"]["channel"].get<int>(), 3) << e.dump();
    if (e["args"].value("abandoned", false)) ++abandoned;
  }
  EXPECT_EQ(abandoned, counted.abandoned) << "every abandoned step in the trace is counted";
}

}  // namespace
}  // namespace katrace_test
