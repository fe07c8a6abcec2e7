#include "tools/sim/simulation.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "tools/sim/gpu_clock.h"
#include "tools/sim/kernel_step_rank.h"
#include "tools/sim/nccl_logger.h"
#include "tools/sim/plugin_loader.h"
#include "tools/sim/rank_barrier.h"
#include "tools/sim/rank_driver.h"

namespace katrace::sim {
namespace {

// NCCL's ncclProfilerEventMask: one int for the whole process, shared by every communicator,
// written by the plugin (init or later) and read with relaxed atomic loads.
int g_activation_mask = 0;

}  // namespace

bool RunSimulation(const SimConfig& config, SimResult* result, std::string* error) {
  std::unique_ptr<LoadedPlugin> plugin = LoadPlugin(config.plugin_path, config.forced_abi, error);
  if (plugin == nullptr) return false;
  ProfilerApi& api = plugin->api();
  result->plugin_path = plugin->path();
  result->plugin_name = api.name() != nullptr ? api.name() : "(null)";
  result->abi = api.version();
  NcclStyleLog(NCCL_LOG_INFO, NCCL_PROFILE, __FILE__, __LINE__,
               "PROFILER/Plugin: Loaded %s (v%d)", result->plugin_name.c_str(),
               static_cast<int>(result->abi));

  __atomic_store_n(&g_activation_mask, config.mask.value_or(0), __ATOMIC_RELAXED);
  result->mask_before_init = __atomic_load_n(&g_activation_mask, __ATOMIC_RELAXED);
  result->timer_overhead_ns = MeasureTimerOverheadNs();

  GpuTimeline::Start(config.gpu_clock, config.seed);
  result->gpu_clock = GpuTimeline::truth();
  GpuClock clock(config.gpu_tick_ns);
  RankBarrier start_barrier(config.num_ranks);
  std::vector<std::unique_ptr<RankDriver>> drivers;
  for (int rank = 0; rank < config.num_ranks; ++rank) {
    drivers.push_back(std::make_unique<RankDriver>(config, rank, &api, &g_activation_mask, &clock,
                                                   &start_barrier));
  }
  std::vector<std::thread> threads;
  for (auto& driver : drivers) threads.emplace_back([&driver] { driver->Run(); });
  for (std::thread& thread : threads) thread.join();

  uint64_t first_start = UINT64_MAX;
  uint64_t last_done = 0;
  for (const auto& driver : drivers) {
    const RankResult& rank_result = driver->result();
    result->counters.Add(rank_result.counters);
    if (rank_result.init_result != ncclSuccess) ++result->init_failures;
    if (rank_result.context_null) ++result->null_contexts;
    if (rank_result.kernel_steps_active) {
      ++result->kernel_steps.active_ranks;
      result->kernel_steps.totals.Add(rank_result.kernel_steps);
    }
    first_start = std::min(first_start, rank_result.ops_start_ns);
    last_done = std::max(last_done, rank_result.ops_done_ns);
  }
  result->mask_after_init = drivers.front()->result().mask_after_init;
  result->kernel_steps.ring_depth_log2 = ChooseStepRingDepthLog2(
      config.kernel_steps.ring_depth_log2,
      static_cast<uint64_t>(config.num_ranks) * static_cast<uint64_t>(config.num_channels));
  result->kernel_steps.ring_bytes_per_channel =
      StepRingBytesPerChannel(result->kernel_steps.ring_depth_log2);
  result->wall_ns = last_done > first_start ? last_done - first_start : 0;
  result->mask_at_end = __atomic_load_n(&g_activation_mask, __ATOMIC_RELAXED);
  drivers.clear();
  plugin.reset();  // dlclose after the last finalize, as NCCL does
  return true;
}

}  // namespace katrace::sim
