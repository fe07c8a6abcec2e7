#include "plugin/export/perfetto_encoder.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "plugin/export/json_buffer.h"
#include "plugin/export/trace_meta_json.h"

namespace katrace {
namespace exporting {

namespace pf = pftrace;

namespace {

// A cache slot for the bytes at |p| (|salt| tells apart what starts there): the address is
// multiplied and its high bits kept, since literals packed one after another differ only in their
// low bits (shifting the address and xoring the length mapped "func" and "count" to one slot).
size_t CacheSlot(const char* p, size_t salt, size_t slots) {
  const uint64_t h = (reinterpret_cast<uintptr_t>(p) + salt) * 0x9e3779b97f4a7c15ull;
  return static_cast<size_t>(h >> 32) & (slots - 1);
}

// Whether the |n| bytes at |a| and |b| are the same: eight at a time, the last eight (or four)
// overlapping what was compared, so a short string costs a compare or two, not a call.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  auto load8 = [](const char* p) {
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
  };
  auto load4 = [](const char* p) {
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
  };
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (load8(a + i) != load8(b + i)) return false;
    }
    return load8(a + n - 8) == load8(b + n - 8);
  }
  if (n >= 4) return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

bool AllAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

uint64_t ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// How long this machine has slept: CLOCK_BOOTTIME minus CLOCK_MONOTONIC, a constant while it is
// awake. A boot read between two monotonic reads brackets it; the brackets of a few tries are
// intersected. A machine that never slept gets exactly 0 (its bracket holds 0), so that two
// exports of one spool write the same snapshot; one that slept gets the bracket's middle.
uint64_t TimeAsleepNs() {
  int64_t low = INT64_MIN, high = INT64_MAX;
  for (int i = 0; i < 4; ++i) {
    const int64_t before = static_cast<int64_t>(ClockNs(CLOCK_MONOTONIC));
    const int64_t boot = static_cast<int64_t>(ClockNs(CLOCK_BOOTTIME));
    const int64_t after = static_cast<int64_t>(ClockNs(CLOCK_MONOTONIC));
    low = std::max(low, boot - after);
    high = std::min(high, boot - before);
  }
  if (low <= 0) return 0;
  return static_cast<uint64_t>(high >= low ? low + (high - low) / 2 : low);
}

// CLOCK_BOOTTIME at the trace's base. Boot and monotonic time differ by the time the machine
// slept, which only the machine that captured knows: when this export runs there (the plugin's
// own export, or katrace-export on the same node), the difference now; elsewhere none, as for a
// machine that never slept. Perfetto relates every clock to BOOTTIME, its own traces' clock, and
// counts a trace that cannot be related to it as an error.
uint64_t BoottimeAtBase(const TraceProcess& p) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || p.host != host) return p.base_monotonic_ns;
  return p.base_monotonic_ns + TimeAsleepNs();
}

}  // namespace

PerfettoEncoder::PerfettoEncoder(WriteBehind* writer) : writer_(writer), buf_(std::make_unique<JsonOut>()) {}

void PerfettoEncoder::Flush() { writer_->Hand(&buf_); }

// One Trace.packet entry: its tag, its length, its bytes.
void PerfettoEncoder::Packet(const ProtoBytes& body) {
  char* p = buf_->Claim(1 + pf::kMaxVarintBytes + body.size());
  uint8_t* u = reinterpret_cast<uint8_t*>(p);
  *u++ = static_cast<uint8_t>(pf::Tag(pf::kTracePacket, pf::kLengthDelimited));
  u = pf::PutVarint(u, body.size());
  memcpy(u, body.data(), body.size());
  buf_->Commit(reinterpret_cast<char*>(u + body.size()));
  state_bytes_ += body.size();
  MaybeFlush();
}

void PerfettoEncoder::DescriptorPacket(const ProtoBytes& descriptor) {
  packet_.clear();
  packet_.Varint(pf::packet::kTrustedPacketSequenceId, pf::kSequenceId);
  packet_.Message(pf::packet::kTrackDescriptor, descriptor);
  Packet(packet_);
}

