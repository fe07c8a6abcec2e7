// GPU clock placement, with the whole run in view: per communicator, every GPU stamp seen at a
// host Start (KernelCh: gpu_start; KernelStep: gpu_ready) gives an upper bound (host ns − stamp)
// of the offset host_monotonic = gpu + offset. The placement is the plugin's policy: fixed at the
// FIRST observation in tick order, or at the realtime prior (prior = base_monotonic_ns −
// base_realtime_ns, since globaltimer is seeded from realtime) when that lies below it. The
// global best (smallest) observation is kept for the footer only: when a GPU clock runs ahead
// or the host conversion drifts over the run, the global minimum lies far from the early events
// and placing by it would put GPU work before its host launch. One offset serves the whole
// communicator, so GPU children always fit in their collective's extent. Arithmetic is 128-bit
// and saturated: stamps may be garbage.
#ifndef KATRACE_PLUGIN_EXPORT_GPU_PLACEMENT_H_
#define KATRACE_PLUGIN_EXPORT_GPU_PLACEMENT_H_

#include <stdint.h>

#include "plugin/export/spool_index.h"

namespace katrace {
namespace exporting {

// The realtime prior of the process (two's-complement difference, never overflowing).
int64_t RealtimePrior(const SpoolIndex& index);

// Fills gpu_known / gpu_best_ns / gpu_first_ns / gpu_offset_ns of every communicator. Blocks
// whose observations cannot be attributed from the first pass's summary (a non-identity host
// clock, or a slot reused within the block's time span) are decoded again, in parallel.
void PlaceGpuClocks(const SpoolFile& file, int threads, SpoolIndex* index);

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_GPU_PLACEMENT_H_
