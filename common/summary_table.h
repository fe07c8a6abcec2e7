// Nsight-Systems-shaped duration summaries: bounded-memory statistics per row (DurationStats) and
// their text, CSV and JSON rendering (SummaryTable). The plugin's finalize summary and
// katrace-stats both build their tables from these, so the same data prints the same numbers.
// Thread safety: none; an object is used by one thread at a time.
//
// Invariants worth knowing before changing this file:
// - Count, total, min, max and the moments are exact integers (sum of squares in 128 bits), so
//   mean and stddev do not depend on the order of Add/Merge calls: a summary merged from
//   per-thread parts equals one built in a single pass, bit for bit. Exact while the total stays
//   below 2^64 ns and the sum of squares below 2^128 ns^2 (durations under ~2^50 ns and fewer
//   than ~2^28 of them per row).
// - The median comes from a log-linear histogram: exact below 128 ns, otherwise each bucket spans
//   1/64 of its power of two and reports its middle, so the error is at most 1/128 (< 1%).
//   Memory is at most 3,776 counters per row, whatever the count.
#ifndef KATRACE_COMMON_SUMMARY_TABLE_H_
#define KATRACE_COMMON_SUMMARY_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace katrace {

class DurationStats {
 public:
  void Add(uint64_t ns);
  void Merge(const DurationStats& other);

  uint64_t count() const { return count_; }
  uint64_t total_ns() const { return total_ns_; }
  uint64_t min_ns() const { return count_ == 0 ? 0 : min_ns_; }
  uint64_t max_ns() const { return max_ns_; }
  double mean_ns() const;
  // Sample standard deviation (n - 1), as Nsight Systems prints it; 0 for fewer than 2 values.
  double stddev_ns() const;
  // Mean of the two middle values for an even count, like Nsight Systems; see the header note.
  double median_ns() const;

 private:
  void AddToBucket(uint32_t bucket, uint64_t n);
  double ValueAtRank(uint64_t rank) const;

  uint64_t count_ = 0;
  uint64_t total_ns_ = 0;
  uint64_t min_ns_ = UINT64_MAX;
  uint64_t max_ns_ = 0;
  unsigned __int128 sum_squares_ = 0;
  // Dense counters for buckets [first_bucket_, first_bucket_ + buckets_.size()).
  uint32_t first_bucket_ = 0;
  std::vector<uint64_t> buckets_;
};

class SummaryTable {
 public:
  explicit SummaryTable(std::string title);

  void Add(const std::string& name, uint64_t duration_ns);
  void AddStats(const std::string& name, const DurationStats& stats);
  bool empty() const { return rows_.empty(); }

  // Title line, then Time (%), Total Time, Instances, Avg, Med, Min, Max, StdDev, Name; each
  // duration in the unit that reads best (812 ns, 12.345 us, 3.210 ms, 1.500 s).
  std::string ToText() const;
  // The same columns in raw nanoseconds with a header row; no title.
  std::string ToCsv() const;
  // An array of row objects with raw nanoseconds.
  std::string ToJson() const;

 private:
  struct RowRef {
    const std::string* name;
    const DurationStats* stats;
  };
  // Nsight's order: Total Time descending, then Instances descending, then Name.
  std::vector<RowRef> SortedRows() const;
  uint64_t SumOfTotals() const;

  std::string title_;
  std::map<std::string, DurationStats> rows_;
};

// One CSV field: quoted (with quotes doubled) only when it holds a comma, quote or line break.
std::string CsvField(const std::string& text);

}  // namespace katrace

#endif  // KATRACE_COMMON_SUMMARY_TABLE_H_