void PerfettoEncoder::Begin(const TraceProcess& process) {
  process_ = WithARank(process);
  pid0_ = process_.ranks.front().pid;
  process0_uuid_ = pf::kProcessUuidBase + static_cast<uint32_t>(pid0_);

  boottime_base_ = BoottimeAtBase(process_);
  packet_.clear();
  packet_.Varint(pf::packet::kTrustedPacketSequenceId, pf::kSequenceId);
  packet_.Varint(pf::packet::kFirstPacketOnSequence, 1);
  StatePacket();
  for (size_t i = 0; i < process_.ranks.size(); ++i) ProcessTrack(process_.ranks[i]);
}

// Clears the sequence's incremental state and sets it anew (into packet_, which the caller
// began): the clocks at the incremental clock's present time, the packet defaults, and empty
// interning tables. The first packet does it, and one every reset_bytes_ after, so a reader can
// start at any of these points and the tables stay small whatever the trace's length.
void PerfettoEncoder::StatePacket() {
  packet_.Varint(pf::packet::kSequenceFlags, pf::kSeqIncrementalStateCleared);
  ProtoBytes& snapshot = descriptor_;
  snapshot.clear();
  auto clock = [&](uint32_t id, uint64_t ts, bool incremental) {
    sub_.clear();
    sub_.Varint(pf::clock_snapshot::kClockId, id);
    sub_.Varint(pf::clock_snapshot::kTimestamp, ts);
    if (incremental) sub_.Varint(pf::clock_snapshot::kIsIncremental, 1);
    snapshot.Message(pf::clock_snapshot::kClocks, sub_);
  };
  // Trace time (ns from the base) on the incremental clock 64 and the absolute clock 65, bound
  // to the system clocks at the same instant.
  const uint64_t now = static_cast<uint64_t>(clock_);
  clock(pf::kClockTrace, now, true);
  clock(pf::kClockTraceAbsolute, now, false);
  clock(pf::kClockMonotonic, process_.base_monotonic_ns + now, false);
  if (process_.base_realtime_ns != 0) clock(pf::kClockRealtime, process_.base_realtime_ns + now, false);
  clock(pf::kClockBoottime, boottime_base_ + now, false);
  snapshot.Varint(pf::clock_snapshot::kPrimaryTraceClock, pf::kClockBoottime);
  packet_.Message(pf::packet::kClockSnapshot, snapshot);
  sub_.clear();
  sub_.Varint(pf::defaults::kTimestampClockId, pf::kClockTrace);
  packet_.Message(pf::packet::kTracePacketDefaults, sub_);
  Packet(packet_);
  for (auto& table : tables_) table.clear();
  for (CacheEntry& c : cache_) c = CacheEntry();
  for (KeyEntry& k : key_cache_) k = KeyEntry();
  strings_.clear();
  hex_iids_.clear();
  last_hex_iid_ = 0;
  state_bytes_ = 0;
}

void PerfettoEncoder::MaybeClearState() {
  if (state_bytes_ < reset_bytes_) return;
  packet_.clear();
  packet_.Varint(pf::packet::kTrustedPacketSequenceId, pf::kSequenceId);
  StatePacket();
}

// A rank's process track, named as in JSON, its children ordered as the layout says; its
// description is the header (the JSON's process_name args.katrace).
void PerfettoEncoder::ProcessTrack(const TraceRank& r) {
  descriptor_.clear();
  descriptor_.Varint(pf::track::kUuid, pf::kProcessUuidBase + static_cast<uint32_t>(r.pid));
  sub_.clear();
  sub_.Signed(pf::process::kPid, r.pid);
  const std::string name = r.label.empty() ? "rank " + std::to_string(r.pid) : r.label;
  repaired_.clear();
  AppendWellFormedUtf8(&repaired_, name.data(), name.size(), false);
  sub_.String(pf::process::kProcessName, repaired_);
  const std::string where = process_.host + ", pid " + std::to_string(process_.os_pid);
  repaired_.clear();
  AppendWellFormedUtf8(&repaired_, where.data(), where.size(), false);
  sub_.String(pf::process::kProcessLabels, repaired_);
  descriptor_.Message(pf::track::kProcess, sub_);
  descriptor_.Varint(pf::track::kChildOrdering, pf::kChildOrderingExplicit);
  descriptor_.Signed(pf::track::kSiblingOrderRank, r.pid);
  JsonOut identity;
  PutIdentityJson(&identity, process_, r.pid);
  descriptor_.String(pf::track::kDescription, std::string_view(identity.data(), identity.size()));
  DescriptorPacket(descriptor_);
}

