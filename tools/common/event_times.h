// Whether an event's times can be placed on a timeline: every event but metadata ('M') needs a
// ts, and a complete slice ('X') a dur, that are numbers of microseconds within the range the
// tools compute in (UsToNs, json_fields.h), the dur not negative. katrace always writes such
// times; an edited or damaged trace may not. The tools that place events (merge, stats) leave
// such an event out, count it, and say so once per file, as they do for a protobuf trace's
// problems; katrace-check names each one.
#ifndef KATRACE_TOOLS_COMMON_EVENT_TIMES_H_
#define KATRACE_TOOLS_COMMON_EVENT_TIMES_H_

#include <cstdint>
#include <string>

#include "tools/common/json_fields.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {

// Empty when the times of |event| (of phase |phase|) are usable, else why not, e.g.
// "ts \"abc\" is not a number".
std::string UnusableTimes(const Json& event, char phase);

// The events of one file left out for their times: how many, and the first for the message.
class UnusableTimesTally {
 public:
  // From TraceVisitor::OnFormat: a protobuf trace's positions are byte offsets, not lines.
  void SetFormat(TraceFileFormat format) { bytes_ = format == TraceFileFormat::kPerfettoProtobuf; }
  void Add(const TraceEvent& event, const std::string& why);
  uint64_t count() const { return count_; }
  // "2 events with unusable times left out, the first at line 10 (event #8 'Idle': ts \"abc\" is
  // not a number)".
  std::string Summary() const;

 private:
  bool bytes_ = false;
  uint64_t count_ = 0;
  std::string first_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_COMMON_EVENT_TIMES_H_
