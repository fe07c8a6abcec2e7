#include "tools/sim/work_counter_map.h"

namespace katrace::sim {

void WorkCounterMap::Add(const WorkRecord& record) {
  records_[Key(record.channel, record.work_counter)] = record;
  if (record.work_counter > kHistoryPerChannel) {
    records_.erase(Key(record.channel, record.work_counter - kHistoryPerChannel));
  }
}

const WorkRecord* WorkCounterMap::Find(int channel, uint64_t work_counter) const {
  auto found = records_.find(Key(channel, work_counter));
  return found == records_.end() ? nullptr : &found->second;
}

}  // namespace katrace::sim
