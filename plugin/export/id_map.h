// A small open-addressing hash map from a non-zero 64-bit record id to a 32-bit index, for the
// assembler's live and recently-completed events: one flat array, linear probing, deletion by
// backward shift (no tombstones), so its cost per event is a few cache lines and no allocation.
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

  uint32_t Find(uint64_t id) const {
    for (size_t i = Slot(id);; i = (i + 1) & mask_) {
      if (keys_[i] == id) return values_[i];
      if (keys_[i] == 0) return kMissing;
    }
  }

  // Inserts or overwrites; id must not be 0.
  void Put(uint64_t id, uint32_t value) {
    if ((size_ + 1) * 2 > keys_.size()) Rehash(keys_.size() * 2);
    size_t i = Slot(id);
    for (; keys_[i] != 0 && keys_[i] != id; i = (i + 1) & mask_) {
    }
    if (keys_[i] == 0) ++size_;
    keys_[i] = id;
    values_[i] = value;
  }

  void Erase(uint64_t id) {
    size_t i = Slot(id);
    for (; keys_[i] != id; i = (i + 1) & mask_) {
      if (keys_[i] == 0) return;
    }
    // Backward shift: pull later entries of the probe run into the hole when that keeps them
    // reachable from their home slot.
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
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
  }

 private:
  size_t Slot(uint64_t id) const { return static_cast<size_t>((id * 0x9e3779b97f4a7c15ull) >> 20) & mask_; }

  void Rehash(size_t capacity) {
    std::vector<uint64_t> keys;
    std::vector<uint32_t> values;
    keys.swap(keys_);
    values.swap(values_);
    keys_.assign(capacity, 0);
    values_.assign(capacity, 0);
    mask_ = capacity - 1;
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != 0) Put(keys[i], values[i]);
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<uint32_t> values_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_ID_MAP_H_
