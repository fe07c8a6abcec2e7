#include "plugin/export/spool_index.h"

#include <algorithm>
#include <map>

#include "katrace/event_kinds.h"
#include "plugin/export/parallel_for.h"

namespace katrace {
namespace exporting {
namespace {

using spool::RecordType;

// A record the index keeps (not an event): its header and a copy of its body.
struct MetaRecord {
  spool::RecordHeader header;
  std::string body;
};

// What a worker learned from one block.
struct BlockScan {
  bool ok = false;
  std::string reason;
  bool has_ticks = false;
  uint64_t first_tick = 0, min_tick = UINT64_MAX, max_tick = 0;
  uint64_t malformed = 0, unknown = 0;
  uint64_t unread_bytes = 0;  // after a record that breaks the block's chain of records
  bool has_end = false;
  std::vector<MetaRecord> meta;
  bool clock_records = false;  // Starts the GPU clock pass reads (gpu_placement.cc)
  bool gpu_stamps = false;     // of them, KernelCh or KernelStep starts
};

// The Starts the GPU clock fit needs: GPU stamps (KernelCh, KernelStep) and the launches they
// are bounded by (Coll, P2p).
bool IsClockRecord(uint8_t kind) {
  return IsLaunchKind(kind) || kind == static_cast<uint8_t>(Kind::kKernelCh) ||
         kind == static_cast<uint8_t>(Kind::kKernelStep);
}

void ScanRecords(const uint8_t* data, size_t size, BlockScan* out) {
  RecordCursor cursor(data, size);
  spool::RecordHeader h;
  const uint8_t* body;
  size_t n;
  while (cursor.Next(&h, &body, &n)) {
    uint64_t ticks = 0;  // set by RecordTicks for every record that has them
    if (RecordTicks(h, body, n, &ticks)) {
      if (!out->has_ticks) out->first_tick = ticks;
      out->has_ticks = true;
      out->min_tick = std::min(out->min_tick, ticks);
      out->max_tick = std::max(out->max_tick, ticks);
    }
    switch (h.type) {
      case RecordType::kStart: {
        if (n < sizeof(spool::StartBody)) break;  // counted once, by the assembly that skips it
        if (IsClockRecord(h.kind)) {
          out->clock_records = true;
          out->gpu_stamps = out->gpu_stamps || !IsLaunchKind(h.kind);
        }
        break;
      }
      case RecordType::kState:
      case RecordType::kStop:
        break;
      case RecordType::kString:
      case RecordType::kComm:
      case RecordType::kCommEnd:
      case RecordType::kClock:
      case RecordType::kProcess:
      case RecordType::kCounters:
      case RecordType::kMarker:
      case RecordType::kFlight:
        out->meta.push_back(MetaRecord{h, std::string(reinterpret_cast<const char*>(body), n)});
        break;
      case RecordType::kEnd:
        out->has_end = true;
        break;
      default:
        ++out->unknown;
        break;
    }
  }
  if (cursor.malformed()) {
    ++out->malformed;
    out->unread_bytes += cursor.unread_bytes();
  }
}

bool ParseProcess(const std::string& b, spool::ProcessBody* p, std::string* host, std::string* trace_path) {
  if (b.size() < sizeof(spool::ProcessBody)) return false;
  memcpy(p, b.data(), sizeof(*p));
  size_t rest = b.size() - sizeof(*p);
  if (p->host_length > rest || p->trace_path_length > rest - p->host_length) return false;
  *host = b.substr(sizeof(*p), p->host_length);
  *trace_path = b.substr(sizeof(*p) + p->host_length, p->trace_path_length);
  return true;
}

struct CommEndMark {
  uint16_t slot;
  uint64_t ticks;
};

// Folds one kept record into the index (file order). False when its body is malformed.
bool ApplyMeta(const MetaRecord& m, uint32_t os_tid, SpoolIndex* index, std::vector<CommEndMark>* ends) {
  const std::string& b = m.body;
  switch (m.header.type) {
    case RecordType::kProcess: {
      if (index->has_process) return true;  // the first one is the process; a repeat adds nothing
      if (!ParseProcess(b, &index->process, &index->host, &index->trace_path)) return false;
      index->has_process = true;
      return true;
    }
    case RecordType::kClock: {
      if (b.size() < sizeof(spool::ClockBody)) return false;
      spool::ClockBody c;
      memcpy(&c, b.data(), sizeof(c));
      index->clocks.push_back(c);
      return true;
    }
    case RecordType::kString: {
      if (b.size() < sizeof(spool::StringBody)) return false;
      spool::StringBody s;
      memcpy(&s, b.data(), sizeof(s));
      if (s.length > b.size() - sizeof(s)) return false;
      index->strings.emplace(s.id, b.substr(sizeof(s), s.length));
      return true;
    }
    case RecordType::kComm: {
      if (b.size() < sizeof(spool::CommBody)) return false;
      spool::CommBody c;
      memcpy(&c, b.data(), sizeof(c));
      if (c.name_length > b.size() - sizeof(c)) return false;
      CommInstance inst;
      inst.slot = m.header.context;
      inst.comm_hash = c.comm_hash;
      inst.ticks = c.ticks;
      inst.rank = c.rank;
      inst.nranks = c.nranks;
      inst.nnodes = c.nnodes;
      inst.abi_version = c.abi_version;
      inst.cuda_device = c.cuda_device;
      inst.init_os_tid = os_tid;
      inst.name = b.substr(sizeof(c), c.name_length);
      index->comms.push_back(std::move(inst));
      return true;
    }
    case RecordType::kCommEnd: {
      if (b.size() < sizeof(spool::CommEndBody)) return false;
      spool::CommEndBody e;
      memcpy(&e, b.data(), sizeof(e));
      ends->push_back(CommEndMark{m.header.context, e.ticks});
      return true;
    }
    case RecordType::kMarker: {
      if (b.size() < sizeof(spool::MarkerBody)) return false;
      spool::MarkerBody mk;
      memcpy(&mk, b.data(), sizeof(mk));
      if (!spool::IsKnownMarker(mk.what, mk.reason)) return false;
      index->markers.push_back(mk);
      return true;
    }
    case RecordType::kFlight: {
      if (b.size() < sizeof(spool::FlightBody)) return false;
      spool::FlightBody f;
      memcpy(&f, b.data(), sizeof(f));
      if (f.reason_length > b.size() - sizeof(f)) return false;
      index->flight = true;
      index->flight_body = f;
      index->flight_reason = b.substr(sizeof(f), f.reason_length);
      return true;
    }
    case RecordType::kCounters: {
      spool::CountersBody c = ReadBody<spool::CountersBody>(reinterpret_cast<const uint8_t*>(b.data()), b.size());
      if (b.size() < sizeof(c)) return false;
      spool::CountersBody& t = index->counters;
      for (int k = 0; k < spool::kCounterKinds; ++k) t.dropped[k] = std::max(t.dropped[k], c.dropped[k]);
      t.waits = std::max(t.waits, c.waits);
      for (const DrainCounterField& f : kDrainCounterFields) t.drain.*f.member = std::max(t.drain.*f.member, c.drain.*f.member);
      t.strings_unnamed = std::max(t.strings_unnamed, c.strings_unnamed);
      t.io_errors = std::max(t.io_errors, c.io_errors);
      index->has_counters = true;
      return true;
    }
    default:
      return true;
  }
}

void IndexComms(SpoolIndex* index, const std::vector<CommEndMark>& ends) {
  std::stable_sort(index->comms.begin(), index->comms.end(), [](const CommInstance& a, const CommInstance& b) {
    return a.slot != b.slot ? a.slot < b.slot : a.ticks < b.ticks;
  });
  for (size_t i = 0; i < index->comms.size(); ++i) {
    index->comms_by_slot[index->comms[i].slot].push_back(static_cast<int>(i));
  }
  for (const CommEndMark& e : ends) {
    int c = index->CommIndexAt(e.slot, e.ticks);
    if (c < 0) continue;
    CommInstance& inst = index->comms[static_cast<size_t>(c)];
    if (!inst.ended || e.ticks < inst.end_ticks) inst.end_ticks = e.ticks;
    inst.ended = true;
  }
}

}  // namespace

int SpoolIndex::CommIndexAt(uint16_t slot, uint64_t ticks) const {
  auto it = comms_by_slot.find(slot);
  if (it == comms_by_slot.end()) return -1;
  const std::vector<int>& v = it->second;
  // The latest Comm record at or before |ticks|; an event before every Comm record of its slot
  // (clock noise) belongs to the first.
  auto pos = std::upper_bound(v.begin(), v.end(), ticks,
                              [this](uint64_t t, int c) { return t < comms[static_cast<size_t>(c)].ticks; });
  return pos == v.begin() ? v.front() : *(pos - 1);
}

bool ScanSpool(const SpoolReader& file, int threads, ExportProgress* progress, SpoolIndex* index, std::string* error) {
  index->file_bytes = file.size();
  // Block headers chain by their lengths, so the walk is sequential and cheap (40 bytes each);
  // it stops at the first header that is not whole or not in bounds.
  std::vector<BlockRef> cand;
  uint64_t offset = file.first_block_offset();
  std::string walk_reason;
  bool walk_cut = false;
  uint64_t walk_cut_offset = 0;
  uint64_t total_bytes = 0;
  for (;;) {
    BlockRef ref;
    BlockStatus st = file.ReadBlockHeader(offset, &ref, &walk_reason);
    if (st == BlockStatus::kEnd) break;
    if (st != BlockStatus::kOk) {
      walk_cut = true;
      walk_cut_offset = offset;
      break;
    }
    cand.push_back(ref);
    total_bytes += ref.end() - ref.offset;
    offset = ref.end();
  }
  if (offset < file.first_block_offset()) offset = file.first_block_offset();
  progress->Phase("scanning", cand.size(), total_bytes);

  // CRC, decode and record scan of every block, in parallel; results are small.
  std::vector<BlockScan> scans(cand.size());
  int workers = std::max(1, threads);
  std::vector<ByteBuffer> scratch(static_cast<size_t>(workers)), raw(static_cast<size_t>(workers));
  ParallelFor(
      cand.size(), workers,
      [&](size_t i, int w) {
        BlockScan& s = scans[i];
        s.ok = file.LoadBlock(cand[i], true, &scratch[static_cast<size_t>(w)], &raw[static_cast<size_t>(w)], &s.reason);
        if (s.ok) ScanRecords(raw[static_cast<size_t>(w)].data(), raw[static_cast<size_t>(w)].size(), &s);
        progress->Add(1, cand[i].end() - cand[i].offset);
      },
      [&] { progress->Poll(); });

  // In file order: every whole block up to the first that is not (or up to End).
  std::vector<CommEndMark> ends;
  std::map<uint32_t, uint64_t> stream_key;
  index->bytes = file.first_block_offset();
  for (size_t taken = 0; taken < cand.size(); ++taken) {
    const BlockRef& ref = cand[taken];
    BlockScan& s = scans[taken];
    if (ref.sequence != taken) {
      index->cut = true;
      index->cut_offset = ref.offset;
      index->cut_reason = "block sequence " + std::to_string(ref.sequence) + " where " + std::to_string(taken) +
                          " was expected";
      break;
    }
    if (!s.ok) {
      // Its header is whole and chains to the next block: only this block's records are lost
      // (a flipped bit on the disk), not every block after it.
      if (index->damaged_blocks++ == 0) {
        index->first_damage_offset = ref.offset;
        index->first_damage_reason = s.reason;
      }
      continue;
    }
    IndexedBlock b;
    b.ref = ref;
    uint64_t& carry = stream_key[ref.stream];
    b.first_key = s.has_ticks ? std::max(carry, s.first_tick) : carry;
    if (s.has_ticks) {
      carry = std::max(carry, s.max_tick);
      index->has_ticks = true;
      index->first_tick = std::min(index->first_tick, s.min_tick);
      index->last_tick = std::max(index->last_tick, s.max_tick);
    }
    for (const MetaRecord& m : s.meta) {
      if (!ApplyMeta(m, ref.os_tid, index, &ends)) ++index->malformed_records;
    }
    if (s.clock_records) index->clock_blocks.push_back(static_cast<uint32_t>(index->blocks.size()));
    index->has_gpu_stamps = index->has_gpu_stamps || s.gpu_stamps;
    index->malformed_records += s.malformed;
    index->unread_record_bytes += s.unread_bytes;
    index->unknown_records += s.unknown;
    index->bytes += ref.end() - ref.offset;
    index->raw_bytes += ref.raw_bytes;
    index->blocks.push_back(b);
    if (s.has_end) {
      index->clean_end = true;
      break;
    }
  }
  if (!index->cut) {
    uint64_t end = index->blocks.empty() ? file.first_block_offset() : index->blocks.back().ref.end();
    if (index->clean_end && end < file.size()) {
      index->cut = true;
      index->cut_offset = end;
      index->cut_reason = "data after the End record ignored";
    } else if (!index->clean_end) {
      index->cut = true;
      index->cut_offset = walk_cut ? walk_cut_offset : end;
      index->cut_reason = walk_cut ? walk_reason : "no End record (the capture never closed the spool)";
    }
  }
  IndexComms(index, ends);
  index->clock.Init(index->clocks);
  if (!index->has_ticks) index->first_tick = 0;
  (void)error;
  return true;
}

bool PeekSpoolProcess(const std::string& path, spool::ProcessBody* process, std::string* host,
                      std::string* trace_path, std::string* error) {
  SpoolReader file;
  if (!file.Open(path, error)) return false;
  uint64_t offset = file.first_block_offset();
  ByteBuffer scratch, raw;
  // The Process record is the first record of the spool; a few blocks are looked at in case a
  // writer flushed another stream first.
  for (int i = 0; i < 16; ++i) {
    BlockRef ref;
    std::string reason;
    if (file.ReadBlockHeader(offset, &ref, &reason) != BlockStatus::kOk) break;
    if (!file.LoadBlock(ref, true, &scratch, &raw, &reason)) break;
    RecordCursor cursor(raw.data(), raw.size());
    spool::RecordHeader h;
    const uint8_t* body;
    size_t n;
    while (cursor.Next(&h, &body, &n)) {
      if (h.type != RecordType::kProcess) continue;
      if (ParseProcess(std::string(reinterpret_cast<const char*>(body), n), process, host, trace_path)) return true;
    }
    offset = ref.end();
  }
  *error = "'" + path + "' has no Process record in its first blocks";
  return false;
}

}  // namespace exporting
}  // namespace katrace
