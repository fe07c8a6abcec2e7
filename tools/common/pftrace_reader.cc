// The protobuf trace reader (see pftrace_reader.h). The Trace's packets are read from the stream
// one at a time and decoded in memory (pftrace_packet.h); what spans packets lives here: the
// clocks, the interning tables, the tracks with their open slices, the flows begun and not yet
// ended, the counter samples of one time. The events leave through a BeginOrderQueue, in the
// JSON trace's order.
#include "tools/common/pftrace_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/perfetto_wire.h"
#include "tools/common/begin_order_queue.h"
#include "tools/common/json_text.h"
#include "tools/common/pftrace_packet.h"
#include "tools/common/plural.h"
#include "tools/common/proto_fields.h"
#include "tools/common/utf8_text.h"

namespace katrace::tools {
namespace {

namespace pf = katrace::pftrace;

// What an entry of a table here costs beyond its strings (node, hash bucket, allocator), about;
// the reader's state counts against ReadOptions::max_held_bytes with the held events.
constexpr uint64_t kEntryBytes = 64;

// nlohmann's parser reads a non-negative integer as unsigned and a negative one as signed; the
// events are built the same way, so that they equal the JSON trace's, number types included.
Json IntJson(int64_t v) { return v >= 0 ? Json(static_cast<uint64_t>(v)) : Json(v); }

// ns as the JSON trace's µs: the double its three-decimal text parses to. Below 2^53 ns that is
// the quotient (both are ns / 1000 correctly rounded); past it, the text is made and parsed.
Json MicrosJson(int64_t ns) {
  constexpr int64_t kExact = int64_t{1} << 53;
  if (ns > -kExact && ns < kExact) return Json(static_cast<double>(ns) / 1000.0);
  return Json(std::strtod(NsToUsText(ns).c_str(), nullptr));
}

// An empty object with room for |members| members. Room matters: an object's members are pairs
// whose key is const, so a vector growing past its room copies them, values and all, rather
// than moving them.
Json ObjectFor(size_t members) {
  Json object = Json::object();
  object.get_ref<Json::object_t&>().reserve(members);
  return object;
}

// Appends a member without nlohmann's duplicate-key search (a hostile event may have many
// args); as in the JSON reader's DOM, a duplicate stays and Field() reads the last. The value is
// made in its place from whatever makes it (a number, a string, another Json), not made and
// then moved there.
template <typename Value>
void Put(Json* object, std::string key, Value&& value) {
  object->get_ref<Json::object_t&>().emplace_back(std::move(key), std::forward<Value>(value));
}

// {KEY:VALUE}
Json Object(const char* key, Json value) {
  Json object = ObjectFor(1);
  Put(&object, key, std::move(value));
  return object;
}

// {"name":NAME,"ph":"M","pid":PID,"tid":TID,"args":ARGS}: JSON's metadata events.
Json Metadata(const char* name, int64_t pid, uint64_t tid, Json args) {
  Json event = ObjectFor(5);
  Put(&event, "name", name);
  Put(&event, "ph", "M");
  Put(&event, "pid", IntJson(pid));
  Put(&event, "tid", tid);
  Put(&event, "args", std::move(args));
  return event;
}

// A string of the file made well-formed UTF-8, as the JSON reader makes its strings.
struct Text {
  std::string text;
  bool repaired = false;
};

Text Repaired(std::string_view bytes) {
  Text t;
  if (IsUtf8(bytes)) {
    t.text.assign(bytes);
  } else {
    t.repaired = AppendUtf8Repaired(bytes, &t.text) > 0;
  }
  return t;
}

// One table of interned strings. katrace's writer gives each table's strings the iids 1, 2, 3,
// ... in order, so an iid indexes a vector: a lookup for every name, category and argument is a
// bounds check and a load, not a hash. An iid far past the entries already there (another
// writer's, or a hostile file's) goes to a map instead, so the vector stays at most about twice
// the entries it holds.
class InternTable {
 public:
  const Text* Find(uint64_t iid) const {
    if (iid < dense_.size() && dense_[iid].has) return &dense_[iid].text;
    if (sparse_.empty()) return nullptr;
    const auto it = sparse_.find(iid);
    return it != sparse_.end() ? &it->second : nullptr;
  }
  // Gives |iid| the text |text| (replacing what it had); what the table holds changes by the
  // difference between what it returns and |*replaced|, in bytes (text plus kEntryBytes).
  void Set(uint64_t iid, Text text, uint64_t* added, uint64_t* replaced) {
    *added = text.text.size() + kEntryBytes;
    *replaced = 0;
    Text* slot = nullptr;
    // An iid in the map stays there (the vector may have grown past it since).
    const auto in_map = sparse_.find(iid);
    if (in_map == sparse_.end() && (iid < dense_.size() || iid < 2 * dense_entries_ + 64)) {
      if (iid >= dense_.size()) dense_.resize(iid + 1);
      DenseEntry& entry = dense_[iid];
      if (entry.has) {
        *replaced = entry.text.text.size() + kEntryBytes;
      } else {
        entry.has = true;
        ++dense_entries_;
      }
      slot = &entry.text;
    } else {
      if (in_map != sparse_.end()) *replaced = in_map->second.text.size() + kEntryBytes;
      slot = &sparse_[iid];
    }
    *slot = std::move(text);
    bytes_ += *added - *replaced;
  }
  // Empties it; returns the bytes it held.
  uint64_t Clear() {
    dense_.clear();
    sparse_.clear();
    dense_entries_ = 0;
    return std::exchange(bytes_, 0);
  }

