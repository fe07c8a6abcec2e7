// Who each communicator's events belong to in the trace: every rank is its own Perfetto process
// (pid), stable from run to run, never shared by two ranks of one OS process.
//
// The widest communicators of the spool (largest nranks) are its world. Each world rank of the
// process is one identity. pid = the launcher's rank when the process holds exactly one world rank
// and a launcher named one; otherwise the world rank. Any other communicator (a sub-communicator)
// belongs to the world rank on the same CUDA device, else to the one initialized on the same
// thread, else to the process's first world rank (in world-rank order, so never run-dependent).
#ifndef KATRACE_PLUGIN_EXPORT_RANK_IDENTITY_H_
#define KATRACE_PLUGIN_EXPORT_RANK_IDENTITY_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "plugin/export/spool_index.h"

namespace katrace {
namespace exporting {

// One rank of this process as the trace shows it: a Perfetto process. |pid| is stable from run to
// run and unique among the ranks of one job.
struct RankIdentity {
  int32_t pid = 0;
  int32_t world_rank = -1;     // its rank in the widest communicator it belongs to
  int32_t launcher_rank = -1;  // the process's rank from the launcher, -1 none
  int32_t cuda_device = -1;
  std::string label;           // "rank 3", as the process is named
};

// What this stage hands on: the ranks, and which of them each communicator belongs to.
struct RankIdentities {
  std::vector<RankIdentity> ranks;  // never empty
  std::vector<int32_t> of_comm;     // per SpoolIndex::comms entry: an index into ranks

  // The rank of communicator |comm|; the first rank for an unknown one.
  const RankIdentity& Of(int comm) const {
    const bool known = comm >= 0 && static_cast<size_t>(comm) < of_comm.size();
    return ranks[known ? static_cast<size_t>(of_comm[static_cast<size_t>(comm)]) : 0];
  }
};

// The ranks of the spool's process and every communicator's. A spool without communicators gets
// one identity (the launcher's rank, else 0).
RankIdentities AssignRankIdentities(const SpoolIndex& index);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_RANK_IDENTITY_H_
