// The event kinds katrace records, one per NCCL type bit, in a dense index for per-kind tables:
// the one list of them. The plugin (pools, mask grammar, export), katrace-sim and the trace tools
// all read it, so a kind is added here and nowhere else.
#ifndef KATRACE_EVENT_KINDS_H_
#define KATRACE_EVENT_KINDS_H_

#include <stddef.h>
#include <stdint.h>

#include <array>
#include <string_view>
#include <utility>

#include "nccl_profiler/common.h"
#include "nccl_profiler/kernel_step.h"

namespace katrace {

// The value is the kind byte of spool records (RecordHeader::kind) and the index of every per-kind
// table: spools written by older releases must keep reading the same, so values are explicit and
// a new kind is added only at the end, with the next value.
enum class Kind : uint8_t {
  kGroupApi = 0,
  kCollApi = 1,
  kP2pApi = 2,
  kKernelLaunch = 3,
  kGroup = 4,
  kColl = 5,
  kP2p = 6,
  kProxyOp = 7,
  kProxyStep = 8,
  kProxyCtrl = 9,
  kKernelCh = 10,
  kNetPlugin = 11,
  kCeColl = 12,
  kCeSync = 13,
  kCeBatch = 14,
  kKernelStep = 15,
};
constexpr int kKindCount = 16;  // the last value + 1: every table sized by it is checked against it

// Where an event happens, which is what its times measure: host callbacks of the application's
// threads, callbacks of NCCL's proxy thread, or GPU %globaltimer stamps. Summaries put host and
// proxy kinds in the host-side table and GPU kinds in the GPU-side one.
enum class Side : uint8_t { kHost, kProxy, kGpu };

struct KindInfo {
  Kind kind;              // its own position, so a table out of order fails to compile
  const char* name;       // as written in traces, summaries and the mask grammar
  uint64_t type_bit;      // the NCCL descriptor type / mask bit
  Side side;
  const char* pool_env;   // suffix of KATRACE_POOL_<suffix>
  uint32_t default_pool;  // live events of this kind per communicator
  // Its stop means the job moved on (the hang watchdog): work on the proxy or the GPU. A Coll/P2p
  // stop only says "enqueued", API and Group events are the application's side, and an idle
  // proxy keeps reporting ProxyCtrl events, so none of those count.
  bool stop_is_progress;
};

// Defaults size each pool for the live (not yet completed) events of a busy communicator, not
// for the trace: completed events leave the pool at once.
inline constexpr KindInfo kKindInfo[] = {
    {Kind::kGroupApi, "GroupApi", ncclProfileGroupApi, Side::kHost, "GROUP_API", 1024, false},
    {Kind::kCollApi, "CollApi", ncclProfileCollApi, Side::kHost, "COLL_API", 1024, false},
    {Kind::kP2pApi, "P2pApi", ncclProfileP2pApi, Side::kHost, "P2P_API", 1024, false},
    {Kind::kKernelLaunch, "KernelLaunch", ncclProfileKernelLaunch, Side::kHost, "KERNEL_LAUNCH", 512, false},
    {Kind::kGroup, "Group", ncclProfileGroup, Side::kHost, "GROUP", 1024, false},
    {Kind::kColl, "Coll", ncclProfileColl, Side::kHost, "COLL", 1024, false},
    {Kind::kP2p, "P2p", ncclProfileP2p, Side::kHost, "P2P", 1024, false},
    {Kind::kProxyOp, "ProxyOp", ncclProfileProxyOp, Side::kProxy, "PROXY_OP", 2048, true},
    {Kind::kProxyStep, "ProxyStep", ncclProfileProxyStep, Side::kProxy, "PROXY_STEP", 4096, true},
    {Kind::kProxyCtrl, "ProxyCtrl", ncclProfileProxyCtrl, Side::kProxy, "PROXY_CTRL", 256, false},
    {Kind::kKernelCh, "KernelCh", ncclProfileKernelCh, Side::kGpu, "KERNEL_CH", 2048, true},
    {Kind::kNetPlugin, "NetPlugin", ncclProfileNetPlugin, Side::kProxy, "NET_PLUGIN", 4096, true},
    {Kind::kCeColl, "CeColl", ncclProfileCeColl, Side::kHost, "CE_COLL", 256, true},
    {Kind::kCeSync, "CeSync", ncclProfileCeSync, Side::kHost, "CE_SYNC", 256, false},
    {Kind::kCeBatch, "CeBatch", ncclProfileCeBatch, Side::kHost, "CE_BATCH", 256, true},
    {Kind::kKernelStep, "KernelStep", ncclProfileKernelStep, Side::kGpu, "KERNEL_STEP", 16384, true},
};

// One entry per kind, each at its own value: a kind added to the enum without its entry, or an
// entry out of place, is a compile error, not a table silently read at the wrong index.
constexpr bool KindTableInOrder() {
  for (int i = 0; i < kKindCount; ++i) {
    if (static_cast<int>(kKindInfo[i].kind) != i) return false;
  }
  return true;
}
static_assert(sizeof(kKindInfo) / sizeof(kKindInfo[0]) == kKindCount, "one kKindInfo entry per kind");
static_assert(KindTableInOrder(), "kKindInfo entries in Kind order");
static_assert(static_cast<int>(Kind::kKernelStep) + 1 == kKindCount, "kKindCount is the last kind + 1");

inline const char* KindName(Kind k) { return kKindInfo[static_cast<int>(k)].name; }

// The same names with their lengths known at compile time, for what writes one per slice.
template <size_t... K>
constexpr std::array<std::string_view, sizeof...(K)> KindNamesOf(std::index_sequence<K...>) {
  return {{std::string_view(kKindInfo[K].name)...}};
}
inline constexpr std::array<std::string_view, kKindCount> kKindNames = KindNamesOf(std::make_index_sequence<kKindCount>{});
inline std::string_view KindNameView(Kind k) { return kKindNames[static_cast<size_t>(k)]; }

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
