// The trace tools on katrace's Perfetto protobuf traces (.pftrace). A small trace of every event
// kind is written here, field by field, with a writer of its own (so the reader is tested
// against the format as docs/trace-format.md lays it out, not against the encoder), together
// with the Chrome JSON trace the same capture would give, by hand: the reader must hand over
// the JSON trace's events exactly (order, index, field order and number types), katrace-check
// must pass both and katrace-stats print the same report. Then each way such a file can be
// broken, cut at every byte and corrupted in every way the reader names, must give one clear
// message with the byte offset, never a crash; and what the reader holds stays bounded. Last,
// katrace-export's two formats of one committed spool give the same events and the same stats.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/ends_with.h"
#include "common/output_file.h"
#include "common/perfetto_wire.h"
#include "test/support/tool_runner.h"
#include "tools/common/trace_reader.h"

namespace katrace::tools {
namespace {

namespace fs = std::filesystem;
using katrace_test::RunTool;
using katrace_test::TestDataDir;
using katrace_test::ToolResult;
namespace pf = katrace::pftrace;

void WriteFile(const fs::path& path, const std::string& bytes) {
  OutputFile out;
  std::string error;
  ASSERT_TRUE(out.Open(path.string(), EndsWith(path.string(), ".gz"), &error)) << error;
  out.Write(bytes);
  ASSERT_TRUE(out.Commit(&error)) << error;
}

// ---------------------------------------------------------------------------------------------
// A protobuf writer: fields appended as bytes, nested messages built apart and appended whole.

class Pb {
 public:
  Pb& Varint(uint32_t field, uint64_t v) {
    Put(pf::Tag(field, pf::kVarint));
    Put(v);
    return *this;
  }
  Pb& Fixed64(uint32_t field, uint64_t v) {
    Put(pf::Tag(field, pf::kFixed64));
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Pb& Fixed32(uint32_t field, uint32_t v) {
    Put(pf::Tag(field, pf::kFixed32));
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  Pb& Double(uint32_t field, double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    return Fixed64(field, bits);
  }
  Pb& Bytes(uint32_t field, const std::string& s) {
    Put(pf::Tag(field, pf::kLengthDelimited));
    Put(s.size());
    bytes_ += s;
    return *this;
  }
  Pb& Message(uint32_t field, const Pb& m) { return Bytes(field, m.bytes_); }
  Pb& Raw(const std::string& s) {
    bytes_ += s;
    return *this;
  }
  const std::string& str() const { return bytes_; }
  bool empty() const { return bytes_.empty(); }

 private:
  void Put(uint64_t v) {
    uint8_t b[pf::kMaxVarintBytes];
    bytes_.append(reinterpret_cast<const char*>(b), static_cast<size_t>(pf::PutVarint(b, v) - b));
  }
  std::string bytes_;
};

struct Arg {
  enum Type { kUint, kInt, kBool, kDouble, kString } type;
  std::string key;
  uint64_t u = 0;
  int64_t i = 0;
  double d = 0;
  std::string s;
};
Arg U(const std::string& k, uint64_t v) { return Arg{Arg::kUint, k, v, 0, 0, ""}; }
Arg I(const std::string& k, int64_t v) { return Arg{Arg::kInt, k, 0, v, 0, ""}; }
Arg B(const std::string& k, bool v) { return Arg{Arg::kBool, k, v ? 1u : 0u, 0, 0, ""}; }
Arg D(const std::string& k, double v) { return Arg{Arg::kDouble, k, 0, 0, v, ""}; }
Arg S(const std::string& k, const std::string& v) { return Arg{Arg::kString, k, 0, 0, 0, v}; }

struct SliceSpec {
  std::string name, cat;
  std::vector<Arg> args;
  std::vector<uint64_t> flow_ids, terminating_flow_ids;
};

// katrace's layout of a trace (docs/trace-format.md "Perfetto protobuf"), one call per packet.
class PftraceWriter {
 public:
  PftraceWriter() {
    Pb p = Sequence();
    p.Varint(pf::packet::kFirstPacketOnSequence, 1);
    Packet(p.Raw(StatePacket().str()));
  }

  // katrace's reset of the sequence's incremental state (every few MiB): a clock snapshot at the
  // present time, and the interning tables start again.
  void ResetState() {
    Packet(Sequence().Raw(StatePacket().str()));
    tables_.clear();
  }
  // Fields of a later version everywhere: in the Trace, each packet, descriptor, event, debug
  // annotation and interned entry; a reader must skip them.
  void AddUnknownFields() {
    unknown_ = Pb().Varint(999, 1).Bytes(1000, "later").Fixed64(1001, 2).Fixed32(1002, 3);
    trace_.Varint(2, 7).Bytes(3, "a later Trace field");
  }

  static Pb Sequence() { return Pb().Varint(pf::packet::kTrustedPacketSequenceId, 1); }
  void Packet(const Pb& p) { trace_.Message(pf::kTracePacket, Pb(p).Raw(unknown_.str())); }
  void Raw(const std::string& bytes) { trace_.Raw(bytes); }
  const std::string& bytes() const { return trace_.str(); }

  void Process(int pid, const std::string& name, const std::string& labels,
               const std::string& identity) {
    Pb process;
    process.Varint(pf::process::kPid, static_cast<uint64_t>(pid)).Bytes(6, name).Bytes(8, labels);
    Pb d;
    d.Varint(1, pf::kProcessUuidBase + static_cast<uint64_t>(pid)).Message(3, process);
    d.Varint(11, pf::kChildOrderingExplicit).Varint(12, static_cast<uint64_t>(pid));
    d.Bytes(14, identity);
    Descriptor(d);
  }
  void Track(uint64_t uuid, int pid, const std::string& family, int order, uint64_t family_uuid) {
    Pb d;
    d.Varint(1, uuid).Varint(5, pf::kProcessUuidBase + static_cast<uint64_t>(pid)).Bytes(2, family);
    d.Varint(12, static_cast<uint64_t>(order)).Varint(15, pf::kSiblingMergeByKey);
    d.Bytes(16, "lanes of " + std::to_string(family_uuid));
    Descriptor(d);
  }
  void CounterTrack(uint64_t k, int pid, const std::string& name, const std::string& key) {
    Pb d;
    d.Varint(1, pf::kCounterUuidBase + k).Varint(5, pf::kProcessUuidBase + static_cast<uint64_t>(pid));
    d.Bytes(2, name + " " + key).Message(8, Pb().Bytes(7, name));
    Descriptor(d);
  }
  void Footer(int pid, const std::string& footer) {
    Pb d;
    d.Varint(1, pf::kFooterUuid).Varint(5, pf::kProcessUuidBase + static_cast<uint64_t>(pid));
    d.Bytes(2, "katrace footer").Bytes(14, footer);
    Descriptor(d);
  }
  void Descriptor(const Pb& d) {
    Packet(Sequence().Message(pf::packet::kTrackDescriptor, Pb(d).Raw(unknown_.str())));
  }

  void Begin(int64_t ts, uint64_t track, const SliceSpec& s) {
    Pb e;
    e.Varint(9, pf::kTypeSliceBegin).Varint(11, track);
    NameCatArgs(&e, s.name, s.cat, s.args);
    for (uint64_t id : s.flow_ids) e.Fixed64(47, id);
    for (uint64_t id : s.terminating_flow_ids) e.Fixed64(48, id);
    Event(ts, e);
  }
  void End(int64_t ts, uint64_t track) { Event(ts, Pb().Varint(9, pf::kTypeSliceEnd).Varint(11, track)); }
  // |track| 0: the global track.
  void Instant(int64_t ts, uint64_t track, const std::string& name, const std::string& cat,
               const std::vector<Arg>& args) {
    Pb e;
    e.Varint(9, pf::kTypeInstant);
    if (track != 0) e.Varint(11, track);
    NameCatArgs(&e, name, cat, args);
    Event(ts, e);
  }
  void Counter(int64_t ts, uint64_t k, int64_t value) {
    Event(ts, Pb().Varint(9, pf::kTypeCounter).Varint(11, pf::kCounterUuidBase + k)
                  .Varint(30, static_cast<uint64_t>(value)));
  }
  // A packet at |ts| with |event|: a delta on clock 64, or absolute on clock 65 back in time.
  void Event(int64_t ts, const Pb& event) {
    Pb p;
    if (ts >= clock_) {
      p.Varint(pf::packet::kTimestamp, static_cast<uint64_t>(ts - clock_));
      clock_ = ts;
    } else {
      p.Varint(pf::packet::kTimestamp, static_cast<uint64_t>(ts));
      p.Varint(pf::packet::kTimestampClockId, pf::kClockTraceAbsolute);
    }
    p.Varint(pf::packet::kTrustedPacketSequenceId, 1).Varint(pf::packet::kSequenceFlags, 2);
    if (!interned_.empty()) p.Message(pf::packet::kInternedData, interned_);
    interned_ = Pb();
    p.Message(pf::packet::kTrackEvent, Pb(event).Raw(unknown_.str()));
    Packet(p);
  }
  Pb StatePacket() const {
    const uint64_t now = static_cast<uint64_t>(clock_);
    Pb snapshot;
    snapshot.Message(1, Pb().Varint(1, pf::kClockTrace).Varint(2, now).Varint(3, 1));
    snapshot.Message(1, Pb().Varint(1, pf::kClockTraceAbsolute).Varint(2, now));
    snapshot.Message(1, Pb().Varint(1, pf::kClockMonotonic).Varint(2, 5000000000 + now));
    snapshot.Message(1, Pb().Varint(1, pf::kClockRealtime).Varint(2, 1700000000000000000 + now));
    snapshot.Varint(2, pf::kClockMonotonic);
    Pb p;
    p.Varint(pf::packet::kSequenceFlags, pf::kSeqIncrementalStateCleared);
    p.Message(pf::packet::kClockSnapshot, snapshot);
    p.Message(pf::packet::kTracePacketDefaults, Pb().Varint(58, pf::kClockTrace));
    return p;
  }

  uint64_t Intern(uint32_t table, const std::string& s) {
    auto& ids = tables_[table];
    auto found = ids.find(s);
    if (found != ids.end()) return found->second;
    const uint64_t iid = ids.size() + 1;
    ids.emplace(s, iid);
    interned_.Message(table, Pb().Raw(unknown_.str()).Varint(1, iid).Bytes(2, s));
    return iid;
  }
  // |s| under an iid of the caller's choice (katrace's writer numbers them 1, 2, 3, ...).
  void InternAs(uint32_t table, uint64_t iid, const std::string& s) {
    tables_[table][s] = iid;
    interned_.Message(table, Pb().Raw(unknown_.str()).Varint(1, iid).Bytes(2, s));
  }

 private:
  void NameCatArgs(Pb* e, const std::string& name, const std::string& cat, const std::vector<Arg>& args) {
    e->Varint(10, Intern(pf::interned::kEventNames, name));
    if (!cat.empty()) e->Varint(3, Intern(pf::interned::kEventCategories, cat));
    for (const Arg& a : args) {
      Pb an;
      an.Raw(unknown_.str()).Varint(1, Intern(pf::interned::kDebugAnnotationNames, a.key));
      switch (a.type) {
        case Arg::kUint: an.Varint(3, a.u); break;
        case Arg::kInt: an.Varint(4, static_cast<uint64_t>(a.i)); break;
        case Arg::kBool: an.Varint(2, a.u); break;
        case Arg::kDouble: an.Double(5, a.d); break;
        case Arg::kString: an.Varint(17, Intern(pf::interned::kDebugAnnotationStringValues, a.s)); break;
      }
      e->Message(4, an);
    }
  }

  Pb trace_;
  Pb interned_;
  Pb unknown_;
  int64_t clock_ = 0;
  std::map<uint32_t, std::map<std::string, uint64_t>> tables_;
};

// ---------------------------------------------------------------------------------------------
// The small trace, in both formats.

const char kIdentity[] =
    R"({"format":"katrace-trace","version":1,"rank":0,"host":"node0","os_pid":4242,)"
    R"("base_realtime_ns":1700000000000000000,"base_monotonic_ns":5000000000,)"
    R"("ranks":[{"pid":0,"world_rank":0,"launcher_rank":-1,"cuda_device":0}]})";
const char kFooter[] =
    R"({"format":"katrace-trace","version":1,"rank":0,"host":"node0","os_pid":4242,)"
    R"("base_realtime_ns":1700000000000000000,"base_monotonic_ns":5000000000,)"
    R"("ranks":[{"pid":0,"world_rank":0,"launcher_rank":-1,"cuda_device":0}],"mask":4095,)"
    R"("events":{"GroupApi":1,"CollApi":1,"KernelLaunch":1,"Coll":1,"KernelCh":1},)"
    R"("drops":{"GroupApi":0,"CollApi":0,"KernelLaunch":0,"Coll":0,"KernelCh":0},)"
    R"("incomplete":0,"late_children":0,"waits":0,"io_errors":0,"strings_unnamed":0,)"
    R"("gpu_offset_ns":0,"gpu_offset_error_ns":100,"gpu_offset_samples":1,)"
    R"("drain":{"seen":0,"lost_overrun":0,"abandoned":0,"sampled_out":0,"late":0},)"
    R"("spool":{"blocks":1,"bytes":2048,"clean_end":true,"cut_offset":0}})";
const char kComm[] = "9a3c0f1e12345678";

// The JSON trace the same capture gives, written by hand in the order and form katrace's JSON
// encoder has: every field, every number type.
std::string SmallJson() {
  return std::string("{\"traceEvents\":[\n") +
         R"({"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"rank 0","host":"node0","os_pid":4242,"katrace":)" +
         kIdentity + "}},\n" +
         R"({"name":"process_labels","ph":"M","pid":0,"tid":0,"args":{"labels":"node0, pid 4242"}},
{"name":"process_sort_index","ph":"M","pid":0,"tid":0,"args":{"sort_index":0}},
{"name":"katrace drops","ph":"C","pid":0,"tid":0,"ts":0.000,"args":{"total":0,"Coll":0}},
{"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"host 4243"}},
{"name":"thread_sort_index","ph":"M","pid":0,"tid":1,"args":{"sort_index":1}},
{"name":"Group","cat":"GroupApi","ph":"X","pid":0,"tid":1,"ts":10.000,"dur":20.000,"args":{"id":1,"comm":"9a3c0f1e12345678","rank":0,"depth":1,"graph_captured":false}},
{"name":"katrace capture","cat":"katrace","ph":"i","s":"p","pid":0,"tid":0,"ts":5.000,"args":{"enabled":true}},
{"name":"AllReduce","cat":"CollApi","ph":"X","pid":0,"tid":1,"ts":11.000,"dur":5.000,"args":{"id":2,"parent":1,"comm":"9a3c0f1e12345678","rank":0,"func":"AllReduce","count":256,"datatype":"ncclFloat32","root":-1,"graph_captured":false}},
{"name":"AllReduce","cat":"Coll","ph":"X","pid":0,"tid":1,"ts":12.000,"dur":3.000,"args":{"id":3,"parent":1,"comm":"9a3c0f1e12345678","rank":0,"func":"AllReduce","seq":0,"count":256,"datatype":"ncclFloat32","bytes":1024,"root":0,"algo":"Ring","proto":"Simple","channels":1,"warps":8,"gpu_start":40.000,"gpu_end":44.000}},
{"name":"thread_name","ph":"M","pid":0,"tid":4,"args":{"name":"host 4243 lane 1"}},
{"name":"thread_sort_index","ph":"M","pid":0,"tid":4,"args":{"sort_index":2}},
{"name":"KernelLaunch","cat":"KernelLaunch","ph":"X","pid":0,"tid":4,"ts":13.000,"dur":1.000,"args":{"id":4,"parent":1,"comm":"9a3c0f1e12345678","rank":0}},
{"name":"thread_name","ph":"M","pid":0,"tid":2,"args":{"name":"GPU comm 9a3c0f1e12345678"}},
{"name":"thread_sort_index","ph":"M","pid":0,"tid":2,"args":{"sort_index":100}},
{"name":"AllReduce","cat":"CollGpu","ph":"X","pid":0,"tid":2,"ts":40.000,"dur":4.000,"args":{"func":"AllReduce","coll":3,"comm":"9a3c0f1e12345678","rank":0}},
{"name":"launch","cat":"flow","ph":"s","id":3,"pid":0,"tid":1,"ts":12.000},
{"name":"launch","cat":"flow","ph":"f","bp":"e","id":3,"pid":0,"tid":2,"ts":40.000},
{"name":"thread_name","ph":"M","pid":0,"tid":3,"args":{"name":"GPU comm 9a3c0f1e12345678 ch 0"}},
{"name":"thread_sort_index","ph":"M","pid":0,"tid":3,"args":{"sort_index":101}},
{"name":"AllReduce","cat":"KernelCh","ph":"X","pid":0,"tid":3,"ts":40.000,"dur":4.000,"args":{"id":6,"parent":3,"comm":"9a3c0f1e12345678","rank":0,"channel":0,"gpu_start_ns":5000040000,"gpu_stop_ns":5000044000}},
{"name":"katrace trace end","ph":"i","s":"g","pid":0,"tid":0,"ts":50.000,"args":{"drops":0,"incomplete":0}}
],
"otherData":{"katrace":)" + kFooter + "}}\n";
}

// Ways to break the small trace: each adds what it says near the end (before the closing
// instant), or changes how the file ends.
enum class Damage {
  kNone,
  kUnknownFields,        // fields katrace does not write, everywhere: must be skipped
  kUnknownIid,           // an event name never interned
  kUndeclaredTrack,      // a slice on a track no descriptor declares
  kUndeclaredParent,     // a track whose parent was never declared
  kEndWithoutBegin,      // a slice end on a track with nothing open
  kOpenAtEnd,            // a slice that never ends
  kTerminatingNotBegun,  // a flow end whose id never began
  kFlowNeverEnds,        // a flow begun and never ended
  kClockWrap,            // a delta that takes clock 64 past 2^63 ns
  kWrongWireType,        // track_event as a varint
  kLengthPastEnd,        // a nested length past its packet
  kBadVarint,            // a packet length of eleven continuation bytes
};

std::string SmallPftrace(Damage damage = Damage::kNone) {
  PftraceWriter w;
  if (damage == Damage::kUnknownFields) w.AddUnknownFields();
  w.Process(0, "rank 0", "node0, pid 4242", kIdentity);
  w.CounterTrack(0, 0, "katrace drops", "total");
  w.Counter(0, 0, 0);
  w.CounterTrack(1, 0, "katrace drops", "Coll");  // between the samples of one time
  w.Counter(0, 1, 0);
  w.Track(1, 0, "host 4243", 1, 1);
  w.Begin(10000, 1,
          {"Group",
           "GroupApi",
           {U("id", 1), S("comm", kComm), U("rank", 0), U("depth", 1), B("graph_captured", false)},
           {},
           {}});
  // Back in time (on clock 65): clock 64 stays at 10 us.
  w.Instant(5000, pf::kProcessUuidBase, "katrace capture", "katrace", {B("enabled", true)});
  w.Begin(11000, 1,
          {"AllReduce",
           "CollApi",
           {U("id", 2), U("parent", 1), S("comm", kComm), U("rank", 0), S("func", "AllReduce"),
            U("count", 256), S("datatype", "ncclFloat32"), I("root", -1), B("graph_captured", false)},
           {},
           {}});
  w.Begin(12000, 1,
          {"AllReduce",
           "Coll",
           {U("id", 3), U("parent", 1), S("comm", kComm), U("rank", 0), S("func", "AllReduce"),
            U("seq", 0), U("count", 256), S("datatype", "ncclFloat32"), U("bytes", 1024), U("root", 0),
            S("algo", "Ring"), S("proto", "Simple"), U("channels", 1), U("warps", 8),
            D("gpu_start", 40.0), D("gpu_end", 44.0)},
           {3},
           {}});
  w.Track(4, 0, "host 4243", 2, 1);
  w.Begin(13000, 4,
          {"KernelLaunch",
           "KernelLaunch",
           {U("id", 4), U("parent", 1), S("comm", kComm), U("rank", 0)},
           {},
           {}});
  w.End(14000, 4);
  w.End(15000, 1);
  w.End(16000, 1);
  w.End(30000, 1);
  w.ResetState();  // the iids after it start again from 1, for other strings
  w.Track(2, 0, "GPU comm 9a3c0f1e12345678", 100, 2);
  w.Begin(40000, 2,
          {"AllReduce",
           "CollGpu",
           {S("func", "AllReduce"), U("coll", 3), S("comm", kComm), U("rank", 0)},
           {},
           {3}});
  w.Track(3, 0, "GPU comm 9a3c0f1e12345678 ch 0", 101, 3);
  w.Begin(40000, 3,
          {"AllReduce",
           "KernelCh",
           {U("id", 6), U("parent", 3), S("comm", kComm), U("rank", 0), U("channel", 0),
            U("gpu_start_ns", 5000040000), U("gpu_stop_ns", 5000044000)},
           {},
           {}});
  w.End(44000, 3);
  w.End(44000, 2);
  switch (damage) {
    case Damage::kUnknownIid:
      w.Event(45000, Pb().Varint(9, pf::kTypeInstant).Varint(11, pf::kProcessUuidBase).Varint(10, 99));
      break;
    case Damage::kUndeclaredTrack:
      w.Begin(45000, 77, {"Lost", "Coll", {}, {}, {}});
      break;
    case Damage::kUndeclaredParent:
      w.Track(9, 5, "orphan", 9, 9);
      break;
    case Damage::kEndWithoutBegin:
      w.End(45000, 1);
      break;
    case Damage::kOpenAtEnd:
      w.Begin(45000, 1, {"Hang", "GroupApi", {U("id", 7)}, {}, {}});
      break;
    case Damage::kTerminatingNotBegun:
      w.Begin(45000, 2, {"Late", "CollGpu", {U("coll", 3)}, {}, {77}});
      w.End(46000, 2);
      break;
    case Damage::kFlowNeverEnds:
      w.Begin(45000, 1, {"Alone", "GroupApi", {U("id", 8)}, {88}, {}});
      w.End(46000, 1);
      break;
    case Damage::kClockWrap:
      w.Packet(PftraceWriter::Sequence()
                   .Varint(pf::packet::kTimestamp, uint64_t{1} << 63)
                   .Varint(pf::packet::kSequenceFlags, 2)
                   .Message(pf::packet::kTrackEvent, Pb().Varint(9, pf::kTypeInstant)));
      break;
    case Damage::kWrongWireType:
      w.Packet(PftraceWriter::Sequence().Varint(pf::packet::kTimestamp, 1).Varint(pf::packet::kTrackEvent,
                                                                                  5));
      break;
    case Damage::kLengthPastEnd:
      w.Packet(PftraceWriter::Sequence().Raw(std::string("\xe2\x03\x64\x08\x01", 5)));  // field 60, 100 bytes
      break;
    case Damage::kBadVarint:
      w.Raw("\x0a" + std::string(11, '\xff'));
      break;
    default:
      break;
  }
  w.Instant(50000, 0, "katrace trace end", "", {U("drops", 0), U("incomplete", 0)});
  w.Footer(0, kFooter);
  if (damage == Damage::kUnknownFields) w.Packet(Pb().Varint(2000, 1));  // no sequence, nothing katrace reads
  return w.bytes();
}

struct Collected : TraceVisitor {
  std::vector<TraceEvent> events;
  Json other = nullptr;
  std::vector<std::string> problems;
  TraceFileFormat format = TraceFileFormat::kChromeJson;
  void OnFormat(TraceFileFormat f) override { format = f; }
  bool OnEvent(const TraceEvent& event) override {
    events.push_back(event);
    return true;
  }
  void OnOtherData(const Json& o) override { other = o; }
  void OnProblem(uint64_t at, const std::string& message) override {
    problems.push_back(std::to_string(at) + ": " + message);
  }
};

// Perfetto's trace processor beside the repository (shared/tools/perfetto), or an empty path.
fs::path TraceProcessorShell() {
  for (fs::path dir = fs::absolute(TestDataDir()); !dir.empty() && dir != dir.parent_path(); dir = dir.parent_path()) {
    if (fs::exists(dir / "docs/trace-format.md")) {
      const fs::path shell = dir.parent_path() / "shared/tools/perfetto/trace_processor_shell";
      return fs::exists(shell) ? shell : fs::path();
    }
  }
  return {};
}

// The rows |sql| (a file) gives on |trace|, one line each, without the header.
std::vector<std::string> TraceProcessorRows(const fs::path& shell, const std::string& sql,
                                            const std::string& trace) {
  std::string output;
  FILE* pipe = popen((shell.string() + " -q " + sql + " " + trace + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return {};
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) output.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << output;
  std::vector<std::string> rows;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) rows.push_back(line);
  }
  if (!rows.empty()) rows.erase(rows.begin());
  return rows;
}

class PftraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/katrace-pftrace-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Put(const std::string& name, const std::string& bytes) {
    WriteFile(dir_ / name, bytes);
    return (dir_ / name).string();
  }

  // Both readings of one capture must agree event by event: position (index), fields, their
  // order and the numbers' types (dump() shows them all), and the footer.
  static void ExpectSameEvents(const std::string& json_path, const std::string& pftrace_path) {
    Collected json, proto;
    const ReadResult a = ReadTrace(json_path, &json);
    const ReadResult b = ReadTrace(pftrace_path, &proto);
    ASSERT_EQ(a.status, ReadStatus::kOk) << a.message;
    ASSERT_EQ(b.status, ReadStatus::kOk) << b.message;
    EXPECT_EQ(proto.format, TraceFileFormat::kPerfettoProtobuf);
    EXPECT_EQ(b.format, TraceFileFormat::kPerfettoProtobuf);
    EXPECT_EQ(b.problems, 0u) << b.first_problem;
    EXPECT_TRUE(b.has_other_data);
    ASSERT_EQ(json.events.size(), proto.events.size());
    for (size_t i = 0; i < json.events.size(); ++i) {
      const TraceEvent& want = json.events[i];
      const TraceEvent& got = proto.events[i];
      EXPECT_EQ(got.index, want.index) << "event #" << i << ": " << got.json.dump();
      EXPECT_EQ(got.json.dump(), want.json.dump()) << "event #" << i;
      EXPECT_GT(got.line, 0u);  // a byte offset past the clock packet
    }
    EXPECT_EQ(proto.other.dump(), json.other.dump());
  }

  // A merged trace read back: its events as text, sorted (the protobuf merge declares a
  // process's name, labels and order at once, where JSON spreads them), and its footer.
  struct Merged {
    std::vector<std::string> events;
    std::string footer;
  };
  static Merged ReadMerged(const std::string& path, TraceFileFormat want) {
    Collected c;
    const ReadResult r = ReadTrace(path, &c);
    EXPECT_EQ(r.status, ReadStatus::kOk) << path << ": " << r.message;
    EXPECT_EQ(r.problems, 0u) << path << ": " << r.first_problem;
    EXPECT_EQ(c.format, want) << path;
    Merged m;
    for (const TraceEvent& e : c.events) m.events.push_back(e.json.dump());
    std::sort(m.events.begin(), m.events.end());
    m.footer = c.other.dump();
    return m;
  }
  // The events only one of |a| and |b| has, a few of each ("" when they are the same).
  static std::string Difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    std::vector<std::string> only_a, only_b;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
    std::string out;
    for (size_t i = 0; i < only_a.size() && i < 3; ++i) out += "\n  only in the first:  " + only_a[i];
    for (size_t i = 0; i < only_b.size() && i < 3; ++i) out += "\n  only in the second: " + only_b[i];
    if (!out.empty()) out = std::to_string(only_a.size()) + " and " + std::to_string(only_b.size()) + " events differ:" + out;
    return out;
  }
  static std::string FirstDifference(const std::string& a, const std::string& b) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    if (i == a.size() && i == b.size()) return "";
    const size_t from = i < 80 ? 0 : i - 80;
    return "at " + std::to_string(i) + ": ..." + a.substr(from, 160) + "\n  vs ..." + b.substr(from, 160);
  }
  static std::string ReadWhole(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// The small trace.

TEST_F(PftraceTest, ReadsEveryKindOfEventAsTheJsonTraceHasIt) {
  const std::string json = Put("small.json", SmallJson());
  const std::string proto = Put("small.pftrace", SmallPftrace());
  ExpectSameEvents(json, proto);
  Collected c;
  ReadTrace(proto, &c);
  ASSERT_EQ(c.events.size(), 22u);
  // Positions are byte offsets of the packets: the slices' begins come in file order.
  EXPECT_LT(c.events[6].line, c.events[8].line);
}

TEST_F(PftraceTest, ReadsGzipAndSkipsFieldsItDoesNotKnow) {
  const std::string json = Put("small.json", SmallJson());
  ExpectSameEvents(json, Put("small.pftrace.gz", SmallPftrace()));
  ExpectSameEvents(json, Put("later.pftrace", SmallPftrace(Damage::kUnknownFields)));
}

TEST_F(PftraceTest, BytesAfterItsGzipStreamAreReportedWithEveryEventRead) {
  const std::string gz = ReadWhole(Put("small.pftrace.gz", SmallPftrace()));
  const std::string path = (dir_ / "tail.pftrace.gz").string();
  std::ofstream(path, std::ios::binary) << gz << std::string(3, '\0');
  Collected c;
  const ReadResult r = ReadTrace(path, &c);
  EXPECT_EQ(r.status, ReadStatus::kTrailingBytes) << r.message;
  EXPECT_EQ(r.message, "3 bytes after the end of the gzip stream (from byte " +
                           std::to_string(gz.size()) + ") are not gzip");
  EXPECT_EQ(c.events.size(), 22u);
  EXPECT_TRUE(r.has_other_data);
}

TEST_F(PftraceTest, AJsonTraceThatStartsWithANewlineIsStillJson) {
  const std::string json = Put("small.json", SmallJson());
  Collected c;
  const ReadResult r = ReadTrace(Put("newline.json", "\n\n" + SmallJson()), &c);
  EXPECT_EQ(r.status, ReadStatus::kOk) << r.message;
  EXPECT_EQ(c.format, TraceFileFormat::kChromeJson);
  EXPECT_EQ(c.events.size(), 22u);
}

TEST_F(PftraceTest, CheckPassesBothFormats) {
  for (const std::string& path : {Put("small.json", SmallJson()), Put("small.pftrace", SmallPftrace())}) {
    const ToolResult r = RunTool("katrace-check", path);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("OK: 22 events, 0 warnings"), std::string::npos) << r.output;
  }
}

