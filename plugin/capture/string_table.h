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

// A thread's memo of the ids its strings were given: NCCL passes the same few static strings
// (function, datatype, algorithm and protocol names) on every call, so a repeated one costs a
// load and a compare instead of a probe of the shared table. It lives in the thread's capture
// buffer, which belongs to one session (a later session, after a reload or not, starts with new
// buffers and empty memos; a forked child records nothing), and the address of a string names
// one text for the whole session: NCCL's strings are literals of libnccl, which stays loaded as
// long as a communicator, and so the session, lives. Direct-mapped: a collision only costs a
// probe of the shared table.
class StringIdCache {
 public:
  static constexpr int kEntries = 16;

  // The id remembered for |s| (nullptr, which was never remembered, finds 0: its id).
  bool Find(const char* s, uint32_t* id) const {
    const int i = Entry(s);
    if (keys_[i] != s) return false;
    *id = ids_[i];
    return true;
  }
  void Remember(const char* s, uint32_t id) {
    const int i = Entry(s);
    keys_[i] = s;
    ids_[i] = id;
  }

 private:
  static int Entry(const char* s) {
    return static_cast<int>((reinterpret_cast<uintptr_t>(s) * 0x9E3779B97F4A7C15ull) >> 60);
  }
  static_assert(kEntries == 16, "Entry() keeps the top 4 bits of the hash");

  const char* keys_[kEntries] = {};
  uint32_t ids_[kEntries] = {};
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_STRING_TABLE_H_
