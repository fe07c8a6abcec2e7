// The KernelStep extension (per-slice GPU timing of simple-prims slices, after NVIDIA/nccl
// PR #2316, not merged upstream). The type bit and the stop state are not settled upstream, so
// each is one named constant here, overridable at build time (-DKATRACE_KERNEL_STEP_TYPE_BIT=...,
// -DKATRACE_KERNEL_STEP_STOP_STATE=...). The defaults stay clear of bit 15, which upstream
// proposals already claim, and of the state numbers upstream is growing into.
#ifndef NCCL_PROFILER_KERNEL_STEP_H_
#define NCCL_PROFILER_KERNEL_STEP_H_

#include <stdint.h>

#ifndef KATRACE_KERNEL_STEP_TYPE_BIT
#define KATRACE_KERNEL_STEP_TYPE_BIT 20
#endif
#ifndef KATRACE_KERNEL_STEP_STOP_STATE
#define KATRACE_KERNEL_STEP_STOP_STATE 64
#endif

#include "nccl_profiler/common.h"

NCCL_PROFILER_ABI_ASSERT(KATRACE_KERNEL_STEP_TYPE_BIT >= 15 && KATRACE_KERNEL_STEP_TYPE_BIT < 31,
                         "KernelStep type bit must be above the upstream bits and below the sign bit");
NCCL_PROFILER_ABI_ASSERT(KATRACE_KERNEL_STEP_STOP_STATE > 30,
                         "KernelStep stop state must not collide with upstream states 0-30");

#ifdef __cplusplus
extern "C" {
#endif

// The activation mask is an int, so the bit must leave the sign bit alone.
enum { ncclProfileKernelStep = 1 << KATRACE_KERNEL_STEP_TYPE_BIT };
enum { ncclProfilerKernelStepStop = KATRACE_KERNEL_STEP_STOP_STATE };

// A drain report is a KernelStep start with parentObj NULL and isSend == ncclProfilerKernelStepReport,
// stopped right away. It carries the drain's loss counters for one channel since the previous
// report, so they reach the trace through the ABI alone: channelId = channel, and each counter in
// the descriptor field that kDrainCounterFields (katrace/drain_counters.h) assigns it; that table
// is the encoding's one definition (EncodeDrainReport / DecodeDrainReport).
// An abandoned step's stop state carries pTimer = 0.
enum { ncclProfilerKernelStepReport = 0xFF };

// Descriptor payload of a KernelStep start. Both stamps are GPU %globaltimer nanoseconds.
// |peer| is a full int (PR #2316 used a byte and lost peers above 255).
typedef struct {
  uint8_t channelId;
  uint8_t isSend;
  int peer;
  uint32_t step;
  uint32_t size;      // slice bytes
  uint64_t startTs;   // wait start (credit or data wait), 0 when not measured
  uint64_t readyTs;   // transfer start
} ncclProfilerKernelStepDescr_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // NCCL_PROFILER_KERNEL_STEP_H_
