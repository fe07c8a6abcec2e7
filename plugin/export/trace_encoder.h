// The boundary between the format-neutral layout and a trace file format. The layout decides
// everything a viewer shows (tracks and their names, lanes and order, slices with typed args and
// their flows, counters, the closing totals); an encoder only writes it down: Chrome JSON
// (chrome_json_encoder.h), Perfetto protobuf (perfetto_encoder.h), NVTXT (nvtxt_encoder.h). Times are ns relative to the trace base
// (base_monotonic_ns); a track is a small integer the layout hands out.
#ifndef KATRACE_PLUGIN_EXPORT_TRACE_ENCODER_H_
#define KATRACE_PLUGIN_EXPORT_TRACE_ENCODER_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

#include "katrace/drain_counters.h"
#include "katrace/event_kinds.h"
#include "katrace/kind_schema.h"

namespace katrace {
namespace exporting {

using katrace::ArgType;  // katrace/kind_schema.h: how an argument is typed in every format

struct Arg {
  std::string_view key;  // from a literal or kKindInfo: its length is known without strlen
  ArgType type;
  uint64_t u;  // kUint, kBool, kHex64
  int64_t i;   // kInt, kTime
  std::string_view s;

  static Arg Uint(std::string_view k, uint64_t v) { return Arg{k, ArgType::kUint, v, 0, {}}; }
  static Arg Int(std::string_view k, int64_t v) { return Arg{k, ArgType::kInt, 0, v, {}}; }
  static Arg Bool(std::string_view k, bool v) { return Arg{k, ArgType::kBool, v ? 1u : 0u, 0, {}}; }
  static Arg Str(std::string_view k, std::string_view v) { return Arg{k, ArgType::kString, 0, 0, v}; }
  static Arg Time(std::string_view k, int64_t ns) { return Arg{k, ArgType::kTime, 0, ns, {}}; }
  static Arg Hex(std::string_view k, uint64_t v) { return Arg{k, ArgType::kHex64, v, 0, {}}; }
};

struct SliceEvent {
  std::string_view name;
  std::string_view category;  // its length known once, not measured by every reader
  int track;
  int64_t ts;
  int64_t dur;
  const Arg* args;
  size_t nargs;
  // A flow arrow (host launch -> GPU work) bound to this slice: it leaves from the slice that
  // carries |flow_out| and ends at the one that carries the same id as |flow_in|. The layout
  // decides both ends together, so an id given here always gets its other end (0: none).
  uint64_t flow_out = 0;
  uint64_t flow_in = 0;
  // A part (a ProxyStep state, a KernelStep half) of the event slice written just before its
  // parts, on the same track: at equal times it is inside that slice, never after it, which only
  // a format that closes slices itself (protobuf's BEGIN/END) needs told.
  bool part = false;
};

// One track, announced before its first slice. Things that can overlap are spread over lanes:
// the lanes of one family share |family| (the track's own name for lane 0, "<family> lane N"
// after it); a track that never needs a second lane is lane 0 of its own family.
struct TrackInfo {
  int track;  // unique across the file
  int pid;    // one of TraceProcess::ranks
  std::string_view name;
  std::string_view family;
  int lane;
  int sort_index;  // orders tracks within the process
  int family_track = 0;  // the track of the family's lane 0 (itself for lane 0): its identity
};

// One rank of the process: its own Perfetto process (pid), named by |label| ("rank 3").
struct TraceRank {
  int pid = 0;
  int world_rank = -1;
  int launcher_rank = -1;
  int cuda_device = -1;
  std::string label;
};

struct TraceProcess {
  int rank = 0;  // the header's rank: the first rank's pid
  int os_pid = 0;
  std::string host;
  uint64_t base_realtime_ns = 0;
  uint64_t base_monotonic_ns = 0;
  // Host ns of the spool's last record: GPU slices are held within [base, end + 1 s].
  uint64_t end_monotonic_ns = 0;
  std::vector<TraceRank> ranks;    // never empty once the layout has it; ranks[0] is the default
  std::vector<int> comm_rank;      // per SpoolIndex::comms entry: the index into ranks
};

// |process| as an encoder writes it: with one rank (its header's) when it names none, as when
// an encoder is driven without the layout, which always names them.
inline TraceProcess WithARank(TraceProcess process) {
  if (process.ranks.empty()) {
    TraceRank r;
    r.pid = process.rank;
    process.ranks.push_back(r);
  }
  return process;
}

struct FooterComm {
  uint64_t comm_hash = 0;
  std::string name;
  int rank = 0, nranks = 0, abi_version = 0;
  int pid = 0;  // the Perfetto process its events are on
  int64_t gpu_offset_ns = 0;  // its GPU clock's offset at the trace's base
  int gpu_clock = -1;         // index into TraceTotals::gpu_clocks
};

// One GPU clock domain's fit (gpu_clock_fit.h): host_monotonic = gpu + offset, offset piecewise
// linear over the run; error_ns bounds the placement error (-1: nothing bounds it).
struct FooterGpuSegment {
  int64_t from_ns = 0;  // host time it starts at, relative to the trace's base
  int64_t offset_ns = 0;
  double drift_ppm = 0;
  int64_t error_ns = -1;
};
struct FooterGpuClock {
  int cuda_device = -1;
  int pid = -1;  // the rank identity's pid when the device is unknown
  std::vector<uint64_t> comms;
  int64_t offset_ns = 0;  // at the trace's base
  double drift_ppm = 0;   // of the segment at the base
  int64_t error_ns = -1;
  uint64_t upper_bounds = 0, lower_bounds = 0, unlaunched = 0, outliers = 0, quantum_ns = 1;
  bool band_empty = false, prior = false;
  std::vector<FooterGpuSegment> segments;
};

// Everything the closing footer says; the same numbers feed the summary.
struct TraceTotals {
  int64_t end_ts = 0;
  int mask = 0;
  uint64_t events[kKindCount] = {};
  uint64_t drops[kKindCount] = {};
  uint64_t incomplete = 0, late_children = 0, waits = 0, io_errors = 0;
  uint64_t gpu_before_launch = 0;  // Coll/P2p placed on the GPU before their launch: no flow drawn
  uint64_t strings_unnamed = 0;
  // The first GPU clock's offset at the base, and the largest error bound of any (-1 unbounded).
  int64_t gpu_offset_ns = 0, gpu_offset_error_ns = 0;
  uint64_t gpu_offset_samples = 0;
  std::vector<FooterGpuClock> gpu_clocks;
  DrainCounters drain;
  std::vector<FooterComm> comms;
  uint64_t spool_blocks = 0, spool_bytes = 0, cut_offset = 0;
  bool clean_end = false;
  // A flight recorder dump: what its ring let go, and the records that lost their Start or
  // parent with it (expected there, not lost).
  bool flight = false;
  std::string flight_reason;
  int flight_signal = 0;
  uint64_t flight_evicted_blocks = 0, flight_evicted_bytes = 0, flight_refused_blocks = 0, flight_sticky_dropped = 0;
  uint64_t flight_cut_records = 0;
};

class TraceEncoder {
 public:
  virtual ~TraceEncoder() = default;
  virtual void Begin(const TraceProcess& process) = 0;
  virtual void Track(const TrackInfo& track) = 0;
  virtual void Slice(const SliceEvent& slice) = 0;
  // A process-level counter sample (on the first rank's process).
  virtual void Counter(std::string_view name, int64_t ts, const Arg* args, size_t nargs) = 0;
  // A process-scoped instant (on the first rank's process): a capture switch or a dump.
  virtual void Instant(std::string_view name, int64_t ts, const Arg* args, size_t nargs) = 0;
  // Closes the trace with its totals. Nothing may follow.
  virtual void End(const TraceTotals& totals) = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_TRACE_ENCODER_H_