TEST_F(PftraceTest, StatsPrintsTheSameReportForBothFormats) {
  const std::string json = Put("small.json", SmallJson());
  const std::string proto = Put("small.pftrace", SmallPftrace());
  for (const char* format : {"text", "json"}) {
    const ToolResult a = RunTool("katrace-stats", std::string("--format ") + format + " " + json);
    const ToolResult b = RunTool("katrace-stats", std::string("--format ") + format + " " + proto);
    EXPECT_EQ(a.exit_code, 0) << a.output;
    EXPECT_EQ(b.exit_code, 0) << b.output;
    EXPECT_NE(a.output.find("AllReduce"), std::string::npos) << a.output;
    EXPECT_EQ(a.output, b.output);
  }
}

TEST_F(PftraceTest, MergeReadsAndWritesBothFormatsWithTheSameEvents) {
  const std::string proto = Put("small.pftrace", SmallPftrace());
  const std::string json = Put("small.json", SmallJson());
  // Every input format into every output format (and gzip protobuf): the same events.
  std::map<std::string, Merged> merged;
  for (const auto& [input, name] : {std::pair{json, "j"}, std::pair{proto, "p"}}) {
    for (const char* ext : {".json", ".pftrace", ".pftrace.gz"}) {
      const std::string out = (dir_ / (std::string(name) + ext)).string();
      const ToolResult r = RunTool("katrace-merge", "-q -o " + out + " " + input);
      ASSERT_EQ(r.exit_code, 0) << out << ": " << r.output;
      merged[std::string(name) + ext] = ReadMerged(out, EndsWith(out, ".json") ? TraceFileFormat::kChromeJson
                                                                             : TraceFileFormat::kPerfettoProtobuf);
      const ToolResult check = RunTool("katrace-check", out);
      EXPECT_EQ(check.exit_code, 0) << out << ": " << check.output;
    }
  }
  EXPECT_EQ(ReadWhole(dir_ / "j.pftrace.gz").substr(0, 2), "\x1f\x8b");
  ASSERT_FALSE(merged["j.json"].events.empty());
  for (const auto& [name, m] : merged) {
    EXPECT_EQ(Difference(m.events, merged["j.json"].events), "") << name;
    // The footer names its inputs: equal for the merges of one input.
    EXPECT_EQ(m.footer, merged[name.substr(0, 1) + ".json"].footer) << name;
  }
}

