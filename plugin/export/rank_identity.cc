#include "plugin/export/rank_identity.h"

#include <algorithm>
#include <string>
#include <vector>

namespace katrace {
namespace exporting {
namespace {

// The identity a world communicator instance stands for: one per distinct world rank. A process
// that re-creates its world communicator (destroy, init again) keeps the same rank identity.
int FindOrAdd(std::vector<RankIdentity>* ranks, int32_t world_rank, int32_t cuda_device) {
  for (size_t i = 0; i < ranks->size(); ++i) {
    if ((*ranks)[i].world_rank == world_rank) return static_cast<int>(i);
  }
  RankIdentity r;
  r.world_rank = world_rank;
  r.cuda_device = cuda_device;
  ranks->push_back(r);
  return static_cast<int>(ranks->size() - 1);
}

}  // namespace

RankIdentities AssignRankIdentities(const SpoolIndex& index) {
  RankIdentities result;
  std::vector<RankIdentity>& ranks = result.ranks;
  std::vector<int32_t>& identity = result.of_comm;
  identity.assign(index.comms.size(), -1);
  const int32_t launcher = index.has_process ? index.process.rank : -1;
  int32_t widest = 0;
  for (const CommInstance& c : index.comms) widest = std::max(widest, c.nranks);

  // World ranks in rank order, so the identities (and the "first" one) never depend on which
  // communicator happened to initialize first.
  std::vector<int32_t> world_ranks;
  for (const CommInstance& c : index.comms) {
    if (c.nranks == widest) world_ranks.push_back(c.rank);
  }
  std::sort(world_ranks.begin(), world_ranks.end());
  world_ranks.erase(std::unique(world_ranks.begin(), world_ranks.end()), world_ranks.end());
  for (int32_t r : world_ranks) FindOrAdd(&ranks, r, -1);
  if (ranks.empty()) {
    RankIdentity only;
    only.world_rank = launcher >= 0 ? launcher : 0;
    ranks.push_back(only);
  }

  // The world instances first: each takes its own rank's identity and lends it its device.
  for (size_t i = 0; i < index.comms.size(); ++i) {
    const CommInstance& c = index.comms[i];
    if (c.nranks != widest) continue;
    identity[i] = FindOrAdd(&ranks, c.rank, c.cuda_device);
    if (ranks[identity[i]].cuda_device < 0) ranks[identity[i]].cuda_device = c.cuda_device;
  }
  // Then every other communicator: same device, else same initializing thread, else the first.
  for (size_t ci = 0; ci < index.comms.size(); ++ci) {
    const CommInstance& c = index.comms[ci];
    if (identity[ci] >= 0) continue;
    int found = -1;
    if (c.cuda_device >= 0) {
      for (size_t i = 0; i < ranks.size() && found < 0; ++i) {
        if (ranks[i].cuda_device == c.cuda_device) found = static_cast<int>(i);
      }
    }
    if (found < 0) {
      // The world communicator initialized on this thread with the lowest world rank.
      for (size_t wi = 0; wi < index.comms.size(); ++wi) {
        const CommInstance& w = index.comms[wi];
        const int32_t wid = identity[wi];
        if (w.nranks == widest && w.init_os_tid == c.init_os_tid && wid >= 0 &&
            (found < 0 || ranks[wid].world_rank < ranks[found].world_rank)) {
          found = wid;
        }
      }
    }
    identity[ci] = found >= 0 ? found : 0;
  }

  // The launcher's rank names the process only when it holds exactly one rank; with several GPUs
  // per process the world ranks tell them apart, and the launcher's rank stays a label.
  const bool single = ranks.size() == 1;
  for (RankIdentity& r : ranks) {
    r.launcher_rank = launcher;
    r.pid = single && launcher >= 0 ? launcher : r.world_rank;
    r.label = "rank " + std::to_string(r.pid);
  }
  return result;
}

}  // namespace exporting
}  // namespace katrace
