// The subset of Perfetto's trace format (protos/perfetto/trace/, proto2) that katrace writes and
// reads: field numbers and enum values as Perfetto publishes them, and the protobuf wire format's
// tags and varints. Written here from those facts; nothing else of Perfetto's is used. Shared by
// the export's encoder (plugin/export/perfetto_encoder.h) and the tools' reader.
//
// How katrace lays its traces out in this format is in docs/trace-format.md ("Perfetto
// protobuf"); the clock ids and uuid ranges below are part of that layout.
#ifndef KATRACE_COMMON_PERFETTO_WIRE_H_
#define KATRACE_COMMON_PERFETTO_WIRE_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace katrace {
namespace pftrace {

// Wire types.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

constexpr uint32_t Tag(uint32_t field, WireType type) { return (field << 3) | type; }

// Trace
constexpr uint32_t kTracePacket = 1;  // repeated TracePacket

// TracePacket
namespace packet {
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTimestamp = 8;                 // uint64
constexpr uint32_t kTrustedPacketSequenceId = 10;  // uint32
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;  // uint32
constexpr uint32_t kTimestampClockId = 58;
constexpr uint32_t kTracePacketDefaults = 59;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kFirstPacketOnSequence = 87;  // bool
}  // namespace packet
constexpr uint32_t kSeqIncrementalStateCleared = 1;
constexpr uint32_t kSeqNeedsIncrementalState = 2;

// ClockSnapshot { repeated Clock clocks = 1; BuiltinClock primary_trace_clock = 2; }
namespace clock_snapshot {
constexpr uint32_t kClocks = 1;
constexpr uint32_t kPrimaryTraceClock = 2;
// Clock
constexpr uint32_t kClockId = 1;
constexpr uint32_t kTimestamp = 2;
constexpr uint32_t kIsIncremental = 3;
}  // namespace clock_snapshot
// BuiltinClock
constexpr uint32_t kClockRealtime = 1;
constexpr uint32_t kClockMonotonic = 3;
constexpr uint32_t kClockBoottime = 6;
// Sequence-scoped clocks (ids 64..127 are the sequence's own): katrace's timestamps are ns from
// the trace's base (header base_monotonic_ns), as deltas from the previous packet on kClockTrace,
// or absolute on kClockTraceAbsolute for the rare packet that goes back in time.
constexpr uint32_t kClockTrace = 64;
constexpr uint32_t kClockTraceAbsolute = 65;

// TracePacketDefaults { uint32 timestamp_clock_id = 58; }
namespace defaults {
constexpr uint32_t kTimestampClockId = 58;
}

// TrackDescriptor
namespace track {
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kCounter = 8;
constexpr uint32_t kChildOrdering = 11;
constexpr uint32_t kSiblingOrderRank = 12;  // int32
constexpr uint32_t kDescription = 14;
constexpr uint32_t kSiblingMergeBehavior = 15;
constexpr uint32_t kSiblingMergeKey = 16;
}  // namespace track
constexpr uint32_t kChildOrderingExplicit = 3;
constexpr uint32_t kSiblingMergeByKey = 3;

// ProcessDescriptor
namespace process {
constexpr uint32_t kPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kProcessLabels = 8;
}  // namespace process

// CounterDescriptor
namespace counter {
constexpr uint32_t kYAxisShareKey = 7;
}

// TrackEvent
namespace event {
constexpr uint32_t kCategoryIids = 3;      // repeated uint64
constexpr uint32_t kDebugAnnotations = 4;  // repeated DebugAnnotation
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kCounterValue = 30;       // int64
constexpr uint32_t kFlowIds = 47;            // repeated fixed64
constexpr uint32_t kTerminatingFlowIds = 48;  // repeated fixed64
constexpr uint32_t kCategories = 22;  // repeated string: a category not interned
constexpr uint32_t kName = 23;        // string: a name not interned
}  // namespace event
constexpr uint32_t kTypeSliceBegin = 1;
constexpr uint32_t kTypeSliceEnd = 2;
constexpr uint32_t kTypeInstant = 3;
constexpr uint32_t kTypeCounter = 4;

// DebugAnnotation
namespace annotation {
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kBoolValue = 2;
constexpr uint32_t kUintValue = 3;
constexpr uint32_t kIntValue = 4;
constexpr uint32_t kDoubleValue = 5;
constexpr uint32_t kStringValue = 6;  // a value not interned
constexpr uint32_t kName = 10;        // a name not interned
constexpr uint32_t kStringValueIid = 17;
}  // namespace annotation

// InternedData: each entry { uint64 iid = 1; string name = 2; } (InternedString: bytes str = 2)
namespace interned {
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kDebugAnnotationStringValues = 29;
constexpr uint32_t kIid = 1;
constexpr uint32_t kName = 2;
}  // namespace interned

// katrace's track uuids: a layout track is its own number (1, 2, ...: small varints in every
// event); the others sit in ranges of their own.
constexpr uint64_t kProcessUuidBase = uint64_t{1} << 32;  // + the rank's pid
constexpr uint64_t kCounterUuidBase = uint64_t{2} << 32;  // + the series' index
constexpr uint64_t kFooterUuid = uint64_t{3} << 32;
// katrace-merge's layout tracks: one file holds many ranks' tracks, whose JSON tids repeat from
// rank to rank, so a merged track is kMergedTrackUuidBase + (k << 32) + tid, k numbering the
// merged trace's processes: a reader takes the tid from the low 32 bits.
constexpr uint64_t kMergedTrackUuidBase = uint64_t{1} << 40;
constexpr uint64_t kTidMask = 0xffffffffu;
constexpr uint32_t kSequenceId = 1;  // the one sequence a katrace file has
// A flow id with this bit set was begun at its GPU end (both ends start at the same ns and the
// GPU slice came first): the slice that terminates it is the arrow's host end, its source in
// JSON. katrace's flow ids (Coll/P2p ids) never reach it.
constexpr uint64_t kReversedFlowBit = uint64_t{1} << 63;

constexpr size_t kMaxVarintBytes = 10;

// Writes |v| as a varint at |p|; returns the end.
inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Writes |v| as a fixed64 (little-endian) at |p|; returns the end. One store on a little-endian
// host, where a loop of eight byte stores was an eighth of an annotation's instructions.
inline uint8_t* PutFixed64(uint8_t* p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &v, sizeof(v));
#else
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
#endif
  return p + 8;
}

// Seven bits a byte, from the highest set bit: computed, not looped. A loop that stops after a
// data-dependent count mispredicts wherever lengths vary (ids, times, counts): looped, this cost
// the protobuf export a fifth of its time.
inline size_t VarintSize(uint64_t v) {
  const size_t top_bit = static_cast<size_t>(63 - __builtin_clzll(v | 1));
  return (top_bit * 9 + 73) / 64;
}

// Reads a varint from [*p, end): false (and *p unchanged) when it is cut or longer than ten bytes.
inline bool GetVarint(const uint8_t** p, const uint8_t* end, uint64_t* v) {
  uint64_t out = 0;
  const uint8_t* q = *p;
  for (int shift = 0; shift < 70 && q < end; shift += 7) {
    const uint8_t b = *q++;
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      if (shift == 63 && b > 1) return false;  // past 64 bits
      *p = q;
      *v = out;
      return true;
    }
  }
  return false;
}

}  // namespace pftrace
}  // namespace katrace

#endif  // KATRACE_COMMON_PERFETTO_WIRE_H_
