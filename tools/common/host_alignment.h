// Host clock alignment for --align-hosts (katrace-merge, katrace-stats). A file's times are on its host's clock
// (CLOCK_REALTIME at its base), and NTP keeps two hosts' clocks within milliseconds of each other
// at best, more than many collectives last: merged as recorded, one node's ranks can seem to
// finish an AllReduce before another's started it. The GPU work of one collective ends at about
// the same moment on every rank (no rank's part is done before the others' data arrived), so the
// GPU ends of one collective (a Coll's `gpu_end`, put on its host's clock by the GPU clock fit)
// recorded on two hosts differ by the difference of the two clocks, plus each one's placement
// error. A host is moved by the median of those differences over the collectives (communicator
// and sequence number) it shares with a host already aligned, starting from the reference host
// (the first input's, the lowest rank's): the median holds against collectives that did not end
// together and against the few placed with a large error. The files of one host share its clock
// and move together.
#ifndef KATRACE_TOOLS_MERGE_HOST_ALIGNMENT_H_
#define KATRACE_TOOLS_MERGE_HOST_ALIGNMENT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/common/trace_header.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {

// One collective, on any rank: its communicator and sequence number.
struct CollectiveKey {
  uint64_t comm = 0;
  int64_t seq = 0;
  bool operator==(const CollectiveKey& o) const { return comm == o.comm && seq == o.seq; }
};
struct CollectiveKeyHash {
  size_t operator()(const CollectiveKey& k) const {
    return static_cast<size_t>(k.comm * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(k.seq));
  }
};

// The GPU ends of one host's collectives, realtime ns on that host's clock; the first rank's
// end where several of its ranks ran one. At most kMaxEndsPerHost are kept: a median needs no
// more, and memory stays bounded however long the run.
struct HostCollectiveEnds {
  static constexpr size_t kMaxEndsPerHost = size_t{1} << 20;
  std::string host;
  std::unordered_map<CollectiveKey, int64_t, CollectiveKeyHash> ends;
};

// Reads the complete Coll slices of one file (whose clock base is |base_realtime_ns|) into |out|.
class CollectiveEndsPass : public TraceVisitor {
 public:
  CollectiveEndsPass(int64_t base_realtime_ns, HostCollectiveEnds* out) : base_(base_realtime_ns), out_(out) {}
  bool OnEvent(const TraceEvent& event) override;

 private:
  int64_t base_;
  HostCollectiveEnds* out_;
};

// What --align-hosts found for one host.
struct HostShift {
  std::string host;
  bool aligned = false;   // the reference host, or moved onto an aligned one
  int64_t offset_ns = 0;  // added to the times of its files
  std::string onto;       // the aligned host its differences were taken against ("" for the reference)
  size_t collectives = 0; // how many collectives the median is of
  int64_t middle_half_ns = 0;  // from the first to the third quartile of the differences
};

// The fewest shared collectives a host is moved by: fewer say too little to trust.
constexpr size_t kMinSharedCollectives = 3;

// One HostShift per entry of |hosts|, in its order; hosts[0] is the reference. A host that
// shares fewer than kMinSharedCollectives with every aligned host stays as recorded.
std::vector<HostShift> AlignHosts(const std::vector<HostCollectiveEnds>& hosts);

// One input of a tool run with --align-hosts: its path and its header (the first rank's).
// --align-hosts: reads every input once more (|read_options| names the tool), groups them by
// host, aligns the hosts (the first input's is the reference) and returns what each input's
// times move by. Says on stderr, prefixed with the tool's name, what each host moved by (unless
// |quiet|) and which it could not align (then |*unaligned| is set, and that host stays as
// recorded). A merged input holds ranks of several hosts: it is said and stays as it is. Each
// input's clock base plus its shift is a valid int64_t (an input it would overflow stays put).
std::vector<int64_t> AlignInputHosts(const std::vector<TraceInput>& inputs, bool quiet,
                                     const ReadOptions& read_options, bool* unaligned);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_HOST_ALIGNMENT_H_