void PerfettoEncoder::Track(const TrackInfo& t) {
  descriptor_.clear();
  descriptor_.Varint(pf::track::kUuid, static_cast<uint64_t>(t.track));
  descriptor_.Varint(pf::track::kParentUuid, pf::kProcessUuidBase + static_cast<uint32_t>(t.pid));
  repaired_.clear();
  AppendWellFormedUtf8(&repaired_, t.family.data(), t.family.size(), false);
  descriptor_.String(pf::track::kName, repaired_);
  descriptor_.Signed(pf::track::kSiblingOrderRank, t.sort_index);
  // The family's lanes share the name and this key: the UI shows them as one row group.
  descriptor_.Varint(pf::track::kSiblingMergeBehavior, pf::kSiblingMergeByKey);
  descriptor_.String(pf::track::kSiblingMergeKey, "lanes of " + std::to_string(t.family_track != 0 ? t.family_track : t.track));
  DescriptorPacket(descriptor_);
}

uint64_t PerfettoEncoder::CounterTrack(std::string_view name, std::string_view key) {
  std::string full(name);
  full.push_back(' ');
  full.append(key);
  auto found = counter_tracks_.find(full);
  if (found != counter_tracks_.end()) return found->second;
  const uint64_t uuid = pf::kCounterUuidBase + counter_tracks_.size();
  counter_tracks_.emplace(full, uuid);
  descriptor_.clear();
  descriptor_.Varint(pf::track::kUuid, uuid);
  descriptor_.Varint(pf::track::kParentUuid, process0_uuid_);
  descriptor_.String(pf::track::kName, full);
  sub_.clear();
  sub_.String(pf::counter::kYAxisShareKey, name);  // a counter's series share one axis
  descriptor_.Message(pf::track::kCounter, sub_);
  DescriptorPacket(descriptor_);
  return uuid;
}

// The cache is keyed by where the bytes are: the strings come from a few places that hold the
// same text call after call (literals, the spool's string table, the layout's name buffers), so a
// hit costs a pointer compare and a compare of the bytes, not a hash of them. The bytes are
// compared since the layout reuses some of its buffers for other names.
inline __attribute__((always_inline)) uint64_t PerfettoEncoder::Intern(Table table, std::string_view s) {
  CacheEntry& c = cache_[CacheSlot(s.data(), s.size() * kTables + table, kCacheSize)];
  if (c.ptr == s.data() && c.text.size() == s.size() && c.table == table && SameBytes(c.text.data(), s.data(), s.size())) {
    return c.iid;
  }
  return InternMiss(table, s, &c);
}

__attribute__((noinline)) uint64_t PerfettoEncoder::InternMiss(Table table, std::string_view s, CacheEntry* cached) {
  CacheEntry& c = *cached;
  // The tables hold well-formed UTF-8 (the JSON encoder replaces the same bytes the same way).
  std::string_view text = s;
  if (!AllAscii(s)) {
    repaired_.clear();
    AppendWellFormedUtf8(&repaired_, s.data(), s.size(), false);
    text = repaired_;
  }
  auto& map = tables_[table];
  auto found = map.find(text);
  if (found == map.end()) {
    if (map.size() >= kMaxInterned) return 0;
    strings_.emplace_back(text);
    found = map.emplace(std::string_view(strings_.back()), map.size() + 1).first;
    static constexpr uint32_t kField[kTables] = {pf::interned::kEventNames, pf::interned::kEventCategories,
                                                 pf::interned::kDebugAnnotationNames,
                                                 pf::interned::kDebugAnnotationStringValues};
    entry_.clear();
    entry_.Varint(pf::interned::kIid, found->second);
    entry_.String(pf::interned::kName, found->first);
    interned_.Message(kField[table], entry_);
  }
  if (text.data() == s.data()) c = CacheEntry{s.data(), table, found->first, found->second};  // not a repaired one
  return found->second;
}

