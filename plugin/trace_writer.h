// The writer thread: takes completed event records from a bounded lock-free queue, places them on
// tracks, formats Chrome trace JSON and streams it to the output sink, and accumulates the
// finalize summary. Memory is bounded by the queue and the per-track nesting windows, whatever
// the length of the run; callbacks only pay for one queue push.
#ifndef KATRACE_PLUGIN_TRACE_WRITER_H_
#define KATRACE_PLUGIN_TRACE_WRITER_H_

#include <stdint.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "plugin/bounded_mpmc_queue.h"
#include "plugin/config.h"
#include "plugin/event_record.h"
#include "plugin/json_buffer.h"
#include "plugin/output_sink.h"
#include "common/summary_table.h"
#include "plugin/track_table.h"

namespace katrace {

struct ProcessInfo {
  int rank = 0;
  int os_pid = 0;
  std::string host;
  uint64_t base_realtime_ns = 0;
  uint64_t base_monotonic_ns = 0;
  std::string output_path;  // the expanded output template
};

// Per-communicator facts for the footer, gathered by the profiler at close.
struct CommunicatorFooter {
  uint64_t comm_hash = 0;
  int rank = 0;
  int nranks = 0;
  int abi_version = 0;
  std::string name;
  int64_t gpu_offset_ns = 0;       // the offset GPU slices were placed with
  int64_t gpu_offset_best_ns = 0;  // the best (smallest) observation
  bool gpu_offset_known = false;
};

struct DrainCounters {
  uint64_t seen = 0;
  uint64_t lost_overrun = 0;
  uint64_t abandoned = 0;
  uint64_t sampled_out = 0;
  uint64_t late = 0;  // steps whose work was retired before they arrived
};

struct TraceFooter {
  uint64_t drops[kKindCount] = {};
  DrainCounters drain;
  std::vector<CommunicatorFooter> comms;
  int mask = 0;
};

class TraceWriter {
 public:
  // |counters| is polled from the writer thread to emit counter tracks when drops change.
  using CounterPoll = std::function<void(uint64_t drops[kKindCount], DrainCounters* drain)>;

  TraceWriter(const Config& config, const ProcessInfo& process, CounterPoll poll);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Opens the output and starts the thread. When the output cannot be opened the writer still
  // runs (records are consumed and summarised) so callbacks never block.
  void Start();

  // Hot path. Never drops: when the queue is full it waits for the writer (counted as a stall).
  void Push(const EventRecord& record);

  // Drains the queue, writes the footer, commits the file, prints the summary, joins the thread.
  void Close(const TraceFooter& footer);

  const std::string& path() const { return sink_.path(); }
  uint64_t stalls() const { return stalls_.load(std::memory_order_relaxed); }

 private:
  void Run();
  void WriteRecord(const EventRecord& r);
  void WriteHeader();
  void WriteFooter(const TraceFooter& footer);
  void WriteSummary(const TraceFooter& footer);
  void PollCounters(uint64_t now_ns, bool force);
  void FlushBuffer();

  // Event emission helpers.
  void BeginEvent();
  void Slice(const char* name, const char* cat, int tid, int64_t ts, int64_t dur);
  void CommonArgs(const EventRecord& r);
  void EndEvent();
  int64_t Rel(uint64_t host_ns) const { return static_cast<int64_t>(host_ns - process_.base_monotonic_ns); }
  uint64_t GpuToHost(const EventRecord& r, uint64_t gpu_ns) const;
  int Place(const TrackKey& key, uint64_t start, uint64_t end, const EventRecord& r);
  std::string TrackName(const TrackKey& key, const EventRecord& r) const;

  void WriteHostEvent(const EventRecord& r, uint64_t stop_ns);
  void WriteGpuExtent(const EventRecord& r, int host_tid);
  void WriteProxyOp(const EventRecord& r, uint64_t stop_ns);
  void WriteProxyStep(const EventRecord& r, uint64_t stop_ns);
  void WriteKernelCh(const EventRecord& r, uint64_t stop_ns);
  void WriteKernelStep(const EventRecord& r);
  void WriteOtherProxy(const EventRecord& r, uint64_t stop_ns, TrackType type);

  Config config_;
  ProcessInfo process_;
  CounterPoll poll_;
  BoundedMpmcQueue<EventRecord> queue_;
  OutputSink sink_;
  bool sink_open_ = false;
  JsonBuffer buf_;
  bool first_event_ = true;
  TrackTable tracks_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> closed_{false};  // the footer is being written: later records are too late
  std::atomic<uint64_t> stalls_{0};
  uint64_t close_ns_ = 0;

  // Owned by the writer thread.
  uint64_t events_[kKindCount] = {};
  uint64_t incomplete_ = 0;
  uint64_t late_children_ = 0;
  uint64_t gpu_stamped_ = 0;  // records carrying a GPU start stamp: the offset's samples
  uint64_t last_drops_total_ = 0;
  uint64_t last_drain_lost_ = 0;
  uint64_t last_poll_ns_ = 0;
  SummaryTable host_summary_{"katrace host-side summary (callback start to stop)"};
  SummaryTable gpu_summary_{"katrace GPU-side summary (%globaltimer)"};
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_TRACE_WRITER_H_
