// The ids of the most recently completed events (a window of the last |kWindow| completions), so
// a late child still names its parent and knows its kind. Two generations of an IdMap instead of
// a ring whose evictions erase from one map: an id goes into the current generation with its
// completion number; when a generation has seen kWindow completions it becomes the previous one
// and the older one is cleared wholesale. Each completion then costs one insert, not an insert
// plus an erase at a random place, and a lookup checks the completion number, so the window is
// exact. (An id that completes twice is found until its latest completion leaves the window.)
#ifndef KATRACE_PLUGIN_EXPORT_RECENT_IDS_H_
#define KATRACE_PLUGIN_EXPORT_RECENT_IDS_H_

#include <stddef.h>
#include <stdint.h>

#include <utility>

#include "katrace/event_kinds.h"
#include "plugin/export/id_map.h"

namespace katrace {
namespace exporting {

class RecentIds {
 public:
  static constexpr uint32_t kWindow = 1u << 16;

  void Add(uint64_t id, Kind kind) {
    if (since_swap_ == kWindow) {
      std::swap(current_, previous_);
      current_.Clear();
      since_swap_ = 0;
    }
    current_.Put(id, ((count_ & kSeqMask) << kKindBits) | static_cast<uint32_t>(kind));
    ++count_;
    ++since_swap_;
  }

  // The table |id| will most likely go into when it completes (the window rarely turns over in
  // between); a table with 2^17+ slots misses the cache on every insert otherwise.
  void Prefetch(uint64_t id) const { current_.Prefetch(id); }

  // True with the kind of |id| when it is among the last kWindow completions.
  bool Find(uint64_t id, Kind* kind) const {
    uint32_t v = current_.Find(id);
    if (v == IdMap::kMissing) {
      v = previous_.Find(id);
      if (v == IdMap::kMissing) return false;
      // Completions since this one, modulo 2^27: exact, since an entry is < 2 * kWindow old.
      uint32_t age = (count_ - (v >> kKindBits)) & kSeqMask;
      if (age > kWindow) return false;
    }
    *kind = static_cast<Kind>(v & ((1u << kKindBits) - 1));
    return true;
  }

 private:
  static constexpr int kKindBits = 5;
  static constexpr uint32_t kSeqMask = (1u << (32 - kKindBits)) - 1;
  static_assert(kKindCount <= (1 << kKindBits), "kinds fit the packed value");
  static_assert(2 * static_cast<uint64_t>(kWindow) < kSeqMask, "ages fit the packed value");

  IdMap current_, previous_;
  uint32_t count_ = 0;  // completions so far (wraps; only differences are used)
  uint32_t since_swap_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_RECENT_IDS_H_
