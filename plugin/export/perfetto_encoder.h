// The Perfetto protobuf encoder (`.pftrace`, docs/trace-format.md "Perfetto protobuf"): the
// layout's tracks, slices, flows, counters and instants as Perfetto's own TracePackets, written
// by hand into the streaming buffer (plugin/export/proto_bytes.h) and handed to the same file
// writer as JSON, so memory stays bounded and gzip works the same.
//
// What Perfetto's format says that JSON cannot: each track's parent (every track is a child of
// its rank's process track), that the lanes of one family belong together (siblings with one
// name and merge key, which the UI folds into one row group), which clock the timestamps are on
// (a ClockSnapshot binds them to CLOCK_MONOTONIC, CLOCK_REALTIME and, on the machine the capture
// ran on, CLOCK_BOOTTIME), and strings said once (names, categories, argument names and values
// are interned per sequence). Slices become BEGIN/END pairs: the layout hands a slice whole, in
// start order, so each END waits in a heap until time passes it; the heap holds the slices open
// at one time, never the trace. Timestamps are deltas on an incremental clock (a few bytes each).
#ifndef KATRACE_PLUGIN_EXPORT_PERFETTO_ENCODER_H_
#define KATRACE_PLUGIN_EXPORT_PERFETTO_ENCODER_H_

#include <stdint.h>

#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "plugin/export/json_out.h"
#include "plugin/export/proto_bytes.h"
#include "plugin/export/trace_encoder.h"
#include "plugin/export/write_behind.h"

namespace katrace {
namespace exporting {

class PerfettoEncoder : public TraceEncoder {
 public:
  explicit PerfettoEncoder(WriteBehind* writer);
  ~PerfettoEncoder() override = default;

  void Begin(const TraceProcess& process) override;
  void Track(const TrackInfo& track) override;
  void Slice(const SliceEvent& slice) override;
  void Counter(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override;
  void Instant(std::string_view name, int64_t ts, const Arg* args, size_t nargs) override;
  void End(const TraceTotals& totals) override;

  // Past this many entries an interning table takes no more: further strings are written
  // inline, so a trace of ever-new strings (a hostile spool) cannot grow the tables unbounded.
  static constexpr size_t kMaxInterned = 1 << 16;
  // The sequence's incremental state (interning, the incremental clock) starts anew after this
  // many bytes (settable for tests, which want many such points in a small trace).
  static constexpr uint64_t kDefaultResetBytes = uint64_t{8} << 20;
  void set_reset_bytes(uint64_t bytes) { reset_bytes_ = bytes; }

 private:
  enum Table : uint8_t { kEventNames, kCategories, kArgNames, kStringValues, kTables };
  struct PendingEnd {
    int64_t ts;
    uint64_t order;  // equal ends close the later-begun slice first
    int track;
    bool operator>(const PendingEnd& o) const { return ts != o.ts ? ts > o.ts : order < o.order; }
  };

  // The iid of |s| in |table|, interning it (into this packet's interned_data) when new; 0 when
  // the table is full and |s| must be written inline. The cache hit is inline (every event
  // names a few strings), the rest out of line.
  uint64_t Intern(Table table, std::string_view s);
  uint64_t InternHex(uint64_t v);
  void Name(std::string_view name);  // into event_: interned, or inline when the table is full
  void Category(std::string_view category);
  uint64_t ArgNameIid(std::string_view key);
  void Annotation(const Arg& a);
  void SlowAnnotation(const Arg& a, uint64_t key);
  void Annotations(const Arg* args, size_t n);

  // One TracePacket with the TrackEvent |event| at |ts| (ns from the trace base), with what was
  // interned for it. Every event calls CloseEndsUpTo(ts) before it builds its TrackEvent, so the
  // ENDs that time passes come first.
  // |moves_clock| false: a packet ahead of slices still to come (a counter sample, a marker, which
  // the layout hands on as they arrive) is written on the absolute clock ahead of the incremental
  // one, which stays where the slices are, so that they need no absolute times of their own.
  void WriteEventPacket(int64_t ts, const uint8_t* event, size_t event_size, bool moves_clock = true);
  // |hold|: the begin order of a slice whose END at |ts| must stay open (a part's event: its
  // parts come next), with every END at |ts| begun before it; kNoHold closes all up to |ts|.
  static constexpr uint64_t kNoHold = UINT64_MAX;
  void CloseEndsUpTo(int64_t ts, uint64_t hold = kNoHold);
  void StatePacket();
  void MaybeClearState();
  void DescriptorPacket(const ProtoBytes& descriptor);
  void Packet(const ProtoBytes& body);
  void ProcessTrack(const TraceRank& r);
  uint64_t CounterTrack(std::string_view name, std::string_view key);
  void MaybeFlush() {
    if (buf_->size() >= kFlushBytes) Flush();
  }
  void Flush();

  static constexpr size_t kFlushBytes = 1 << 20;
  WriteBehind* writer_;
  std::unique_ptr<JsonOut> buf_;  // a byte buffer here: WriteBehind hands any bytes on
  TraceProcess process_;
  int pid0_ = 0;
  uint64_t process0_uuid_ = 0;

  // Scratch messages, cleared per use.
  ProtoBytes packet_, event_, annotation_, interned_, entry_, descriptor_, sub_;

  int64_t clock_ = 0;  // the incremental clock's time: the last packet written on it
  uint64_t boottime_base_ = 0;
  uint64_t state_bytes_ = 0;  // written since the state was last cleared
  uint64_t reset_bytes_ = kDefaultResetBytes;
  uint64_t begun_ = 0;
  uint64_t owner_ = kNoHold;  // the begin order of the last slice that was not a part
  std::priority_queue<PendingEnd, std::vector<PendingEnd>, std::greater<PendingEnd>> ends_;

  // The interned strings, in stable storage, and per table a map from their text to their iid.
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, uint64_t> tables_[kTables];
  // A direct-mapped front of the tables, keyed by the address of the bytes looked up (and the
  // table), their text compared on a hit.
  struct CacheEntry {
    const char* ptr = nullptr;
    Table table = kEventNames;
    std::string_view text;
    uint64_t iid = 0;
  };
  static constexpr size_t kCacheSize = 4096;
  CacheEntry cache_[kCacheSize];
  struct KeyEntry {
    const char* ptr = nullptr;
    size_t size = 0;
    uint64_t iid = 0;
  };
  static constexpr size_t kKeyCacheSize = 512;
  KeyEntry key_cache_[kKeyCacheSize];
  // The lookups that the caches above do not answer (out of line).
  uint64_t InternMiss(Table table, std::string_view s, CacheEntry* c);
  uint64_t ArgNameMiss(std::string_view key, KeyEntry* k);
  std::unordered_map<uint64_t, uint64_t> hex_iids_;
  // The last hex value interned and its iid: a communicator's hash, repeated by each of its
  // events (0: none).
  uint64_t last_hex_ = 0, last_hex_iid_ = 0;
  std::string repaired_;  // a string whose bytes were not all UTF-8, made well-formed

  std::unordered_map<std::string, uint64_t> counter_tracks_;  // "<name> <key>" -> uuid
  std::unordered_set<uint64_t> flows_begun_, flows_reversed_;
};

}  // namespace exporting
}  // namespace katrace

#endif  // KATRACE_PLUGIN_EXPORT_PERFETTO_ENCODER_H_
