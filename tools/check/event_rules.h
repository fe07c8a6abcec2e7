// katrace-check's rules for one event on its own: required fields and their types per phase (as
// Perfetto's JSON importer reads them), katrace's args per kind, and GPU stamps in order. It also
// extracts the facts the cross-event checks (nesting, flows, parents) need.
#ifndef KATRACE_TOOLS_CHECK_EVENT_RULES_H_
#define KATRACE_TOOLS_CHECK_EVENT_RULES_H_

#include <cstdint>
#include <string>

#include "tools/check/diagnostics.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {

struct EventFacts {
  char ph = 0;  // 0 when missing or malformed
  std::string name;
  std::string cat;
  bool has_pid = false;
  bool has_tid = false;
  int64_t pid = 0;
  int64_t tid = 0;
  bool has_ts = false;
  int64_t ts_ns = 0;
  bool has_dur = false;  // X only, and only when dur >= 0
  int64_t dur_ns = 0;
  // X args.
  bool has_id = false;
  uint64_t id = 0;
  bool has_parent = false;
  uint64_t parent = 0;
  bool has_coll_ref = false;  // CollGpu args.coll
  uint64_t coll_ref = 0;
  bool has_owner = false;  // a sub-slice's event: ProxyStepState proxy_step, KernelStep halves kernel_step
  uint64_t owner = 0;
  bool has_gpu_extent = false;  // Coll/P2p gpu_start/gpu_end, trace ns
  int64_t gpu_start_ns = 0;
  int64_t gpu_end_ns = 0;
  bool unfinished = false;  // incomplete, or a KernelStep whose stop never came
  bool host_timed = false;  // a KernelCh/KernelStep at host times (no stamp, or stamps outside the run)
  bool late = false;        // started after its parent's work was retired (args.late)
  // Flow events (s/t/f): a hash of Perfetto's v1 flow identity (cat, name, id).
  bool has_flow_key = false;
  uint64_t flow_key = 0;
};

// "X Coll \"AllReduce\"" or "M thread_name", for messages.
std::string DescribeEvent(const EventFacts& facts);

// Checks |event| and fills |facts|. Returns false for an empty {} event (nothing else to check).
bool CheckEventRules(const TraceEvent& event, Diagnostics* diag, EventFacts* facts);

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_CHECK_EVENT_RULES_H_
