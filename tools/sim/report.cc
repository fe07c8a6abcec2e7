#include "tools/sim/report.h"

#include <cinttypes>
#include <cstdlib>
#include <string>

#include "common/event_mask.h"
#include "tools/sim/event_mask.h"

namespace katrace::sim {
namespace {

std::string OpList(const SimConfig& config) {
  std::string text;
  for (OpKind kind : config.ops) {
    if (!text.empty()) text += ',';
    text += OpKindName(kind);
  }
  return text;
}

// Why no rank ran KernelSteps, in the terms a user can act on.
std::string KernelStepsOffReason(const SimConfig& config, const SimResult& result) {
  if (!config.kernel_steps.enabled) return "off (--kernel-steps off)";
  if (result.abi != AbiVersion::kV6) {
    return "off: the plugin runs on ABI v" + std::to_string(static_cast<int>(result.abi)) +
           ", which has no KernelStep event (v6 has)";
  }
  if ((result.mask_after_init & ncclProfileKernelStep) == 0) {
    return "off: the mask after init has no KernelStep bit (--mask ...,kernelstep, or a plugin "
           "that asks for it)";
  }
  return "off: no rank has a plugin context";
}

std::string SampleText(uint32_t sample_every) {
  return sample_every <= 1 ? "every slice" : "every " + std::to_string(sample_every) + "th slice";
}

void PrintKernelSteps(const SimConfig& config, const SimResult& result, std::FILE* out) {
  const KernelStepResult& steps = result.kernel_steps;
  if (steps.active_ranks == 0) {
    std::fprintf(out, "  KernelStep: %s\n", KernelStepsOffReason(config, result).c_str());
    return;
  }
  const KernelStepStats& t = steps.totals;
  const uint64_t ring_bytes = steps.ring_bytes_per_channel;
  std::string ring_size = ring_bytes >= 1024 ? std::to_string(ring_bytes >> 10) + " KiB"
                                             : std::to_string(ring_bytes) + " bytes";
  std::fprintf(out,
               "  KernelStep: CPU writers on %d rank(s), %d channel ring(s) each of 2^%u slots "
               "(%s), %s\n",
               steps.active_ranks, config.num_channels, steps.ring_depth_log2, ring_size.c_str(),
               SampleText(config.kernel_steps.sample_every).c_str());
  std::fprintf(out,
               "    writers  works %" PRIu64 "  steps %" PRIu64 "  starts %" PRIu64
               "  stops %" PRIu64 "  sampled_out %" PRIu64 "  sampled_tail %" PRIu64 "\n",
               t.works, t.steps, t.starts_written, t.stops_written, t.sampled_out, t.sampled_tail);
  std::fprintf(out,
               "    device   late_kernels %" PRIu64
               " (%.1f us mean delay)  stretched_works %" PRIu64 "\n",
               t.late_kernels,
               t.late_kernels > 0
                   ? static_cast<double>(t.late_ns) / 1e3 / static_cast<double>(t.late_kernels)
                   : 0.0,
               t.stretched_works);
  std::fprintf(out, "    drain  ");
  for (const katrace::DrainCounterField& f : katrace::kDrainCounterFields) {
    std::fprintf(out, "  %s %" PRIu64, f.name, t.drain.*f.member);
  }
  std::fprintf(out, "  reports %" PRIu64 "\n", t.reports);
}

}  // namespace

void PrintReport(const SimConfig& config, const SimResult& result, std::FILE* out) {
  std::fprintf(out, "katrace-sim: plugin \"%s\" (ABI v%d) from %s\n", result.plugin_name.c_str(),
               static_cast<int>(result.abi), result.plugin_path.c_str());
  std::fprintf(out,
               "  ranks %d, channels %d, iters %d, ops %s, size %zu bytes%s%s%s%s, seed %" PRIu64
               "\n",
               config.num_ranks, config.num_channels, config.iters, OpList(config).c_str(),
               config.size_bytes, config.graph ? ", graph replays" : "",
               config.bench ? ", bench (no GPU waits)" : "",
               config.nccl_quirks ? ", NCCL quirks replayed" : "",
               config.forced_abi ? ", ABI forced" : "", config.seed);
  std::fprintf(out, "  mask: before init 0x%x, after init 0x%x (%s), at end 0x%x\n",
               result.mask_before_init, result.mask_after_init,
               DescribeEventMask(result.mask_after_init).c_str(), result.mask_at_end);
  if (config.mask && result.mask_after_init != *config.mask) {
    std::fprintf(out,
                 "  note: the plugin replaced --mask 0x%x at init (katrace's KATRACE_MASK, or its "
                 "default, overrides the mask NCCL passes; katrace-sim sets KATRACE_MASK from "
                 "--mask unless it is already set)\n",
                 static_cast<unsigned>(*config.mask));
  }
  if (result.init_failures > 0 || result.null_contexts > 0) {
    std::fprintf(out, "  init: %d rank(s) returned an error, %d rank(s) got a NULL context\n",
                 result.init_failures, result.null_contexts);
  }

  std::fprintf(out, "  %-13s %12s %12s %12s %10s %12s\n", "event", "starts", "null-handle",
               "stops", "null-stop", "states");
  const CallCounters& counters = result.counters;
  for (int kind = 0; kind < kNumEventKinds; ++kind) {
    const KindCounters& c = counters.kinds[kind];
    if (c.starts == 0 && c.stops == 0 && c.states == 0) continue;
    std::fprintf(out,
                 "  %-13s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64 " %12" PRIu64 "\n",
                 EventKindName(kind), c.starts, c.null_handles, c.stops, c.null_stops, c.states);
  }

  PrintKernelSteps(config, result, out);
  // The truth of the GPU clock, so a trace's placement can be checked against it:
  // gpu = realtime + offset_ns + drift_ppm·1e-6·(realtime − origin_realtime_ns), ± jitter_ns.
  const GpuTimelineTruth& clock = result.gpu_clock;
  std::fprintf(out,
               "  gpu-clock %s offset_ns %" PRId64 " drift_ppm %.3f origin_realtime_ns %" PRIu64
               " jitter_ns %" PRIu64 " tick_ns %" PRIu64 "\n",
               clock.model.spec.c_str(), clock.offset_ns, clock.model.drift_ppm,
               clock.origin_realtime_ns, clock.model.jitter_ns, config.gpu_tick_ns);

  double wall_s = static_cast<double>(result.wall_ns) / 1e9;
  double rate = wall_s > 0 ? static_cast<double>(counters.calls) / wall_s : 0.0;
  double mean_ns = counters.calls > 0 ? static_cast<double>(counters.call_ns) /
                                            static_cast<double>(counters.calls)
                                      : 0.0;
  double net_ns = mean_ns - static_cast<double>(result.timer_overhead_ns);
  if (net_ns < 0) net_ns = 0;
  std::fprintf(out, "  callbacks %" PRIu64 " in %.3f ms wall: %.0f callbacks/s\n", counters.calls,
               static_cast<double>(result.wall_ns) / 1e6, rate);
  std::fprintf(out,
               "  mean %.1f ns per callback (%.1f ns measured, timer cost %" PRIu64
               " ns subtracted)\n",
               net_ns, mean_ns, result.timer_overhead_ns);
  if (const char* trace = std::getenv("KATRACE_OUTPUT")) {
    std::fprintf(out, "  trace (KATRACE_OUTPUT): %s\n", trace);
  }
}

}  // namespace katrace::sim
