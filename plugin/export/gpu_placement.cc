#include "plugin/export/gpu_placement.h"

#include <algorithm>
#include <mutex>

#include "katrace/event_kinds.h"
#include "plugin/export/parallel_for.h"

namespace katrace {
namespace exporting {
namespace {

constexpr __int128 kNone = static_cast<__int128>(INT64_MAX) + 1;

int64_t Saturate(__int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(v);
}

__int128 Observation(const HostClock& clock, uint64_t ticks, uint64_t gpu) {
  return static_cast<__int128>(clock.Ns(ticks)) - static_cast<__int128>(gpu);
}

// What one communicator's observations come to: the smallest, and the earliest in tick order
// (at equal ticks the smaller, so the result does not depend on which block is looked at first).
struct CommObservations {
  __int128 best = kNone;
  bool has_first = false;
  uint64_t first_ticks = 0;
  __int128 first = kNone;

  void Add(uint64_t ticks, __int128 value) { Merge(ticks, value, value); }
  void Merge(uint64_t ticks, __int128 first_value, __int128 best_value) {
    best = std::min(best, best_value);
    if (!has_first || ticks < first_ticks || (ticks == first_ticks && first_value < first)) {
      has_first = true;
      first_ticks = ticks;
      first = first_value;
    }
  }
  void Merge(const CommObservations& o) {
    if (o.has_first) Merge(o.first_ticks, o.first, o.best);
  }
};

}  // namespace

int64_t RealtimePrior(const SpoolIndex& index) {
  return static_cast<int64_t>(index.process.base_monotonic_ns - index.process.base_realtime_ns);
}

void PlaceGpuClocks(const SpoolFile& file, int threads, SpoolIndex* index) {
  std::vector<CommObservations> obs(index->comms.size());
  std::vector<uint32_t> rescan;
  for (const GpuObservation& o : index->observations) {
    int c0 = index->CommIndexAt(o.slot, o.min_ticks);
    if (c0 < 0) continue;
    if (!index->clock.identity() || index->CommIndexAt(o.slot, o.max_ticks) != c0) {
      if (rescan.empty() || rescan.back() != o.block) rescan.push_back(o.block);
      continue;
    }
    obs[static_cast<size_t>(c0)].Merge(o.min_ticks, Observation(index->clock, o.min_ticks, o.first_gpu),
                                       Observation(index->clock, o.best_ticks, o.best_gpu));
  }
  if (!rescan.empty()) {
    std::mutex mu;
    int workers = std::max(1, threads);
    std::vector<ByteBuffer> scratch(static_cast<size_t>(workers)), raw(static_cast<size_t>(workers));
    ParallelFor(
        rescan.size(), workers,
        [&](size_t i, int w) {
          std::vector<CommObservations> local(obs.size());
          std::string reason;
          ByteBuffer& r = raw[static_cast<size_t>(w)];
          if (!file.LoadBlock(index->blocks[rescan[i]].ref, false, &scratch[static_cast<size_t>(w)], &r, &reason)) return;
          RecordCursor cursor(r.data(), r.size());
          spool::RecordHeader h;
          const uint8_t* body;
          size_t n;
          while (cursor.Next(&h, &body, &n)) {
            if (h.type != spool::RecordType::kStart || n < sizeof(spool::StartBody)) continue;
            uint64_t gpu = 0;
            if (h.kind == static_cast<uint8_t>(Kind::kKernelCh)) {
              gpu = ReadBody<spool::KernelChFields>(body, n, sizeof(spool::StartBody)).gpu_start;
            } else if (h.kind == static_cast<uint8_t>(Kind::kKernelStep)) {
              gpu = ReadBody<spool::KernelStepFields>(body, n, sizeof(spool::StartBody)).gpu_ready;
            }
            if (gpu == 0) continue;
            uint64_t ticks = ReadBody<spool::StartBody>(body, n).ticks;
            int c = index->CommIndexAt(h.context, ticks);
            if (c >= 0) local[static_cast<size_t>(c)].Add(ticks, Observation(index->clock, ticks, gpu));
          }
          std::lock_guard<std::mutex> lock(mu);
          for (size_t c = 0; c < obs.size(); ++c) obs[c].Merge(local[c]);
        },
        [] {});
  }
  int64_t prior = RealtimePrior(*index);
  for (size_t c = 0; c < index->comms.size(); ++c) {
    CommInstance& inst = index->comms[c];
    inst.gpu_known = obs[c].has_first;
    inst.gpu_best_ns = inst.gpu_known ? Saturate(obs[c].best) : 0;
    inst.gpu_first_ns = inst.gpu_known ? Saturate(obs[c].first) : 0;
    inst.gpu_offset_ns = inst.gpu_known ? std::min(inst.gpu_first_ns, prior) : prior;
  }
}

}  // namespace exporting
}  // namespace katrace
