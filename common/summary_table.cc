// DurationStats and SummaryTable (see summary_table.h for the invariants). Numbers are formatted
// with std::to_chars so a host application's locale can never turn "62.5" into "62,5".
#include "common/summary_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

namespace katrace {
namespace {

// Log-linear buckets: values below kExactLimit have their own bucket; above, each power of two
// [2^e, 2^(e+1)) splits into kSubBuckets equal parts.
constexpr uint64_t kExactLimit = 128;
constexpr int kSubBucketBits = 6;
constexpr uint32_t kSubBuckets = 1u << kSubBucketBits;
constexpr int kFirstLogExponent = 7;  // log2(kExactLimit)

uint32_t BucketOf(uint64_t ns) {
  if (ns < kExactLimit) return static_cast<uint32_t>(ns);
  const int exponent = 63 - __builtin_clzll(ns);
  const uint32_t sub = static_cast<uint32_t>(ns >> (exponent - kSubBucketBits)) & (kSubBuckets - 1);
  return static_cast<uint32_t>(kExactLimit) + (exponent - kFirstLogExponent) * kSubBuckets + sub;
}

// The middle of the integer values a bucket holds.
double BucketMiddle(uint32_t bucket) {
  if (bucket < kExactLimit) return bucket;
  const uint32_t offset = bucket - static_cast<uint32_t>(kExactLimit);
  const int exponent = static_cast<int>(offset / kSubBuckets) + kFirstLogExponent;
  const uint64_t sub = offset % kSubBuckets;
  const int shift = exponent - kSubBucketBits;
  const uint64_t low = (kSubBuckets + sub) << shift;
  const uint64_t width = uint64_t{1} << shift;
  return static_cast<double>(low) + static_cast<double>(width - 1) / 2.0;
}

std::string Fixed(double value, int precision) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed,
                                    precision);
  return std::string(buf, result.ptr);
}

std::string Unsigned(uint64_t value) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

std::string WithThousands(uint64_t value) {
  const std::string digits = Unsigned(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// "<integer>.<3 digits> <unit>" from a count of |unit_ns| units scaled by 1000, rounded half up.
std::string ThreeDecimals(uint64_t thousandths, const char* unit) {
  std::string frac = Unsigned(thousandths % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  return Unsigned(thousandths / 1000) + "." + frac + " " + unit;
}

// Integer arithmetic after one rounding, so the unit switch never prints "1000.000 us".
std::string ReadableDuration(double ns) {
  const uint64_t n = ns <= 0 ? 0 : static_cast<uint64_t>(std::llround(ns));
  if (n < 1000) return Unsigned(n) + " ns";
  if (n < 1000000) return ThreeDecimals(n, "us");
  const uint64_t us = (n + 500) / 1000;
  if (us < 1000000) return ThreeDecimals(us, "ms");
  const uint64_t ms = (n + 500000) / 1000000;
  return ThreeDecimals(ms, "s");
}

std::string JsonString(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

double Percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

void DurationStats::Add(uint64_t ns) {
  ++count_;
  total_ns_ += ns;
  min_ns_ = std::min(min_ns_, ns);
  max_ns_ = std::max(max_ns_, ns);
  sum_squares_ += static_cast<unsigned __int128>(ns) * ns;
  AddToBucket(BucketOf(ns), 1);
}

void DurationStats::Merge(const DurationStats& other) {
  if (other.count_ == 0) return;
  count_ += other.count_;
  total_ns_ += other.total_ns_;
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
  sum_squares_ += other.sum_squares_;
  for (size_t i = 0; i < other.buckets_.size(); ++i) {
    if (other.buckets_[i] != 0) {
      AddToBucket(other.first_bucket_ + static_cast<uint32_t>(i), other.buckets_[i]);
    }
  }
}

void DurationStats::AddToBucket(uint32_t bucket, uint64_t n) {
  if (buckets_.empty()) {
    first_bucket_ = bucket;
    buckets_.assign(1, 0);
  } else if (bucket < first_bucket_) {
    buckets_.insert(buckets_.begin(), first_bucket_ - bucket, 0);
    first_bucket_ = bucket;
  } else if (bucket - first_bucket_ >= buckets_.size()) {
    buckets_.resize(bucket - first_bucket_ + 1, 0);
  }
  buckets_[bucket - first_bucket_] += n;
}

double DurationStats::mean_ns() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(total_ns_) / count_);
}

double DurationStats::stddev_ns() const {
  if (count_ < 2) return 0.0;
  // sum((x - mean)^2) = S2 - S1^2/n; S1^2/n is split into an exact quotient and remainder, and
  // S2 >= S1^2/n (Cauchy-Schwarz), so the big subtraction is exact in integers.
  const unsigned __int128 s1_squared = static_cast<unsigned __int128>(total_ns_) * total_ns_;
  const unsigned __int128 quotient = s1_squared / count_;
  const unsigned __int128 remainder = s1_squared % count_;
  const long double deviations = static_cast<long double>(sum_squares_ - quotient) -
                                 static_cast<long double>(remainder) / count_;
  const long double variance = std::max<long double>(0.0L, deviations) / (count_ - 1);
  return static_cast<double>(std::sqrt(variance));
}

double DurationStats::ValueAtRank(uint64_t rank) const {
  if (rank == 0) return static_cast<double>(min_ns_);
  if (rank + 1 == count_) return static_cast<double>(max_ns_);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen > rank) {
      const double middle = BucketMiddle(first_bucket_ + static_cast<uint32_t>(i));
      return std::clamp(middle, static_cast<double>(min_ns_), static_cast<double>(max_ns_));
    }
  }
  return static_cast<double>(max_ns_);
}

