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

void AssignRankIdentities(SpoolIndex* index) {
  std::vector<RankIdentity>& ranks = index->ranks;
  ranks.clear();
  const int32_t launcher = index->has_process ? index->process.rank : -1;
  int32_t widest = 0;
  for (const CommInstance& c : index->comms) widest = std::max(widest, c.nranks);

  // World ranks in rank order, so the identities (and the "first" one) never depend on which
  // communicator happened to initialize first.
  std::vector<int32_t> world_ranks;
  for (const CommInstance& c : index->comms) {
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
  for (CommInstance& c : index->comms) {
    if (c.nranks != widest) continue;
    c.identity = FindOrAdd(&ranks, c.rank, c.cuda_device);
    if (ranks[c.identity].cuda_device < 0) ranks[c.identity].cuda_device = c.cuda_device;
  }
  // Then every other communicator: same device, else same initializing thread, else the first.
  for (CommInstance& c : index->comms) {
    if (c.identity >= 0) continue;
    int found = -1;
    if (c.cuda_device >= 0) {
      for (size_t i = 0; i < ranks.size() && found < 0; ++i) {
        if (ranks[i].cuda_device == c.cuda_device) found = static_cast<int>(i);
      }
    }
    if (found < 0) {
      // The world communicator initialized on this thread with the lowest world rank.
      for (const CommInstance& w : index->comms) {
        if (w.nranks == widest && w.init_os_tid == c.init_os_tid && w.identity >= 0 &&
            (found < 0 || ranks[w.identity].world_rank < ranks[found].world_rank)) {
          found = w.identity;
        }
      }
    }
    c.identity = found >= 0 ? found : 0;
  }

  // The launcher's rank names the process only when it holds exactly one rank; with several GPUs
  // per process the world ranks tell them apart, and the launcher's rank stays a label.
  const bool single = ranks.size() == 1;
  for (RankIdentity& r : ranks) {
    r.launcher_rank = launcher;
    r.pid = single && launcher >= 0 ? launcher : r.world_rank;
    r.label = "rank " + std::to_string(r.pid);
  }
}

}  // namespace exporting
}  // namespace katrace
