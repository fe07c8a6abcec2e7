// Per rank: (channel, work counter) -> the Coll/P2p handle(s) of that work, as NCCL's host-side
// per-channel work counter ties GPU stamps to tasks (research §5.3). Keeps a bounded history per
// channel so a late reader (a KernelStep drain) can still resolve recent work.
// Thread safety: owned and used by the rank's proxy thread only.
#ifndef KATRACE_TOOLS_SIM_WORK_COUNTER_MAP_H_
#define KATRACE_TOOLS_SIM_WORK_COUNTER_MAP_H_

#include <cstdint>
#include <unordered_map>

#include "tools/sim/proxy_work.h"

namespace katrace::sim {

class WorkCounterMap {
 public:
  // Work older than this many counter values on a channel is forgotten.
  static constexpr uint64_t kHistoryPerChannel = 1024;

  void Add(const WorkRecord& record);
  const WorkRecord* Find(int channel, uint64_t work_counter) const;
  size_t size() const { return records_.size(); }

 private:
  static uint64_t Key(int channel, uint64_t work_counter) {
    return (static_cast<uint64_t>(channel) << 56) | (work_counter & ((1ull << 56) - 1));
  }
  std::unordered_map<uint64_t, WorkRecord> records_;
};

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_WORK_COUNTER_MAP_H_
