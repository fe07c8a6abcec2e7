// Algorithm and bus bandwidth per collective size, the nccl-tests way: AlgBW = size / time and
// BusBW = AlgBW * factor, factor 2(n-1)/n for AllReduce, (n-1)/n for the collectives that move
// one share per rank (AllGather, ReduceScatter, AlltoAll, Gather, Scatter), 1 otherwise, with
// time the Coll/P2p's GPU extent. nccl-tests' size is the whole buffer, but a Coll's `bytes` arg
// is NCCL's count times the type size, and for those five NCCL's count is one rank's share
// (AllGather's sendcount, ReduceScatter's recvcount, AlltoAll's count per peer, Gather's and
// Scatter's count per rank): their size is n x bytes, so they need the communicator size even
// for AlgBW.
#ifndef KATRACE_TOOLS_STATS_BANDWIDTH_TABLE_H_
#define KATRACE_TOOLS_STATS_BANDWIDTH_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/summary_table.h"
#include "tools/stats/comm_sizes.h"

namespace katrace::tools {

class BandwidthTable {
 public:
  void Add(const std::string& func, uint64_t bytes, uint64_t comm, uint64_t gpu_ns);

  struct Row {
    std::string func;
    uint64_t bytes = 0;
    int64_t nranks = 0;  // 0 = unknown
    DurationStats time;
    double algbw_gbps = 0;  // from the mean time; GB/s = bytes/ns
    double busbw_gbps = 0;
    // Unknown without a GPU time above zero, or without n where the size needs it.
    bool has_algbw = false;
    bool has_busbw = false;
  };
  // Rows per (func, bytes, communicator size), sorted by func then bytes.
  std::vector<Row> Rows(const CommSizes& sizes) const;

  static double BusFactor(const std::string& func, int64_t nranks);
  // nccl-tests' size over the `bytes` arg: n for the collectives that count one rank's share, 1
  // otherwise; 0 when it needs n and n is unknown.
  static double SizeFactor(const std::string& func, int64_t nranks);

 private:
  std::map<std::tuple<std::string, uint64_t, uint64_t>, DurationStats> cells_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_STATS_BANDWIDTH_TABLE_H_
