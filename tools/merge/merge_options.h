// katrace-merge's command line: inputs, output, and the selection (ranks, time window, kinds)
// that turns a huge job into a file Perfetto can open.
#ifndef KATRACE_TOOLS_MERGE_MERGE_OPTIONS_H_
#define KATRACE_TOOLS_MERGE_MERGE_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/trace_format.h"
#include "tools/common/cli_args.h"

namespace katrace::tools {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool gzip = false;  // also implied by an output name ending in .gz
  // kJson or kPerfetto: --format, else the output name's extension (.pftrace[.gz]: kPerfetto).
  // Inputs of either format are read whatever the output's.
  TraceFormat format = TraceFormat::kJson;
  RankSelection ranks;
  std::string ranks_text;
  // Window on the merged timeline, ns from its start (the earliest clock base).
  std::optional<int64_t> from_ns;
  std::optional<int64_t> to_ns;
  // --kinds: the `cat`s of the X events to keep, plus "flow", "counter" and "instant" for those
  // events; unset (no --kinds, or one that selects everything) keeps every event.
  std::optional<std::set<std::string>> kinds;
  // --align-hosts: each host's files are shifted so that the GPU ends of the collectives it shares
  // with an aligned host meet theirs (host_alignment.h).
  bool align_hosts = false;
  uint64_t warn_bytes = uint64_t{300} * 1000 * 1000;
  uint64_t progress_min_bytes = uint64_t{256} << 20;
  bool quiet = false;
};

extern const char kMergeUsage[];

// Parses a --kinds value (the kind grammar of common/event_mask.h, plus "flow", "counter" and
// "instant") into |kinds| (the footer's list, and what EventSelection keeps); nullopt when it
// selects everything. False with |error| naming the bad word and the known ones.
bool ParseMergeKinds(const std::string& text, std::optional<std::set<std::string>>* kinds,
                     std::string* error);

// Returns 0 on success, 2 on a usage error (message printed), or -1 for --help (printed).
int ParseMergeOptions(int argc, char** argv, MergeOptions* options);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_MERGE_OPTIONS_H_
