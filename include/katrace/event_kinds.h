// The event kinds katrace records, one per NCCL type bit, in a dense index for per-kind tables:
// the one list of them. The plugin (pools, mask grammar, export), katrace-sim and the trace tools
// all read it, so a kind is added here and nowhere else.
#ifndef KATRACE_EVENT_KINDS_H_
#define KATRACE_EVENT_KINDS_H_

#include <stdint.h>

#include "nccl_profiler/common.h"
#include "nccl_profiler/kernel_step.h"

namespace katrace {

enum class Kind : uint8_t {
  kGroupApi,
  kCollApi,
  kP2pApi,
  kKernelLaunch,
  kGroup,
  kColl,
  kP2p,
  kProxyOp,
  kProxyStep,
  kProxyCtrl,
  kKernelCh,
  kNetPlugin,
  kCeColl,
  kCeSync,
  kCeBatch,
  kKernelStep,
};
constexpr int kKindCount = 16;

// Where an event happens, which is what its times measure: host callbacks of the application's
// threads, callbacks of NCCL's proxy thread, or GPU %globaltimer stamps. Summaries put host and
// proxy kinds in the host-side table and GPU kinds in the GPU-side one.
enum class Side : uint8_t { kHost, kProxy, kGpu };

struct KindInfo {
  const char* name;       // as written in traces, summaries and the mask grammar
  uint64_t type_bit;      // the NCCL descriptor type / mask bit
  Side side;
  const char* pool_env;   // suffix of KATRACE_POOL_<suffix>
  uint32_t default_pool;  // live events of this kind per communicator
};

// Defaults size each pool for the live (not yet completed) events of a busy communicator, not
// for the trace: completed events leave the pool at once.
inline constexpr KindInfo kKindInfo[kKindCount] = {
    {"GroupApi", ncclProfileGroupApi, Side::kHost, "GROUP_API", 1024},
    {"CollApi", ncclProfileCollApi, Side::kHost, "COLL_API", 1024},
    {"P2pApi", ncclProfileP2pApi, Side::kHost, "P2P_API", 1024},
    {"KernelLaunch", ncclProfileKernelLaunch, Side::kHost, "KERNEL_LAUNCH", 512},
    {"Group", ncclProfileGroup, Side::kHost, "GROUP", 1024},
    {"Coll", ncclProfileColl, Side::kHost, "COLL", 1024},
    {"P2p", ncclProfileP2p, Side::kHost, "P2P", 1024},
    {"ProxyOp", ncclProfileProxyOp, Side::kProxy, "PROXY_OP", 2048},
    {"ProxyStep", ncclProfileProxyStep, Side::kProxy, "PROXY_STEP", 4096},
    {"ProxyCtrl", ncclProfileProxyCtrl, Side::kProxy, "PROXY_CTRL", 256},
    {"KernelCh", ncclProfileKernelCh, Side::kGpu, "KERNEL_CH", 2048},
    {"NetPlugin", ncclProfileNetPlugin, Side::kProxy, "NET_PLUGIN", 4096},
    {"CeColl", ncclProfileCeColl, Side::kHost, "CE_COLL", 256},
    {"CeSync", ncclProfileCeSync, Side::kHost, "CE_SYNC", 256},
    {"CeBatch", ncclProfileCeBatch, Side::kHost, "CE_BATCH", 256},
    {"KernelStep", ncclProfileKernelStep, Side::kGpu, "KERNEL_STEP", 16384},
};

inline const char* KindName(Kind k) { return kKindInfo[static_cast<int>(k)].name; }

struct KindByBit {
  int8_t kind[32];
  constexpr KindByBit() : kind() {
    for (int b = 0; b < 32; ++b) kind[b] = -1;
    for (int i = 0; i < kKindCount; ++i) {
      for (int b = 0; b < 32; ++b) {
        if (kKindInfo[i].type_bit == (1ull << b)) kind[b] = static_cast<int8_t>(i);
      }
    }
  }
};
inline constexpr KindByBit kKindByBit{};

// Maps a descriptor type (exactly one bit) to a kind; false for anything else.
inline bool KindFromType(uint64_t type, Kind* out) {
  if (type == 0 || (type & (type - 1)) != 0 || type >= (1ull << 32)) return false;
  int k = kKindByBit.kind[__builtin_ctzll(type)];
  if (k < 0) return false;
  *out = static_cast<Kind>(k);
  return true;
}

// Kinds whose times are GPU %globaltimer stamps rather than host callback times.
inline bool IsGpuKind(Kind k) { return kKindInfo[static_cast<int>(k)].side == Side::kGpu; }

// Slices a trace holds that are not recorded events but derived from one at export: a Coll or
// P2p's GPU extent, a KernelStep's wait and transfer halves, a ProxyStep's state intervals. They
// carry no record id of their own. |summarized|: counted in the summary tables of their side
// (ProxyStepState only subdivides its ProxyStep, which the host-side table already counts).
struct DerivedKindInfo {
  const char* name;  // the slices' `cat`
  Kind from;
  Side side;
  bool summarized;
};
inline constexpr DerivedKindInfo kDerivedKinds[] = {
    {"CollGpu", Kind::kColl, Side::kGpu, true},
    {"KernelStepWait", Kind::kKernelStep, Side::kGpu, true},
    {"KernelStepTransfer", Kind::kKernelStep, Side::kGpu, true},
    {"ProxyStepState", Kind::kProxyStep, Side::kProxy, false},
};

}  // namespace katrace

#endif  // KATRACE_EVENT_KINDS_H_
