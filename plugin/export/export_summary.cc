#include "plugin/export/export_summary.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugin/export/event_naming.h"

namespace katrace {
namespace exporting {
namespace {

constexpr int kCollGpu = kKindCount;
constexpr int kStepWait = kKindCount + 1;
constexpr int kStepTransfer = kKindCount + 2;

}  // namespace

void ExportSummary::AddRow(bool gpu, int category, const char* category_name, std::string_view name, uint64_t ns) {
  auto& index = index_[gpu ? 1 : 0];
  auto& rows = rows_[gpu ? 1 : 0];
  Key key{category, name.data()};
  uint64_t mix = (reinterpret_cast<uintptr_t>(key.name) ^ static_cast<uint64_t>(category)) * 0x9e3779b97f4a7c15ull;
  CacheEntry& c = cache_[gpu ? 1 : 0][(mix >> 58) % kCacheSize];
  if (c.key == key) {
    rows[c.row].stats.Add(ns);
    return;
  }
  auto it = index.find(key);
  if (it == index.end()) {
    Row row;
    row.name = std::string(category_name) + " " + std::string(name);
    rows.push_back(std::move(row));
    it = index.emplace(key, rows.size() - 1).first;
  }
  c.key = key;
  c.row = it->second;
  rows[it->second].stats.Add(ns);
}

void ExportSummary::Add(const AssembledEvent& e) {
  if (e.flags & kEvIncomplete) return;  // no true duration
  std::string_view name = EventName(e);
  int cat = static_cast<int>(e.kind);
  if (IsGpuKind(e.kind)) {
    uint64_t begin = e.kind == Kind::kKernelStep && e.gpu_start == 0 ? e.gpu_ready : e.gpu_start;
    if ((e.flags & kEvGpuStopSeen) && begin != 0 && e.gpu_stop >= begin) {
      AddRow(true, cat, KindName(e.kind), name, e.gpu_stop - begin);
    }
  } else {
    AddRow(false, cat, KindName(e.kind), name, e.stop_ns >= e.start_ns ? e.stop_ns - e.start_ns : 0);
  }
  if ((e.kind == Kind::kColl || e.kind == Kind::kP2p) && (e.flags & kEvHasGpuExtent)) {
    AddRow(true, kCollGpu, "CollGpu", name, e.gpu_stop - e.gpu_start);
  }
  if (e.kind == Kind::kKernelStep) {
    uint64_t stop_gpu = (e.flags & kEvGpuStopSeen) && e.gpu_stop >= e.gpu_ready ? e.gpu_stop : e.gpu_ready;
    bool has_wait = e.gpu_start != 0 && e.gpu_ready >= e.gpu_start;
    bool has_transfer = stop_gpu > e.gpu_ready || (e.flags & kEvAbandoned) == 0;
    if (has_wait) AddRow(true, kStepWait, "KernelStepWait", IsSend(e) ? "Send wait" : "Recv wait", e.gpu_ready - e.gpu_start);
    if (has_transfer) {
      AddRow(true, kStepTransfer, "KernelStepTransfer", IsSend(e) ? "Send transfer" : "Recv transfer",
             stop_gpu - e.gpu_ready);
    }
  }
}

std::string ExportSummary::Text(const TraceTotals& t, const std::string& spool_line, const std::string& trace_line) const {
  SummaryTable host("katrace host-side summary (callback start to stop)");
  SummaryTable gpu("katrace GPU-side summary (%globaltimer)");
  for (const Row& r : rows_[0]) host.AddStats(r.name, r.stats);
  for (const Row& r : rows_[1]) gpu.AddStats(r.name, r.stats);
  std::string text;
  text += host.empty() ? "" : host.ToText() + "\n";
  text += gpu.empty() ? "" : gpu.ToText() + "\n";
  uint64_t total_drops = 0;
  std::string drops;
  for (int k = 0; k < kKindCount; ++k) {
    total_drops += t.drops[k];
    if (t.drops[k] != 0) drops += std::string(" ") + kKindInfo[k].name + "=" + std::to_string(t.drops[k]);
  }
  uint64_t recorded = 0;
  for (uint64_t e : t.events) recorded += e;
  text += "katrace: " + std::to_string(recorded) + " events recorded, " + std::to_string(total_drops) +
          " dropped (pool or buffers full)" + (drops.empty() ? "" : ":" + drops) + ", " +
          std::to_string(t.incomplete) + " incomplete";
  if (t.waits != 0) text += ", " + std::to_string(t.waits) + " waits for buffer space";
  if (t.drain.Any()) {
    text += "; KernelStep drain:";
    for (int i = 0; i < kDrainCounterCount; ++i) {
      text += std::string(i ? ", " : " ") + std::to_string(t.drain.*kDrainCounterFields[i].member) + " " +
              kDrainCounterFields[i].name;
    }
  }
  text += "\n";
  if (!spool_line.empty()) text += spool_line + "\n";
  if (!trace_line.empty()) text += trace_line + "\n";
  return text;
}

bool WriteTextFileAtomically(const std::string& path, const std::string& text, std::string* error) {
  std::string tmp = path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    *error = "cannot write '" + tmp + "': " + strerror(errno);
    return false;
  }
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  int err = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    *error = "cannot write '" + tmp + "': " + strerror(err);
    unlink(tmp.c_str());
    return false;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename '" + tmp + "' to '" + path + "': " + strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace exporting
}  // namespace katrace
