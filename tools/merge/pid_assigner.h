// Which pid each rank of each input gets in the merged trace. A pid is a rank's Perfetto process,
// so two inputs must never share one: a rank whose pid an earlier input already holds (an older
// trace whose pid was its first communicator's rank, a sub-communicator, two runs) is moved to the
// lowest pid no input declares and none was given, and the merge says so. Nothing is dropped for
// a collision. Pids are mapped lazily, as events name them, since a merged input's header names
// only its first rank.
#ifndef KATRACE_TOOLS_MERGE_PID_ASSIGNER_H_
#define KATRACE_TOOLS_MERGE_PID_ASSIGNER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace katrace::tools {

class PidAssigner {
 public:
  // A pid some input's header declares: never handed out to another input's rank.
  void Reserve(int64_t pid) { reserved_.insert(pid); }

  struct Mapping {
    int64_t pid;         // in the merged trace
    bool remapped;       // != the input's own pid
    bool first_time;     // this call decided it (say so once)
    size_t holder = 0;   // when remapped: the input that holds the original pid
  };
  // The merged pid of |input|'s |pid|.
  Mapping Map(size_t input, int64_t pid);
  // Every (input, own pid) -> merged pid decided so far.
  const std::map<std::pair<size_t, int64_t>, int64_t>& mappings() const { return map_; }

 private:
  std::set<int64_t> reserved_;
  std::map<int64_t, size_t> taken_;  // merged pid -> the input whose rank it is
  std::map<std::pair<size_t, int64_t>, int64_t> map_;
  std::map<int64_t, size_t> original_holder_;  // own pid -> the first input that kept it
  int64_t next_free_ = 0;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_PID_ASSIGNER_H_
