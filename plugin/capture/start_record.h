// The Start record of an event: the common body plus the fields of its kind, taken from NCCL's
// descriptor (strings interned) and from what the event inherited from its parent.
#ifndef KATRACE_PLUGIN_CAPTURE_START_RECORD_H_
#define KATRACE_PLUGIN_CAPTURE_START_RECORD_H_

#include <stdint.h>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "nccl_profiler/v6.h"
#include "plugin/capture/record_appender.h"
#include "plugin/capture/string_table.h"
#include "plugin/capture/thread_buffer.h"

namespace katrace {

// Where a callback's records go.
struct CaptureTarget {
  ThreadBuffer* buffer;
  const AppendPolicy* policy;
  StringTable* strings;
};

// What a child copies from its parent at start.
struct InheritedFacts {
  uint32_t func;     // KernelCh, KernelStep: the Coll/P2p's func; Coll, P2p: its own, already interned
  int32_t peer;      // ProxyStep: the ProxyOp's peer
  uint8_t channel;   // ProxyStep
  uint8_t direction; // ProxyStep: 0 unknown, 1 send, 2 recv
};

// The id of |text| from the shared table, remembered in the thread's buffer; the first use in
// the capture writes the String record (out of line: once per string and thread).
uint32_t InternStringFirstTime(const CaptureTarget& t, const char* text);

// The id of |text| in this capture (0 for none); the first use writes a String record, which is
// never dropped while the writer runs since every event that names the string needs it. A
// string this thread has used before costs a load and a compare.
inline uint32_t InternString(const CaptureTarget& t, const char* text) {
  uint32_t id = 0;
  if (__builtin_expect(t.buffer != nullptr && t.buffer->strings.Find(text, &id), 1)) return id;
  return InternStringFirstTime(t, text);
}

// False when the record was dropped (counted by the policy).
bool RecordStart(const CaptureTarget& t, Kind kind, uint16_t context, uint16_t flags, const spool::StartBody& start,
                 const ncclProfilerEventDescr_v6_t* d, const InheritedFacts& inherited);

// Start flags from the descriptor: direction, graph capture.
uint16_t StartFlags(Kind kind, const ncclProfilerEventDescr_v6_t* d);

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_START_RECORD_H_
