// How many ranks each communicator has, for bus bandwidth and for spotting collective instances
// some rank never reported. Taken, in order of trust, from --nranks, from a footer's
// "communicators" list when the plugin writes one, else inferred as 1 + the highest comm rank or
// peer seen (a lower bound when some ranks' files are missing).
#ifndef KATRACE_TOOLS_STATS_COMM_SIZES_H_
#define KATRACE_TOOLS_STATS_COMM_SIZES_H_

#include <cstdint>
#include <map>

namespace katrace::tools {

class CommSizes {
 public:
  void NoteRank(uint64_t comm, int64_t rank_or_peer) {
    int64_t& seen = inferred_[comm];
    if (rank_or_peer + 1 > seen) seen = rank_or_peer + 1;
  }
  void SetFromFooter(uint64_t comm, int64_t nranks) { declared_[comm] = nranks; }
  void Override(int64_t nranks) { override_ = nranks; }
  // 0 when nothing is known.
  int64_t Size(uint64_t comm) const {
    if (override_ > 0) return override_;
    if (auto it = declared_.find(comm); it != declared_.end()) return it->second;
    auto it = inferred_.find(comm);
    return it == inferred_.end() ? 0 : it->second;
  }

 private:
  std::map<uint64_t, int64_t> inferred_;
  std::map<uint64_t, int64_t> declared_;
  int64_t override_ = 0;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_COMM_SIZES_H_