// A slice placed late (JSON writes it where the layout placed it: after slices it encloses,
// which began before it in the file) keeps its children inside it in a merged .pftrace: a
// reader pairs each END with the innermost open slice of its track, so the writer ends the
// children before it begins their parent.
TEST_F(PftraceTest, MergeToPftraceKeepsASliceWrittenAfterItsChildrenAroundThem) {
  std::string text = SmallJson();
  const std::string group = text.substr(text.find("{\"name\":\"Group\""));
  const std::string group_line = group.substr(0, group.find('\n') + 1);
  text.erase(text.find(group_line), group_line.size());
  const size_t after = text.find("\n", text.find("\"cat\":\"Coll\",")) + 1;
  text.insert(after, group_line);
  const std::string json = Put("late.json", text);
  const std::string a = (dir_ / "late-merged.json").string(), b = (dir_ / "late-merged.pftrace").string();
  ASSERT_EQ(RunTool("katrace-merge", "-q -o " + a + " " + json).exit_code, 0);
  ASSERT_EQ(RunTool("katrace-merge", "-q -o " + b + " " + json).exit_code, 0);
  EXPECT_EQ(Difference(ReadMerged(b, TraceFileFormat::kPerfettoProtobuf).events,
                       ReadMerged(a, TraceFileFormat::kChromeJson).events), "");
  const ToolResult check = RunTool("katrace-check", b);
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

// A zero-length KernelStep's halves (its parts, naming it in "kernel_step") nest in it in the
// merged .pftrace as in the export's: its END waits for them. A zero-length step after them that
// is no part of it is its sibling. Before, the step ended before its halves began.
TEST_F(PftraceTest, MergeToPftraceNestsAZeroLengthStepsPartsInIt) {
  const fs::path shell = TraceProcessorShell();
  if (shell.empty()) GTEST_SKIP() << "no Perfetto trace processor in shared/tools/perfetto";
  std::string text = SmallJson();
  const std::string steps =
      R"({"name":"thread_name","ph":"M","pid":0,"tid":5,"args":{"name":"GPU comm 9a3c0f1e12345678 ch 0 send 1"}},
{"name":"Send","cat":"KernelStep","ph":"X","pid":0,"tid":5,"ts":42.000,"dur":0.000,"args":{"id":7,"parent":6,"step":0}},
{"name":"Send wait","cat":"KernelStepWait","ph":"X","pid":0,"tid":5,"ts":42.000,"dur":0.000,"args":{"kernel_step":7}},
{"name":"Send transfer","cat":"KernelStepTransfer","ph":"X","pid":0,"tid":5,"ts":42.000,"dur":0.000,"args":{"kernel_step":7}},
{"name":"Send","cat":"KernelStep","ph":"X","pid":0,"tid":5,"ts":42.000,"dur":0.000,"args":{"id":8,"parent":6,"step":1}},
)";
  text.insert(text.find("{\"name\":\"katrace trace end\""), steps);
  const std::string json = Put("steps.json", text);
  const std::string merged = (dir_ / "steps-merged.pftrace").string();
  ASSERT_EQ(RunTool("katrace-merge", "-q -o " + merged + " " + json).exit_code, 0);
  const std::string sql = (dir_ / "parents.sql").string();
  std::ofstream(sql) << "select s.name, s.depth, coalesce(p.name, '-') from slice s left join slice p"
                        " on s.parent_id = p.id where s.name like 'Send%' order by s.id;\n";
  EXPECT_EQ(TraceProcessorRows(shell, sql, merged),
            (std::vector<std::string>{"\"Send\",0,\"-\"", "\"Send wait\",1,\"Send\"",
                                      "\"Send transfer\",1,\"Send\"", "\"Send\",0,\"-\""}));
}