uint64_t PerfettoEncoder::InternHex(uint64_t v) {
  if (v == last_hex_ && last_hex_iid_ != 0) return last_hex_iid_;
  auto found = hex_iids_.find(v);
  if (found != hex_iids_.end()) {
    last_hex_ = v;
    last_hex_iid_ = found->second;
    return found->second;
  }
  char hex[16];
  JsonOut::PutHex64(hex, v);
  const uint64_t iid = Intern(kStringValues, std::string_view(hex, sizeof(hex)));
  if (iid != 0 && hex_iids_.size() < kMaxInterned) {
    hex_iids_.emplace(v, iid);
    last_hex_ = v;
    last_hex_iid_ = iid;
  }
  return iid;
}

// The iid of an argument's key. Keys are literals or kKindInfo names (trace_encoder.h): the same
// address always holds the same text, so the address alone finds it.
inline __attribute__((always_inline)) uint64_t PerfettoEncoder::ArgNameIid(std::string_view key) {
  KeyEntry& k = key_cache_[CacheSlot(key.data(), key.size(), kKeyCacheSize)];
  if (k.ptr == key.data() && k.size == key.size() && k.iid != 0) return k.iid;
  return ArgNameMiss(key, &k);
}

__attribute__((noinline)) uint64_t PerfettoEncoder::ArgNameMiss(std::string_view key, KeyEntry* k) {
  const uint64_t iid = Intern(kArgNames, key);
  *k = KeyEntry{key.data(), key.size(), iid};
  return iid;
}

// One DebugAnnotation into event_. The common case (an interned key, a number or an interned
// string) is encoded in place, its length known before it is written; the rest (a table full,
// inline strings) through a nested message.
inline __attribute__((always_inline)) void PerfettoEncoder::Annotation(const Arg& a) {
  namespace an = pf::annotation;
  const uint64_t key = ArgNameIid(a.key);
  // The value's tag and payload are worked out first, then the annotation's bytes go straight
  // into the event. (Built in a small array and then copied, its bytes were stored one at a time
  // and loaded back as words at once: the load waited on the stores at every annotation.)
  uint32_t tag;
  uint64_t payload;  // a varint, or a double's bits (fixed64)
  bool fixed = false;
  switch (a.type) {
    case ArgType::kUint:
      tag = pf::Tag(an::kUintValue, pf::kVarint);
      payload = a.u;
      break;
    case ArgType::kInt:
      tag = pf::Tag(an::kIntValue, pf::kVarint);
      payload = static_cast<uint64_t>(a.i);
      break;
    case ArgType::kBool:
      tag = pf::Tag(an::kBoolValue, pf::kVarint);
      payload = a.u ? 1 : 0;
      break;
    case ArgType::kTime: {
      // Times as JSON has them: µs from the trace base (ns / 1000 is the same double the JSON's
      // three decimals parse to).
      const double us = static_cast<double>(a.i) / 1000.0;
      memcpy(&payload, &us, sizeof(payload));
      tag = pf::Tag(an::kDoubleValue, pf::kFixed64);
      fixed = true;
      break;
    }
    case ArgType::kString:
    case ArgType::kHex64:
    default:
      tag = pf::Tag(an::kStringValueIid, pf::kVarint);
      payload = a.type == ArgType::kString ? Intern(kStringValues, a.s) : InternHex(a.u);
      if (payload == 0) return SlowAnnotation(a, key);
      break;
  }
  if (key == 0) return SlowAnnotation(a, key);
  // The annotation's length is one byte (at most 1 + 10 + 2 + 10), written once its body is: no
  // varint is sized before it is written.
  constexpr size_t kMostBody = 1 + pf::kMaxVarintBytes + 2 + pf::kMaxVarintBytes;
  static_assert(kMostBody < 0x80, "an annotation's length is one byte");
  uint8_t* p = event_.Room(2 + kMostBody);
  p[0] = static_cast<uint8_t>(pf::Tag(pf::event::kDebugAnnotations, pf::kLengthDelimited));
  uint8_t* const body = p + 2;
  uint8_t* q = body;
  *q++ = static_cast<uint8_t>(pf::Tag(an::kNameIid, pf::kVarint));
  q = pf::PutVarint(q, key);
  // Every value tag is one byte but string_value_iid's (17 << 3), two.
  static_assert(pf::Tag(an::kStringValueIid, pf::kVarint) < 0x4000, "value tags fit two bytes");
  q[0] = static_cast<uint8_t>(tag | (tag >= 0x80 ? 0x80 : 0));
  q[1] = static_cast<uint8_t>(tag >> 7);  // in the room taken; the payload overwrites it after a one-byte tag
  q += tag >= 0x80 ? 2 : 1;
  if (fixed) {
    q = pf::PutFixed64(q, payload);
  } else {
    q = pf::PutVarint(q, payload);
  }
  p[1] = static_cast<uint8_t>(q - body);
  event_.Done(q);
}

