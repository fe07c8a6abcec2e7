// The delta filter of a spool block (BlockFlags::kBlockDelta): before compression, each 8-byte
// word of an event record's body (Start, State, Stop) is replaced by its difference, mod 2^64,
// from the same word of the last earlier record in the block with the same type, kind and size.
// Ids, host ticks and GPU stamps grow a little from one event to the next, and names, sequence
// numbers and sizes repeat, so the differences are mostly zero bytes, which LZ4 packs far better
// than the values (the spool shrinks by about a third) and faster. Record headers stay as they
// are, so both directions walk the same records and pick the same earlier record. Shared by the
// capture (encode) and every reader (decode); nothing else defines this transform.
#ifndef KATRACE_RECORD_DELTA_H_
#define KATRACE_RECORD_DELTA_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "katrace/spool_format.h"

namespace katrace {
namespace spool {
namespace delta_detail {

// The earlier record a record is coded against: a small direct-mapped table of the last record
// of each (type, kind, size), so a collision only costs compression, never correctness.
constexpr int kSlots = 256;
struct Last {
  uint32_t key[kSlots];
  uint32_t offset[kSlots];
};

inline bool IsEventRecord(uint8_t type) {
  return type == static_cast<uint8_t>(RecordType::kStart) || type == static_cast<uint8_t>(RecordType::kState) ||
         type == static_cast<uint8_t>(RecordType::kStop);
}

// The record at |at| of a block of |n| bytes: its size, or 0 when it is not a whole record
// (a hostile block; both directions stop there and leave the rest as it is).
inline uint32_t RecordAt(const uint8_t* data, size_t at, size_t n, uint32_t* key) {
  if (n - at < sizeof(RecordHeader)) return 0;
  RecordHeader h;
  memcpy(&h, data + at, sizeof(h));
  if (h.size < sizeof(RecordHeader) || h.size % 8 != 0 || h.size > n - at) return 0;
  *key = static_cast<uint32_t>(h.type) | static_cast<uint32_t>(h.kind) << 8 | static_cast<uint32_t>(h.size) << 16;
  return h.size;
}

inline int SlotOf(uint32_t key) { return static_cast<int>((key * 0x9E3779B1u) >> 24); }

inline uint64_t Word(const uint8_t* p) {
  uint64_t w;
  memcpy(&w, p, sizeof(w));
  return w;
}

}  // namespace delta_detail

// Writes the filtered copy of the |n| bytes of whole records at |in| to |out| (n bytes).
inline void EncodeRecordDeltas(const uint8_t* in, uint8_t* out, size_t n) {
  using namespace delta_detail;
  Last last;
  memset(&last, 0, sizeof(last));  // key 0 is never a record's (its size is at least 8)
  size_t at = 0;
  uint32_t key = 0;
  while (uint32_t size = RecordAt(in, at, n, &key)) {
    memcpy(out + at, in + at, sizeof(RecordHeader));
    const int slot = SlotOf(key);
    const bool coded = IsEventRecord(in[at]) && last.key[slot] == key;
    const uint8_t* before = in + last.offset[slot];
    for (uint32_t w = sizeof(RecordHeader); w < size; w += 8) {
      uint64_t v = Word(in + at + w);
      if (coded) v -= Word(before + w);
      memcpy(out + at + w, &v, sizeof(v));
    }
    last.key[slot] = key;
    last.offset[slot] = static_cast<uint32_t>(at);
    at += size;
  }
  if (at < n) memcpy(out + at, in + at, n - at);
}

// Undoes EncodeRecordDeltas in place.
inline void DecodeRecordDeltas(uint8_t* data, size_t n) {
  using namespace delta_detail;
  Last last;
  memset(&last, 0, sizeof(last));
  size_t at = 0;
  uint32_t key = 0;
  while (uint32_t size = RecordAt(data, at, n, &key)) {
    const int slot = SlotOf(key);
    if (IsEventRecord(data[at]) && last.key[slot] == key) {
      const uint8_t* before = data + last.offset[slot];  // already decoded
      for (uint32_t w = sizeof(RecordHeader); w < size; w += 8) {
        const uint64_t v = Word(data + at + w) + Word(before + w);
        memcpy(data + at + w, &v, sizeof(v));
      }
    }
    last.key[slot] = key;
    last.offset[slot] = static_cast<uint32_t>(at);
    at += size;
  }
}

}  // namespace spool
}  // namespace katrace

#endif  // KATRACE_RECORD_DELTA_H_
