// The event kind grammar, one for every place a user names kinds: the plugin's KATRACE_MASK (and
// NCCL_PROFILE_EVENT_MASK), katrace-sim's --mask and katrace-merge's --kinds. Names come from the
// kind table (katrace/event_kinds.h), so a kind added there is accepted here and counted in `all`.
#ifndef KATRACE_COMMON_EVENT_MASK_H_
#define KATRACE_COMMON_EVENT_MASK_H_

#include <stdint.h>

#include <string>
#include <vector>

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

// A number (decimal or 0x hex, up to 0x7fffffff), or words joined by `,` `+` `|` or spaces,
// applied left to right from nothing: a kind name (case-insensitive, "KernelCh" or "kernelch"),
// a set (`api`, `proxy`, `net`, `host`, `gpu`, `ce`, `all`, `none`, `default`), or `-word` to
// remove one. Returns false with |error| set ("empty list", "not a valid number", "unknown event
// name 'x' (known: ...)") on anything else.
bool ParseEventMask(const std::string& text, int* mask, std::string* error);

// The words ParseEventMask knows, lower case and comma separated, for help and error texts.
std::string EventMaskWords();

// What a kind list selects in a trace: recorded kinds (NCCL type bits), the slices derived from
// them at export (kDerivedKinds), and words of the caller's own.
struct KindSelection {
  int mask = 0;
  uint32_t derived = 0;  // bit i: kDerivedKinds[i]
  uint32_t extras = 0;   // bit i: the caller's extra_words[i]
};

// katrace-merge's --kinds: the mask grammar above, on a trace's slices rather than on what is
// recorded, so the same words keep what KATRACE_MASK would have recorded. A recorded kind, a
// number or a set also selects the slices derived from its kinds (`coll`: Coll and CollGpu;
// `-kernelstep` removes KernelStep and its wait and transfer halves); a derived kind's name
// (`collgpu`, `kernelstepwait`, `kernelsteptransfer`, `proxystepstate`) selects or removes just
// those slices. |extra_words| (at most 32, lower case) are words of the caller's own, such as
// "flow", which `all` includes too. Errors as ParseEventMask's, naming these words as well.
bool ParseKindSelection(const std::string& text, const std::vector<std::string>& extra_words,
                        KindSelection* selection, std::string* error);

// The words ParseKindSelection knows with |extra_words|, as EventMaskWords.
std::string KindSelectionWords(const std::vector<std::string>& extra_words);

// The kinds in |mask| as "Coll|KernelCh" (table order), "none" when it has none.
std::string DescribeEventMask(int mask);

}  // namespace katrace

#endif  // KATRACE_COMMON_EVENT_MASK_H_