double DurationStats::median_ns() const {
  if (count_ == 0) return 0.0;
  if (count_ % 2 == 1) return ValueAtRank(count_ / 2);
  return (ValueAtRank(count_ / 2 - 1) + ValueAtRank(count_ / 2)) / 2.0;
}

SummaryTable::SummaryTable(std::string title) : title_(std::move(title)) {}

void SummaryTable::Add(const std::string& name, uint64_t duration_ns) {
  rows_[name].Add(duration_ns);
}

void SummaryTable::AddStats(const std::string& name, const DurationStats& stats) {
  rows_[name].Merge(stats);
}

std::vector<SummaryTable::RowRef> SummaryTable::SortedRows() const {
  std::vector<RowRef> rows;
  rows.reserve(rows_.size());
  for (const auto& [name, stats] : rows_) rows.push_back({&name, &stats});
  std::sort(rows.begin(), rows.end(), [](const RowRef& a, const RowRef& b) {
    if (a.stats->total_ns() != b.stats->total_ns()) {
      return a.stats->total_ns() > b.stats->total_ns();
    }
    if (a.stats->count() != b.stats->count()) return a.stats->count() > b.stats->count();
    return *a.name < *b.name;
  });
  return rows;
}

uint64_t SummaryTable::SumOfTotals() const {
  uint64_t sum = 0;
  for (const auto& row : rows_) sum += row.second.total_ns();
  return sum;
}

std::string SummaryTable::ToText() const {
  static const char* const kHeader[] = {"Time (%)", "Total Time", "Instances", "Avg", "Med",
                                        "Min",      "Max",        "StdDev",    "Name"};
  constexpr size_t kColumns = sizeof(kHeader) / sizeof(kHeader[0]);
  std::vector<std::vector<std::string>> cells;
  const uint64_t sum = SumOfTotals();
  for (const RowRef& row : SortedRows()) {
    const DurationStats& s = *row.stats;
    cells.push_back({Fixed(Percent(s.total_ns(), sum), 1), ReadableDuration(s.total_ns()),
                     WithThousands(s.count()), ReadableDuration(s.mean_ns()),
                     ReadableDuration(s.median_ns()), ReadableDuration(s.min_ns()),
                     ReadableDuration(s.max_ns()), ReadableDuration(s.stddev_ns()), *row.name});
  }
  std::vector<size_t> width(kColumns);
  for (size_t c = 0; c < kColumns; ++c) {
    width[c] = std::string(kHeader[c]).size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  // Right-align every column but the last (Name), which is left as is: nsys's console layout.
  auto render = [&](const std::vector<std::string>& line) {
    std::string out;
    for (size_t c = 0; c < kColumns; ++c) {
      out += c == 0 ? " " : "  ";
      if (c + 1 < kColumns) out.append(width[c] - line[c].size(), ' ');
      out += line[c];
    }
    return out + "\n";
  };
  std::string out = title_ + "\n";
  if (cells.empty()) return out + " (no events)\n";
  out += render(std::vector<std::string>(kHeader, kHeader + kColumns));
  std::vector<std::string> rule;
  for (size_t c = 0; c < kColumns; ++c) rule.push_back(std::string(width[c], '-'));
  out += render(rule);
  for (const auto& line : cells) out += render(line);
  return out;
}

std::string SummaryTable::ToCsv() const {
  std::string out =
      "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n";
  const uint64_t sum = SumOfTotals();
  for (const RowRef& row : SortedRows()) {
    const DurationStats& s = *row.stats;
    out += Fixed(Percent(s.total_ns(), sum), 1) + "," + Unsigned(s.total_ns()) + "," +
           Unsigned(s.count()) + "," + Fixed(s.mean_ns(), 1) + "," + Fixed(s.median_ns(), 1) +
           "," + Unsigned(s.min_ns()) + "," + Unsigned(s.max_ns()) + "," +
           Fixed(s.stddev_ns(), 1) + "," + CsvField(*row.name) + "\n";
  }
  return out;
}

std::string SummaryTable::ToJson() const {
  std::string out = "[";
  const uint64_t sum = SumOfTotals();
  bool first = true;
  for (const RowRef& row : SortedRows()) {
    const DurationStats& s = *row.stats;
    out += first ? "\n" : ",\n";
    first = false;
    out += "{\"time_percent\":" + Fixed(Percent(s.total_ns(), sum), 1) +
           ",\"total_ns\":" + Unsigned(s.total_ns()) + ",\"instances\":" + Unsigned(s.count()) +
           ",\"avg_ns\":" + Fixed(s.mean_ns(), 1) + ",\"med_ns\":" + Fixed(s.median_ns(), 1) +
           ",\"min_ns\":" + Unsigned(s.min_ns()) + ",\"max_ns\":" + Unsigned(s.max_ns()) +
           ",\"stddev_ns\":" + Fixed(s.stddev_ns(), 1) + ",\"name\":" + JsonString(*row.name) +
           "}";
  }
  return out + (first ? "]\n" : "\n]\n");
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace katrace
