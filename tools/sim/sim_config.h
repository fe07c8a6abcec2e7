// Everything one simulation run needs, filled from the command line (sim_options) or by a test.
#ifndef KATRACE_TOOLS_SIM_SIM_CONFIG_H_
#define KATRACE_TOOLS_SIM_SIM_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/sim/channel_hang.h"
#include "tools/sim/collective_schedule.h"
#include "tools/sim/gpu_clock.h"
#include "tools/sim/profiler_api.h"
#include "tools/sim/proxy_poll_hook.h"

namespace katrace::sim {

// KernelStep on the CPU path: emulated device writers per rank, drained by each proxy thread.
// Active for a rank only when the plugin speaks v6 and the shared mask has the KernelStep bit
// after its init.
struct KernelStepConfig {
  bool enabled = true;                      // --kernel-steps on|off
  uint32_t sample_every = 1;                // --step-sample: keep every k-th slice
  std::optional<uint32_t> ring_depth_log2;  // --ring-depth-log2; unset: the drain's default
};

struct SimConfig {
  std::string plugin_path;
  std::optional<AbiVersion> forced_abi;
  int num_ranks = 4;
  int num_channels = 4;
  int iters = 20;
  std::vector<OpKind> ops = {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter,
                             OpKind::kSendRecv, OpKind::kAlltoAll};
  size_t size_bytes = 1 << 20;
  std::optional<int> mask;  // stored into the shared mask before the first init
  bool graph = false;       // capture once, replay |iters| times
  bool bench = false;       // never wait for emulated GPU time
  bool nccl_quirks = false; // replay NCCL's known NULL/stale handle calls
  bool quiet = false;
  uint64_t seed = 1;
  uint64_t gpu_tick_ns = 1024;
  GpuClockModel gpu_clock;  // --gpu-clock, --gpu-jitter
  double bandwidth_gbytes_per_s = 20.0;  // emulated per-rank network bandwidth
  KernelStepConfig kernel_steps;
  HangSpec hang;  // --hang, --hang-for; the hung rank runs without emulated KernelStep writers
  ProxyPollHookFactory proxy_poll_hook_factory;  // empty: no hook
};

// Limits that keep descriptors valid (nChannels is a uint8_t, NCCL has 64 channels at most).
inline constexpr int kMaxRanks = 256;
inline constexpr int kMaxChannels = 64;
inline constexpr uint32_t kMaxStepSample = 1u << 20;

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_SIM_CONFIG_H_