// An annotation with its key or its string inline: an interning table is full.
void PerfettoEncoder::SlowAnnotation(const Arg& a, uint64_t key) {
  namespace an = pf::annotation;
  annotation_.clear();
  if (key != 0) {
    annotation_.Varint(an::kNameIid, key);
  } else {
    repaired_.clear();
    AppendWellFormedUtf8(&repaired_, a.key.data(), a.key.size(), false);
    annotation_.String(10, repaired_);  // DebugAnnotation.name
  }
  auto inline_string = [&](std::string_view s) {
    repaired_.clear();
    AppendWellFormedUtf8(&repaired_, s.data(), s.size(), false);
    annotation_.String(6, repaired_);  // DebugAnnotation.string_value
  };
  char hex[16];
  switch (a.type) {
    case ArgType::kUint: annotation_.Varint(an::kUintValue, a.u); break;
    case ArgType::kInt: annotation_.Signed(an::kIntValue, a.i); break;
    case ArgType::kBool: annotation_.Varint(an::kBoolValue, a.u ? 1 : 0); break;
    case ArgType::kTime: annotation_.Double(an::kDoubleValue, static_cast<double>(a.i) / 1000.0); break;
    case ArgType::kString: {
      const uint64_t iid = Intern(kStringValues, a.s);
      if (iid != 0) {
        annotation_.Varint(an::kStringValueIid, iid);
      } else {
        inline_string(a.s);
      }
      break;
    }
    case ArgType::kHex64: {
      const uint64_t iid = InternHex(a.u);
      if (iid != 0) {
        annotation_.Varint(an::kStringValueIid, iid);
      } else {
        JsonOut::PutHex64(hex, a.u);
        inline_string(std::string_view(hex, sizeof(hex)));
      }
      break;
    }
  }
  event_.Message(pf::event::kDebugAnnotations, annotation_);
}

void PerfettoEncoder::Name(std::string_view name) {
  const uint64_t iid = Intern(kEventNames, name);
  if (iid != 0) {
    event_.Varint(pf::event::kNameIid, iid);
    return;
  }
  repaired_.clear();
  AppendWellFormedUtf8(&repaired_, name.data(), name.size(), false);
  event_.String(23, repaired_);  // TrackEvent.name
}

void PerfettoEncoder::Category(std::string_view category) {
  const uint64_t iid = Intern(kCategories, category);
  if (iid != 0) {
    event_.Varint(pf::event::kCategoryIids, iid);
    return;
  }
  repaired_.clear();
  AppendWellFormedUtf8(&repaired_, category.data(), category.size(), false);
  event_.String(22, repaired_);  // TrackEvent.categories
}

void PerfettoEncoder::Annotations(const Arg* args, size_t n) {
  for (size_t i = 0; i < n; ++i) Annotation(args[i]);
}

