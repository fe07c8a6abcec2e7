// Interns NCCL's strings (function, datatype, algorithm and protocol names: static strings that
// live as long as NCCL) by pointer, so an event record carries a 32-bit id and the text goes into
// the spool once. Lock-free: a fixed open-addressing table whose keys are claimed by CAS; the
// thread that claims a key writes the String record. Ids are slot index + 1; 0 means "no string".
#ifndef KATRACE_PLUGIN_CAPTURE_STRING_TABLE_H_
#define KATRACE_PLUGIN_CAPTURE_STRING_TABLE_H_

#include <stdint.h>

#include <atomic>

namespace katrace {

class StringTable {
 public:
  static constexpr uint32_t kCapacity = 4096;
  static constexpr int kMaxProbes = 64;

  // The id of |s| (0 for nullptr or when the table is full). |*is_new| is set when this call
  // claimed the id, and the caller must then record the text.
  uint32_t Intern(const char* s, bool* is_new) {
    *is_new = false;
    if (s == nullptr) return 0;
    uintptr_t key = reinterpret_cast<uintptr_t>(s);
    uint32_t i = static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 52) & (kCapacity - 1);
    for (int probe = 0; probe < kMaxProbes; ++probe, i = (i + 1) & (kCapacity - 1)) {
      uintptr_t k = keys_[i].load(std::memory_order_acquire);
      if (k == key) return i + 1;
      if (k == 0) {
        if (keys_[i].compare_exchange_strong(k, key, std::memory_order_acq_rel)) {
          *is_new = true;
          return i + 1;
        }
        if (k == key) return i + 1;
      }
    }
    unnamed_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }

  uint64_t unnamed() const { return unnamed_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uintptr_t> keys_[kCapacity] = {};
  std::atomic<uint64_t> unnamed_{0};
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_STRING_TABLE_H_
