// Appends one typed record to the calling thread's capture buffer. When the buffer is full, the
// KATRACE_ON_FULL policy decides: wait for the spool writer (the default; counted), or drop the
// record (counted per kind). Once the writer has stopped, waiting would never end, so the record
// is dropped and counted instead.
#ifndef KATRACE_PLUGIN_CAPTURE_RECORD_APPENDER_H_
#define KATRACE_PLUGIN_CAPTURE_RECORD_APPENDER_H_

#include <sched.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <new>

#include "katrace/spool_format.h"
#include "plugin/capture/thread_buffer.h"

namespace katrace {

struct CaptureCounters {
  std::atomic<uint64_t> dropped[spool::kCounterKinds] = {};
  std::atomic<uint64_t> waits{0};
};

struct AppendPolicy {
  bool drop_when_full = false;
  const std::atomic<bool>* writer_running = nullptr;
  CaptureCounters* counters = nullptr;
};

// The buffer is full (or there is none): wait or drop, per the policy. Kept out of line so that
// the common case below inlines into every callback.
__attribute__((noinline)) inline uint8_t* ReserveRecordWhenFull(ThreadBuffer* b, uint16_t size, int kind,
                                                                const AppendPolicy& policy) {
  uint8_t* p = nullptr;
  if (b != nullptr && !policy.drop_when_full) {
    policy.counters->waits.fetch_add(1, std::memory_order_relaxed);
    while (policy.writer_running->load(std::memory_order_acquire)) {
      sched_yield();
      if ((p = b->Reserve(size)) != nullptr) return p;
    }
  }
  policy.counters->dropped[kind].fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

// Room for |size| bytes in |b|, per the policy; nullptr when the record is dropped (counted
// against |kind|, a Kind value: kCounterKinds covers them all, spool_format.h).
__attribute__((always_inline)) inline uint8_t* ReserveRecord(ThreadBuffer* b, uint16_t size, int kind,
                                                             const AppendPolicy& policy) {
  uint8_t* p = b != nullptr ? b->Reserve(size) : nullptr;
  if (__builtin_expect(p != nullptr, 1)) return p;
  return ReserveRecordWhenFull(b, size, kind, policy);
}

// The header of a record of |size| bytes at |p|.
__attribute__((always_inline)) inline void WriteRecordHeader(uint8_t* p, spool::RecordType type, int kind,
                                                             uint16_t size, uint16_t context, uint16_t flags) {
  spool::RecordHeader h;
  h.type = type;
  h.kind = static_cast<uint8_t>(kind);
  h.size = size;
  h.context = context;
  h.flags = flags;
  memcpy(p, &h, sizeof(h));
}

// Header + a zeroed |Body| that |fill| (called as fill(Body&)) writes in place in the buffer.
// The callbacks build their bodies this way: a body assembled on the stack from narrow stores
// and then copied with wide loads stalls at every record, since a load that spans several
// recent stores cannot be forwarded from them and waits for them to reach the cache.
template <typename Body, typename Fill>
__attribute__((always_inline)) inline bool AppendRecordInPlace(ThreadBuffer* b, const AppendPolicy& policy,
                                                               spool::RecordType type, int kind, uint16_t context,
                                                               uint16_t flags, Fill&& fill) {
  constexpr uint16_t size = spool::RecordSize(sizeof(Body));
  constexpr size_t used = sizeof(spool::RecordHeader) + sizeof(Body);
  uint8_t* p = ReserveRecord(b, size, kind, policy);
  if (p == nullptr) return false;
  WriteRecordHeader(p, type, kind, size, context, flags);
  fill(*new (p + sizeof(spool::RecordHeader)) Body{});
  if constexpr (used < size) memset(p + used, 0, size - used);
  b->Commit(size);
  return true;
}

// Header + |body| (+ |extra| bytes), zero-padded to the record size.
template <typename Body>
inline bool AppendRecord(ThreadBuffer* b, const AppendPolicy& policy, spool::RecordType type, int kind,
                         uint16_t context, uint16_t flags, const Body& body, const void* extra = nullptr,
                         size_t extra_bytes = 0) {
  uint16_t size = spool::RecordSize(sizeof(Body) + extra_bytes);
  uint8_t* p = ReserveRecord(b, size, kind, policy);
  if (p == nullptr) return false;
  WriteRecordHeader(p, type, kind, size, context, flags);
  size_t used = sizeof(spool::RecordHeader);
  memcpy(p + used, &body, sizeof(Body));
  used += sizeof(Body);
  if (extra_bytes != 0) memcpy(p + used, extra, extra_bytes);
  used += extra_bytes;
  if (used < size) memset(p + used, 0, size - used);
  b->Commit(size);
  return true;
}

// A Start record: the common body and the per-kind fields, in one record.
template <typename Fields>
struct StartRecord {
  spool::StartBody start;
  Fields fields;
};

}  // namespace katrace

#endif  // KATRACE_PLUGIN_CAPTURE_RECORD_APPENDER_H_