TEST_F(PftraceTest, MergeSaysWhichFormatsItWrites) {
  const std::string json = Put("small.json", SmallJson());
  const struct {
    std::string args, message;
  } refused[] = {
      {"-o " + (dir_ / "m.nvtxt").string(), "writes Chrome JSON or Perfetto protobuf"},
      {"--format perfetto -o " + (dir_ / "m.json").string(), "--format perfetto but the output"},
      {"--format json -o " + (dir_ / "m.pftrace.gz").string(), "--format json but the output"},
      {"--format nvtxt -o " + (dir_ / "m").string(), "want json or perfetto"},
  };
  for (const auto& r : refused) {
    const ToolResult got = RunTool("katrace-merge", r.args + " " + json);
    EXPECT_EQ(got.exit_code, 2) << r.args << ": " << got.output;
    EXPECT_NE(got.output.find(r.message), std::string::npos) << got.output;
  }
  // A name of no format of ours takes --format's.
  const std::string out = (dir_ / "merged.trace").string();
  ToolResult r = RunTool("katrace-merge", "-q --format perfetto -o " + out + " " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Collected c;
  ASSERT_EQ(ReadTrace(out, &c).status, ReadStatus::kOk);
  EXPECT_EQ(c.format, TraceFileFormat::kPerfettoProtobuf);
  r = RunTool("katrace-merge", "--help");
  EXPECT_NE(r.output.find("The output's\nformat follows OUT's name"), std::string::npos) << r.output;
}

TEST_F(PftraceTest, HelpSaysPftraceIsRead) {
  for (const char* tool : {"katrace-check", "katrace-stats", "katrace-merge"}) {
    const ToolResult r = RunTool(tool, "--help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.output.find(".pftrace"), std::string::npos) << tool << ": " << r.output;
  }
}

// ---------------------------------------------------------------------------------------------
// Broken files.

TEST_F(PftraceTest, ACutAtEveryByteFailsWithAMessage) {
  const std::string whole = SmallPftrace();
  std::vector<std::string> paths;
  for (size_t n = 1; n < whole.size(); ++n) {
    paths.push_back(Put("cut-" + std::to_string(n) + ".pftrace", whole.substr(0, n)));
    Collected c;
    const ReadResult r = ReadTrace(paths.back(), &c);
    ASSERT_NE(r.status, ReadStatus::kOk) << "cut at " << n << " reads as whole";
    // One byte, 0x0a, is also a JSON text's leading newline: that reads as a cut JSON file.
    if (n > 1) {
      EXPECT_NE(r.message.find("at byte"), std::string::npos) << n << ": " << r.message;
    }
  }
  // The tool on every cut, a few hundred files a run: each gets its own verdict.
  for (size_t first = 0; first < paths.size(); first += 250) {
    std::string args;
    for (size_t i = first; i < std::min(paths.size(), first + 250); ++i) args += " " + paths[i];
    const ToolResult check = RunTool("katrace-check", "--max-problems 1" + args);
    ASSERT_EQ(check.exit_code, 1) << check.output.substr(0, 4000);
    for (size_t i = first; i < std::min(paths.size(), first + 250); ++i) {
      EXPECT_NE(check.output.find(paths[i] + ": FAILED: "), std::string::npos) << paths[i];
    }
  }
}

struct DamageCase {
  Damage damage;
  const char* message;  // in katrace-check's output
  const char* code;
};

TEST_F(PftraceTest, CheckNamesEachDamageAndItsByte) {
  const DamageCase cases[] = {
      {Damage::kUnknownIid, "event name iid 99 was never interned", "[protobuf]"},
      {Damage::kUndeclaredTrack, "slice begin on track 77, which no track descriptor before it declares",
       "[protobuf]"},
      {Damage::kUndeclaredParent, "track 9's parent 4294967301 was never declared", "[protobuf]"},
      {Damage::kEndWithoutBegin, "slice end on track 1 with no slice open on it", "[protobuf]"},
      {Damage::kOpenAtEnd, "slice 'Hang' on track 1 begins here and never ends", "[protobuf]"},
      {Damage::kTerminatingNotBegun, "terminating flow id 77 never began", "[protobuf]"},
      {Damage::kFlowNeverEnds, "flow id 88 begins here and never ends", "[protobuf]"},
      {Damage::kClockWrap, "past 2^63 ns", "[protobuf]"},
      {Damage::kWrongWireType, "TracePacket.track_event (field 11) at byte", "[protobuf]"},
      {Damage::kLengthPastEnd, "field 60 says 100 bytes, past the end of its message", "[protobuf]"},
      {Damage::kBadVarint, "bad varint", "[protobuf]"},
  };
  const std::string intact = SmallPftrace();
  for (const DamageCase& c : cases) {
    const std::string bytes = SmallPftrace(c.damage);
    const std::string path = Put("damaged.pftrace", bytes);
    const ToolResult r = RunTool("katrace-check", path);
    SCOPED_TRACE(r.output);
    EXPECT_EQ(r.exit_code, 1);
    const size_t at = r.output.find(c.message);
    ASSERT_NE(at, std::string::npos) << "expected: " << c.message;
    // The line of the message: FILE:OFFSET: error: ... at byte OFFSET ... [code], the offset
    // within the file, past the part the damage left intact.
    const size_t begin = r.output.rfind('\n', at) + 1;
    const std::string line = r.output.substr(begin, r.output.find('\n', at) - begin);
    const std::string prefix = path + ":";
    ASSERT_EQ(line.compare(0, prefix.size(), prefix), 0) << line;
    const uint64_t offset = std::stoull(line.substr(prefix.size()));
    EXPECT_NE(line.find("error:"), std::string::npos) << line;
    EXPECT_NE(line.find("at byte " + std::to_string(offset)), std::string::npos) << line;
    EXPECT_NE(line.find(c.code), std::string::npos) << line;
    EXPECT_LT(offset, bytes.size());
    EXPECT_GT(offset, 0u);
  }
}

TEST_F(PftraceTest, StatsFailsOnAParseErrorWithItsMessage) {
  const std::string path = Put("bad.pftrace", SmallPftrace(Damage::kBadVarint));
  const ToolResult r = RunTool("katrace-stats", path);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("katrace-stats: " + path + ": invalid protobuf: bad varint"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("at byte"), std::string::npos) << r.output;
}

TEST_F(PftraceTest, TheReaderReportsProblemsAndGoesOn) {
  Collected c;
  const ReadResult r = ReadTrace(Put("p.pftrace", SmallPftrace(Damage::kFlowNeverEnds)), &c);
  EXPECT_EQ(r.status, ReadStatus::kOk) << r.message;
  EXPECT_EQ(r.problems, 1u);
  EXPECT_NE(r.first_problem.find("flow id 88"), std::string::npos) << r.first_problem;
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.events.size(), 23u);  // and "Alone" itself
  EXPECT_TRUE(c.other.is_object());
}

TEST_F(PftraceTest, MergeAndStatsFailWhenTheReaderLeavesSomethingOut) {
  const std::string path = Put("p.pftrace", SmallPftrace(Damage::kFlowNeverEnds));
  const std::string said = ": warning: 1 problem in the protobuf trace, the first at byte ";
  const ToolResult merge =
      RunTool("katrace-merge", "-o " + (dir_ / "m.json").string() + " " + path);
  EXPECT_EQ(merge.exit_code, 1) << merge.output;
  EXPECT_NE(merge.output.find("katrace-merge: " + path + said), std::string::npos) << merge.output;
  const ToolResult stats = RunTool("katrace-stats", "--report host " + path);
  EXPECT_EQ(stats.exit_code, 1) << stats.output;
  EXPECT_NE(stats.output.find("katrace-stats: " + path + said), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find("1 file (1 with problems)"), std::string::npos) << stats.output;
}

// ---------------------------------------------------------------------------------------------
// Bounded memory.

// One slice open from the start to the end, then |n| short slices on another track inside it,
// one of them starting with it.
// The arguments katrace-check wants of a Group (kind_schema.h: the common ones).
std::vector<Arg> GroupArgs(uint64_t id) { return {U("id", id), S("comm", "00000000000000aa"), I("rank", 0)}; }

std::string LongSliceTrace(int n) {
  PftraceWriter w;
  w.Process(0, "rank 0", "node0, pid 4242", kIdentity);
  w.Track(1, 0, "host 1", 1, 1);
  w.Track(2, 0, "host 2", 2, 2);
  w.Begin(1000, 1, {"Long", "Group", GroupArgs(1), {}, {}});
  w.Begin(1000, 2, {"SameStart", "Group", GroupArgs(2), {}, {}});
  w.End(1500, 2);
  for (int i = 0; i < n; ++i) {
    w.Begin(2000 + 10 * i, 2, {"Short", "Group", GroupArgs(3 + static_cast<uint64_t>(i)), {}, {}});
    w.End(2005 + 10 * i, 2);
  }
  w.End(2000 + 10 * n, 1);
  w.Footer(0, kFooter);
  return w.bytes();
}

TEST_F(PftraceTest, ASliceOpenForLongDoesNotHoldEverythingBehindIt) {
  const int n = 20000;
  Collected c;
  const ReadResult r = ReadTrace(Put("long.pftrace", LongSliceTrace(n)), &c);
  ASSERT_EQ(r.status, ReadStatus::kOk) << r.message;
  ASSERT_EQ(c.events.size(), 9u + n);
  // Out of order past the bound, but each with the index JSON gives it; the same-start
  // follower waits for the open slice.
  std::vector<bool> seen(c.events.size());
  size_t long_at = 0, same_start_at = 0;
  for (size_t i = 0; i < c.events.size(); ++i) {
    const TraceEvent& e = c.events[i];
    ASSERT_LT(e.index, seen.size());
    EXPECT_FALSE(seen[e.index]);
    seen[e.index] = true;
    if (StringField(e.json, "name") == "Long") long_at = i;
    if (StringField(e.json, "name") == "SameStart") same_start_at = i;
  }
  EXPECT_EQ(c.events[long_at].index, 7u);
  EXPECT_EQ(c.events[same_start_at].index, 8u);
  EXPECT_GT(long_at, static_cast<size_t>(n / 2)) << "the long slice leaves at its end";
  EXPECT_EQ(same_start_at, long_at + 1);
  EXPECT_EQ(c.events[long_at].json["dur"].get<double>(), (1000 + 10 * n) / 1000.0);
  const ToolResult check = RunTool("katrace-check", (dir_ / "long.pftrace").string());
  EXPECT_EQ(check.exit_code, 0) << check.output.substr(0, 2000);
}

TEST_F(PftraceTest, SlicesThatNeverEndStopTheReadAtItsLimit) {
  PftraceWriter w;
  w.Process(0, "rank 0", "node0, pid 4242", kIdentity);
  w.Track(1, 0, "host 1", 1, 1);
  for (int i = 0; i < 100000; ++i) w.Begin(1000 + i, 1, {"Open", "GroupApi", {U("id", 1)}, {}, {}});
  w.Footer(0, kFooter);
  Collected c;
  ReadOptions options;
  options.max_held_bytes = uint64_t{4} << 20;
  const ReadResult r = ReadTrace(Put("open.pftrace", w.bytes()), &c, options);
  EXPECT_EQ(r.status, ReadStatus::kTooLarge) << r.message;
  EXPECT_NE(r.message.find("waiting for slices still open"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("the oldest begun at byte"), std::string::npos) << r.message;
}

TEST_F(PftraceTest, InternedStringsStopTheReadAtItsLimit) {
  PftraceWriter w;
  w.Process(0, "rank 0", "node0, pid 4242", kIdentity);
  for (int i = 0; i < 64; ++i) {
    w.Intern(pf::interned::kEventNames, std::string(100000, 'a') + std::to_string(i));
    w.Event(i, Pb().Varint(9, pf::kTypeInstant).Varint(10, 1));
  }
  w.Footer(0, kFooter);
  ReadOptions options;
  options.max_held_bytes = uint64_t{4} << 20;
  Collected c;
  const ReadResult r = ReadTrace(Put("names.pftrace", w.bytes()), &c, options);
  EXPECT_EQ(r.status, ReadStatus::kTooLarge) << r.message;
  EXPECT_NE(r.message.find("interned strings"), std::string::npos) << r.message;
}

// The reader keeps a dense run of iids in a vector and any other in a map: an iid given before
// the run grew past it, and one near 2^64, resolve as well as the run's own.
TEST_F(PftraceTest, InternedIidsOfAnyOrderAndSizeResolve) {
  PftraceWriter w;
  w.Process(0, "rank 0", "node0, pid 4242", kIdentity);
  w.Track(1, 0, "host 1", 1, 1);
  w.InternAs(pf::interned::kEventNames, 200, "Far");
  w.InternAs(pf::interned::kEventNames, uint64_t{1} << 62, "Huge");
  for (uint64_t iid = 1; iid <= 300; ++iid) {
    if (iid != 200) w.InternAs(pf::interned::kEventNames, iid, "N" + std::to_string(iid));
  }
  const std::vector<std::string> names = {"Far", "Huge", "N1", "N199", "N201", "N300"};
  int64_t ts = 1000;
  for (const std::string& name : names) {
    w.Begin(ts, 1, {name, "Group", GroupArgs(static_cast<uint64_t>(ts)), {}, {}});
    w.End(ts + 5, 1);
    ts += 10;
  }
  w.Footer(0, kFooter);
  Collected c;
  const ReadResult r = ReadTrace(Put("iids.pftrace", w.bytes()), &c);
  ASSERT_EQ(r.status, ReadStatus::kOk) << r.message;
  EXPECT_EQ(r.problems, 0u) << r.first_problem;
  std::vector<std::string> read;
  for (const TraceEvent& e : c.events) {
    if (StringField(e.json, "ph") == "X") read.push_back(StringField(e.json, "name"));
  }
  EXPECT_EQ(read, names);
}

TEST_F(PftraceTest, APacketPastTheLimitIsRefusedUnread) {
  ReadOptions options;
  options.max_event_bytes = options.max_other_data_bytes = 1 << 20;
  Collected c;
  const std::string path = Put("huge.pftrace", Pb().Bytes(1, std::string((1 << 20) + 1, 'x')).str());
  const ReadResult r = ReadTrace(path, &c, options);
  EXPECT_EQ(r.status, ReadStatus::kTooLarge) << r.message;
  EXPECT_NE(r.message.find("the packet at byte 0 says 1048577 bytes"), std::string::npos) << r.message;
}

// ---------------------------------------------------------------------------------------------
// katrace-export's two formats of one capture.

TEST_F(PftraceTest, ExportsOfOneSpoolReadTheSameInBothFormats) {
  // A copy, so that the committed spool is never at risk (--keep-spool keeps it anyway).
  const fs::path spool = dir_ / "sim_all_kinds.kspool";
  fs::copy_file(TestDataDir() / "spools/sim_all_kinds.kspool", spool);
  const std::string json = (dir_ / "all.json").string();
  const std::string proto = (dir_ / "all.pftrace").string();
  for (const auto& [format, out] : {std::pair{"json", json}, std::pair{"perfetto", proto}}) {
    const ToolResult r = RunTool("katrace-export", std::string("--keep-spool --quiet --format ") + format +
                                                       " " + spool.string() + " -o " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  ExpectSameEvents(json, proto);
  const ToolResult a = RunTool("katrace-stats", json);
  const ToolResult b = RunTool("katrace-stats", proto);
  EXPECT_EQ(a.exit_code, 0) << a.output;
  EXPECT_EQ(a.output, b.output);
  const ToolResult check = RunTool("katrace-check", proto);
  EXPECT_EQ(check.exit_code, 0) << check.output;
}


// katrace-merge of per-rank exports: two committed spools (two processes whose pids collide, so
// one is moved), each exported in both formats, merged into both formats with each selection.
// The protobuf merge of the protobuf exports holds exactly the JSON merge's events, stats and
// footer (but for the input names), and merges again as an input.
class PftraceMergeTest : public PftraceTest {
 protected:
  void SetUp() override {
    PftraceTest::SetUp();
    for (const char* name : {"sim_all_kinds", "sim_default_mask"}) {
      const fs::path spool = dir_ / (std::string(name) + ".kspool");
      fs::copy_file(TestDataDir() / "spools" / (std::string(name) + ".kspool"), spool);
      for (const char* ext : {".json", ".pftrace"}) {
        const std::string out = (dir_ / (std::string(name) + ext)).string();
        const ToolResult r = RunTool("katrace-export", "--keep-spool --quiet " + spool.string() + " -o " + out);
        ASSERT_EQ(r.exit_code, 0) << r.output;
        (EndsWith(out, ".json") ? json_ : proto_) += " " + out;
      }
    }
  }
  // Merges the JSON exports to JSON and the protobuf ones to protobuf with |options|.
  void MergeBoth(const std::string& options, std::string* json_out, std::string* proto_out) {
    *json_out = (dir_ / "merged.json").string();
    *proto_out = (dir_ / "merged.pftrace").string();
    ToolResult r = RunTool("katrace-merge", "-q " + options + " -o " + *json_out + json_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = RunTool("katrace-merge", "-q " + options + " -o " + *proto_out + proto_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  static std::string WithoutPaths(std::string footer) {
    return std::regex_replace(footer, std::regex("\"file\":\"[^\"]*\""), "\"file\":\"\"");
  }
  std::string json_, proto_;
};

TEST_F(PftraceMergeTest, MergesOfBothFormatsHoldTheSameEvents) {
  for (const std::string options : {"", "--kinds coll,kernelch,flow", "--kinds all,-flow",
                                    "--ranks 0,1", "--from 2ms --to 6ms", "--kinds coll,flow"}) {
    std::string json, proto;
    MergeBoth(options, &json, &proto);
    const Merged a = ReadMerged(json, TraceFileFormat::kChromeJson);
    const Merged b = ReadMerged(proto, TraceFileFormat::kPerfettoProtobuf);
    ASSERT_FALSE(a.events.empty()) << options;
    // Arrows whose slice at one end is not kept are left out of both (protobuf's flows live on
    // their slices; JSON's halves would bind to another slice): the same events.
    const auto split = [](const std::vector<std::string>& events, bool flows) {
      std::vector<std::string> out;
      for (const std::string& e : events) {
        if ((e.find("\"cat\":\"flow\"") != std::string::npos) == flows) out.push_back(e);
      }
      return out;
    };
    EXPECT_EQ(Difference(split(b.events, false), split(a.events, false)), "") << "'" << options << "'";
    std::vector<std::string> extra;
    const std::vector<std::string> flows_a = split(a.events, true), flows_b = split(b.events, true);
    std::set_difference(flows_b.begin(), flows_b.end(), flows_a.begin(), flows_a.end(), std::back_inserter(extra));
    EXPECT_TRUE(extra.empty()) << "'" << options << "': " << extra.front();
    EXPECT_EQ(flows_b.size(), flows_a.size()) << "'" << options << "'";
    if (options.find("--kinds coll") != std::string::npos) {
      EXPECT_FALSE(flows_b.empty()) << "'" << options << "'";
    }
    // The footers differ in the input names, and where arrows were left out in what was written.
    const auto footer = [&](const std::string& f) {
      const std::string out = WithoutPaths(f);
      if (flows_b.size() == flows_a.size()) return out;
      return std::regex_replace(out, std::regex("\"events_written\":[0-9]+"), "");
    };
    EXPECT_EQ(FirstDifference(footer(b.footer), footer(a.footer)), "") << "'" << options << "'";
    ToolResult r = RunTool("katrace-check", proto);
    EXPECT_EQ(r.exit_code, 0) << options << ": " << r.output;
    const ToolResult stats_a = RunTool("katrace-stats", json);
    const ToolResult stats_b = RunTool("katrace-stats", proto);
    // The same tables (the first line counts events, flows among them).
    const auto tables = [](const std::string& out) { return out.substr(out.find('\n')); };
    EXPECT_EQ(tables(stats_b.output), tables(stats_a.output)) << options;
    EXPECT_NE(stats_a.output.find("Name"), std::string::npos) << stats_a.output;
  }
}

TEST_F(PftraceMergeTest, AMergedPftraceMergesAgain) {
  std::string json, proto;
  MergeBoth("", &json, &proto);
  const std::string again_json = (dir_ / "again.json").string();
  const std::string again_proto = (dir_ / "again.pftrace").string();
  // (A global instant is read back on the first rank of its input: keep each input's first.)
  ToolResult r = RunTool("katrace-merge", "-q --ranks 0,1,4 -o " + again_json + " " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunTool("katrace-merge", "-q --ranks 0,1,4 -o " + again_proto + " " + proto);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Merged a = ReadMerged(again_json, TraceFileFormat::kChromeJson);
  const Merged b = ReadMerged(again_proto, TraceFileFormat::kPerfettoProtobuf);
  ASSERT_FALSE(a.events.empty());
  EXPECT_EQ(Difference(b.events, a.events), "");
  r = RunTool("katrace-check", again_proto);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// Perfetto's trace processor (where ../shared/tools/perfetto/ has it) imports the protobuf merge
// with no error or data-loss stat and the JSON merge's slices, flows and args.
TEST_F(PftraceMergeTest, TraceProcessorImportsTheMergedPftraceAsTheMergedJson) {
  const fs::path shell = TraceProcessorShell();
  if (shell.empty()) GTEST_SKIP() << "no Perfetto trace processor in shared/tools/perfetto";
  std::string json, proto;
  MergeBoth("", &json, &proto);
  const std::string sql = (dir_ / "q.sql").string();
  std::ofstream(sql) << "select (select count(*) from slice), (select count(*) from flow),"
                        " (select count(*) from slice join args using(arg_set_id)),"
                        " (select count(*) from stats where value > 0 and severity in ('error', 'data_loss'));\n";
  const auto counts = [&](const std::string& trace) {
    const std::vector<std::string> rows = TraceProcessorRows(shell, sql, trace);
    return rows.empty() ? std::string() : rows.back();
  };
  const std::string a = counts(json), b = counts(proto);
  EXPECT_EQ(b, a) << "slices, flows, slice args, error stats";
  EXPECT_EQ(b.substr(b.rfind(',') + 1), "0") << "the trace processor counted errors or data losses";
  EXPECT_NE(a.substr(0, 2), "0,") << a;
}

// When a GPU slice starts at the same ns as its host launch and comes first, the encoder begins
// the arrow there under the id with kReversedFlowBit; the host slice terminates it. The reader
// gives JSON's direction all the same: "s" on the host slice, "f" on the GPU slice, the plain id.
TEST_F(PftraceTest, AnArrowBegunAtItsGpuEndReadsFromTheHostEnd) {
  PftraceWriter w;
  w.Process(0, "rank 0", "node0, pid 4242", kIdentity);
  w.Track(1, 0, "host 4243", 1, 1);
  w.Track(2, 0, "GPU comm 9a3c0f1e12345678", 100, 2);
  const uint64_t reversed = 7 | pf::kReversedFlowBit;
  w.Begin(10000, 2, {"AllReduce", "CollGpu", {U("coll", 7)}, {reversed}, {}});
  w.Begin(10000, 1, {"AllReduce", "Coll", {U("id", 7)}, {}, {reversed}});
  w.End(12000, 1);
  w.End(20000, 2);
  w.Footer(0, kFooter);
  Collected c;
  const ReadResult r = ReadTrace(Put("reversed.pftrace", w.bytes()), &c);
  ASSERT_EQ(r.status, ReadStatus::kOk) << r.message;
  EXPECT_EQ(r.problems, 0u) << r.first_problem;
  std::vector<std::string> flows;
  for (const TraceEvent& e : c.events) {
    const std::string ph = e.json["ph"].get<std::string>();
    if (ph == "s" || ph == "f") {
      flows.push_back(ph + " tid " + std::to_string(e.json["tid"].get<uint64_t>()) + " id " +
                      std::to_string(e.json["id"].get<uint64_t>()));
    }
  }
  EXPECT_EQ(flows, (std::vector<std::string>{"s tid 1 id 7", "f tid 2 id 7"}));
}

// The encoder sizes each field before it writes it: VarintSize must be the length PutVarint
// writes for every value, and GetVarint must read that value back.
TEST(PerfettoWire, VarintSizeIsWhatPutVarintWritesAtEveryBitLength) {
  std::vector<uint64_t> values = {0, 1, ~uint64_t{0}};
  for (int bit = 1; bit < 64; ++bit) {
    const uint64_t power = uint64_t{1} << bit;
    values.insert(values.end(), {power - 1, power, power + 1});
  }
  for (uint64_t v : values) {
    // Followed by bytes that continue (0xff) or end (0x00) a varint: read with eight bytes at hand
    // and, cut at its end, with only its own.
    for (uint8_t after : {uint8_t{0xff}, uint8_t{0x00}}) {
      uint8_t bytes[pf::kMaxVarintBytes + 8];
      memset(bytes, after, sizeof(bytes));
      const uint8_t* end = pf::PutVarint(bytes, v);
      EXPECT_EQ(pf::VarintSize(v), static_cast<size_t>(end - bytes)) << v;
      const uint8_t* const all = bytes + sizeof(bytes);
      for (const uint8_t* limit : {end, all}) {
        const uint8_t* p = bytes;
        uint64_t back = 0;
        ASSERT_TRUE(pf::GetVarint(&p, limit, &back)) << v;
        EXPECT_EQ(back, v);
        EXPECT_EQ(p, end);
      }
      // Cut inside: not read, and nothing consumed.
      const uint8_t* p = bytes;
      uint64_t back = 0;
      EXPECT_FALSE(pf::GetVarint(&p, end - 1, &back)) << v;
      EXPECT_EQ(p, bytes);
    }
  }
  // Eleven bytes that all continue, and ten whose last sets bits past the 64th: not varints.
  uint8_t endless[11];
  memset(endless, 0xff, sizeof(endless));
  const uint8_t* p = endless;
  uint64_t back = 0;
  EXPECT_FALSE(pf::GetVarint(&p, endless + sizeof(endless), &back));
  uint8_t too_wide[10];
  memset(too_wide, 0xff, 9);
  too_wide[9] = 0x02;
  p = too_wide;
  EXPECT_FALSE(pf::GetVarint(&p, too_wide + sizeof(too_wide), &back));
}

}  // namespace
}  // namespace katrace::tools