void PerfettoEncoder::CloseEndsUpTo(int64_t ts, uint64_t hold) {
  // At equal times the later-begun END comes first: a part begun after the held slice (a
  // zero-length sibling) closes before the next part begins; the held slice and what was begun
  // before it wait until time passes them.
  auto due = [&](const PendingEnd& e) {
    return e.ts < ts || (e.ts == ts && (hold == kNoHold || e.order > hold));
  };
  while (!ends_.empty() && due(ends_.top())) {
    const PendingEnd end = ends_.top();
    ends_.pop();
    // TrackEvent { type: SLICE_END, track_uuid }: a few bytes, encoded here.
    uint8_t event[2 + 1 + pf::kMaxVarintBytes];
    uint8_t* e = event;
    *e++ = static_cast<uint8_t>(pf::Tag(pf::event::kType, pf::kVarint));
    *e++ = pf::kTypeSliceEnd;
    *e++ = static_cast<uint8_t>(pf::Tag(pf::event::kTrackUuid, pf::kVarint));
    e = pf::PutVarint(e, static_cast<uint64_t>(end.track));
    WriteEventPacket(end.ts, event, static_cast<size_t>(e - event));
  }
}

// The packet is written straight into the output: its few leading fields into a small array,
// then the interned data and the event copied once, after a length computed from their sizes.
void PerfettoEncoder::WriteEventPacket(int64_t ts, const uint8_t* event, size_t event_size, bool moves_clock) {
  uint8_t head[4 * (1 + pf::kMaxVarintBytes)];
  uint8_t* h = head;
  auto field = [&h](uint32_t number, uint64_t v) {
    h = pf::PutVarint(h, pf::Tag(number, pf::kVarint));
    h = pf::PutVarint(h, v);
  };
  if (ts == clock_ || (ts > clock_ && moves_clock)) {
    field(pf::packet::kTimestamp, static_cast<uint64_t>(ts - clock_));
    clock_ = ts;
  } else if (ts >= 0) {
    // Back in time (a slice the layout placed late), or a sample ahead of the slices: absolute,
    // the incremental clock unmoved.
    field(pf::packet::kTimestamp, static_cast<uint64_t>(ts));
    field(pf::packet::kTimestampClockId, pf::kClockTraceAbsolute);
  } else {
    // Before the trace's base (only a spool with contradictory times): on CLOCK_MONOTONIC.
    field(pf::packet::kTimestamp, process_.base_monotonic_ns - static_cast<uint64_t>(-ts));
    field(pf::packet::kTimestampClockId, pf::kClockMonotonic);
  }
  field(pf::packet::kTrustedPacketSequenceId, pf::kSequenceId);
  field(pf::packet::kSequenceFlags, pf::kSeqNeedsIncrementalState);
  const size_t head_size = static_cast<size_t>(h - head);
  const size_t interned = interned_.size();
  constexpr uint32_t kInternedTag = pf::Tag(pf::packet::kInternedData, pf::kLengthDelimited);
  constexpr uint32_t kEventTag = pf::Tag(pf::packet::kTrackEvent, pf::kLengthDelimited);
  static_assert(kInternedTag < 0x80 && kEventTag < 0x80, "one-byte tags");
  const size_t body = head_size + (interned != 0 ? 1 + pf::VarintSize(interned) + interned : 0) + 1 +
                      pf::VarintSize(event_size) + event_size;
  uint8_t* p = reinterpret_cast<uint8_t*>(buf_->Claim(1 + pf::kMaxVarintBytes + body));
  *p++ = static_cast<uint8_t>(pf::Tag(pf::kTracePacket, pf::kLengthDelimited));
  p = pf::PutVarint(p, body);
  memcpy(p, head, head_size);
  p += head_size;
  if (interned != 0) {
    *p++ = static_cast<uint8_t>(kInternedTag);
    p = pf::PutVarint(p, interned);
    memcpy(p, interned_.data(), interned);
    p += interned;
    interned_.clear();
  }
  *p++ = static_cast<uint8_t>(kEventTag);
  p = pf::PutVarint(p, event_size);
  memcpy(p, event, event_size);
  buf_->Commit(reinterpret_cast<char*>(p + event_size));
  state_bytes_ += body;
  MaybeFlush();
}

