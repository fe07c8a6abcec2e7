// Event type bits: names for the report and --mask, and NCCL's "parents are implied by
// children" rules (research §2.4) as one mask per event kind that starts it.
#ifndef KATRACE_TOOLS_SIM_EVENT_MASK_H_
#define KATRACE_TOOLS_SIM_EVENT_MASK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "nccl_profiler/kernel_step.h"
#include "nccl_profiler/common.h"

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

// Counters are kept per kind: the 15 upstream bits, then KernelStep, then "other".
inline constexpr int kNumEventKinds = 17;
inline constexpr int kKernelStepKind = 15;
inline constexpr int kOtherKind = 16;

int EventKindIndex(uint64_t type);
const char* EventKindName(int kind_index);

// Accepts a number (decimal or 0x hex) or a comma list of names ("coll,p2p,kernelch", "all",
// "none"; case-insensitive; NCCL's spelling like "KernelCh" too). Sets |error| on failure.
std::optional<int> ParseEventMask(const std::string& text, std::string* error);

// "Coll|KernelCh" style, for the report.
std::string DescribeEventMask(int mask);

}  // namespace katrace::sim

#endif  // KATRACE_TOOLS_SIM_EVENT_MASK_H_
