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
#include "plugin/export/export_progress.h"
#include "plugin/export/spool_reader.h"
#include "plugin/export/tick_converter.h"

namespace katrace {
namespace exporting {

// The kinds whose Start is a kernel launch, the lower bound of its KernelCh's GPU stamps.
inline bool IsLaunchKind(uint8_t kind) {
  return kind == static_cast<uint8_t>(Kind::kColl) || kind == static_cast<uint8_t>(Kind::kP2p);
}

// One communicator: what its Comm record said and when it ended. Which rank it belongs to and
// which GPU clock it stamps with are later stages' results (rank_identity.h, gpu_placement.h).
struct CommInstance {
  uint16_t slot = 0;
  uint64_t comm_hash = 0;
  uint64_t ticks = 0;  // of the Comm record
  int32_t rank = 0, nranks = 0, nnodes = 0, abi_version = 0;
  int32_t cuda_device = -1;  // -1 unknown
  uint32_t init_os_tid = 0;  // the thread that initialized it (its Comm record's stream)
  std::string name;
  bool ended = false;
  uint64_t end_ticks = 0;  // CommEnd
};

struct IndexedBlock {
  BlockRef ref;
  uint64_t first_key = 0;  // merge key of its first record (running max of ticks in its stream)
};

struct SpoolIndex {
  bool has_process = false;
  spool::ProcessBody process{};
  std::string host;
  std::string trace_path;

  std::vector<spool::ClockBody> clocks;  // every Clock record, file order
  TickConverter clock;

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
  uint64_t file_bytes = 0;
  uint64_t bytes = 0;      // file header plus whole blocks
  uint64_t raw_bytes = 0;  // decoded payload bytes of the whole blocks
  bool clean_end = false;  // an End record was read
  bool cut = false;        // the file goes on past the last whole block (or past End)
  uint64_t cut_offset = 0;
  std::string cut_reason;
  // Blocks whose header chained on but whose payload is damaged (a bad CRC, a payload that does
  // not decode): skipped, their records lost, the blocks after them read on.
  uint64_t damaged_blocks = 0;
  uint64_t first_damage_offset = 0;
  std::string first_damage_reason;
  bool has_ticks = false;
  uint64_t first_tick = UINT64_MAX, last_tick = 0;
  uint64_t malformed_records = 0;  // records that could not be framed or were too short
  uint64_t unread_record_bytes = 0;  // what followed an unframeable record in its block, unread
  uint64_t unknown_records = 0;    // record types this exporter does not know (skipped)

  // The communicator of |slot| at |ticks|: the latest Comm record at or before it, else the
  // slot's first one; -1 when the slot never had one.
  int CommIndexAt(uint16_t slot, uint64_t ticks) const;

  std::unordered_map<uint16_t, std::vector<int>> comms_by_slot;  // indices into comms, by ticks
};

// The first pass. False (with |error|) only when nothing could be exported; a cut spool is
// indexed up to its cut.
bool ScanSpool(const SpoolReader& file, int threads, ExportProgress* progress, SpoolIndex* index, std::string* error);

// Reads just enough of a spool (its first blocks) to return the Process record.
bool PeekSpoolProcess(const std::string& path, spool::ProcessBody* process, std::string* host,
                      std::string* trace_path, std::string* error);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_SPOOL_INDEX_H_
