#include "plugin/export/gpu_placement.h"

#include <stdio.h>

#include <algorithm>
#include <deque>
#include <map>
#include <utility>

#include "common/hex16.h"
#include "katrace/event_kinds.h"
#include "plugin/export/id_map.h"
#include "plugin/export/parallel_for.h"

namespace katrace {
namespace exporting {
namespace {

// One Start the clock pass looks at.
struct ClockRecord {
  uint8_t kind;
  uint16_t slot;
  uint64_t id;     // a launch (Coll, P2p): its own id; a GPU stamp: its parent's
  uint64_t ticks;
  uint64_t gpu;    // the stamp (KernelCh: its start; KernelStep: its transfer start); 0 for launches
};

void ExtractClockRecords(const uint8_t* data, size_t size, std::vector<ClockRecord>* out) {
  RecordCursor cursor(data, size);
  spool::RecordHeader h;
  const uint8_t* body;
  size_t n;
  while (cursor.Next(&h, &body, &n)) {
    if (h.type != spool::RecordType::kStart || n < sizeof(spool::StartBody)) continue;
    spool::StartBody sb = ReadBody<spool::StartBody>(body, n);
    if (IsLaunchKind(h.kind)) {
      out->push_back(ClockRecord{h.kind, h.context, sb.id, sb.ticks, 0});
      continue;
    }
    uint64_t gpu = 0;
    if (h.kind == static_cast<uint8_t>(Kind::kKernelCh)) {
      gpu = ReadBody<spool::KernelChFields>(body, n, sizeof(spool::StartBody)).gpu_start;
    } else if (h.kind == static_cast<uint8_t>(Kind::kKernelStep)) {
      gpu = ReadBody<spool::KernelStepFields>(body, n, sizeof(spool::StartBody)).gpu_ready;
    }
    if (gpu != 0) out->push_back(ClockRecord{h.kind, h.context, sb.parent_id, sb.ticks, gpu});
  }
}

// The launches of the last kLaunchHorizonNs of host time, by id, and never more than
// |max_kept| of them: a run that launches faster than a collective per 4 µs would otherwise keep
// a horizon's worth (tens of millions), and the export's memory would grow with the run's rate.
// The oldest leave first either way; a stamp whose launch left early is counted unlaunched.
// A flat id map (id_map.h) to a sequence number into the queue: about 48 bytes a launch.
class LaunchWindow {
 public:
  explicit LaunchWindow(size_t max_kept) : max_kept_(std::max<size_t>(max_kept, 1)) {}
  void Add(uint64_t id, uint64_t host_ns) {
    if (id == 0 || by_id_.Find(id) != IdMap::kMissing) return;
    if (order_.size() == max_kept_) PopOldest();
    by_id_.Put(id, static_cast<uint32_t>(base_ + order_.size()));
    order_.emplace_back(host_ns, id);
  }
  bool Find(uint64_t id, uint64_t* host_ns) const {
    if (id == 0) return false;
    uint32_t seq = by_id_.Find(id);
    if (seq == IdMap::kMissing) return false;
    *host_ns = order_[static_cast<uint32_t>(seq - static_cast<uint32_t>(base_))].first;
    return true;
  }
  // Forgets launches before |host_ns| (they arrive in about host-time order).
  void Evict(uint64_t host_ns) {
    while (!order_.empty() && order_.front().first < host_ns) PopOldest();
  }

 private:
  void PopOldest() {
    by_id_.Erase(order_.front().second);
    order_.pop_front();
    ++base_;
  }

