// Stage 2 of the export, the first pass over the spool: every block is read, CRC-checked and
// decoded (in worker threads), and what the merge needs before it can start is collected: the
// whole blocks per stream in order (with the merge key each begins at), the process identity,
// clock calibration, interned strings, communicators (slot -> comm over time), the last loss
// counters, and which blocks the GPU clock pass must read again. Event records themselves are not
// kept: the merge decodes the blocks again, one per stream at a time.
#ifndef KATRACE_PLUGIN_EXPORT_SPOOL_INDEX_H_
#define KATRACE_PLUGIN_EXPORT_SPOOL_INDEX_H_

#include <stdint.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "katrace/event_kinds.h"
#include "katrace/spool_format.h"
#include "plugin/export/gpu_clock_fit.h"
#include "plugin/export/host_clock.h"
#include "plugin/export/progress.h"
#include "plugin/export/spool_reader.h"

namespace katrace {
namespace exporting {

// The kinds whose Start is a kernel launch, the lower bound of its KernelCh's GPU stamps.
inline bool IsLaunchKind(uint8_t kind) {
  return kind == static_cast<uint8_t>(Kind::kColl) || kind == static_cast<uint8_t>(Kind::kP2p);
}

// One rank of this process as the trace shows it: a Perfetto process. |pid| is stable from run to
// run and unique among the ranks of one job (see AssignRankIdentities).
struct RankIdentity {
  int32_t pid = 0;
  int32_t world_rank = -1;     // its rank in the widest communicator it belongs to
  int32_t launcher_rank = -1;  // the process's rank from the launcher, -1 none
  int32_t cuda_device = -1;
  std::string label;           // "rank 3", as the process is named
};

// One communicator: what its Comm record said, when it ended, and where its GPU stamps go.
struct CommInstance {
  uint16_t slot = 0;
  uint64_t comm_hash = 0;
  uint64_t ticks = 0;  // of the Comm record
  int32_t rank = 0, nranks = 0, nnodes = 0, abi_version = 0;
  int32_t cuda_device = -1;  // -1 unknown
  uint32_t init_os_tid = 0;  // the thread that initialized it (its Comm record's stream)
  int32_t identity = -1;     // index into SpoolIndex::ranks (rank_identity.h), -1 before assignment
  std::string name;
  bool ended = false;
  uint64_t end_ticks = 0;  // CommEnd
  // Its GPU clock domain (gpu_placement.h): index into SpoolIndex::gpu_clocks, -1 before placement.
  int32_t gpu_clock = -1;
};

struct IndexedBlock {
  BlockRef ref;
  uint64_t first_key = 0;  // merge key of its first record (running max of ticks in its stream)
};

// One GPU clock domain: the communicators of one CUDA device (or, when the device is unknown, of
// one rank identity), which share one %globaltimer; and its fit (gpu_clock_fit.h).
struct GpuClockDomain {
  int32_t cuda_device = -1;  // -1 unknown
  int32_t identity = -1;     // the rank identity, when the device is unknown
  std::vector<int> comms;    // indices into SpoolIndex::comms
  ClockFit fit;
  uint64_t upper_bounds = 0, lower_bounds = 0;  // every observation, before bucketing
  uint64_t unlaunched = 0;  // KernelCh whose collective's launch was not found (no lower bound)
};

struct SpoolIndex {
  bool has_process = false;
  spool::ProcessBody process{};
  std::string host;
  std::string trace_path;

  std::vector<spool::ClockBody> clocks;  // every Clock record, file order
  HostClock clock;

  std::unordered_map<uint32_t, std::string> strings;
  std::vector<CommInstance> comms;  // sorted by (slot, ticks)
  // A flight recorder dump (a Flight record): the blocks before it were evicted, not lost.
  bool flight = false;
  spool::FlightBody flight_body{};
  std::string flight_reason;
  bool has_counters = false;
  spool::CountersBody counters{};  // element-wise max: the records are cumulative

  // Capture switches and dumps (Marker records), validated, in file order.
  std::vector<spool::MarkerBody> markers;

  std::vector<IndexedBlock> blocks;  // whole blocks, file order
  std::vector<uint32_t> clock_blocks;  // blocks with Coll/P2p/KernelCh/KernelStep starts, for the clock pass
  bool has_gpu_stamps = false;         // some block has a KernelCh or KernelStep start
  std::vector<GpuClockDomain> gpu_clocks;  // filled by PlaceGpuClocks
  uint64_t file_bytes = 0;
  uint64_t bytes = 0;      // file header plus whole blocks
  uint64_t raw_bytes = 0;  // decoded payload bytes of the whole blocks
  bool clean_end = false;  // an End record was read
  bool cut = false;        // the file goes on past the last whole block (or past End)
  uint64_t cut_offset = 0;
  std::string cut_reason;
  bool has_ticks = false;
  uint64_t first_tick = UINT64_MAX, last_tick = 0;
  uint64_t malformed_records = 0;  // records that could not be framed or were too short
  uint64_t unknown_records = 0;    // record types this exporter does not know (skipped)

  // The communicator of |slot| at |ticks|: the latest Comm record at or before it, else the
  // slot's first one; -1 when the slot never had one.
  int CommIndexAt(uint16_t slot, uint64_t ticks) const;

  std::unordered_map<uint16_t, std::vector<int>> comms_by_slot;  // indices into comms, by ticks

  // host_monotonic = gpu + GpuOffset(comm, host_ns): the fit of communicator |comm|'s GPU clock
  // at host time |host_ns| (the realtime prior for -1 or before placement). In gpu_placement.cc.
  int64_t GpuOffset(int comm, uint64_t host_ns) const;

  // The ranks this process holds, one Perfetto process each (rank_identity.h).
  std::vector<RankIdentity> ranks;
};

// The first pass. False (with |error|) only when nothing could be exported; a cut spool is
// indexed up to its cut.
bool ScanSpool(const SpoolFile& file, int threads, Progress* progress, SpoolIndex* index, std::string* error);

// Reads just enough of a spool (its first blocks) to return the Process record.
bool PeekSpoolProcess(const std::string& path, spool::ProcessBody* process, std::string* host,
                      std::string* trace_path, std::string* error);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_SPOOL_INDEX_H_