 private:
  struct DenseEntry {
    bool has = false;
    Text text;
  };
  std::vector<DenseEntry> dense_;
  uint64_t dense_entries_ = 0;
  std::unordered_map<uint64_t, Text> sparse_;
  uint64_t bytes_ = 0;
};

constexpr size_t kTables = 4;  // PbTable's
const char* const kTableNames[kTables] = {"event category", "event name", "debug annotation name",
                                          "debug annotation string value"};

enum class TrackKind {
  kProcess,  // a rank
  kSlices,   // a layout track: the JSON's tid
  kCounter,
  kOther,     // a kind katrace does not write (a later version's): its events are left out
  kUnusable,  // declared with a problem already reported: its events are left out silently
};

struct OpenSlice {
  uint64_t position;  // in the queue
  int64_t begin_ns;
};

struct Track {
  TrackKind kind = TrackKind::kOther;
  int64_t pid = 0;    // its process's (a process track's own)
  uint64_t tid = 0;   // a layout track's: its uuid
  std::string share_key;   // a counter's: the JSON event's name
  std::string series_key;  // a counter's: its arg in that event
  uint64_t repaired = 0;   // strings of the two above that were not UTF-8
  std::vector<OpenSlice> open;  // a layout track's open slices, innermost last
};

struct PendingFlow {
  int64_t pid;
  uint64_t tid;
  int64_t ts_ns;
  uint64_t offset;  // the packet of the slice that began it
};

// The samples of one JSON "C" event: consecutive counter events of one time, one process and one
// y-axis share key (the counter's name), each of another series.
struct CounterGroup {
  bool active = false;
  uint64_t offset = 0;
  int64_t ts_ns = 0;
  int64_t pid = 0;
  std::string name;
  Json args;
  std::unordered_set<std::string> keys;
  uint64_t repaired = 0;
};

class PftraceReader {
 public:
  PftraceReader(GzInput* input, TraceVisitor* visitor, const ReadOptions& options,
                ReadResult* result)
      : input_(input), visitor_(visitor), options_(options), result_(result), queue_(visitor) {}

  void Run();

 private:
  // The stream.
  bool StreamVarint(uint64_t* v, uint64_t at, const char* what);
  bool Skip(uint64_t n, uint64_t at, const char* what);
  bool SkipField(uint32_t type, uint64_t at);
  bool ReadPacket(uint64_t at);
  bool WithinBudget(uint64_t at);
  void End();

  // Fail stops the read; Problem reports and goes on.
  bool Fail(ReadStatus status, uint64_t at, const std::string& message);
  void Problem(uint64_t at, const std::string& message);

  // A packet and what it holds.
  bool Packet(std::string_view bytes, uint64_t at, uint64_t body_at);
  bool ClockSnapshot(const std::vector<PbClock>& clocks, uint64_t at);
  bool Time(uint64_t clock, uint64_t ts, uint64_t at, std::optional<int64_t>* ns);
  void InternedData(const std::vector<PbInterned>& entries, uint64_t at);
  const Text* Interned(PbTable table, uint64_t iid, uint64_t at);
  bool Descriptor(const PbDescriptor& d, uint64_t at);
  void Footer(const PbDescriptor& d, uint64_t at);
  bool ProcessTrack(const PbDescriptor& d, uint64_t at, Track* track);
  bool ChildTrack(const PbDescriptor& d, uint64_t at, Track* track);
  bool TrackEvent(const PbEvent& e, uint64_t at, int64_t ts_ns);

  // The events.
  bool Enqueue(Json json, uint64_t at, uint64_t repaired, std::optional<int64_t> ts_ns,
               bool open = false);
  Track* EventTrack(const PbEvent& e, uint64_t at, const char* what,
                    std::initializer_list<TrackKind> kinds);
  void NameAndCategory(const PbEvent& e, uint64_t at, Json* event, uint64_t* repaired);
  Json Args(const PbEvent& e, uint64_t at, uint64_t* repaired);
  bool SliceBegin(const PbEvent& e, Track* track, uint64_t at, int64_t ts_ns);
  bool SliceEnd(Track* track, uint64_t at, int64_t ts_ns);
  bool Instant(const PbEvent& e, uint64_t at, int64_t ts_ns);
  bool Counter(const PbEvent& e, Track* track, uint64_t at, int64_t ts_ns);
  bool FlushCounterGroup();

  GzInput* input_;
  TraceVisitor* visitor_;
  const ReadOptions& options_;
  ReadResult* result_;
  BeginOrderQueue queue_;
  bool failed_ = false;
  uint64_t packets_ = 0;
  std::string bytes_;  // the packet being decoded
  PbPacket packet_;

  // Clocks, as the latest snapshot binds them: its instant's trace time (clock 65's reading
  // there: katrace's clocks 64 and 65 count ns from the base), each clock's reading there,
  // clock 64's running reading since; and the default clock (katrace's: 64).
  int64_t snapshot_ns_ = 0;
  std::vector<PbClock> clocks_;
  uint64_t clock64_at_snapshot_ = 0;
  uint64_t clock64_ = 0;
  uint64_t default_clock_ = pf::kClockTrace;

  InternTable interned_[kTables];
  std::unordered_map<uint64_t, Track> tracks_;
  std::map<std::pair<uint64_t, std::string>, uint64_t> lanes_;  // (parent, merge key) -> tracks
  bool has_first_pid_ = false;
  int64_t first_pid_ = 0;  // the first process track's: global instants are on it
  bool global_instant_since_ = false;  // a global instant came after first_pid_ was declared
  std::unordered_map<uint64_t, PendingFlow> flows_;
  CounterGroup group_;
  uint64_t state_bytes_ = 0;  // tables, tracks and flows, about

