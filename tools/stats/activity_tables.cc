// Activity tables (see activity_tables.h).
#include "tools/stats/activity_tables.h"

namespace katrace::tools {

std::string SizeText(uint64_t bytes) {
  static const char* const kUnits[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    const uint64_t unit = uint64_t{1} << (10 * (3 - i));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + " " + kUnits[i];
  }
  return std::to_string(bytes) + " B";
}

ActivityTables::ActivityTables()
    : collectives("Collectives: GPU time per function, size, algorithm and protocol",
                  TimeShare::kOfSpan),
      wait_per_channel("KernelStep wait per channel", TimeShare::kOfSpan),
      transfer_per_channel("KernelStep transfer per channel", TimeShare::kOfSpan),
      wait_per_peer("KernelStep wait per peer", TimeShare::kOfSpan),
      transfer_per_peer("KernelStep transfer per peer", TimeShare::kOfSpan) {}

void ActivityTables::AddCollective(const std::string& func, uint64_t bytes,
                                   const std::string& algo, const std::string& proto,
                                   int64_t gpu_start_ns, uint64_t gpu_ns) {
  std::string name = func + " " + SizeText(bytes);
  if (!algo.empty() || !proto.empty()) name += " " + algo + "/" + proto;
  collectives.Add(name, gpu_start_ns, gpu_ns);
}

void ActivityTables::AddKernelStep(const KernelStepTimes& step) {
  const char* dir = step.send ? "send" : "recv";
  const std::string channel = "ch " + std::to_string(step.channel) + " " + dir;
  const std::string peer = std::string(dir) + " peer " + std::to_string(step.peer);
  // The transfer follows the wait, when there is one.
  const int64_t ready = step.start_ns + (step.has_wait ? static_cast<int64_t>(step.wait_ns) : 0);
  if (step.has_wait) {
    wait_per_channel.Add(channel, step.start_ns, step.wait_ns);
    wait_per_peer.Add(peer, step.start_ns, step.wait_ns);
  }
  if (step.has_transfer) {
    transfer_per_channel.Add(channel, ready, step.transfer_ns);
    transfer_per_peer.Add(peer, ready, step.transfer_ns);
  }
}

}  // namespace katrace::tools
