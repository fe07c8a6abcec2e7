// Event type bits as NCCL core uses them: its "parents are implied by children" rules (research
// §2.4) as one mask per event kind that starts it, and the per-kind index of the sim's call
// counters. Names and the --mask grammar are katrace's one kind table (katrace/event_kinds.h,
// common/event_mask.h).
#ifndef KATRACE_TOOLS_SIM_EVENT_MASK_H_
#define KATRACE_TOOLS_SIM_EVENT_MASK_H_

#include <cstdint>

#include "katrace/event_kinds.h"
#include "nccl_profiler/common.h"
#include "nccl_profiler/kernel_step.h"

namespace katrace::sim {

// An event kind is started when the task's mask snapshot has any of these bits.
inline constexpr int kGroupApiStarters =
    ncclProfileGroupApi | ncclProfileP2pApi | ncclProfileCollApi | ncclProfileKernelLaunch |
    ncclProfileGroup | ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp |
    ncclProfileProxyStep | ncclProfileKernelCh | ncclProfileNetPlugin | ncclProfileCeColl |
    ncclProfileCeSync | ncclProfileCeBatch;
inline constexpr int kCollApiStarters = ncclProfileCollApi | ncclProfileColl | ncclProfileProxyOp |
                                        ncclProfileProxyStep | ncclProfileKernelCh |
                                        ncclProfileNetPlugin | ncclProfileCeColl |
                                        ncclProfileCeSync | ncclProfileCeBatch;
inline constexpr int kP2pApiStarters = ncclProfileP2pApi | ncclProfileP2p | ncclProfileProxyOp |
                                       ncclProfileProxyStep | ncclProfileKernelCh |
                                       ncclProfileNetPlugin;
inline constexpr int kGroupStarters = ncclProfileGroup | ncclProfileColl | ncclProfileP2p |
                                      ncclProfileProxyOp | ncclProfileProxyStep |
                                      ncclProfileKernelCh | ncclProfileNetPlugin;
inline constexpr int kCollStarters = ncclProfileColl | ncclProfileProxyOp | ncclProfileProxyStep |
                                     ncclProfileKernelCh | ncclProfileNetPlugin;
inline constexpr int kP2pStarters = ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep |
                                    ncclProfileKernelCh | ncclProfileNetPlugin;
inline constexpr int kProxyOpStarters =
    ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileNetPlugin;
inline constexpr int kProxyStepStarters = ncclProfileProxyStep | ncclProfileNetPlugin;

// Counters are kept per kind (katrace::Kind order), then one for any other type ("Other").
inline constexpr int kNumEventKinds = kKindCount + 1;
inline constexpr int kOtherKind = kKindCount;

int EventKindIndex(uint64_t type);
const char* EventKindName(int kind_index);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_EVENT_MASK_H_
