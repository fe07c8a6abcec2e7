// Bandwidth rows (see bandwidth_table.h).
#include "tools/stats/bandwidth_table.h"

namespace katrace::tools {
namespace {

// The collectives whose NCCL count is one rank's share of the buffer nccl-tests sizes.
bool CountsOneShare(const std::string& func) {
  return func == "AllGather" || func == "ReduceScatter" || func == "AlltoAll" || func == "Gather" ||
         func == "Scatter";
}

}  // namespace

double BandwidthTable::BusFactor(const std::string& func, int64_t n) {
  if (n <= 0) return 0;
  if (func == "AllReduce") return 2.0 * static_cast<double>(n - 1) / static_cast<double>(n);
  if (CountsOneShare(func)) return static_cast<double>(n - 1) / static_cast<double>(n);
  return 1.0;
}

double BandwidthTable::SizeFactor(const std::string& func, int64_t n) {
  if (CountsOneShare(func)) return n > 0 ? static_cast<double>(n) : 0;
  return 1.0;
}

void BandwidthTable::Add(const std::string& func, uint64_t bytes, uint64_t comm,
                         uint64_t gpu_ns) {
  cells_[{func, bytes, comm}].Add(gpu_ns);
}

std::vector<BandwidthTable::Row> BandwidthTable::Rows(const CommSizes& sizes) const {
  std::map<std::tuple<std::string, uint64_t, int64_t>, DurationStats> merged;
  for (const auto& [key, stats] : cells_) {
    const auto& [func, bytes, comm] = key;
    merged[{func, bytes, sizes.Size(comm)}].Merge(stats);
  }
  std::vector<Row> rows;
  for (const auto& [key, stats] : merged) {
    Row row;
    std::tie(row.func, row.bytes, row.nranks) = key;
    row.time = stats;
    const double mean = stats.mean_ns();
    const double size_factor = SizeFactor(row.func, row.nranks);
    row.has_algbw = mean > 0 && size_factor > 0;
    row.algbw_gbps = row.has_algbw ? static_cast<double>(row.bytes) * size_factor / mean : 0;
    row.has_busbw = row.has_algbw && row.nranks > 0;
    row.busbw_gbps = row.has_busbw ? row.algbw_gbps * BusFactor(row.func, row.nranks) : 0;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace katrace::tools
