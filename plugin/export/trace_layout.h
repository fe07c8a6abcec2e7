// Stage 5, format-neutral: assembled events become slices on tracks with typed args, track names
// and order, flows from host launches to GPU work, and counter samples; an encoder writes them.
// Track placement is TrackTable's (slices that would break nesting move to overflow lanes).
// Which track each kind goes on and what each slice carries is specified in
// docs/trace-format.md.
#ifndef KATRACE_PLUGIN_EXPORT_TRACE_LAYOUT_H_
#define KATRACE_PLUGIN_EXPORT_TRACE_LAYOUT_H_

#include <stdint.h>

#include <string>

#include "plugin/export/assembled_event.h"
#include "plugin/export/trace_encoder.h"
#include "plugin/export/track_table.h"

namespace katrace {
namespace exporting {

class TraceLayout {
 public:
  TraceLayout(const TraceProcess& process, TraceEncoder* encoder);

  void Add(const AssembledEvent& e);
  // A counter sample at |host_ns|: written when the drop total or the drain losses changed, or
  // always when |force| (the closing sample).
  void Counters(uint64_t host_ns, const uint64_t drops[kKindCount], const DrainCounters& drain, bool force);

  // Fills what the layout counted (events, incomplete, late, overflow moves, GPU samples) into
  // |totals| and closes the trace.
  void Finish(uint64_t end_host_ns, TraceTotals* totals);

  int64_t Rel(uint64_t host_ns) const { return static_cast<int64_t>(host_ns - process_.base_monotonic_ns); }

 private:
  uint64_t GpuToHost(const AssembledEvent& e, uint64_t gpu_ns) const {
    return gpu_ns + static_cast<uint64_t>(e.gpu_offset);  // two's complement: never overflows
  }
  int Place(const TrackKey& key, uint64_t start, uint64_t end, const AssembledEvent& e);
  std::string TrackName(const TrackKey& key, const AssembledEvent& e) const;
  void Emit(std::string_view name, const char* cat, int tid, uint64_t start, uint64_t stop, const Arg* args, size_t n);
  size_t CommonArgs(const AssembledEvent& e, Arg* args) const;

  void HostEvent(const AssembledEvent& e, uint64_t stop_ns);
  void GpuExtent(const AssembledEvent& e, int host_tid);
  void ProxyOp(const AssembledEvent& e, uint64_t stop_ns);
  void ProxyStep(const AssembledEvent& e, uint64_t stop_ns);
  void KernelCh(const AssembledEvent& e, uint64_t stop_ns);
  void KernelStep(const AssembledEvent& e);
  void OtherProxy(const AssembledEvent& e, uint64_t stop_ns, TrackType type);

  TraceProcess process_;
  TraceEncoder* enc_;
  TrackTable tracks_;
  uint64_t events_[kKindCount] = {};
  uint64_t incomplete_ = 0;
  uint64_t late_children_ = 0;
  uint64_t gpu_stamped_ = 0;
  uint64_t last_drops_total_ = 0;
  uint64_t last_drain_lost_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_TRACE_LAYOUT_H_
