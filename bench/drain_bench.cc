// KernelStep drain benchmarks: records per second through the drain into a no-op v6 plugin (mask
// on and off), the host cost of writing one step, the pinned memory per channel at the default
// depth, and loss with emulated writers at a default and a 10x rate.
//
//   build/bench/drain_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <stdint.h>

#include <chrono>
#include <vector>

#include "katrace/step_ring.h"
#include "nccl_profiler/v6.h"
#include "proxy_drain/emulated_step_writer.h"
#include "proxy_drain/step_drain.h"
#include "proxy_drain/step_ring_buffers.h"

namespace katrace {
namespace {

// A plugin that tracks nothing but hands out a handle, so the drain makes every call it would.
int g_noop_event;
ncclResult_t NoopStart(void*, void** handle, ncclProfilerEventDescr_v6_t*) {
  *handle = &g_noop_event;
  return ncclSuccess;
}
ncclResult_t NoopStop(void*) { return ncclSuccess; }
ncclResult_t NoopState(void*, ncclProfilerEventState_v6_t, ncclProfilerEventStateArgs_v6_t*) {
  return ncclSuccess;
}
const ncclProfiler_v6_t kNoopPlugin = {"noop", nullptr, &NoopStart, &NoopStop, &NoopState, nullptr};
int g_noop_context;

StepStart BenchStart(uint64_t seq, uint32_t step) {
  StepStart start;
  start.seq = seq;
  start.ready_ns = 1700000000000000000ull + seq * 1000;
  start.wait_start_ns = start.ready_ns - 300;
  start.step = step;
  start.size_bytes = 128 << 10;
  start.peer = 1;
  start.work_tag = 0;
  start.is_send = true;
  return start;
}

// Records per second the drain turns into plugin calls: each iteration writes a batch into every
// channel's ring (not timed), then one Poll reads it all.
void DrainPoll(benchmark::State& state, int mask) {
  const int num_channels = int(state.range(0));
  constexpr uint64_t kBatch = 1024;
  StepRingBuffers buffers(num_channels, kStepRingDefaultDepthLog2);
  StepDrainConfig config;
  config.report_every_polls = 0;
  StepDrain drain(buffers.views(), &kNoopPlugin, &g_noop_context, &mask, config);
  for (int c = 0; c < num_channels; ++c) drain.RegisterWork(c, true, 0, &g_noop_context);
  std::vector<uint64_t> next_seq(size_t(num_channels), 0);
  for (auto _ : state) {
    state.PauseTiming();
    for (int c = 0; c < num_channels; ++c) {
      const StepRingView ring = buffers.view(c);
      for (uint64_t i = 0; i < kBatch; ++i) {
        const StepStart start = BenchStart(next_seq[c]++, uint32_t(i));
        WriteStart(ring, start);
        WriteStop(ring, start.seq, start.ready_ns + 5000);
      }
    }
    state.ResumeTiming();
    drain.Poll();
  }
  const DrainCounters counters = drain.Counters();
  state.SetItemsProcessed(int64_t(counters.seen));
  state.counters["lost"] = double(counters.lost_overrun);
  state.counters["abandoned"] = double(counters.abandoned);
}

void BM_StepDrain_Poll_Enabled(benchmark::State& state) {
  DrainPoll(state, ncclProfileColl | ncclProfileKernelStep);
}
void BM_StepDrain_Poll_MaskOff(benchmark::State& state) { DrainPoll(state, ncclProfileColl); }
BENCHMARK(BM_StepDrain_Poll_Enabled)->Arg(1)->Arg(8)->Arg(32);
BENCHMARK(BM_StepDrain_Poll_MaskOff)->Arg(1)->Arg(8)->Arg(32);

// An idle poll (nothing new) over 32 channels: the proxy thread's cost while the GPU is quiet.
void BM_StepDrain_Poll_Idle(benchmark::State& state) {
  StepRingBuffers buffers(32, kStepRingDefaultDepthLog2);
  int mask = ncclProfileKernelStep;
  StepDrainConfig config;
  config.report_every_polls = 0;
  StepDrain drain(buffers.views(), &kNoopPlugin, &g_noop_context, &mask, config);
  for (auto _ : state) drain.Poll();
}
BENCHMARK(BM_StepDrain_Poll_Idle);

// Host cost of one step through the shared writer code (the emulated writers' hot path).
void BM_StepRing_WriteStep(benchmark::State& state) {
  StepRingBuffers buffers(1, kStepRingDefaultDepthLog2);
  const StepRingView ring = buffers.view(0);
  uint32_t step = 0;
  for (auto _ : state) {
    const StepStart start = BenchStart(ReserveStepSeq(ring), step++);
    WriteStart(ring, start);
    WriteStop(ring, start.seq, start.ready_ns + 5000);
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_StepRing_WriteStep);

// Not a timing: the pinned memory one channel's rings take at the default depth.
void BM_StepRing_PinnedBytesPerChannel(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(StepRingBytes(kStepRingDefaultDepthLog2));
  state.counters["depth"] = double(uint64_t{1} << kStepRingDefaultDepthLog2);
  state.counters["pinned_KiB_per_channel"] =
      double(StepRingBytes(kStepRingDefaultDepthLog2)) / 1024;
  state.counters["pr2316_KiB_per_channel"] = 10.0 * 1024;
}
BENCHMARK(BM_StepRing_PinnedBytesPerChannel)->Iterations(1);

// Emulated writers (send and receive role per channel, one thread each, independent, paced)
// against a drain polling on this thread; loss at a default slice period of 10 us per role
// (200k records/s per channel) and at 10x that rate. Args: rate multiplier, channels. With more
// writer threads than cores, loss measures how long the drain thread is preempted.
void BM_StepDrain_EmulatedLoss(benchmark::State& state) {
  const uint64_t rate_multiplier = uint64_t(state.range(0));
  const int kChannels = int(state.range(1));
  constexpr uint64_t kDefaultSlicePeriodNs = 10000;
  const uint32_t num_steps = uint32_t(20000 * rate_multiplier);
  DrainCounters counters;
  uint64_t written = 0;
  double seconds = 0;
  for (auto _ : state) {
    StepRingBuffers buffers(kChannels, kStepRingDefaultDepthLog2);
    int mask = ncclProfileKernelStep;
    StepDrainConfig config;
    config.report_every_polls = 0;
    StepDrain drain(buffers.views(), &kNoopPlugin, &g_noop_context, &mask, config);
    std::vector<EmulatedChannel> channels;
    for (int c = 0; c < kChannels; ++c) {
      EmulatedChannel channel;
      channel.ring = buffers.view(c);
      channel.roles = {{true, 1}, {false, 3}};
      channel.works = {{0, num_steps, 128 << 10}};
      drain.RegisterWork(c, true, 0, &g_noop_context);
      drain.RegisterWork(c, false, 0, &g_noop_context);
      channels.push_back(channel);
    }
    EmulatedStepWriterOptions options;
    options.slice_period_ns = kDefaultSlicePeriodNs / rate_multiplier;
    options.lockstep = false;
    EmulatedStepWriter writer(channels, options);
    const auto begin = std::chrono::steady_clock::now();
    writer.Start();
    while (!writer.Done()) drain.Poll();
    writer.Join();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    drain.Close();
    counters = drain.Counters();
    written = writer.num_starts_written();
  }
  state.counters["records_per_s_per_channel"] = double(written) / seconds / kChannels;
  state.counters["written"] = double(written);
  state.counters["seen"] = double(counters.seen);
  state.counters["lost"] = double(counters.lost_overrun);
  state.counters["abandoned"] = double(counters.abandoned);
  state.counters["loss_fraction"] =
      double(counters.lost_overrun + counters.abandoned) / double(written > 0 ? written : 1);
}
BENCHMARK(BM_StepDrain_EmulatedLoss)
    ->ArgNames({"rate_x", "channels"})
    ->Args({1, 1})
    ->Args({10, 1})
    ->Args({1, 4})
    ->Args({10, 4})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace katrace

BENCHMARK_MAIN();
