#include "tools/sim/report.h"

#include <cinttypes>
#include <cstdlib>
#include <string>

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
