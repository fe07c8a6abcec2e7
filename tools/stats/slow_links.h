// Which channel and which peer is consistently slowest: per collective instance (a Coll/P2p and
// its KernelSteps in one file) the channel, and the peer, with the most KernelStep transfer time
// in each direction; counted per (rank, comm, direction, channel or peer) over all instances.
// The plugin writes a Coll after its children, so an instance's sums live only until its Coll
// passes (or the file ends): memory follows the collectives in flight, plus one entry per link.
#ifndef KATRACE_TOOLS_STATS_SLOW_LINKS_H_
#define KATRACE_TOOLS_STATS_SLOW_LINKS_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace katrace::tools {

class SlowLinks {
 public:
  // |parent| 0 = unknown (counts toward the means only).
  void AddStep(int64_t pid, uint64_t comm, int64_t comm_rank, uint64_t parent, bool send,
               int64_t channel, int64_t peer, uint64_t transfer_ns);
  // The Coll/P2p with record id |parent| was read: its instance is complete.
  void ParentDone(uint64_t parent);
  // Closes every open instance; call at the end of each file (ids are per file).
  void EndFile();

  struct Finding {
    int64_t pid = 0;
    int64_t comm_rank = 0;
    uint64_t comm = 0;
    bool send = false;
    int64_t index = 0;           // channel or peer
    uint64_t instances = 0;      // instances where it was compared with its siblings
    uint64_t slowest = 0;        // of those, how often it had the most transfer time
    double mean_step_ns = 0;     // mean transfer per step
    double sibling_median_ns = 0;  // median of the mean per step over its group's links
  };
  // Links that were slowest at least once, by share of instances, then by mean over median.
  std::vector<Finding> SlowestChannels(size_t top_n) const { return Top(channels_, top_n); }
  std::vector<Finding> SlowestPeers(size_t top_n) const { return Top(peers_, top_n); }

 private:
  // (pid, comm, comm rank, send, channel or peer)
  using LinkKey = std::tuple<int64_t, uint64_t, int64_t, bool, int64_t>;
  struct LinkStats {
    uint64_t steps = 0;
    uint64_t transfer_ns = 0;
    uint64_t instances = 0;
    uint64_t slowest = 0;
  };
  struct Instance {
    std::map<LinkKey, uint64_t> channel_ns;
    std::map<LinkKey, uint64_t> peer_ns;
  };

  static void Score(const std::map<LinkKey, uint64_t>& sums, std::map<LinkKey, LinkStats>* stats);
  static std::vector<Finding> Top(const std::map<LinkKey, LinkStats>& stats, size_t top_n);
  void Close(Instance* instance);

  std::unordered_map<uint64_t, Instance> open_;
  std::map<LinkKey, LinkStats> channels_;
  std::map<LinkKey, LinkStats> peers_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_SLOW_LINKS_H_
