#include "plugin/export/gpu_placement.h"

#include <stdio.h>

#include <algorithm>
#include <deque>
#include <map>
#include <utility>

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
void AssignDomains(SpoolIndex* index) {
  std::map<std::pair<int, int64_t>, std::vector<int>> by_key;
  for (size_t c = 0; c < index->comms.size(); ++c) {
    const CommInstance& ci = index->comms[c];
    std::pair<int, int64_t> key = ci.cuda_device >= 0 ? std::make_pair(0, int64_t{ci.cuda_device})
                                  : ci.identity >= 0  ? std::make_pair(1, int64_t{ci.identity})
                                                      : std::make_pair(2, static_cast<int64_t>(c));
    by_key[key].push_back(static_cast<int>(c));
  }
  index->gpu_clocks.clear();
  for (auto& entry : by_key) {
    GpuClockDomain d;
    d.cuda_device = entry.first.first == 0 ? static_cast<int32_t>(entry.first.second) : -1;
    d.identity = index->comms[static_cast<size_t>(entry.second.front())].identity;
    d.comms = entry.second;
    for (int c : d.comms) index->comms[static_cast<size_t>(c)].gpu_clock = static_cast<int32_t>(index->gpu_clocks.size());
    index->gpu_clocks.push_back(std::move(d));
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

int64_t SpoolIndex::GpuOffset(int comm, uint64_t host_ns) const {
  if (comm >= 0 && static_cast<size_t>(comm) < comms.size()) {
    int32_t d = comms[static_cast<size_t>(comm)].gpu_clock;
    if (d >= 0 && static_cast<size_t>(d) < gpu_clocks.size()) {
      return gpu_clocks[static_cast<size_t>(d)].fit.OffsetAt(host_ns);
    }
  }
  return RealtimePrior(*this);
}

size_t PlaceGpuClocks(const SpoolFile& file, int threads, SpoolIndex* index, size_t max_launches) {
  AssignDomains(index);
  const int64_t prior = RealtimePrior(*index);
  // Without a single GPU stamp there is nothing to bound: the launches need not be read again
  // (a host-only run, or a mask without KernelCh and KernelStep, fits to the prior at once).
  if (!index->has_gpu_stamps) {
    for (GpuClockDomain& d : index->gpu_clocks) d.fit = FitGpuClock({}, {}, prior, 1);
    return 0;
  }
  const HostClock& clock = index->clock;
  const uint64_t first_ns = index->has_ticks ? clock.Ns(index->first_tick) : 0;
  const uint64_t last_ns = index->has_ticks ? clock.Ns(index->last_tick) : 0;
  std::vector<ClockBoundCollector> bounds(index->gpu_clocks.size(), ClockBoundCollector(first_ns, last_ns));

  const int workers = std::max(1, threads);
  const size_t chunk = std::max<size_t>(32, 8 * static_cast<size_t>(workers));
  std::vector<ByteBuffer> scratch(static_cast<size_t>(workers)), raw(static_cast<size_t>(workers));
  std::vector<std::vector<ClockRecord>> records(chunk);
  LaunchWindow launches(max_launches);
  std::vector<WaitingStamp> waiting, still_waiting;
  uint64_t newest_ns = 0;
  auto add_lower = [&](int d, uint64_t host_ns, uint64_t launch_ns, uint64_t gpu) {
    bounds[static_cast<size_t>(d)].AddLower(host_ns, launch_ns, gpu);
    ++index->gpu_clocks[static_cast<size_t>(d)].lower_bounds;
  };
  const std::vector<uint32_t>& blocks = index->clock_blocks;
  for (size_t begin = 0; begin < blocks.size(); begin += chunk) {
    const size_t n = std::min(chunk, blocks.size() - begin);
    ParallelFor(
        n, workers,
        [&](size_t i, int w) {
          records[i].clear();
          std::string reason;
          ByteBuffer& r = raw[static_cast<size_t>(w)];
          const BlockRef& ref = index->blocks[blocks[begin + i]].ref;
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
        ++index->gpu_clocks[static_cast<size_t>(s.domain)].unlaunched;
      } else {
        still_waiting.push_back(s);
      }
    }
    waiting.swap(still_waiting);
    // Stamps wait for their launch no longer than a window of launches is kept.
    if (waiting.size() > max_launches) {
      const size_t late = waiting.size() - max_launches;
      for (size_t i = 0; i < late; ++i) ++index->gpu_clocks[static_cast<size_t>(waiting[i].domain)].unlaunched;
      waiting.erase(waiting.begin(), waiting.begin() + static_cast<std::ptrdiff_t>(late));
    }
    for (size_t i = 0; i < n; ++i) {
      for (const ClockRecord& r : records[i]) {
        if (IsLaunchKind(r.kind)) continue;
        int c = index->CommIndexAt(r.slot, r.ticks);
        if (c < 0) continue;
        int d = index->comms[static_cast<size_t>(c)].gpu_clock;
        GpuClockDomain& domain = index->gpu_clocks[static_cast<size_t>(d)];
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
  for (const WaitingStamp& s : waiting) ++index->gpu_clocks[static_cast<size_t>(s.domain)].unlaunched;

  for (size_t d = 0; d < index->gpu_clocks.size(); ++d) {
    const ClockBoundCollector& b = bounds[d];
    index->gpu_clocks[d].fit = FitGpuClock(b.Uppers(), b.Lowers(), prior, b.QuantumNs());
  }
  return blocks.size();
}

std::string GpuClockName(const SpoolIndex& index, const GpuClockDomain& domain) {
  if (domain.cuda_device >= 0) return "cuda device " + std::to_string(domain.cuda_device);
  if (domain.identity >= 0 && static_cast<size_t>(domain.identity) < index.ranks.size()) {
    return index.ranks[static_cast<size_t>(domain.identity)].label;
  }
  char b[40];
  uint64_t hash = domain.comms.empty() ? 0 : index.comms[static_cast<size_t>(domain.comms.front())].comm_hash;
  snprintf(b, sizeof(b), "communicator %016llx", static_cast<unsigned long long>(hash));
  return b;
}

std::string GpuClockWarnings(const SpoolIndex& index) {
  std::string m;
  for (const GpuClockDomain& d : index.gpu_clocks) {
    const ClockFit& f = d.fit;
    if (!f.observed) continue;
    const std::string who = "; GPU clock of " + GpuClockName(index, d) + ": ";
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