void PerfettoEncoder::Slice(const SliceEvent& s) {
  MaybeClearState();
  // A part lies inside its event even where both have zero length at one time: the event's END
  // waits for its parts' (Perfetto nests by BEGIN/END order, so closing it first would make the
  // parts its siblings).
  CloseEndsUpTo(s.ts, s.part ? owner_ : kNoHold);
  if (!s.part) owner_ = begun_;
  event_.clear();
  event_.Varint(pf::event::kType, pf::kTypeSliceBegin);
  event_.Varint(pf::event::kTrackUuid, static_cast<uint64_t>(s.track));
  Name(s.name);
  Category(s.category);
  Annotations(s.args, s.nargs);
  // The arrow leaves the slice that carries flow_ids and ends at the next with the id in
  // terminating_flow_ids. The GPU end normally comes second (it starts no earlier); when it
  // comes first (equal starts), it begins the arrow, under the id with kReversedFlowBit set so a
  // reader knows the host end, which terminates it, is the source.
  if (s.flow_out != 0) {
    if (flows_reversed_.erase(s.flow_out) != 0) {
      event_.Fixed64(pf::event::kTerminatingFlowIds, s.flow_out | pf::kReversedFlowBit);
    } else {
      event_.Fixed64(pf::event::kFlowIds, s.flow_out);
      flows_begun_.insert(s.flow_out);
    }
  }
  if (s.flow_in != 0) {
    if (flows_begun_.erase(s.flow_in) != 0) {
      event_.Fixed64(pf::event::kTerminatingFlowIds, s.flow_in);
    } else {
      event_.Fixed64(pf::event::kFlowIds, s.flow_in | pf::kReversedFlowBit);
      flows_reversed_.insert(s.flow_in);
    }
  }
  WriteEventPacket(s.ts, event_.data(), event_.size());
  const int64_t dur = s.dur < 0 ? 0 : s.dur;
  ends_.push(PendingEnd{s.ts + dur, begun_++, s.track});
}

// Counters and markers come as the spool has them, ahead of slices the layout still holds: they
// close no slice and leave the incremental clock with the slices (see WriteEventPacket).
void PerfettoEncoder::Counter(std::string_view name, int64_t ts, const Arg* args, size_t nargs) {
  MaybeClearState();
  for (size_t i = 0; i < nargs; ++i) {
    const uint64_t uuid = CounterTrack(name, args[i].key);
    event_.clear();
    event_.Varint(pf::event::kType, pf::kTypeCounter);
    event_.Varint(pf::event::kTrackUuid, uuid);
    event_.Signed(pf::event::kCounterValue, args[i].type == ArgType::kInt ? args[i].i : static_cast<int64_t>(args[i].u));
    WriteEventPacket(ts, event_.data(), event_.size(), false);
  }
}

void PerfettoEncoder::Instant(std::string_view name, int64_t ts, const Arg* args, size_t nargs) {
  MaybeClearState();
  event_.clear();
  event_.Varint(pf::event::kType, pf::kTypeInstant);
  event_.Varint(pf::event::kTrackUuid, process0_uuid_);
  Name(name);
  Category("katrace");
  Annotations(args, nargs);
  WriteEventPacket(ts, event_.data(), event_.size(), false);
}

void PerfettoEncoder::End(const TraceTotals& t) {
  uint64_t total_drops = 0;
  for (uint64_t d : t.drops) total_drops += d;
  // The closing instant on the global track (JSON: scope "g"), with the same two counts.
  MaybeClearState();
  CloseEndsUpTo(t.end_ts);
  event_.clear();
  event_.Varint(pf::event::kType, pf::kTypeInstant);
  Name("katrace trace end");
  const Arg closing[2] = {Arg::Uint("drops", total_drops), Arg::Uint("incomplete", t.incomplete)};
  Annotations(closing, 2);
  WriteEventPacket(t.end_ts, event_.data(), event_.size());
  CloseEndsUpTo(INT64_MAX);
  // The footer: every count, as the JSON's otherData.katrace, in the description of a track
  // of its own (a track without events, which viewers do not draw).
  descriptor_.clear();
  descriptor_.Varint(pf::track::kUuid, pf::kFooterUuid);
  descriptor_.Varint(pf::track::kParentUuid, process0_uuid_);
  descriptor_.String(pf::track::kName, "katrace footer");
  JsonOut footer;
  PutFooterJson(&footer, process_, t);
  descriptor_.String(pf::track::kDescription, std::string_view(footer.data(), footer.size()));
  DescriptorPacket(descriptor_);
  Flush();
}

}  // namespace exporting
}  // namespace katrace
