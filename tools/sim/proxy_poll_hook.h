// Extension point on a rank's proxy thread, called once per pass of the progress loop (after the
// network and KernelCh ops progressed), the way NCCL's proxy polls its transports. Empty by
// default; the KernelStep drain (kernel_step_rank.h) plugs in here and emits through |issuer| so
// its calls are counted. A rank may have several hooks (the KernelStep one and a test's).
// Thread safety: a hook object belongs to one rank and is only called on that rank's proxy thread.
#ifndef KATRACE_TOOLS_SIM_PROXY_POLL_HOOK_H_
#define KATRACE_TOOLS_SIM_PROXY_POLL_HOOK_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "tools/sim/event_issuer.h"
#include "tools/sim/work_counter_map.h"

namespace katrace::sim {

struct ProxyPollContext {
  int rank = 0;
  void* plugin_context = nullptr;
  EventIssuer* issuer = nullptr;
  const WorkCounterMap* works = nullptr;  // (channel, work counter) -> Coll/P2p handle(s)
  uint64_t gpu_now_ns = 0;                // emulated %globaltimer now
  const int* activation_mask = nullptr;   // the shared mask: read with a relaxed atomic load
  bool bench = false;                     // GPU time is not waited for
};

class ProxyPollHook {
 public:
  virtual ~ProxyPollHook() = default;
  // Returns true when it did something this pass (the proxy then counts as active).
  virtual bool OnProxyPoll(const ProxyPollContext& context) = 0;
  // True while the hook still has work; the proxy neither sleeps nor exits meanwhile.
  virtual bool HasPendingWork() const { return false; }
  // For a hook that runs the GPU side of a work (katrace-sim's emulated KernelStep writers):
  // false while the KernelCh start of (channel, work counter) must wait because the work has not
  // begun; otherwise true, with |start_ns| moved to when it began. Other hooks return true and
  // leave it alone.
  virtual bool KernelChStart(int /*channel*/, uint64_t /*work_counter*/,
                             uint64_t* /*start_ns*/) const {
    return true;
  }
  // Likewise for the stop: false until the work's last slice ended and its steps were drained and
  // retired (the drain runs before the KernelCh stop, as in NVIDIA/nccl PR #2316, so the plugin
  // never completes a Coll/P2p while one of its steps is open); then |stop_ns| is when it ended.
  virtual bool KernelChStop(int /*channel*/, uint64_t /*work_counter*/,
                            uint64_t* /*stop_ns*/) const {
    return true;
  }
  // Once, on the proxy thread, after its last pass (before the rank's finalize).
  virtual void OnProxyExit(const ProxyPollContext& /*context*/) {}
};

using ProxyPollHookFactory = std::function<std::unique_ptr<ProxyPollHook>(int rank)>;

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_PROXY_POLL_HOOK_H_
