// GPU clock placement, with the whole run in view: one clock domain per GPU (the communicators
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

#include "plugin/export/spool_index.h"

namespace katrace {
namespace exporting {

constexpr uint64_t kLaunchHorizonNs = 2000000000ull;
// About 24 MB of launches: 2 s of a process launching a collective every 4 µs, or 0.6 s of
// eight GPUs doing so at once; a KernelCh reaches the file a few 100 ms flushes after its launch.
constexpr size_t kMaxLaunchesKept = size_t{1} << 19;

// The realtime prior of the process (two's-complement difference, never overflowing).
int64_t RealtimePrior(const SpoolIndex& index);

// Fills index->gpu_clocks and every communicator's gpu_clock. Needs the rank identities
// (AssignRankIdentities) for communicators without a device. Returns how many blocks it read
// again (0 when the spool holds no GPU stamp).
size_t PlaceGpuClocks(const SpoolFile& file, int threads, SpoolIndex* index,
                      size_t max_launches = kMaxLaunchesKept);

// "; GPU clock of ... : ..." for every domain whose band was empty or whose error bound is
// above kClockLargeErrorNs or unknown; "" when every fit is sound.
std::string GpuClockWarnings(const SpoolIndex& index);

// The domain's name in messages: "cuda device 3", "rank 1", "communicator <hash>".
std::string GpuClockName(const SpoolIndex& index, const GpuClockDomain& domain);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_GPU_PLACEMENT_H_
