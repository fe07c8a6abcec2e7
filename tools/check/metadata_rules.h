// Metadata katrace promises and Perfetto needs to label a trace: the header first
// (traceEvents[0], with the clock base), a process_name and header for every pid, a thread_name
// for every track that holds slices, and the footer (otherData.katrace) with the drop counters.
// Keeps one small entry per process and per track, never per event.
#ifndef KATRACE_TOOLS_CHECK_METADATA_RULES_H_
#define KATRACE_TOOLS_CHECK_METADATA_RULES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tools/check/diagnostics.h"
#include "tools/check/event_rules.h"
#include "tools/common/trace_header.h"

namespace katrace::tools {

class MetadataRules {
 public:
  explicit MetadataRules(Diagnostics* diag) : diag_(diag) {}

  // Index of track (pid, tid), created on first use.
  uint32_t TrackIndex(int64_t pid, int64_t tid);
  void OnEvent(const TraceEvent& event, const EventFacts& facts);
  void OnFooter(const Json& other_data);
  // Reports what is missing; footer checks only when the whole file was read.
  void Finish(bool whole_file);

  // "pid 3 tid 5 \"GPU comm 9a3c0f1e ch 0\"" per track index.
  std::vector<std::string> TrackNames() const;
  bool merged() const { return footer_format_ == kMergedFormat; }

 private:
  struct Track {
    uint32_t index = 0;
    std::string name;
    bool named = false;
    uint64_t slices = 0;
    uint64_t first_line = 0;
  };
  struct Process {
    bool named = false;
    bool has_header = false;
    bool bad_header = false;  // one was there but did not parse (its problems are reported)
    TraceHeader header;
    uint64_t first_line = 0;
  };

  void OnHeader(const TraceEvent& event, const Json& katrace, int64_t pid);
  void CheckFooter();
  // The footer's `spool` object (or one entry of a merged footer's list); |who| prefixes the
  // messages ("rank 3: " for a merged entry).
  void CheckSpool(const Json* spool, const std::string& who);

  Diagnostics* diag_;
  std::map<std::pair<int64_t, int64_t>, Track> tracks_;
  std::map<int64_t, Process> processes_;
  bool saw_first_event_ = false;
  bool saw_drop_counter_ = false;
  bool has_footer_ = false;
  Json footer_;
  std::string footer_format_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_CHECK_METADATA_RULES_H_
