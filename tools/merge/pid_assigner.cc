// PidAssigner (see pid_assigner.h).
#include "tools/merge/pid_assigner.h"

namespace katrace::tools {

PidAssigner::Mapping PidAssigner::Map(size_t input, int64_t pid) {
  const auto key = std::make_pair(input, pid);
  if (auto it = map_.find(key); it != map_.end()) {
    auto holder = original_holder_.find(pid);
    return {it->second, it->second != pid, false, holder == original_holder_.end() ? 0 : holder->second};
  }
  if (taken_.count(pid) == 0) {
    taken_[pid] = input;
    original_holder_.emplace(pid, input);
    map_[key] = pid;
    return {pid, false, true, input};
  }
  while (reserved_.count(next_free_) != 0 || taken_.count(next_free_) != 0) ++next_free_;
  const int64_t fresh = next_free_++;
  taken_[fresh] = input;
  map_[key] = fresh;
  auto holder = original_holder_.find(pid);
  return {fresh, true, true, holder == original_holder_.end() ? taken_[pid] : holder->second};
}

}  // namespace katrace::tools
