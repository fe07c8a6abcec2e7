// AssignRankIdentities on hand-made indexes: the pid of every communicator is stable (it never
// depends on which communicator initialized first), two ranks of one process never share one,
// and sub-communicators land on their own rank's process.
#include <gtest/gtest.h>

#include <algorithm>

#include "plugin/export/rank_identity.h"

namespace katrace {
namespace exporting {
namespace {

CommInstance Comm(int32_t rank, int32_t nranks, int32_t device, uint32_t tid) {
  CommInstance c;
  c.rank = rank;
  c.nranks = nranks;
  c.cuda_device = device;
  c.init_os_tid = tid;
  return c;
}

int PidOf(const RankIdentities& ids, size_t comm) { return ids.Of(static_cast<int>(comm)).pid; }

TEST(RankIdentity, OneRankPerProcessUsesTheLauncherRank) {
  SpoolIndex index;
  index.has_process = true;
  index.process.rank = 12;
  index.comms = {Comm(1, 2, 0, 7), Comm(12, 16, 0, 7)};  // the sub-communicator initialized first
  RankIdentities ids = AssignRankIdentities(index);
  ASSERT_EQ(ids.ranks.size(), 1u);
  EXPECT_EQ(PidOf(ids, 0), 12);
  EXPECT_EQ(PidOf(ids, 1), 12);
  EXPECT_EQ(ids.ranks[0].world_rank, 12);
}

TEST(RankIdentity, WithoutALauncherTheWorldRankNamesTheProcessNotTheFirstCommunicator) {
  SpoolIndex index;
  index.process.rank = -1;
  index.comms = {Comm(0, 2, -1, 7), Comm(5, 8, -1, 7)};
  RankIdentities ids = AssignRankIdentities(index);
  EXPECT_EQ(PidOf(ids, 0), 5);
  EXPECT_EQ(PidOf(ids, 1), 5);
}

TEST(RankIdentity, TwoRanksInOneProcessGetTwoPidsWhateverTheInitOrder) {
  for (bool reversed : {false, true}) {
    SpoolIndex index;
    index.has_process = true;
    index.process.rank = 3;  // one launcher rank for a process driving two GPUs
    index.comms = {Comm(0, 2, 0, 100), Comm(1, 2, 1, 101)};
    if (reversed) std::reverse(index.comms.begin(), index.comms.end());
    RankIdentities ids = AssignRankIdentities(index);
    ASSERT_EQ(ids.ranks.size(), 2u);
    EXPECT_EQ(ids.ranks[0].pid, 0) << "world rank order, not init order";
    EXPECT_EQ(ids.ranks[1].pid, 1);
    EXPECT_EQ(ids.ranks[0].launcher_rank, 3);
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ(PidOf(ids, i), index.comms[i].rank);
  }
}

TEST(RankIdentity, SubCommunicatorsFollowTheDeviceThenTheThread) {
  SpoolIndex index;
  index.process.rank = -1;
  index.comms = {Comm(4, 8, 0, 100), Comm(5, 8, 1, 101),
                 Comm(0, 4, 1, 100),     // device 1: rank 5's, although rank 4's thread made it
                 Comm(1, 4, -1, 101),    // no device: the thread that made world rank 5
                 Comm(2, 4, -1, 999)};   // neither: the first world rank
  RankIdentities ids = AssignRankIdentities(index);
  EXPECT_EQ(PidOf(ids, 2), 5);
  EXPECT_EQ(PidOf(ids, 3), 5);
  EXPECT_EQ(PidOf(ids, 4), 4);
}

TEST(RankIdentity, ARecreatedWorldCommunicatorKeepsItsRank) {
  SpoolIndex index;
  index.process.rank = -1;
  index.comms = {Comm(2, 4, -1, 1), Comm(2, 4, -1, 1)};
  RankIdentities ids = AssignRankIdentities(index);
  ASSERT_EQ(ids.ranks.size(), 1u);
  EXPECT_EQ(PidOf(ids, 0), 2);
  EXPECT_EQ(PidOf(ids, 1), 2);
}

TEST(RankIdentity, NoCommunicatorsStillGivesOneProcess) {
  SpoolIndex index;
  index.has_process = true;
  index.process.rank = 9;
  RankIdentities ids = AssignRankIdentities(index);
  ASSERT_EQ(ids.ranks.size(), 1u);
  EXPECT_EQ(ids.ranks[0].pid, 9);
  index.process.rank = -1;
  ids = AssignRankIdentities(index);
  EXPECT_EQ(ids.ranks[0].pid, 0);
}

}  // namespace
}  // namespace exporting
}  // namespace katrace
