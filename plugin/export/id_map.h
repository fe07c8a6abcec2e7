// A small open-addressing hash map from a non-zero 64-bit record id to a 32-bit index, for the
// assembler's live and recently-completed events: one flat array, linear probing, deletion by
// backward shift (no tombstones), so its cost per event is a few cache lines and no allocation.
// The capture hands ids out in runs (per-thread blocks of consecutive numbers), so the slot is
// the id itself modulo the table: ids that complete one after another share cache lines instead
// of costing a miss each in a table far larger than the cache. Ids that do not come in runs
// (a hostile spool: multiples of a power of two) would make long probe runs there; the first
// such run switches the map, for good, to a mixing hash.
#ifndef KATRACE_PLUGIN_EXPORT_ID_MAP_H_
#define KATRACE_PLUGIN_EXPORT_ID_MAP_H_

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <vector>

namespace katrace {
namespace exporting {

class IdMap {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  IdMap() { Rehash(1024); }

  // A key is never further than max_shift_ from its home slot (erasing only moves keys closer),
  // so a miss costs a bounded scan even inside a long run of consecutive ids.
  // Id 0 marks an empty slot, so it is never found: a hostile record's id 0 would otherwise match
  // the first empty slot and return whatever index that slot held last.
  uint32_t Find(uint64_t id) const {
    if (id == 0) return kMissing;
    size_t i = Slot(id);
    for (size_t k = 0; k <= max_shift_; ++k, i = (i + 1) & mask_) {
      if (keys_[i] == id) return values_[i];
      if (keys_[i] == 0) return kMissing;
    }
    return kMissing;
  }

  // Inserts or overwrites; id must not be 0.
  void Put(uint64_t id, uint32_t value) {
    if ((size_ + 1) * 2 > keys_.size()) Rehash(keys_.size() * 2);
    size_t i = Slot(id);
    size_t probes = 0;
    for (; keys_[i] != 0 && keys_[i] != id; i = (i + 1) & mask_) {
      if (++probes == kMaxProbes && !mixed_) {
        mixed_ = true;
        Rehash(keys_.size());
        Put(id, value);
        return;
      }
    }
    if (keys_[i] == 0) ++size_;
    if (probes > max_shift_) max_shift_ = probes;
    keys_[i] = id;
    values_[i] = value;
  }

  void Erase(uint64_t id) {
    if (id == 0) return;
    size_t i = Slot(id);
    for (size_t k = 0; keys_[i] != id; ++k, i = (i + 1) & mask_) {
      if (keys_[i] == 0 || k == max_shift_) return;
    }
    // Backward shift: pull later entries of the probe run into the hole when that keeps them
    // reachable from their home slot. No key sits further than max_shift_ from its home, so none
    // further than that from the hole can move into it: the scan stops there, not at the end of
    // the run. (Ids that fill the table densely, consecutive ones or a window of ids wrapped
    // round the table onto older ones, make one run of up to half the table, and a scan to its
    // end made each erase cost that much: 40 s of a 45 s export once the capture had dropped
    // events.)
    for (size_t j = (i + 1) & mask_; ((j - i) & mask_) <= max_shift_; j = (j + 1) & mask_) {
      if (keys_[j] == 0) break;
      size_t home = Slot(keys_[j]);
      bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) {
        keys_[i] = keys_[j];
        values_[i] = values_[j];
        i = j;
      }
    }
    keys_[i] = 0;
    --size_;
  }

  size_t size() const { return size_; }

  // Starts loading the cache lines a Put or Find of |id| will touch first: the caller knows the
  // id well before it inserts it (a Start, long before its completion).
  void Prefetch(uint64_t id) const {
    size_t i = Slot(id);
    __builtin_prefetch(&keys_[i], 1);
    __builtin_prefetch(&values_[i], 1);
  }

  // Empties the map, keeping its capacity (the recent-id window reuses its tables).
  void Clear() {
    std::fill(keys_.begin(), keys_.end(), 0);
    size_ = 0;
    max_shift_ = 0;
  }

 private:
  // Probe run length at which the ids are taken not to come in runs.
  static constexpr size_t kMaxProbes = 64;

  size_t Slot(uint64_t id) const {
    return static_cast<size_t>(mixed_ ? (id * 0x9e3779b97f4a7c15ull) >> 20 : id) & mask_;
  }

  void Rehash(size_t capacity) {
    std::vector<uint64_t> keys;
    std::vector<uint32_t> values;
    keys.swap(keys_);
    values.swap(values_);
    keys_.assign(capacity, 0);
    values_.assign(capacity, 0);
    mask_ = capacity - 1;
    size_ = 0;
    max_shift_ = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != 0) Put(keys[i], values[i]);
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<uint32_t> values_;
  size_t mask_ = 0;
  size_t size_ = 0;
  size_t max_shift_ = 0;  // the furthest any key sits from its home slot
  bool mixed_ = false;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_ID_MAP_H_
