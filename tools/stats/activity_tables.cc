// Activity tables (see activity_tables.h).
#include "tools/stats/activity_tables.h"

#include "tools/common/event_kinds.h"

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
    // The plugin's finalize summary uses these titles too, so the two outputs diff cleanly.
    : host("katrace host-side summary (callback start to stop)"),
      gpu("katrace GPU-side summary (%globaltimer)"),
      collectives("Collectives: GPU time per function, size, algorithm and protocol"),
      wait_per_channel("KernelStep wait per channel"),
      transfer_per_channel("KernelStep transfer per channel"),
      wait_per_peer("KernelStep wait per peer"),
      transfer_per_peer("KernelStep transfer per peer") {}

void ActivityTables::AddSlice(const std::string& cat, const std::string& name, uint64_t dur_ns) {
  if (IsHostKind(cat)) {
    host.Add(cat + " " + name, dur_ns);
  } else if (IsGpuKind(cat)) {
    gpu.Add(cat + " " + name, dur_ns);
  }
}

void ActivityTables::AddCollective(const std::string& func, uint64_t bytes,
                                   const std::string& algo, const std::string& proto,
                                   uint64_t gpu_ns) {
  std::string name = func + " " + SizeText(bytes);
  if (!algo.empty() || !proto.empty()) name += " " + algo + "/" + proto;
  collectives.Add(name, gpu_ns);
}

void ActivityTables::AddKernelStep(const KernelStepTimes& step) {
  const char* dir = step.send ? "send" : "recv";
  const std::string channel = "ch " + std::to_string(step.channel) + " " + dir;
  const std::string peer = std::string(dir) + " peer " + std::to_string(step.peer);
  if (step.has_wait) {
    wait_per_channel.Add(channel, step.wait_ns);
    wait_per_peer.Add(peer, step.wait_ns);
  }
  if (step.has_transfer) {
    transfer_per_channel.Add(channel, step.transfer_ns);
    transfer_per_peer.Add(peer, step.transfer_ns);
  }
}

}  // namespace katrace::tools
