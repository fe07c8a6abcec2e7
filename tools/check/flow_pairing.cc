// Flow pairing sweep (see flow_pairing.h).
#include "tools/check/flow_pairing.h"

#include <tuple>

#include "tools/common/json_fields.h"

namespace katrace::tools {
namespace {

std::string IdText(int64_t numeric_id) {
  return numeric_id < 0 ? "(string id)" : std::to_string(numeric_id);
}

}  // namespace

bool FlowPairing::Less::operator()(const Record& a, const Record& b) const {
  return std::tie(a.key, a.index) < std::tie(b.key, b.index);
}

FlowPairing::FlowPairing(size_t sort_memory_bytes) : sorter_(sort_memory_bytes) {}

void FlowPairing::Add(uint64_t key, char phase, int64_t ts_ns, int64_t numeric_id,
                      uint64_t index, uint64_t line) {
  sorter_.Add(Record{key, ts_ns, numeric_id, index, line, static_cast<uint64_t>(phase)});
}

void FlowPairing::Check(Diagnostics* diag) {
  if (!sorter_.Finish()) {
    diag->Error("internal", 0, "flow check skipped: " + sorter_.error());
    return;
  }
  // One flow's events at a time, kept as counts and first records so a pathological file whose
  // flows all share one id still needs constant memory.
  struct Group {
    Record first, start, end;
    int starts = 0, ends = 0;
  } g;
  bool open = false;
  auto check_group = [&] {
    const std::string id = IdText(g.first.numeric_id);
    if (g.starts == 0) {
      diag->Error("flow", g.first.line,
                  "event #" + std::to_string(g.first.index) + ": flow " + id +
                      " has no start (s); Perfetto draws no arrow (a flow to nowhere)");
    } else if (g.ends == 0) {
      diag->Error("flow", g.start.line,
                  "event #" + std::to_string(g.start.index) + ": flow " + id +
                      " has no end (f); Perfetto draws no arrow (a flow to nowhere)");
    } else if (g.starts > 1 || g.ends > 1) {
      diag->Error("flow", g.first.line,
                  "event #" + std::to_string(g.first.index) + ": flow " + id + " has " +
                      std::to_string(g.starts) + " starts and " + std::to_string(g.ends) +
                      " ends; Perfetto pairs v1 flows by (cat, name, id), so arrows mix");
    } else if (g.end.ts_ns < g.start.ts_ns) {
      diag->Error("flow", g.end.line,
                  "event #" + std::to_string(g.end.index) + ": flow " + id + " ends at " +
                      NsToUsText(g.end.ts_ns) + " us, before its start at " +
                      NsToUsText(g.start.ts_ns) + " us");
    }
  };
  Record r;
  while (sorter_.Next(&r)) {
    if (open && g.first.key != r.key) {
      check_group();
      open = false;
    }
    if (!open) {
      g = Group();
      g.first = r;
      open = true;
    }
    if (r.phase == 's' && g.starts++ == 0) g.start = r;
    if (r.phase == 'f' && g.ends++ == 0) g.end = r;
  }
  if (open) check_group();
  if (!sorter_.error().empty()) diag->Error("internal", 0, sorter_.error());
}

}  // namespace katrace::tools