  bool saw_footer_ = false;
  bool has_footer_ = false;
  Json footer_;
};

bool PftraceReader::Fail(ReadStatus status, uint64_t at, const std::string& message) {
  if (failed_) return false;
  failed_ = true;
  result_->status = status;
  result_->error_line = at;
  switch (status) {
    case ReadStatus::kTruncated:
      result_->message = "truncated: " + message;
      if (!input_->error().empty()) result_->message = input_->error() + "; " + result_->message;
      break;
    case ReadStatus::kTooLarge: result_->message = "cannot read: " + message; break;
    default: result_->message = "invalid protobuf: " + message; break;
  }
  return false;
}

void PftraceReader::Problem(uint64_t at, const std::string& message) {
  if (result_->problems++ == 0) result_->first_problem = "byte " + std::to_string(at) + ": " + message;
  visitor_->OnProblem(at, message);
}

// |what| (with |at|, the packet or field it belongs to) names the varint in messages.
bool PftraceReader::StreamVarint(uint64_t* v, uint64_t at, const char* what) {
  const uint64_t start = input_->bytes_read();
  uint64_t out = 0;
  for (int i = 0; i < static_cast<int>(pf::kMaxVarintBytes); ++i) {
    const int c = input_->sbumpc();
    if (c == kEof) {
      return Fail(ReadStatus::kTruncated, start,
                  "input ends inside " + std::string(what) + " at byte " + std::to_string(at) +
                      " after " + Plural(packets_, "whole packet"));
    }
    out |= static_cast<uint64_t>(c & 0x7f) << (7 * i);
    if ((c & 0x80) == 0) {
      if (i == 9 && c > 1) break;
      *v = out;
      return true;
    }
  }
  return Fail(ReadStatus::kBadProtobuf, start,
              "bad varint at byte " + std::to_string(start) + " (" + what + " at byte " +
                  std::to_string(at) + "): longer than ten bytes or past 64 bits");
}

bool PftraceReader::Skip(uint64_t n, uint64_t at, const char* what) {
  char scratch[1 << 16];
  while (n > 0) {
    const std::streamsize want = static_cast<std::streamsize>(std::min<uint64_t>(n, sizeof(scratch)));
    if (input_->sgetn(scratch, want) < want) {
      return Fail(ReadStatus::kTruncated, at,
                  "input ends inside " + std::string(what) + " at byte " + std::to_string(at));
    }
    n -= static_cast<uint64_t>(want);
  }
  return true;
}

// A Trace field other than packet (none exists today): skipped, as protobuf's rules say.
bool PftraceReader::SkipField(uint32_t type, uint64_t at) {
  uint64_t length = 0;
  switch (type) {
    case pf::kVarint: return StreamVarint(&length, at, "the value of an unknown field");
    case pf::kFixed64: return Skip(8, at, "an unknown field");
    case pf::kFixed32: return Skip(4, at, "an unknown field");
    case pf::kLengthDelimited:
      return StreamVarint(&length, at, "the length of an unknown field") &&
             Skip(length, at, "an unknown field");
    default:
      return Fail(ReadStatus::kBadProtobuf, at,
                  "wire type " + std::to_string(type) + " (" + WireTypeName(type) + ") at byte " +
                      std::to_string(at) + ", which no katrace message has");
  }
}

bool PftraceReader::ReadPacket(uint64_t at) {
  uint64_t length = 0;
  if (!StreamVarint(&length, at, "the length of the packet")) return false;
  const uint64_t cap = std::max(options_.max_event_bytes, options_.max_other_data_bytes);
  if (length > cap) {
    return Fail(ReadStatus::kTooLarge, at,
                "the packet at byte " + std::to_string(at) + " says " + std::to_string(length) +
                    " bytes, more than " + std::to_string(cap >> 20) + " MiB (the limit)");
  }
  const uint64_t body_at = input_->bytes_read();
  // Read in pieces, so that a length the file does not have costs no more memory than its bytes.
  bytes_.clear();
  while (bytes_.size() < length) {
    const size_t had = bytes_.size();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(length - had, size_t{1} << 20));
    bytes_.resize(had + n);
    const std::streamsize got = input_->sgetn(bytes_.data() + had, static_cast<std::streamsize>(n));
    if (got < static_cast<std::streamsize>(n)) {
      return Fail(ReadStatus::kTruncated, at,
                  "input ends inside the packet at byte " + std::to_string(at) + ", which has " +
                      std::to_string(had + static_cast<size_t>(got)) + " of its " +
                      std::to_string(length) + " bytes, after " + Plural(packets_, "whole packet"));
    }
  }
  ++packets_;
  return Packet(bytes_, at, body_at);
}

// Past half the limit after a compaction (which hands on what it can), the read stops: so
// compactions forced here are at least half the limit of new bytes apart.
bool PftraceReader::WithinBudget(uint64_t at) {
  const uint64_t limit = options_.max_held_bytes;
  if (queue_.held_bytes() + state_bytes_ <= limit) return true;
  queue_.Compact();
  if (queue_.stopped() || queue_.held_bytes() + state_bytes_ <= limit / 2) return true;
  std::string oldest;
  if (const HeldEvent* front = queue_.front()) {
    oldest = " (the oldest begun at byte " + std::to_string(front->event.line) + ")";
  }
  return Fail(ReadStatus::kTooLarge, at,
              "at byte " + std::to_string(at) + " the reader holds more than " +
                  std::to_string(limit / 2 >> 20) + " MiB (half its limit): " +
                  Plural(queue_.held(), "event") + " waiting for slices still open" + oldest +
                  ", and " + std::to_string(state_bytes_ >> 20) +
                  " MiB of interned strings, tracks and flows not yet ended");
}

void PftraceReader::Run() {
  result_->format = TraceFileFormat::kPerfettoProtobuf;
  try {
    for (;;) {
      const uint64_t at = input_->bytes_read();
      if (!WithinBudget(at) || queue_.stopped()) break;
      if (input_->sgetc() == kEof) break;
      uint64_t tag = 0;
      if (!StreamVarint(&tag, at, "the tag of the field")) break;
      const uint32_t type = static_cast<uint32_t>(tag & 7);
      if ((tag >> 3) == pf::kTracePacket) {
        if (type != pf::kLengthDelimited) {
          Fail(ReadStatus::kBadProtobuf, at,
               "Trace.packet (field 1) at byte " + std::to_string(at) + " has wire type " +
                   WireTypeName(type) + ", not length-delimited");
          break;
        }
        if (!ReadPacket(at)) break;
      } else if ((tag >> 3) == 0) {
        Fail(ReadStatus::kBadProtobuf, at,
             "field number 0 at byte " + std::to_string(at) + " (not a protobuf field)");
        break;
      } else if (!SkipField(type, at)) {
        break;
      }
    }
    End();
  } catch (const std::exception& ex) {  // a visitor's, or std::bad_alloc
    result_->status = ReadStatus::kBadProtobuf;
    result_->error_line = input_->bytes_read();
    result_->message = std::string("cannot read: ") + ex.what() + " (at byte " +
                       std::to_string(result_->error_line) + ")";
  }
  result_->events = queue_.delivered();
}

void PftraceReader::End() {
  FlushCounterGroup();
  // Bytes that are not gzip after a whole trace's gzip stream: every event is read and checked,
  // and the file is still reported.
  const bool only_trailing_bytes = input_->trailing_bytes() && saw_footer_;
  if (!failed_ && !input_->error().empty() && !only_trailing_bytes) {
    Fail(ReadStatus::kTruncated, input_->bytes_read(), "after " + Plural(packets_, "whole packet"));
  }
  if (!failed_ && !saw_footer_) {
    Fail(ReadStatus::kTruncated, input_->bytes_read(),
         "input ends after " + Plural(packets_, "packet") + " (at byte " +
             std::to_string(input_->bytes_read()) +
             ") without the footer (the 'katrace footer' track, the file's last packet)");
  }
  // A cut file is cut inside its open slices and flows: only a whole one has them as problems.
  const bool whole = !failed_;
  queue_.Finish([&](const HeldEvent& held) {
    if (!whole) return;
    Problem(held.event.line, "slice " + QuoteForMessage(StringField(held.event.json, "name"), 80) +
                                 " on track " + Field(held.event.json, "tid")->dump() +
                                 " begins here and never ends; left out");
  });
  if (queue_.stopped()) {
    result_->status = ReadStatus::kStopped;
    return;
  }
  if (!whole) return;
  std::vector<std::pair<uint64_t, uint64_t>> dangling;  // (offset, id), reported in file order
  for (const auto& [id, flow] : flows_) dangling.emplace_back(flow.offset, id);
  std::sort(dangling.begin(), dangling.end());
  for (const auto& [offset, id] : dangling) {
    Problem(offset, "flow id " + std::to_string(id) +
                        " begins here and never ends (no later slice has it in "
                        "terminating_flow_ids); no arrow");
  }
  if (has_footer_) {
    Json other = Json::object();
    Put(&other, "katrace", std::move(footer_));
    result_->has_other_data = true;
    visitor_->OnOtherData(other);
  }
  if (only_trailing_bytes && result_->status == ReadStatus::kOk) {
    result_->status = ReadStatus::kTrailingBytes;
    result_->error_line = input_->bytes_read();
    result_->message = input_->error();
  }
}

bool PftraceReader::Packet(std::string_view bytes, uint64_t at, uint64_t body_at) {
  std::string error;
  if (!DecodePacket(bytes, body_at, &packet_, &error)) {
    return Fail(ReadStatus::kBadProtobuf, at, "the packet at byte " + std::to_string(at) + ": " + error);
  }
  const PbPacket& p = packet_;
  if (!p.has_content()) return true;
  if (p.sequence.value_or(0) != pf::kSequenceId) {
    Problem(at, (p.sequence ? "packet on sequence " + std::to_string(*p.sequence)
                            : std::string("packet without trusted_packet_sequence_id")) +
                    " (katrace writes one, sequence 1); left out");
    return true;
  }
  if (p.flags.value_or(0) & pf::kSeqIncrementalStateCleared) {
    for (InternTable& table : interned_) state_bytes_ -= table.Clear();
  }
  if (p.snapshot && !ClockSnapshot(*p.snapshot, at)) return false;
  if (p.default_clock) default_clock_ = *p.default_clock;
  std::optional<int64_t> ts_ns;
  if (p.timestamp && !Time(p.clock.value_or(default_clock_), *p.timestamp, at, &ts_ns)) return false;
  InternedData(p.interned, at);
  if (p.descriptor && !Descriptor(*p.descriptor, at)) return false;
  if (p.has_event) {
    if (!p.timestamp) {
      Problem(at, "track event without a timestamp; left out");
    } else if (ts_ns) {
      return TrackEvent(p.event, at, *ts_ns);
    }
  }
  return true;
}

// A snapshot: the first packet's, and katrace's again with each reset of the incremental state.
bool PftraceReader::ClockSnapshot(const std::vector<PbClock>& clocks, uint64_t at) {
  const auto reading = [&](uint64_t id) -> std::optional<uint64_t> {
    for (const PbClock& c : clocks) {
      if (c.id == id) return c.timestamp;
    }
    return std::nullopt;
  };
  const uint64_t now = reading(pf::kClockTraceAbsolute).value_or(0);
  const uint64_t clock64 = reading(pf::kClockTrace).value_or(now);
  if (now > static_cast<uint64_t>(INT64_MAX) || clock64 > static_cast<uint64_t>(INT64_MAX)) {
    return Fail(ReadStatus::kBadProtobuf, at,
                "the clock snapshot at byte " + std::to_string(at) +
                    " puts clock 64 or 65 past 2^63 ns");
  }
  snapshot_ns_ = static_cast<int64_t>(now);
  clock64_at_snapshot_ = clock64_ = clock64;
  clocks_ = clocks;
  return true;
}

// Trace time (ns from the base) of a packet's timestamp: clock 64 counts deltas from the
// snapshot; any other clock of the snapshot is absolute. Either is read against its reading at
// the snapshot's instant, whose trace time is known: the same for every clock, so a snapshot
// every few MiB (katrace's incremental state resets) moves nothing.
bool PftraceReader::Time(uint64_t clock, uint64_t ts, uint64_t at, std::optional<int64_t>* ns) {
  uint64_t reading = ts, at_snapshot = clock64_at_snapshot_;
  if (clock == pf::kClockTrace) {
    if (ts > static_cast<uint64_t>(INT64_MAX) - clock64_) {
      return Fail(ReadStatus::kBadProtobuf, at,
                  "the packet at byte " + std::to_string(at) + " moves clock 64 from " +
                      std::to_string(clock64_) + " ns by " + std::to_string(ts) +
                      " ns, past 2^63 ns (a corrupt delta)");
    }
    clock64_ += ts;
    reading = clock64_;
  } else {
    const auto it = std::find_if(clocks_.begin(), clocks_.end(),
                                 [clock](const PbClock& c) { return c.id == clock; });
    if (it == clocks_.end()) {
      Problem(at, "timestamp on clock " + std::to_string(clock) +
                      ", which the clock snapshot does not name; left out");
      return true;
    }
    at_snapshot = it->timestamp;
  }
  // 128 bits hold any difference of two readings; the result must fit in int64.
  const __int128 out = static_cast<__int128>(snapshot_ns_) + reading - at_snapshot;
  if (out < INT64_MIN || out > INT64_MAX) {
    Problem(at, "timestamp " + std::to_string(ts) + " on clock " + std::to_string(clock) +
                    " is more than 2^63 ns from the trace's base; left out");
    return true;
  }
  *ns = static_cast<int64_t>(out);
  return true;
}

void PftraceReader::InternedData(const std::vector<PbInterned>& entries, uint64_t at) {
  for (const PbInterned& entry : entries) {
    const size_t table = static_cast<size_t>(entry.table);
    if (entry.iid == 0) {
      Problem(at, std::string("an interned ") + kTableNames[table] + " without an iid; left out");
      continue;
    }
    uint64_t added = 0, replaced = 0;
    interned_[table].Set(entry.iid, Repaired(entry.text), &added, &replaced);
    state_bytes_ += added - replaced;
  }
}

const Text* PftraceReader::Interned(PbTable table, uint64_t iid, uint64_t at) {
  if (const Text* text = interned_[static_cast<size_t>(table)].Find(iid)) return text;
  Problem(at, std::string(kTableNames[static_cast<size_t>(table)]) + " iid " + std::to_string(iid) +
                  " was never interned (no interned_data before it defines it)");
  return nullptr;
}

bool PftraceReader::Enqueue(Json json, uint64_t at, uint64_t repaired,
                            std::optional<int64_t> ts_ns, bool open) {
  HeldEvent held;
  held.event.json = std::move(json);
  held.event.line = at;
  held.event.repaired_strings = repaired;
  held.has_ts = ts_ns.has_value();
  held.ts_ns = ts_ns.value_or(0);
  held.open = open;
  result_->repaired_strings += repaired;
  return queue_.Add(std::move(held));
}

// A track descriptor: the metadata JSON has for it (a process's name, labels and order; a
// layout track's name, its lane's, and order); a counter track only names its series, and the
// footer track carries the footer.
bool PftraceReader::Descriptor(const PbDescriptor& d, uint64_t at) {
  if (!d.uuid) {
    Problem(at, "track descriptor without a uuid; left out");
    return true;
  }
  if (tracks_.count(*d.uuid) != 0 || (*d.uuid == pf::kFooterUuid && saw_footer_)) {
    Problem(at, "track " + std::to_string(*d.uuid) +
                    " is declared a second time; the first declaration stands");
    return true;
  }
  if (*d.uuid == pf::kFooterUuid) {
    Footer(d, at);
    return true;
  }
  Track& track = tracks_[*d.uuid];
  state_bytes_ += kEntryBytes;
  if (d.is_process) return ProcessTrack(d, at, &track);
  // One rank's layout tracks are their tids; a merged file's carry the tid in the low 32 bits.
  const bool is_layout = !d.is_counter && *d.uuid >= 1 &&
                         (*d.uuid < pf::kProcessUuidBase || *d.uuid >= pf::kMergedTrackUuidBase);
  if (!d.is_counter && !is_layout) return true;  // a kind of a later version: kOther
  return ChildTrack(d, at, &track);
}

// The footer: the JSON's otherData.katrace, handed on after the last event.
void PftraceReader::Footer(const PbDescriptor& d, uint64_t at) {
  saw_footer_ = true;
  const JsonTextResult parsed = ParseJsonText(d.description.value_or(""), &footer_);
  result_->repaired_strings += parsed.repaired_strings;
  if (parsed.ok && footer_.is_object()) {
    has_footer_ = true;
    return;
  }
  Problem(at, "the footer track's description (the JSON's otherData.katrace) is not a JSON object" +
                  (parsed.ok ? std::string() : ": " + parsed.error));
}

// A rank: process_name (its name, where it ran and its identity, the header, as JSON has them),
// process_labels and process_sort_index.
bool PftraceReader::ProcessTrack(const PbDescriptor& d, uint64_t at, Track* track) {
  const std::string which = "process track " + std::to_string(*d.uuid);
  if (!d.pid) {
    Problem(at, which + " has no pid; its events are left out");
    track->kind = TrackKind::kUnusable;
    return true;
  }
  track->kind = TrackKind::kProcess;
  track->pid = *d.pid;
  // A global instant goes on the first process declared since the global instant before it: one
  // rank's file declares its processes first and closes with one; a merged file does so per input.
  if (!has_first_pid_ || global_instant_since_) {
    has_first_pid_ = true;
    global_instant_since_ = false;
    first_pid_ = *d.pid;
  }
  if (!FlushCounterGroup()) return true;
  uint64_t repaired = 0;
  Json identity;
  bool has_identity = false;
  if (d.description) {
    const JsonTextResult parsed = ParseJsonText(*d.description, &identity);
    repaired += parsed.repaired_strings;
    has_identity = parsed.ok && identity.is_object();
    if (!has_identity) {
      Problem(at, which + "'s description (the rank's identity, the JSON's process_name "
                          "args.katrace) is not a JSON object" +
                      (parsed.ok ? std::string() : ": " + parsed.error));
    }
  }
  Json args = Json::object();
  if (d.process_name) {
    Text name = Repaired(*d.process_name);
    repaired += name.repaired;
    Put(&args, "name", std::move(name.text));
  }
  if (has_identity) {
    if (const Json* host = Field(identity, "host")) Put(&args, "host", *host);
    if (const Json* os_pid = Field(identity, "os_pid")) Put(&args, "os_pid", *os_pid);
    Put(&args, "katrace", std::move(identity));
  }
  if (!Enqueue(Metadata("process_name", *d.pid, 0, std::move(args)), at, repaired, std::nullopt)) {
    return true;
  }
  if (!d.labels.empty()) {
    uint64_t labels_repaired = 0;
    std::string joined;
    for (std::string_view label : d.labels) {
      const Text text = Repaired(label);
      labels_repaired += text.repaired;
      joined += (joined.empty() ? "" : ", ") + text.text;
    }
    if (!Enqueue(Metadata("process_labels", *d.pid, 0, Object("labels", std::move(joined))), at,
                 labels_repaired, std::nullopt)) {
      return true;
    }
  }
  Enqueue(Metadata("process_sort_index", *d.pid, 0,
                   Object("sort_index", IntJson(d.order.value_or(*d.pid)))),
          at, 0, std::nullopt);
  return true;
}

// A layout track (thread_name, thread_sort_index) or a counter track, each a child of a process.
bool PftraceReader::ChildTrack(const PbDescriptor& d, uint64_t at, Track* track) {
  const auto parent = d.parent ? tracks_.find(*d.parent) : tracks_.end();
  if (parent == tracks_.end() || parent->second.kind != TrackKind::kProcess) {
    Problem(at, "track " + std::to_string(*d.uuid) + "'s parent " +
                    (d.parent ? std::to_string(*d.parent) +
                                    (parent == tracks_.end() ? " was never declared"
                                                             : " is not a process track")
                              : std::string("is not given")) +
                    "; its events are left out");
    track->kind = TrackKind::kUnusable;
    return true;
  }
  track->pid = parent->second.pid;
  Text family = Repaired(d.name.value_or(""));
  if (d.is_counter) {
    // JSON's "C" event is named by the share key and has one arg per series.
    track->kind = TrackKind::kCounter;
    Text share = d.share_key ? Repaired(*d.share_key) : family;
    const std::string prefix = share.text + " ";
    track->series_key = family.text.compare(0, prefix.size(), prefix) == 0
                            ? family.text.substr(prefix.size())
                            : family.text;
    track->share_key = std::move(share.text);
    track->repaired = share.repaired + family.repaired;
    state_bytes_ += track->share_key.size() + track->series_key.size();
    return true;
  }
  track->kind = TrackKind::kSlices;
  track->tid = *d.uuid & pf::kTidMask;
  // The lanes of one family share its name and merge key; JSON calls the K-th after the first
  // "<family> lane K".
  std::string thread_name = family.text;
  if (d.merge_key) {
    auto [lane, inserted] = lanes_.try_emplace({*d.parent, std::string(*d.merge_key)}, 0);
    if (inserted) state_bytes_ += d.merge_key->size() + kEntryBytes;
    if (lane->second > 0) thread_name += " lane " + std::to_string(lane->second);
    ++lane->second;
  }
  if (!FlushCounterGroup()) return true;
  if (!Enqueue(Metadata("thread_name", track->pid, track->tid, Object("name", std::move(thread_name))), at,
               family.repaired, std::nullopt)) {
    return true;
  }
  if (d.order) {
    Enqueue(Metadata("thread_sort_index", track->pid, track->tid, Object("sort_index", IntJson(*d.order))),
            at, 0, std::nullopt);
  }
  return true;
}

// The track of event |e| when it is declared and usable (else nullptr, reported unless its
// problem already was) and one of |kinds| (else reported).
Track* PftraceReader::EventTrack(const PbEvent& e, uint64_t at, const char* what,
                                 std::initializer_list<TrackKind> kinds) {
  if (!e.track) {
    Problem(at, std::string(what) + " without a track_uuid; left out");
    return nullptr;
  }
  const auto it = tracks_.find(*e.track);
  // Built only for a problem: this runs for every event.
  const auto which = [&] { return std::string(what) + " on track " + std::to_string(*e.track); };
  if (it == tracks_.end()) {
    Problem(at, which() + ", which no track descriptor before it declares; left out");
    return nullptr;
  }
  Track& track = it->second;
  if (track.kind == TrackKind::kOther || track.kind == TrackKind::kUnusable) return nullptr;
  if (std::find(kinds.begin(), kinds.end(), track.kind) == kinds.end()) {
    const char* kind = track.kind == TrackKind::kProcess   ? "a process"
                       : track.kind == TrackKind::kCounter ? "a counter"
                                                           : "a slice";
    Problem(at, which() + ", " + kind + " track; left out");
    return nullptr;
  }
  return &track;
}

void PftraceReader::NameAndCategory(const PbEvent& e, uint64_t at, Json* event, uint64_t* repaired) {
  if (e.name_iid) {
    if (const Text* name = Interned(PbTable::kNames, *e.name_iid, at)) {
      Put(event, "name", name->text);
      *repaired += name->repaired;
    }
  } else if (e.name) {
    Text name = Repaired(*e.name);
    *repaired += name.repaired;
    Put(event, "name", std::move(name.text));
  }
  // katrace gives an event one category; several would be one comma-separated cat, as JSON has.
  std::string cat;
  bool has_cat = false;
  const auto add = [&](const Text& text) {
    if (has_cat) cat += ',';
    cat += text.text;
    has_cat = true;
    *repaired += text.repaired;
  };
  for (uint64_t iid : e.category_iids) {
    if (const Text* text = Interned(PbTable::kCategories, iid, at)) add(*text);
  }
  for (std::string_view inline_cat : e.categories) add(Repaired(inline_cat));
  if (has_cat) Put(event, "cat", std::move(cat));
}

// The debug annotations as JSON's args, typed as JSON's parser types them. One whose name or
// string value cannot be resolved is left out (reported); one of a value kind katrace does not
// write, too (silently: a later version's).
Json PftraceReader::Args(const PbEvent& e, uint64_t at, uint64_t* repaired) {
  Json args = ObjectFor(e.annotations.size());
  Text inline_key;
  for (const PbAnnotation& a : e.annotations) {
    // The key is copied once, into the member (not first into a Text of its own).
    const Text* key = nullptr;
    if (a.name_iid) {
      key = Interned(PbTable::kArgNames, *a.name_iid, at);
      if (key == nullptr) continue;
    } else if (a.name) {
      inline_key = Repaired(*a.name);
      key = &inline_key;
    } else {
      Problem(at, "debug annotation without a name; left out");
      continue;
    }
    Json value;
    switch (a.kind) {
      case PbValue::kNone: continue;
      case PbValue::kBool: value = a.number != 0; break;
      case PbValue::kUint: value = a.number; break;
      case PbValue::kInt: value = IntJson(static_cast<int64_t>(a.number)); break;
      case PbValue::kDouble: {
        double d = 0;
        std::memcpy(&d, &a.number, sizeof(d));
        value = std::isfinite(d) ? Json(d) : Json(nullptr);  // JSON has no NaN or infinity
        break;
      }
      case PbValue::kString: {
        Text text = Repaired(a.text);
        *repaired += text.repaired;
        value = std::move(text.text);
        break;
      }
      case PbValue::kStringIid: {
        const Text* text = Interned(PbTable::kStringValues, a.number, at);
        if (text == nullptr) continue;
        *repaired += text->repaired;
        value = text->text;
        break;
      }
    }
    *repaired += key->repaired;
    Put(&args, key->text, std::move(value));
  }
  return args;
}

bool PftraceReader::SliceBegin(const PbEvent& e, Track* track, uint64_t at, int64_t ts_ns) {
  uint64_t repaired = 0;
  Json event = ObjectFor(8);  // name, cat, ph, pid, tid, ts, dur, args
  NameAndCategory(e, at, &event, &repaired);
  Put(&event, "ph", "X");
  Put(&event, "pid", IntJson(track->pid));
  Put(&event, "tid", track->tid);
  Put(&event, "ts", MicrosJson(ts_ns));
  Put(&event, "dur", nullptr);  // at the end
  Put(&event, "args", Args(e, at, &repaired));
  const uint64_t position = queue_.next_position();
  if (!Enqueue(std::move(event), at, repaired, ts_ns, true)) return false;
  track->open.push_back(OpenSlice{position, ts_ns});
  // JSON writes an arrow right after the X event of its later slice: this one, for the flows it
  // terminates.
  for (uint64_t id : e.terminating_flow_ids) {
    const auto flow = flows_.find(id);
    if (flow == flows_.end()) {
      Problem(at, "terminating flow id " + std::to_string(id) +
                      " never began (no slice before it has it in flow_ids); no arrow");
      continue;
    }
    const PendingFlow from = flow->second;
    flows_.erase(flow);
    state_bytes_ -= kEntryBytes;
    const auto end = [&](const char* ph, int64_t pid, uint64_t tid, int64_t ts) {
      Json f = ObjectFor(8);  // name, cat, ph, bp (an "f"), id, pid, tid, ts
      Put(&f, "name", "launch");
      Put(&f, "cat", "flow");
      Put(&f, "ph", ph);
      if (ph[0] == 'f') Put(&f, "bp", "e");  // binds to the enclosing slice
      Put(&f, "id", id & ~pf::kReversedFlowBit);
      Put(&f, "pid", IntJson(pid));
      Put(&f, "tid", tid);
      Put(&f, "ts", MicrosJson(ts));
      return Enqueue(std::move(f), at, 0, ts);
    };
    // A reversed arrow (the GPU end came first) began at its GPU end: JSON's "s" is this slice.
    const bool reversed = (id & pf::kReversedFlowBit) != 0;
    const bool ok = reversed ? end("s", track->pid, track->tid, ts_ns) && end("f", from.pid, from.tid, from.ts_ns)
                             : end("s", from.pid, from.tid, from.ts_ns) && end("f", track->pid, track->tid, ts_ns);
    if (!ok) return false;
  }
  for (uint64_t id : e.flow_ids) {
    const auto [flow, inserted] = flows_.try_emplace(id, PendingFlow{track->pid, track->tid, ts_ns, at});
    if (inserted) {
      state_bytes_ += kEntryBytes;
    } else {
      Problem(at, "flow id " + std::to_string(id) + " begins again (it began at byte " +
                      std::to_string(flow->second.offset) + " and has not ended); ignored here");
    }
  }
  return true;
}

bool PftraceReader::SliceEnd(Track* track, uint64_t at, int64_t ts_ns) {
  if (track->open.empty()) {
    Problem(at, "slice end on track " + std::to_string(track->tid) +
                    " with no slice open on it; left out");
    return true;
  }
  const OpenSlice slice = track->open.back();
  track->open.pop_back();
  if (HeldEvent* held = queue_.Find(slice.position)) {
    // SliceBegin put "dur" next to last, before "args": found from the back in a compare or two.
    auto& members = held->event.json.get_ref<Json::object_t&>();
    for (auto it = members.rbegin(); it != members.rend(); ++it) {
      if (it->first.size() == 3 && it->first.compare(0, 3, "dur", 3) == 0) {
        it->second = MicrosJson(ts_ns - slice.begin_ns);
        break;
      }
    }
  }
  return queue_.Close(slice.position);
}

// On a process track, JSON's process-scoped instant; on the global track (no track_uuid), its
// global one, which JSON puts on the first rank's process; on a layout track, thread-scoped.
bool PftraceReader::Instant(const PbEvent& e, uint64_t at, int64_t ts_ns) {
  int64_t pid = first_pid_;
  uint64_t tid = 0;
  const char* scope = "g";
  if (e.track) {
    Track* track = EventTrack(e, at, "instant", {TrackKind::kProcess, TrackKind::kSlices});
    if (track == nullptr) return true;
    pid = track->pid;
    tid = track->tid;
    scope = track->kind == TrackKind::kProcess ? "p" : "t";
  } else if (!has_first_pid_) {
    Problem(at, "instant on the global track before any process track; left out");
    return true;
  } else {
    global_instant_since_ = true;
  }
  uint64_t repaired = 0;
  Json event = ObjectFor(8);  // name, cat, ph, s, pid, tid, ts, args
  NameAndCategory(e, at, &event, &repaired);
  Put(&event, "ph", "i");
  Put(&event, "s", scope);
  Put(&event, "pid", IntJson(pid));
  Put(&event, "tid", tid);
  Put(&event, "ts", MicrosJson(ts_ns));
  Put(&event, "args", Args(e, at, &repaired));
  return Enqueue(std::move(event), at, repaired, ts_ns);
}

bool PftraceReader::Counter(const PbEvent& e, Track* track, uint64_t at, int64_t ts_ns) {
  if (!e.counter_value) {
    Problem(at, "counter event without counter_value; left out");
    return true;
  }
  if (group_.active && (group_.ts_ns != ts_ns || group_.pid != track->pid ||
                        group_.name != track->share_key || group_.keys.count(track->series_key))) {
    if (!FlushCounterGroup()) return false;
  }
  if (!group_.active) {
    group_.active = true;
    group_.offset = at;
    group_.ts_ns = ts_ns;
    group_.pid = track->pid;
    group_.name = track->share_key;
    group_.args = Json::object();
    group_.repaired = 0;
  }
  group_.keys.insert(track->series_key);
  group_.repaired += track->repaired;
  Put(&group_.args, track->series_key, IntJson(static_cast<int64_t>(*e.counter_value)));
  return true;
}

bool PftraceReader::FlushCounterGroup() {
  if (!group_.active) return !queue_.stopped();
  group_.active = false;
  group_.keys.clear();
  Json event = ObjectFor(6);
  Put(&event, "name", std::move(group_.name));
  Put(&event, "ph", "C");
  Put(&event, "pid", IntJson(group_.pid));
  Put(&event, "tid", uint64_t{0});
  Put(&event, "ts", MicrosJson(group_.ts_ns));
  Put(&event, "args", std::move(group_.args));
  return Enqueue(std::move(event), group_.offset, group_.repaired, group_.ts_ns);
}

bool PftraceReader::TrackEvent(const PbEvent& e, uint64_t at, int64_t ts_ns) {
  const uint64_t type = e.type.value_or(0);
  // A counter sample may join the JSON event of the samples before it; anything else closes it.
  if (type != pf::kTypeCounter && !FlushCounterGroup()) return false;
  switch (type) {
    case pf::kTypeSliceBegin:
      if (Track* track = EventTrack(e, at, "slice begin", {TrackKind::kSlices})) {
        return SliceBegin(e, track, at, ts_ns);
      }
      return true;
    case pf::kTypeSliceEnd:
      if (Track* track = EventTrack(e, at, "slice end", {TrackKind::kSlices})) {
        return SliceEnd(track, at, ts_ns);
      }
      return true;
    case pf::kTypeInstant: return Instant(e, at, ts_ns);
    case pf::kTypeCounter:
      if (Track* track = EventTrack(e, at, "counter event", {TrackKind::kCounter})) {
        return Counter(e, track, at, ts_ns);
      }
      return true;
    default:
      Problem(at, "track event of type " + std::to_string(type) +
                      " (katrace writes 1 to 4: slice begin and end, instant, counter); left out");
      return true;
  }
}

}  // namespace

bool LooksLikePftrace(GzInput* input) {
  if (input->PeekBuffered(0) != 0x0a) return false;
  // 0x0a is also a newline: JSON's leading blanks run on to more blanks, '{' or '['. katrace's
  // first packet (its clock snapshot) is 40 to 80 bytes, so its length byte is none of those.
  const int next = input->PeekBuffered(1);
  return next != kEof && next != ' ' && next != '\t' && next != '\r' &&
         next != '\n' && next != '{' && next != '[';
}

void ReadPftrace(GzInput* input, TraceVisitor* visitor, const ReadOptions& options,
                 ReadResult* result) {
  PftraceReader(input, visitor, options, result).Run();
}

}  // namespace katrace::tools
