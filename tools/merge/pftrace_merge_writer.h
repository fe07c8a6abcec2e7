// katrace-merge's Perfetto protobuf output: the merged trace's events, as the JSON merge would
// write them (rebased, pids assigned, selected), written as the TracePackets the plugin's
// .pftrace uses (docs/trace-format.md, "Perfetto protobuf", and its merge paragraph), so that
// every reader of katrace's protobuf (the tools' reader, Perfetto) reads a merged file as it
// reads one rank's. The packets are built with the export's ProtoBytes and the field numbers of
// common/perfetto_wire.h; no varint code of its own.
//
// What differs from one rank's file, because one file now holds many processes, each rebased:
//   - timestamps are absolute ns on the merged timeline (clock 65 by default; CLOCK_REALTIME for
//     the rare one before its start): the inputs follow one another in the file, so time goes
//     back at each input, which an incremental clock cannot say;
//   - the one clock snapshot binds the timeline to CLOCK_REALTIME, the primary trace clock (the
//     inputs' monotonic clocks are other machines'), and to CLOCK_BOOTTIME as the monotonic
//     clock of the input whose base is the merged start (Perfetto wants every file related to
//     BOOTTIME; boot time is monotonic time on a machine that never slept);
//   - layout tracks are kMergedTrackUuidBase + (process number << 32) + tid (tids repeat from
//     rank to rank), a family's lanes still sharing a name and merge key;
//   - flows: JSON binds an arrow's ends to slices by time after both were written; protobuf
//     needs the ids on the slices, so each input is read once first for its flows (FlowPlan)
//     and an arrow is written only when both its slices are written.
// Memory: the interning tables (at most 65,536 strings each, then strings go inline), the
// tracks, the slices open at one time, and per input its flows and a hash per kept slice.
#ifndef KATRACE_TOOLS_MERGE_PFTRACE_MERGE_WRITER_H_
#define KATRACE_TOOLS_MERGE_PFTRACE_MERGE_WRITER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/output_file.h"
#include "plugin/export/proto_bytes.h"
#include "tools/common/json_fields.h"
#include "tools/merge/event_rewriter.h"

namespace katrace::tools {

// Where the arrows of one input go: filled by a first pass over the input's kept events (slices,
// and flow events that pass the selection), sealed, then asked by the writer for each slice.
class FlowPlan {
 public:
  // A kept X event of the input's (own pid, tid) at |ts_ns| on the merged timeline.
  void AddSlice(int64_t pid, uint64_t tid, int64_t ts_ns);
  // A kept "s" (|start|) or "f" event with the merged flow |id|.
  void AddFlowEnd(int64_t pid, uint64_t tid, int64_t ts_ns, uint64_t id, bool start);
  // Keeps the flows whose two ends both have a slice to carry them; returns how many were not.
  uint64_t Seal();
  struct End {
    uint64_t id;
    bool start;
  };
  // The flow ends a slice at (pid, tid, ts) carries (each once: the first such slice takes them).
  std::vector<End> Take(int64_t pid, uint64_t tid, int64_t ts_ns);
  // Whether the flow |id| is drawn (both ends have slices).
  bool Drawn(uint64_t id) const { return drawn_.count(id) != 0; }
  void Clear();

 private:
  static uint64_t Key(int64_t pid, uint64_t tid, int64_t ts_ns);
  std::vector<uint64_t> slices_;  // Key of every kept slice, sorted by Seal
  std::vector<std::pair<uint64_t, End>> ends_;
  std::unordered_multimap<uint64_t, End> by_key_;
  std::unordered_set<uint64_t> drawn_;
};

class PftraceMergeWriter {
 public:
  // |boottime_ns|: CLOCK_BOOTTIME at the merged timeline's start, as far as known.
  PftraceMergeWriter(OutputFile* out, int64_t merged_base_realtime_ns, int64_t boottime_ns);

  // Starts an input: its events follow through Event.
  void BeginInput(const EventRewriter* rewriter, FlowPlan* flows);
  // One event of the input (as read: own pids, own times), kept by the selection. False when it
  // could not be written (counted, see left_out()); flow events are written with their slices.
  bool Event(const Json& event);
  // Closes the input's slices still open.
  void EndInput();
  // The footer track, with |katrace| (the JSON footer object) as its description; flushes.
  void End(const Json& katrace);

