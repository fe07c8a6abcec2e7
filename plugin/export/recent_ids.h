// The ids of the most recently completed events (a window of the last |kWindow| completions), so
// a late child still names its parent and knows its kind. Two generations of an IdMap instead of
// a ring whose evictions erase from one map: an id goes into the current generation with its
// completion number; when a generation has seen kWindow completions it becomes the previous one
// and the older one is cleared wholesale. Each completion then costs one insert, not an insert
// plus an erase at a random place, and a lookup checks the completion number, so the window is
// exact. (An id that completes twice is found until its latest completion leaves the window.)
// The tables are far larger than the cache, so an insert is delayed by kPending completions
// after a prefetch of its slot: by then the line is in, and the insert does not stall. Lookups
// see the pending ids too.
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
    uint32_t value = ((count_ & kSeqMask) << kKindBits) | static_cast<uint32_t>(kind);
    ++count_;
    Pending& slot = pending_[pending_next_];
    if (slot.id != 0) Insert(slot.id, slot.value);
    slot = Pending{id, value};
    pending_next_ = (pending_next_ + 1) % kPending;
    // Where it will most likely go (the window rarely turns over in between).
    (since_swap_ == kWindow ? previous_ : current_).Prefetch(id);
  }

  // True with the kind of |id| when it is among the last kWindow completions.
  bool Find(uint64_t id, Kind* kind) const {
    for (size_t k = 1; k <= kPending; ++k) {  // newest first
      const Pending& p = pending_[(pending_next_ + kPending - k) % kPending];
      if (p.id == id && id != 0) {
        *kind = static_cast<Kind>(p.value & ((1u << kKindBits) - 1));
        return true;
      }
    }
    uint32_t v = current_.Find(id);
    if (v == IdMap::kMissing) v = previous_.Find(id);
    if (v == IdMap::kMissing) return false;
    // Completions since this one (1 for the latest), modulo 2^27: exact, since an entry is less
    // than 2 * kWindow + kPending old.
    uint32_t age = (count_ - (v >> kKindBits)) & kSeqMask;
    if (age > kWindow) return false;
    *kind = static_cast<Kind>(v & ((1u << kKindBits) - 1));
    return true;
  }

 private:
  static constexpr int kKindBits = 5;
  static constexpr uint32_t kSeqMask = (1u << (32 - kKindBits)) - 1;
  static_assert(kKindCount <= (1 << kKindBits), "kinds fit the packed value");
  static_assert(2 * static_cast<uint64_t>(kWindow) < kSeqMask, "ages fit the packed value");

  static constexpr size_t kPending = 8;
  struct Pending {
    uint64_t id;
    uint32_t value;
  };

  // Into the tables, in completion order: the generation turns over every kWindow inserts.
  void Insert(uint64_t id, uint32_t value) {
    if (since_swap_ == kWindow) {
      std::swap(current_, previous_);
      current_.Clear();
      since_swap_ = 0;
    }
    current_.Put(id, value);
    ++since_swap_;
  }

  Pending pending_[kPending] = {};
  size_t pending_next_ = 0;
  IdMap current_, previous_;
  uint32_t count_ = 0;  // completions so far (wraps; only differences are used)
  uint32_t since_swap_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_RECENT_IDS_H_
