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

SummaryTable::SummaryTable(std::string title, TimeShare share)
    : title_(std::move(title)), share_(share) {}

SummaryTable::Row* SummaryTable::FindRow(std::string_view name) {
  auto it = rows_.find(name);
  if (it == rows_.end()) it = rows_.emplace(std::string(name), Row()).first;
  return &it->second;
}

void SummaryTable::Add(Row* row, int64_t start_ns, uint64_t duration_ns) {
  row->stats.Add(duration_ns);
  sum_of_totals_ += duration_ns;
  const uint64_t reached_back = row->busy.reached_back();
  row->busy.Add(start_ns, duration_ns);
  reached_back_ += row->busy.reached_back() - reached_back;
  span_start_ = std::min(span_start_, start_ns);
  const uint64_t room = static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(start_ns);
  span_end_ = std::max(span_end_, duration_ns > room ? INT64_MAX
                                                     : static_cast<int64_t>(static_cast<uint64_t>(start_ns) + duration_ns));
}

void SummaryTable::Add(const std::string& name, int64_t start_ns, uint64_t duration_ns) {
  Add(FindRow(name), start_ns, duration_ns);
}

void SummaryTable::Add(const std::string& name, uint64_t duration_ns) {
  FindRow(name)->stats.Add(duration_ns);
  sum_of_totals_ += duration_ns;
}

void SummaryTable::AddStats(const std::string& name, const DurationStats& stats) {
  FindRow(name)->stats.Merge(stats);
  sum_of_totals_ += stats.total_ns();
}

uint64_t SummaryTable::span_ns() const {
  return span_end_ > span_start_ ? static_cast<uint64_t>(span_end_) - static_cast<uint64_t>(span_start_) : 0;
}

std::vector<SummaryTable::RowRef> SummaryTable::SortedRows() const {
  std::vector<RowRef> rows;
  rows.reserve(rows_.size());
  for (const auto& [name, row] : rows_) rows.push_back({&name, &row});
  std::sort(rows.begin(), rows.end(), [](const RowRef& a, const RowRef& b) {
    const DurationStats& x = a.row->stats;
    const DurationStats& y = b.row->stats;
    if (x.total_ns() != y.total_ns()) return x.total_ns() > y.total_ns();
    if (x.count() != y.count()) return x.count() > y.count();
    return *a.name < *b.name;
  });
  return rows;
}

double SummaryTable::TimePercent(const Row& row) const {
  return share_ == TimeShare::kOfSpan ? Percent(row.busy.busy_ns(), span_ns())
                                      : Percent(row.stats.total_ns(), sum_of_totals_);
}

std::string SummaryTable::Meaning() const {
  std::string out;
  if (share_ == TimeShare::kOfSpan) {
    const double span = static_cast<double>(span_ns());
    const DurationUnit unit = UnitForColumn({span});
    out = " Time (%) = Busy / span (" + FormatInUnit(span, unit) + " " + unit.name +
          ", first start to last end); Busy = time with at least one such slice running\n"
          " Total Time = sum of durations, so concurrent slices add up\n";
    if (reached_back_ != 0) {
      out += " (" + Unsigned(reached_back_) +
             " slices started before the oldest interval kept; Busy may miss their overlap with older gaps)\n";
    }
  } else {
    out = " Time (%) = Total Time / the sum of every row's Total Time\n";
  }
  return out;
}

