// The event mask grammar, one for every place a user writes a mask: the plugin's KATRACE_MASK
// (and NCCL_PROFILE_EVENT_MASK) and katrace-sim's --mask. Names come from the kind table
// (katrace/event_kinds.h), so a kind added there is accepted here and counted in `all`.
#ifndef KATRACE_COMMON_EVENT_MASK_H_
#define KATRACE_COMMON_EVENT_MASK_H_

#include <string>

#include "katrace/event_kinds.h"

namespace katrace {

// Coll, P2p, their API parents, kernel launches, proxy ops, and GPU time per channel and per
// slice: the picture most users want. ProxyStep, NetPlugin and ProxyCtrl are voluminous and
// opt-in.
constexpr int kDefaultMask = ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi |
                             ncclProfileKernelLaunch | ncclProfileColl | ncclProfileP2p |
                             ncclProfileProxyOp | ncclProfileKernelCh | ncclProfileKernelStep;

// `all`: every kind in the table, KernelStep included (a core without KernelStep support simply
// never starts one, so asking for it costs nothing there).
constexpr int AllKindsMask() {
  int all = 0;
  for (const KindInfo& k : kKindInfo) all |= static_cast<int>(k.type_bit);
  return all;
}
constexpr int kAllKindsMask = AllKindsMask();

// A number (decimal or 0x hex, up to 0x7fffffff), or words joined by `,` `+` `|` or spaces: a
// kind name (case-insensitive, "KernelCh" or "kernelch"), a set (`api`, `proxy`, `net`, `gpu`,
// `ce`, `all`, `none`, `default`), or `-word` to remove one. Returns false with |error| set
// ("empty mask", "not a valid number", "unknown event name 'x'") on anything else.
bool ParseEventMask(const std::string& text, int* mask, std::string* error);

// The words ParseEventMask knows, lower case and comma separated, for help and error texts.
std::string EventMaskWords();

// The kinds in |mask| as "Coll|KernelCh" (table order), "none" when it has none.
std::string DescribeEventMask(int mask);

}  // namespace katrace

#endif  // KATRACE_COMMON_EVENT_MASK_H_