  size_t max_kept_;
  IdMap by_id_;
  std::deque<std::pair<uint64_t, uint64_t>> order_;  // (host ns, id), oldest first
  uint64_t base_ = 0;                                  // sequence number of order_.front()
};

// A KernelCh whose launch has not been seen yet.
struct WaitingStamp {
  int domain;
  uint64_t host_ns, parent, gpu;
};

// One domain per CUDA device, else per rank identity, else per communicator; in that order, so
// the numbering does not depend on the spool's block order.
void AssignDomains(const SpoolIndex& index, const RankIdentities& identities, GpuClocks* clocks) {
  std::map<std::pair<int, int64_t>, std::vector<int>> by_key;
  for (size_t c = 0; c < index.comms.size(); ++c) {
    const CommInstance& ci = index.comms[c];
    const int32_t identity = c < identities.of_comm.size() ? identities.of_comm[c] : -1;
    std::pair<int, int64_t> key = ci.cuda_device >= 0 ? std::make_pair(0, int64_t{ci.cuda_device})
                                  : identity >= 0     ? std::make_pair(1, int64_t{identity})
                                                      : std::make_pair(2, static_cast<int64_t>(c));
    by_key[key].push_back(static_cast<int>(c));
  }
  clocks->domains.clear();
  clocks->of_comm.assign(index.comms.size(), -1);
  for (auto& entry : by_key) {
    GpuClockDomain d;
    d.cuda_device = entry.first.first == 0 ? static_cast<int32_t>(entry.first.second) : -1;
    const size_t first = static_cast<size_t>(entry.second.front());
    d.identity = first < identities.of_comm.size() ? identities.of_comm[first] : -1;
    d.comms = entry.second;
    for (int c : d.comms) clocks->of_comm[static_cast<size_t>(c)] = static_cast<int32_t>(clocks->domains.size());
    clocks->domains.push_back(std::move(d));
  }
}

std::string Micros(int64_t ns) {
  char b[32];
  snprintf(b, sizeof(b), "%.1f µs", static_cast<double>(ns) / 1e3);
  return b;
}

}  // namespace

int64_t RealtimePrior(const SpoolIndex& index) {
  return static_cast<int64_t>(index.process.base_monotonic_ns - index.process.base_realtime_ns);
}

size_t PlaceGpuClocks(const SpoolReader& file, int threads, const SpoolIndex& index,
                      const RankIdentities& identities, GpuClocks* clocks, size_t max_launches) {
  AssignDomains(index, identities, clocks);
  const int64_t prior = RealtimePrior(index);
  clocks->prior = prior;
  // Without a single GPU stamp there is nothing to bound: the launches need not be read again
  // (a host-only run, or a mask without KernelCh and KernelStep, fits to the prior at once).
  if (!index.has_gpu_stamps) {
    for (GpuClockDomain& d : clocks->domains) d.fit = FitGpuClock({}, {}, prior, 1);
    return 0;
  }
  const TickConverter& clock = index.clock;
  const uint64_t first_ns = index.has_ticks ? clock.Ns(index.first_tick) : 0;
  const uint64_t last_ns = index.has_ticks ? clock.Ns(index.last_tick) : 0;
  std::vector<ClockBoundCollector> bounds(clocks->domains.size(), ClockBoundCollector(first_ns, last_ns));

  const int workers = std::max(1, threads);
  const size_t chunk = std::max<size_t>(32, 8 * static_cast<size_t>(workers));
  std::vector<ByteBuffer> scratch(static_cast<size_t>(workers)), raw(static_cast<size_t>(workers));
  std::vector<std::vector<ClockRecord>> records(chunk);
  LaunchWindow launches(max_launches);
  std::vector<WaitingStamp> waiting, still_waiting;
  uint64_t newest_ns = 0;
  auto add_lower = [&](int d, uint64_t host_ns, uint64_t launch_ns, uint64_t gpu) {
    bounds[static_cast<size_t>(d)].AddLower(host_ns, launch_ns, gpu);
    ++clocks->domains[static_cast<size_t>(d)].lower_bounds;
  };
  const std::vector<uint32_t>& blocks = index.clock_blocks;
  for (size_t begin = 0; begin < blocks.size(); begin += chunk) {
    const size_t n = std::min(chunk, blocks.size() - begin);
    ParallelFor(
        n, workers,
        [&](size_t i, int w) {
          records[i].clear();
          std::string reason;
          ByteBuffer& r = raw[static_cast<size_t>(w)];
          const BlockRef& ref = index.blocks[blocks[begin + i]].ref;
          if (file.LoadBlock(ref, false, &scratch[static_cast<size_t>(w)], &r, &reason)) {
            ExtractClockRecords(r.data(), r.size(), &records[i]);
          }
        },
        [] {});
    // The chunk's launches first: a KernelCh may reach the file before its collective's Start.
    for (size_t i = 0; i < n; ++i) {
      for (const ClockRecord& r : records[i]) {
        if (!IsLaunchKind(r.kind)) continue;
        uint64_t ns = clock.Ns(r.ticks);
        launches.Add(r.id, ns);
        newest_ns = std::max(newest_ns, ns);
      }
    }
    still_waiting.clear();
    for (const WaitingStamp& s : waiting) {
      uint64_t launch_ns;
      if (launches.Find(s.parent, &launch_ns)) {
        add_lower(s.domain, s.host_ns, launch_ns, s.gpu);
      } else if (s.host_ns + kLaunchHorizonNs < newest_ns) {
        ++clocks->domains[static_cast<size_t>(s.domain)].unlaunched;
      } else {
        still_waiting.push_back(s);
      }
    }
    waiting.swap(still_waiting);
    // Stamps wait for their launch no longer than a window of launches is kept.
    if (waiting.size() > max_launches) {
      const size_t late = waiting.size() - max_launches;
      for (size_t i = 0; i < late; ++i) ++clocks->domains[static_cast<size_t>(waiting[i].domain)].unlaunched;
      waiting.erase(waiting.begin(), waiting.begin() + static_cast<std::ptrdiff_t>(late));
    }
    for (size_t i = 0; i < n; ++i) {
      for (const ClockRecord& r : records[i]) {
        if (IsLaunchKind(r.kind)) continue;
        int c = index.CommIndexAt(r.slot, r.ticks);
        if (c < 0) continue;
        int d = clocks->of_comm[static_cast<size_t>(c)];
        GpuClockDomain& domain = clocks->domains[static_cast<size_t>(d)];
        uint64_t host_ns = clock.Ns(r.ticks);
        newest_ns = std::max(newest_ns, host_ns);
        bounds[static_cast<size_t>(d)].AddUpper(host_ns, r.gpu);
        ++domain.upper_bounds;
        if (r.kind != static_cast<uint8_t>(Kind::kKernelCh)) continue;
        uint64_t launch_ns;
        if (r.id == 0) {
          ++domain.unlaunched;
        } else if (launches.Find(r.id, &launch_ns)) {
          add_lower(d, host_ns, launch_ns, r.gpu);
        } else {
          waiting.push_back(WaitingStamp{d, host_ns, r.id, r.gpu});
        }
      }
    }
    if (newest_ns > kLaunchHorizonNs) launches.Evict(newest_ns - kLaunchHorizonNs);
  }
  for (const WaitingStamp& s : waiting) ++clocks->domains[static_cast<size_t>(s.domain)].unlaunched;

  for (size_t d = 0; d < clocks->domains.size(); ++d) {
    const ClockBoundCollector& b = bounds[d];
    clocks->domains[d].fit = FitGpuClock(b.Uppers(), b.Lowers(), prior, b.QuantumNs());
  }
  return blocks.size();
}

GpuPlacement::GpuPlacement(const GpuClocks* clocks, uint64_t run_start_ns, uint64_t run_end_ns)
    : clocks_(clocks), lo_(run_start_ns) {
  const uint64_t end = std::max(run_end_ns, run_start_ns);
  hi_ = end > UINT64_MAX - kSlackNs ? UINT64_MAX : end + kSlackNs;
}

int64_t GpuPlacement::Offset(const AssembledEvent& e) const {
  if (clocks_ == nullptr) return 0;
  // The fit of its communicator's GPU clock domain at its launch; the realtime prior for an unknown
  // communicator or one the fit did not place.
  const int comm = e.comm_index;
  if (comm >= 0 && static_cast<size_t>(comm) < clocks_->of_comm.size()) {
    const int32_t d = clocks_->of_comm[static_cast<size_t>(comm)];
    if (d >= 0 && static_cast<size_t>(d) < clocks_->domains.size()) {
      return clocks_->domains[static_cast<size_t>(d)].fit.OffsetAt(e.launch_ns);
    }
  }
  return clocks_->prior;
}

uint64_t GpuPlacement::ToHost(uint64_t gpu_ns, int64_t offset, bool* clamped) const {
  // Exact: a garbage offset or stamp must not wrap around into the run.
  __int128 t = static_cast<__int128>(gpu_ns) + offset;
  if (t < static_cast<__int128>(lo_)) {
    *clamped = true;
    return lo_;
  }
  if (t > static_cast<__int128>(hi_)) {
    *clamped = true;
    return hi_;
  }
  return static_cast<uint64_t>(t);
}

GpuSpan GpuPlacement::PlaceAt(const AssembledEvent& e, int64_t offset) const {
  GpuSpan s;
  const bool stop_seen = (e.flags & kEvGpuStopSeen) != 0;
  switch (e.kind) {
    case Kind::kColl:
    case Kind::kP2p: {
      if ((e.flags & kEvHasGpuExtent) == 0) break;
      bool start_out = false, stop_out = false;
      s.stop_before_start = e.gpu_stop < e.gpu_start;
      s.start = ToHost(e.gpu_start, offset, &start_out);
      s.end = s.stop_before_start ? s.start : ToHost(e.gpu_stop, offset, &stop_out);
      s.clamped = start_out || stop_out;
      s.host_timed = start_out && (stop_out || s.stop_before_start);
      break;
    }
    case Kind::kKernelCh: {
      if (e.gpu_start == 0 || !stop_seen) {
        s.host_timed = true;  // without both stamps the callbacks' host times are the best we have
        break;
      }
      // Stop before start is a fact worth showing, not a reason to fall back on host times.
      s.stop_before_start = e.gpu_stop < e.gpu_start;
      bool start_out = false, stop_out = false;
      s.start = ToHost(e.gpu_start, offset, &start_out);
      s.end = s.stop_before_start ? s.start : ToHost(e.gpu_stop, offset, &stop_out);
      s.clamped = start_out || stop_out;
      // Both ends outside the run: the stamps say nothing of where in it the work ran. Held at
      // the edge with zero length, every such slice would need a lane (a track) of its own.
      s.host_timed = start_out && (stop_out || s.stop_before_start);
      break;
    }
    case Kind::kKernelStep: {
      // A wait stamp after the transfer start is garbage: the step then begins at the transfer.
      s.has_wait = e.gpu_start != 0 && e.gpu_ready >= e.gpu_start;
      const uint64_t begin_gpu = s.has_wait ? e.gpu_start : e.gpu_ready;
      s.stop_before_start = stop_seen && e.gpu_stop < e.gpu_ready;
      bool start_out = false, ready_out = false, stop_out = false;
      s.start = ToHost(begin_gpu, offset, &start_out);
      if (s.stop_before_start) {
        // As a KernelCh: zero length at its GPU start. Drawn up to the transfer start it would
        // claim a wait the stamps do not bound, and could leave its collective's GPU extent,
        // which counts it at that start alone (event_assembler.cc). Stamps that contradict
        // each other divide nothing: no halves.
        s.ready = s.end = s.start;
        s.clamped = start_out;
        s.host_timed = start_out;
        s.has_wait = false;
        break;
      }
      const uint64_t stop_gpu = stop_seen ? e.gpu_stop : e.gpu_ready;
      s.ready = ToHost(e.gpu_ready, offset, &ready_out);
      s.end = ToHost(stop_gpu, offset, &stop_out);
      s.clamped = start_out || ready_out || stop_out;
      // As a KernelCh: outside the run at both ends, the step keeps its host times, undivided.
      s.host_timed = start_out && stop_out;
      if (s.host_timed) {
        s.has_wait = false;
        break;
      }
      // A stop that never came (abandoned, or the run ended first) bounds no transfer.
      s.has_transfer = stop_seen && (e.gpu_stop > e.gpu_ready || (e.flags & kEvAbandoned) == 0);
      break;
    }
    default: break;
  }
  return s;
}

std::string GpuClockName(const GpuClockDomain& domain, const SpoolIndex& index, const RankIdentities& identities) {
  if (domain.cuda_device >= 0) return "cuda device " + std::to_string(domain.cuda_device);
  if (domain.identity >= 0 && static_cast<size_t>(domain.identity) < identities.ranks.size()) {
    return identities.ranks[static_cast<size_t>(domain.identity)].label;
  }
  const uint64_t hash = domain.comms.empty() ? 0 : index.comms[static_cast<size_t>(domain.comms.front())].comm_hash;
  return "communicator " + Hex16(hash);
}

std::string GpuClockWarnings(const GpuClocks& clocks, const SpoolIndex& index, const RankIdentities& identities) {
  std::string m;
  for (const GpuClockDomain& d : clocks.domains) {
    const ClockFit& f = d.fit;
    if (!f.observed) continue;
    const std::string who = "; GPU clock of " + GpuClockName(d, index, identities) + ": ";
    if (f.band_empty) {
      m += who + "its bounds contradict each other (stamp noise beyond the launch-to-seen band); the error bound " +
           Micros(f.error_ns) + " counts the contradiction, it is no guarantee";
    } else if (f.error_ns < 0) {
      m += who + "no KernelCh with a recorded launch, so nothing bounds the placement from below (error unknown)";
    } else if (f.error_ns > kClockLargeErrorNs) {
      m += who + "error bound " + Micros(f.error_ns) + " (above 1 ms)";
    }
    if (f.outliers != 0) m += who + std::to_string(f.outliers) + " bounds far off the others ignored (garbage stamps)";
  }
  return m;
}

}  // namespace exporting
}  // namespace katrace