std::string SummaryTable::ToText() const {
  const bool busy = share_ == TimeShare::kOfSpan;
  std::string out = title_ + "\n";
  if (rows_.empty()) return out + " (no events)\n";
  const std::vector<RowRef> rows = SortedRows();
  // Columns: Time (%), [Busy], Total, Instances, Avg, Med, Min, Max, StdDev, Name.
  enum { kBusy, kTotal, kAvg, kMed, kMin, kMax, kStddev, kDurations };
  static const char* const kDurationTitles[kDurations] = {"Busy", "Total Time", "Avg", "Med",
                                                          "Min",  "Max",        "StdDev"};
  std::vector<double> values[kDurations];
  for (const RowRef& r : rows) {
    const DurationStats& s = r.row->stats;
    values[kBusy].push_back(static_cast<double>(r.row->busy.busy_ns()));
    values[kTotal].push_back(static_cast<double>(s.total_ns()));
    values[kAvg].push_back(s.mean_ns());
    values[kMed].push_back(s.median_ns());
    values[kMin].push_back(static_cast<double>(s.min_ns()));
    values[kMax].push_back(static_cast<double>(s.max_ns()));
    values[kStddev].push_back(s.stddev_ns());
  }
  std::vector<std::string> header = {"Time (%)"};
  DurationUnit units[kDurations];
  std::vector<double> per_instance;
  for (int d = kAvg; d <= kStddev; ++d) per_instance.insert(per_instance.end(), values[d].begin(), values[d].end());
  const DurationUnit per_instance_unit = UnitForColumn(per_instance);
  for (int d = 0; d < kDurations; ++d) {
    units[d] = d >= kAvg ? per_instance_unit : UnitForColumn(values[d]);
    if (d == kBusy && !busy) continue;
    header.push_back(std::string(kDurationTitles[d]) + " (" + units[d].name + ")");
    if (d == kTotal) header.push_back("Instances");
  }
  header.push_back("Name");
  std::vector<std::vector<std::string>> cells;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> line = {Fixed(TimePercent(*rows[i].row), 1)};
    for (int d = 0; d < kDurations; ++d) {
      if (d == kBusy && !busy) continue;
      line.push_back(FormatInUnit(values[d][i], units[d]));
      if (d == kTotal) line.push_back(WithThousands(rows[i].row->stats.count()));
    }
    line.push_back(*rows[i].name);
    cells.push_back(std::move(line));
  }
  const size_t columns = header.size();
  std::vector<size_t> width(columns);
  for (size_t c = 0; c < columns; ++c) {
    width[c] = header[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  // Right-align every column but the last (Name), which is left as is: nsys's console layout.
  auto render = [&](const std::vector<std::string>& line) {
    std::string text;
    for (size_t c = 0; c < columns; ++c) {
      text += c == 0 ? " " : "  ";
      if (c + 1 < columns) text.append(width[c] - line[c].size(), ' ');
      text += line[c];
    }
    return text + "\n";
  };
  out += Meaning();
  out += render(header);
  std::vector<std::string> rule;
  for (size_t c = 0; c < columns; ++c) rule.push_back(std::string(width[c], '-'));
  out += render(rule);
  for (const auto& line : cells) out += render(line);
  return out;
}

std::string SummaryTable::ToCsv() const {
  const bool busy = share_ == TimeShare::kOfSpan;
  std::string out = std::string("Time (%),") + (busy ? "Busy (ns)," : "") +
                    "Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n";
  for (const RowRef& r : SortedRows()) {
    const DurationStats& s = r.row->stats;
    out += Fixed(TimePercent(*r.row), 1) + "," + (busy ? Unsigned(r.row->busy.busy_ns()) + "," : "") +
           Unsigned(s.total_ns()) + "," + Unsigned(s.count()) + "," + Fixed(s.mean_ns(), 1) + "," +
           Fixed(s.median_ns(), 1) + "," + Unsigned(s.min_ns()) + "," + Unsigned(s.max_ns()) + "," +
           Fixed(s.stddev_ns(), 1) + "," + CsvField(*r.name) + "\n";
  }
  return out;
}

std::string SummaryTable::ToJson() const {
  const bool busy = share_ == TimeShare::kOfSpan;
  std::string out = "[";
  bool first = true;
  for (const RowRef& r : SortedRows()) {
    const DurationStats& s = r.row->stats;
    out += first ? "\n" : ",\n";
    first = false;
    out += "{\"time_percent\":" + Fixed(TimePercent(*r.row), 1) +
           (busy ? ",\"busy_ns\":" + Unsigned(r.row->busy.busy_ns()) : "") +
           ",\"total_ns\":" + Unsigned(s.total_ns()) + ",\"instances\":" + Unsigned(s.count()) +
           ",\"avg_ns\":" + Fixed(s.mean_ns(), 1) + ",\"med_ns\":" + Fixed(s.median_ns(), 1) +
           ",\"min_ns\":" + Unsigned(s.min_ns()) + ",\"max_ns\":" + Unsigned(s.max_ns()) +
           ",\"stddev_ns\":" + Fixed(s.stddev_ns(), 1) + ",\"name\":" + JsonString(*r.name) +
           "}";
  }
  return out + (first ? "]\n" : "\n]\n");
}

DurationUnit UnitForColumn(const std::vector<double>& values_ns) {
  static const DurationUnit kUnits[] = {{"s", 1000000000}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}};
  double smallest = 0;
  for (double v : values_ns) {
    if (v >= 0.5 && (smallest == 0 || v < smallest)) smallest = v;  // what prints as non-zero ns
  }
  for (const DurationUnit& unit : kUnits) {
    if (smallest >= static_cast<double>(unit.ns)) return unit;
  }
  return kUnits[3];
}

// Integer arithmetic after one rounding, so a value never prints as "999.9995" rounded up oddly.
// A Total Time past 2^63 ns (a few garbage durations of centuries) is beyond llround, which then
// gave INT64_MAX or worse, so the text disagreed with the CSV and JSON: rounded as a double here,
// held at UINT64_MAX past it, and divided without adding first so nothing wraps.
std::string FormatInUnit(double ns, DurationUnit unit) {
  const double rounded = std::round(ns);
  const uint64_t n = !(rounded > 0) ? 0 : rounded >= 18446744073709551616.0 ? UINT64_MAX : static_cast<uint64_t>(rounded);
  if (unit.ns == 1) return WithThousands(n);
  const uint64_t step = unit.ns / 1000;  // one thousandth of the unit, in ns
  const uint64_t thousandths = n / step + (n % step >= step - step / 2 ? 1 : 0);
  std::string frac = Unsigned(thousandths % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  return WithThousands(thousandths / 1000) + "." + frac;
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
