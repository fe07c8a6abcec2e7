// Nsight-Systems-shaped duration summaries: bounded-memory statistics per row (DurationStats, and
// BusyTime for slices) and their text, CSV and JSON rendering (SummaryTable). The plugin's
// finalize summary and katrace-stats both build their tables from these, so the same data prints
// the same numbers. Thread safety: none; an object is used by one thread at a time.
//
// What the columns mean, stated under each table's title too:
// - A table of slices (TimeShare::kOfSpan) has Busy = the union of the row's slices, so slices
//   running at the same time count once, and Time (%) = Busy / the table's span (first start to
//   last end). Time (%) then never passes 100, and rows do not add up to 100: each says how
//   much of the run had at least one such slice running.
// - A table of plain durations (TimeShare::kOfSum: delays, lags) has Time (%) = the row's Total
//   over the sum of every row's Total, as Nsight computes it.
// - Total Time is always the sum of the durations (Avg x Instances): concurrent slices add up.
// - Each duration column has one unit, named in its header ("Total Time (ms)"): the largest of
//   ns, us, ms, s in which the column's smallest non-zero value is at least 1. The columns of one
//   instance (Avg, Med, Min, Max, StdDev) share one unit, chosen so over all five, so that a
//   row's average, median and extremes read side by side without converting.
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
#include <string_view>
#include <vector>

#include "common/busy_time.h"

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

// What a table's Time (%) is a share of (see the header note).
enum class TimeShare { kOfSpan, kOfSum };

class SummaryTable {
 public:
  struct Row {
    DurationStats stats;
    BusyTime busy;
  };

  explicit SummaryTable(std::string title, TimeShare share = TimeShare::kOfSum);

  // A slice of |name| (kOfSpan tables).
  void Add(const std::string& name, int64_t start_ns, uint64_t duration_ns);
  // A plain duration (kOfSum tables).
  void Add(const std::string& name, uint64_t duration_ns);
  void AddStats(const std::string& name, const DurationStats& stats);
  // The row of |name|, created when new; stable for the table's life, so a caller may cache it.
  Row* FindRow(std::string_view name);
  // A slice of a row FindRow returned.
  void Add(Row* row, int64_t start_ns, uint64_t duration_ns);
  bool empty() const { return rows_.empty(); }
  TimeShare share() const { return share_; }
  // First start to last end over every slice added (kOfSpan); 0 before any.
  uint64_t span_ns() const;

  // Title line, the line saying what Time (%) and Total mean, then the columns Time (%), Busy
  // (kOfSpan only), Total Time, Instances, Avg, Med, Min, Max, StdDev, Name; one unit per
  // duration column.
  std::string ToText() const;
  // The same columns in raw nanoseconds with a header row; no title.
  std::string ToCsv() const;
  // An array of row objects with raw nanoseconds.
  std::string ToJson() const;

 private:
  struct RowRef {
    const std::string* name;
    const Row* row;
  };
  // Nsight's order: Total Time descending, then Instances descending, then Name.
  std::vector<RowRef> SortedRows() const;
  double TimePercent(const Row& row) const;
  std::string Meaning() const;

  std::string title_;
  TimeShare share_;
  std::map<std::string, Row, std::less<>> rows_;
  uint64_t sum_of_totals_ = 0;
  int64_t span_start_ = INT64_MAX;
  int64_t span_end_ = INT64_MIN;
  uint64_t reached_back_ = 0;  // slices BusyTime could not place exactly (see busy_time.h)
};

// A duration column's unit (see the header note): "ns", "us", "ms" or "s", and its size in ns.
struct DurationUnit {
  const char* name;
  uint64_t ns;
};
DurationUnit UnitForColumn(const std::vector<double>& values_ns);
// |ns| in |unit|: integer ns, else 3 decimals; thousands separated ("1,234.567").
std::string FormatInUnit(double ns, DurationUnit unit);

// One CSV field: quoted (with quotes doubled) only when it holds a comma, quote or line break.
std::string CsvField(const std::string& text);

}  // namespace katrace

#endif  // KATRACE_COMMON_SUMMARY_TABLE_H_
