// The KernelStep extension (per-slice GPU timing of simple-prims slices), laid out exactly as the
// NCCL fork of NVIDIA/nccl PR #2316 declares it (the only core that emits KernelStep; Google
// CoMMA's bindings read it the same way). The PR is not merged upstream, so what it leaves open
// is one build-time constant each, here and nowhere else:
//   KATRACE_KERNEL_STEP_TYPE_BIT     the type / mask bit (not visible in the fork's public files)
//   KATRACE_KERNEL_STEP_STOP_STATE   the state that carries the GPU stop stamp
//   KATRACE_KERNEL_STEP_IS_SEND_BYTES  the width of isSend: 1 (a byte, the default: the device
//                                    record keeps it in a flag byte), 2 or 4
// e.g. -DKATRACE_KERNEL_STEP_TYPE_BIT=21. The defaults stay clear of bit 15, which upstream
// proposals already claim, and of the state numbers upstream is growing into.
//
// |peer| is a byte, as in the fork: its device code does not stamp slices whose peer is above
// 255, so a peer above 255 is the fork's own limit, not katrace's. katrace's drain does the same
// with such a step (its ring record holds wider peers): it is left out and counted as
// `sampled_out`, never emitted with a wrapped peer.
#ifndef NCCL_PROFILER_KERNEL_STEP_H_
#define NCCL_PROFILER_KERNEL_STEP_H_

#include <stdint.h>

#ifndef KATRACE_KERNEL_STEP_TYPE_BIT
#define KATRACE_KERNEL_STEP_TYPE_BIT 20
#endif
#ifndef KATRACE_KERNEL_STEP_STOP_STATE
#define KATRACE_KERNEL_STEP_STOP_STATE 64
#endif
#ifndef KATRACE_KERNEL_STEP_IS_SEND_BYTES
#define KATRACE_KERNEL_STEP_IS_SEND_BYTES 1
#endif

#include "nccl_profiler/common.h"

NCCL_PROFILER_ABI_ASSERT(KATRACE_KERNEL_STEP_TYPE_BIT >= 15 && KATRACE_KERNEL_STEP_TYPE_BIT < 31,
                         "KernelStep type bit must be above the upstream bits and below the sign bit");
NCCL_PROFILER_ABI_ASSERT(KATRACE_KERNEL_STEP_STOP_STATE > 30,
                         "KernelStep stop state must not collide with upstream states 0-30");
NCCL_PROFILER_ABI_ASSERT(KATRACE_KERNEL_STEP_IS_SEND_BYTES == 1 || KATRACE_KERNEL_STEP_IS_SEND_BYTES == 2 ||
                             KATRACE_KERNEL_STEP_IS_SEND_BYTES == 4,
                         "isSend is a byte, a short or an int");

#ifdef __cplusplus
extern "C" {
#endif

// The activation mask is an int, so the bit must leave the sign bit alone.
enum { ncclProfileKernelStep = 1 << KATRACE_KERNEL_STEP_TYPE_BIT };
enum { ncclProfilerKernelStepStop = KATRACE_KERNEL_STEP_STOP_STATE };

#if KATRACE_KERNEL_STEP_IS_SEND_BYTES == 1
typedef uint8_t ncclProfilerKernelStepIsSend_t;
#elif KATRACE_KERNEL_STEP_IS_SEND_BYTES == 2
typedef uint16_t ncclProfilerKernelStepIsSend_t;
#else
typedef uint32_t ncclProfilerKernelStepIsSend_t;
#endif

// The largest peer the descriptor names (see the header comment).
enum { ncclProfilerKernelStepPeerMax = UINT8_MAX };

// A drain report is a KernelStep start with parentObj NULL and isSend == ncclProfilerKernelStepReport,
// stopped right away. It carries the drain's loss counters for one channel since the previous
// report, so they reach the trace through the ABI alone: channelId = channel, and each counter in
// the descriptor field that kDrainCounterFields (katrace/drain_counters.h) assigns it; that table
// is the encoding's one definition (EncodeDrainReport / DecodeDrainReport). A katrace extension:
// the fork's drain sends no reports. An abandoned step's stop state carries pTimer = 0.
enum { ncclProfilerKernelStepReport = 0xFF };

// Descriptor payload of a KernelStep start (the v6 union's kernelStep member; absolute offsets
// asserted in v6.h). Both stamps are GPU %globaltimer nanoseconds.
typedef struct {
  uint8_t channelId;
  ncclProfilerKernelStepIsSend_t isSend;  // nonzero: the send role
  uint8_t peer;                           // communicator rank of the peer, 0..255
  uint32_t step;
  uint32_t size;      // slice bytes
  uint64_t startTs;   // wait start (credit or data wait), 0 when not measured
  uint64_t readyTs;   // transfer start
} ncclProfilerKernelStepDescr_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // NCCL_PROFILER_KERNEL_STEP_H_
