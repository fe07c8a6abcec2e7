// GPU placement, the one stage that knows GPU clocks: first the fit of each GPU clock with the
// whole run in view (PlaceGpuClocks), then each event's stamps put on the host clock and held
// within the run (GpuPlacement), which the layout draws as it is handed them.
//
// The fit: one clock domain per GPU (the communicators
// of one CUDA device share its %globaltimer; a communicator whose device is unknown goes with
// its rank identity's), fitted from every observation (gpu_clock_fit.h).
//
// The bounds come from a pass that reads again the blocks holding Coll/P2p, KernelCh and
// KernelStep Starts (ScanSpool lists them), a chunk of blocks at a time decoded in parallel and
// folded in file order: every GPU stamp gives an upper bound (its Start's host time − the
// stamp), and a KernelCh whose collective's Start was seen gives a lower bound (the launch's host
// time − its start stamp). Launches are kept for kLaunchHorizonNs of host time and a KernelCh
// waits as long for its launch (the two are written by different threads, so either may reach
// the file first). At most kMaxLaunchesKept launches (and as many waiting stamps) are held
// however fast the run launched, so memory is bounded by that and the fit's buckets, never by
// the run. A spool without any GPU stamp is not read again.
#ifndef KATRACE_PLUGIN_EXPORT_GPU_PLACEMENT_H_
#define KATRACE_PLUGIN_EXPORT_GPU_PLACEMENT_H_

#include <stdint.h>

#include <string>

#include <vector>

#include "plugin/export/assembled_event.h"
#include "plugin/export/gpu_clock_fit.h"
#include "plugin/export/rank_identity.h"
#include "plugin/export/spool_index.h"

namespace katrace {
namespace exporting {

constexpr uint64_t kLaunchHorizonNs = 2000000000ull;
// About 24 MB of launches: 2 s of a process launching a collective every 4 µs, or 0.6 s of
// eight GPUs doing so at once; a KernelCh reaches the file a few 100 ms flushes after its launch.
constexpr size_t kMaxLaunchesKept = size_t{1} << 19;

// One GPU clock domain: the communicators of one CUDA device (or, when the device is unknown, of
// one rank identity), which share one %globaltimer; and its fit (gpu_clock_fit.h).
struct GpuClockDomain {
  int32_t cuda_device = -1;  // -1 unknown
  int32_t identity = -1;     // the rank identity (RankIdentities::ranks), when the device is unknown
  std::vector<int> comms;    // indices into SpoolIndex::comms
  ClockFit fit;
  uint64_t upper_bounds = 0, lower_bounds = 0;  // every observation, before bucketing
  uint64_t unlaunched = 0;  // KernelCh whose collective's launch was not found (no lower bound)
};

// What the fit hands on: the domains, and which one each communicator's stamps are on.
struct GpuClocks {
  std::vector<GpuClockDomain> domains;
  std::vector<int32_t> of_comm;  // per SpoolIndex::comms entry: an index into domains
  int64_t prior = 0;             // the realtime prior, for work of an unknown communicator
};

// The realtime prior of the process (two's-complement difference, never overflowing).
int64_t RealtimePrior(const SpoolIndex& index);

// The domains of |index|'s communicators (by device, else by their rank identity) and each one's
// fit. Returns how many blocks it read again (0 when the spool holds no GPU stamp).
size_t PlaceGpuClocks(const SpoolReader& file, int threads, const SpoolIndex& index,
                      const RankIdentities& identities, GpuClocks* clocks, size_t max_launches = kMaxLaunchesKept);

// "; GPU clock of ... : ..." for every domain whose band was empty or whose error bound is
// above kClockLargeErrorNs or unknown; "" when every fit is sound.
std::string GpuClockWarnings(const GpuClocks& clocks, const SpoolIndex& index, const RankIdentities& identities);

// The domain's name in messages: "cuda device 3", "rank 1", "communicator <hash>".
std::string GpuClockName(const GpuClockDomain& domain, const SpoolIndex& index, const RankIdentities& identities);

// An event's GPU work on the host clock, held within the run: what the layout draws and what
// its arguments report (kind_args.h). For a KernelCh or KernelStep its own stamps, for a Coll
// or P2p the extent of its children.
struct GpuSpan {
  uint64_t start = 0, ready = 0, end = 0;  // host monotonic ns; ready: a KernelStep's transfer start
  bool clamped = false;            // a time was held at the run's edge
  bool stop_before_start = false;  // drawn with zero length at its start
  // The stamps say nothing of where in the run the work ran (missing, or outside the run at both
  // ends): a KernelCh or KernelStep keeps its host times, a Coll's extent is not drawn.
  bool host_timed = false;
  bool has_wait = false, has_transfer = false;  // KernelStep halves
};

// The per-event half of GPU placement: the fitted offset of the event's GPU clock at its
// collective's launch (one offset for a Coll/P2p and all its GPU work, so they stay in step
// however the clock drifts), then the stamps converted and held within [run start, run end + 1 s].
class GpuPlacement {
 public:
  static constexpr uint64_t kSlackNs = 1000000000;  // GPU work may end up to 1 s after the spool

  // |clocks| holds the fits (PlaceGpuClocks); null places every stamp with offset 0.
  GpuPlacement(const GpuClocks* clocks, uint64_t run_start_ns, uint64_t run_end_ns);

  // host_monotonic = gpu + Offset(e).
  int64_t Offset(const AssembledEvent& e) const;
  // KernelCh, KernelStep: their own work; Coll/P2p with kEvHasGpuExtent: the extent; else an
  // empty span.
  GpuSpan Place(const AssembledEvent& e) const { return HasGpuWork(e) ? PlaceAt(e, Offset(e)) : GpuSpan{}; }
  GpuSpan PlaceAt(const AssembledEvent& e, int64_t offset) const;

  // Whether |e| has GPU times to place: a KernelCh, a KernelStep, or a Coll/P2p with an extent. The
  // others (most events) skip the fit.
  static bool HasGpuWork(const AssembledEvent& e) {
    return IsGpuKind(e.kind) || (e.flags & kEvHasGpuExtent) != 0;
  }

 private:
  uint64_t ToHost(uint64_t gpu_ns, int64_t offset, bool* clamped) const;

  const GpuClocks* clocks_;
  uint64_t lo_, hi_;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_GPU_PLACEMENT_H_
