// The finalize summary: Nsight-shaped host and GPU duration tables (common/summary_table.h) and
// the closing count lines, from the same assembled events and totals as the trace. Rows are
// accumulated under a key of (category, name pointer), so the per-event cost is one small hash
// lookup, not a string build.
#ifndef KATRACE_PLUGIN_EXPORT_EXPORT_SUMMARY_H_
#define KATRACE_PLUGIN_EXPORT_EXPORT_SUMMARY_H_

#include <stdint.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "common/summary_table.h"
#include "plugin/export/assembled_event.h"
#include "plugin/export/trace_encoder.h"

namespace katrace {
namespace exporting {

class ExportSummary {
 public:
  void Add(const AssembledEvent& e);

  // The tables, then the count lines; |trace_line| ends it ("katrace: trace PATH").
  std::string Text(const TraceTotals& totals, const std::string& spool_line, const std::string& trace_line) const;

 private:
  struct Row {
    std::string name;
    DurationStats stats;
  };
  struct Key {
    int category;
    const char* name;
    bool operator==(const Key& o) const { return category == o.category && name == o.name; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.name) * 31u + static_cast<size_t>(k.category);
    }
  };
  void AddRow(bool gpu, int category, const char* category_name, std::string_view name, uint64_t ns);

  // A few dozen (category, name) pairs take every event: a direct-mapped cache in front of the
  // map saves its walk.
  static constexpr size_t kCacheSize = 64;
  struct CacheEntry {
    Key key{-1, nullptr};
    size_t row = 0;
  };
  CacheEntry cache_[2][kCacheSize];
  std::unordered_map<Key, size_t, KeyHash> index_[2];
  std::vector<Row> rows_[2];  // [0] host, [1] GPU
};

// Writes |text| to |path| through "<path>.tmp" and a rename, so a failed write never leaves an
// empty or partial summary under the final name.
bool WriteTextFileAtomically(const std::string& path, const std::string& text, std::string* error);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_EXPORT_SUMMARY_H_