  uint64_t bytes_written() const { return bytes_; }
  // Events that protobuf cannot hold as katrace lays it out (a metadata event of another name, a
  // slice on a tid past 32 bits, a counter with a fractional value), and arrows left out because
  // one of their slices is not in the output.
  uint64_t left_out() const { return left_out_; }

 private:
  enum Table : uint8_t { kEventNames, kCategories, kArgNames, kStringValues, kTables };
  struct PendingEnd {
    int64_t ts;
    uint64_t order;
    uint64_t track;
    bool operator>(const PendingEnd& o) const { return ts != o.ts ? ts > o.ts : order < o.order; }
  };
  struct PendingProcess {
    int64_t pid = 0;
    std::string name;
    std::optional<std::string> labels;
    std::optional<Json> header;
    int64_t order = 0;
  };
  struct PendingThread {
    int64_t pid = 0;
    uint64_t tid = 0;
    std::string name;
    std::optional<int64_t> order;
  };

  void Metadata(const Json& event, const std::string& name, int64_t pid);
  void FlushPending();
  void WriteProcess(const PendingProcess& p);
  void WriteThread(const PendingThread& t);
  uint64_t ProcessUuid(int64_t pid) const;
  // The uuid of the layout track of (merged pid, tid), declaring it (named "tid N") when no
  // thread_name did; 0 when the tid does not fit.
  uint64_t TrackUuid(int64_t pid, uint64_t tid);
  uint64_t CounterUuid(int64_t pid, const std::string& name, const std::string& series);

  bool Slice(const Json& event, int64_t pid);
  bool Instant(const Json& event, int64_t pid);
  bool Counter(const Json& event, int64_t pid, int64_t ts_ns);
  void NameAndCategory(const Json& event);
  void Args(const Json& event);

  uint64_t Intern(Table table, const std::string& s);
  // Writes the ENDs due at or before |ts|, but keeps open those at |ts| on |keep_track| begun at
  // or before |keep_order|: the owner of a part beginning there, and what encloses the owner.
  void CloseEndsUpTo(int64_t ts, uint64_t keep_track = 0, uint64_t keep_order = 0);
  // One event packet at |ts_ns| with event_ (and what was interned for it).
  void EventPacket(int64_t ts_ns);
  void DescriptorPacket();
  void Packet(const exporting::ProtoBytes& body);

  OutputFile* out_;
  int64_t base_realtime_ns_;
  const EventRewriter* rewriter_ = nullptr;
  FlowPlan* flows_ = nullptr;
  std::string buf_;
  uint64_t bytes_ = 0;
  uint64_t left_out_ = 0;

  exporting::ProtoBytes packet_, event_, annotation_, interned_, entry_, descriptor_, sub_, outer_;

  std::optional<PendingProcess> pending_process_;
  std::optional<PendingThread> pending_thread_;
  std::map<int64_t, uint64_t> process_numbers_;                 // merged pid -> k
  std::map<std::pair<int64_t, uint64_t>, uint64_t> tracks_;     // (merged pid, tid) -> uuid
  // (merged pid, family name) -> (tracks in the family so far, its merge key)
  std::map<std::pair<int64_t, std::string>, std::pair<uint64_t, std::string>> families_;
  std::map<std::tuple<int64_t, std::string, std::string>, uint64_t> counters_;
  std::unordered_map<std::string, uint64_t> tables_[kTables];

  std::priority_queue<PendingEnd, std::vector<PendingEnd>, std::greater<PendingEnd>> ends_;
  uint64_t begun_ = 0;
  // Per track, its slices begun and not ended, outermost first: a slice that comes after slices
  // it encloses (JSON writes a slice placed late where it was placed) first ends them, so that a
  // reader, which pairs an END with the innermost open slice of its track, pairs them right.
  // A zero-length KernelStep's halves (their "kernel_step" arg names its "id") are its parts:
  // they begin where it ends, and its END waits for them, as in the export's .pftrace.
  struct Open {
    int64_t ts, end;
    uint64_t order;
    std::optional<uint64_t> id;
  };
  std::unordered_map<uint64_t, std::vector<Open>> open_;
  std::unordered_set<uint64_t> ended_early_;  // orders whose heap entry is already written
  void EndSlice(uint64_t track, int64_t ts);
  // Flows whose first slice is written: the id as that slice carries it.
  std::unordered_map<uint64_t, uint64_t> flows_begun_;
};

}  // namespace katrace::tools

#endif  // KATRACE_TOOLS_MERGE_PFTRACE_MERGE_WRITER_H_
