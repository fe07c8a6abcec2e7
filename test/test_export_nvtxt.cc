// The NVTXT encoder driven directly (OutputSink + WriteBehind, as the export stage does): every
// line of its output checked against the grammar ImportNvtxt accepts (a checker written here,
// strict where the importer is: declared shapes, field counts, quoted text it can lex), the
// ranges parsed back to the times, threads, processes and names given, and its text rules
// (sanitizing, folding args into the message, default lines only on change) on their own; and a
// committed spool exported by the real export stage as NVTXT and as JSON, slice for slice alike.
#include <stdint.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin/export/exporter.h"
#include "plugin/export/nvtxt_encoder.h"
#include "plugin/export/output_sink.h"
#include "plugin/export/write_behind.h"
#include "test/support/plugin_harness.h"
#include "test/support/subprocess.h"
#include "test/support/trace_validation.h"

namespace katrace {
namespace exporting {
namespace {

// The file the encoder writes when |drive| feeds it.
std::string Encode(const std::function<void(NvtxtEncoder&)>& drive, bool threaded = false) {
  const std::string path = ::testing::TempDir() + "/katrace-nvtxt-" + std::to_string(getpid()) + ".nvtxt";
  OutputSink sink;
  EXPECT_TRUE(sink.Open(path, false));
  {
    WriteBehind writer(&sink, threaded);
    NvtxtEncoder enc(&writer);
    drive(enc);
  }
  EXPECT_TRUE(sink.Commit());
  std::string text = katrace_test::ReadWholeFile(path);
  unlink(path.c_str());
  return text;
}

bool IsUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// A message ImportNvtxt lexes as written: quoted, nothing inside it treats as an escape or an end
// (no quote, no backslash), no control bytes, valid UTF-8.
bool WellFormedText(const std::string& field, std::string* text) {
  if (field.size() < 2 || field.front() != '"' || field.back() != '"') return false;
  *text = field.substr(1, field.size() - 2);
  for (char ch : *text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f) return false;
  }
  return IsUtf8(*text);
}

bool IsCount(const std::string& s) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// "a, b, "c, d"" -> {a, b, "c, d"}: fields are separated by ", " outside quotes.
std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (!quoted && line.compare(i, 2, ", ") == 0) {
      out.emplace_back();
      ++i;
      continue;
    }
    out.back() += line[i];
  }
  return out;
}

struct ParsedRange {
  int64_t start, end;
  int tid, pid, category;
  std::string color, message;
};
struct ParsedMarker {
  int64_t time;
  int tid, pid;
  std::string message;
};
struct ParsedFile {
  std::vector<ParsedRange> ranges;
  std::vector<ParsedMarker> markers;
  std::map<int, std::string> processes;                 // NameProcess
  std::map<std::pair<int, int>, std::string> threads;  // NameOsThread
  std::vector<std::string> comments;
  std::string display_name;
  int default_lines = 0;
};

// Every non-empty line is a comment, a command (SetFileDisplayName, NameProcess, NameOsThread),
// a shape declaration with known fields, a default line with a known name and a valid value, or
// a data line of a declared shape with exactly its fields; anything else fails the test.
void CheckGrammar(const std::string& text, ParsedFile* parsed) {
  ParsedFile& out = *parsed;
  const std::set<std::string> known_fields = {"Start", "End", "Time", "ThreadId", "Message"};
  const std::set<std::string> colors = {"Blue", "Green", "Orange", "Purple", "Red", "Cyan", "Magenta", "Yellow"};
  std::map<std::string, std::vector<std::string>> shapes;
  std::map<std::string, std::string> vars;
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    SCOPED_TRACE("line " + std::to_string(no) + ": " + line);
    if (line.empty()) continue;
    if (line[0] == '#') {
      EXPECT_TRUE(IsUtf8(line));
      for (char c : line) EXPECT_GE(static_cast<unsigned char>(c), 0x20u);
      out.comments.push_back(line);
      continue;
    }
    const size_t eq = line.find(" = ");
    if (eq != std::string::npos && line.find('"') == std::string::npos) {
      const std::string name = line.substr(0, eq), value = line.substr(eq + 3);
      if (name == "ProcessId" || name == "CategoryId") {
        EXPECT_TRUE(IsCount(value));
      } else if (name == "Color") {
        EXPECT_TRUE(colors.count(value));
      } else if (name == "TimeBase") {
        EXPECT_EQ(value, "Manual");
      } else {
        ADD_FAILURE() << "unknown variable " << name;
      }
      vars[name] = value;
      ++out.default_lines;
      continue;
    }
    std::vector<std::string> f = Fields(line);
    std::string s;
    if (f[0] == "SetFileDisplayName") {
      ASSERT_EQ(f.size(), 2u);
      EXPECT_TRUE(WellFormedText(f[1], &out.display_name));
    } else if (f[0] == "NameProcess") {
      ASSERT_EQ(f.size(), 3u);
      EXPECT_TRUE(IsCount(f[1]));
      EXPECT_TRUE(WellFormedText(f[2], &s));
      out.processes[std::stoi(f[1])] = s;
    } else if (f[0] == "NameOsThread") {
      ASSERT_EQ(f.size(), 4u);
      EXPECT_TRUE(IsCount(f[1]) && IsCount(f[2]));
      EXPECT_TRUE(WellFormedText(f[3], &s));
      out.threads[std::make_pair(std::stoi(f[1]), std::stoi(f[2]))] = s;
    } else if (f[0][0] == '@') {
      ASSERT_GE(f.size(), 2u);
      for (size_t i = 1; i < f.size(); ++i) EXPECT_TRUE(known_fields.count(f[i])) << f[i];
      shapes[f[0].substr(1)] = std::vector<std::string>(f.begin() + 1, f.end());
    } else {
      auto shape = shapes.find(f[0]);
      ASSERT_NE(shape, shapes.end()) << "no shape declared for " << f[0];
      ASSERT_EQ(f.size(), shape->second.size() + 1);
      std::map<std::string, std::string> v;
      for (size_t i = 1; i < f.size(); ++i) {
        const std::string& field = shape->second[i - 1];
        if (field == "Message") {
          EXPECT_TRUE(WellFormedText(f[i], &v[field]));
          EXPECT_LE(v[field].size(), NvtxtEncoder::kMaxMessage);
        } else {
          EXPECT_TRUE(IsCount(f[i])) << field << " " << f[i];
          v[field] = f[i];
        }
      }
      EXPECT_EQ(vars["TimeBase"], "Manual");
      EXPECT_TRUE(vars.count("ProcessId") && vars.count("CategoryId") && vars.count("Color"));
      if (f[0] == "RangeStartEnd") {
        EXPECT_LE(std::stoll(v["Start"]), std::stoll(v["End"]));
        out.ranges.push_back(ParsedRange{std::stoll(v["Start"]), std::stoll(v["End"]), std::stoi(v["ThreadId"]),
                                         std::stoi(vars["ProcessId"]), std::stoi(vars["CategoryId"]), vars["Color"],
                                         v["Message"]});
      } else if (f[0] == "Marker") {
        out.markers.push_back(
            ParsedMarker{std::stoll(v["Time"]), std::stoi(v["ThreadId"]), std::stoi(vars["ProcessId"]), v["Message"]});
      } else {
        ADD_FAILURE() << "data line of an unexpected shape";
      }
    }
  }
}

ParsedFile Parse(const std::string& text) {
  ParsedFile f;
  CheckGrammar(text, &f);
  return f;
}

constexpr uint64_t kHostBase = 5000000000000ull;  // the host's CLOCK_MONOTONIC at the trace base

TraceProcess TwoRanksOfOneHost() {
  TraceProcess p;
  p.rank = 3;
  p.os_pid = 4242;
  p.host = "node\"7\"\n";
  p.base_realtime_ns = 1700000000123456789ull;
  p.base_monotonic_ns = kHostBase;
  p.ranks.push_back(TraceRank{3, 3, 0, 0, "rank 3"});
  p.ranks.push_back(TraceRank{5, 5, 1, 1, "rank 5"});
  return p;
}

const TrackInfo kTracks[] = {
    {1, 3, "rank 3 thread 101", "rank 3 thread 101", 0, 0},
    {2, 3, "rank 3 proxy", "rank 3 proxy", 0, 1},
    {3, 5, "rank 5 GPU ch 0", "rank 5 GPU ch 0", 0, 2},
    {4, 5, "rank 5 GPU ch 0 lane 1", "rank 5 GPU ch 0", 1, 3},
};

// A quote, a backslash, a newline, a tab and two invalid UTF-8 bytes around a valid "µ".
const std::string kHostile = std::string("say \"hi\"\\\nnext\t\xff\xc3x(") + "\xc2\xb5" + ")";
const std::string kHostileSanitized = "say 'hi'/ next ??x(\xc2\xb5)";

const Arg kEveryArg[] = {Arg::Uint("seq", 3),         Arg::Int("peer", -7),
                         Arg::Bool("send", true),     Arg::Str("algo", "Ring"),
                         Arg::Time("gpu_start", 12345), Arg::Hex("comm", 0x00ab00cd00ef0012ull),
                         Arg::Str("note", kHostile)};
const Arg kCollArgs[] = {Arg::Uint("seq", 3), Arg::Uint("bytes", 1048576), Arg::Str("algo", "Ring")};
const Arg kStepArgs[] = {Arg::Uint("step", 9)};

// Slices on both ranks' tracks, categories repeating and switching, one of them before the base.
const SliceEvent kSlices[] = {
    {"AllReduce", "Coll", 1, 1000, 5000, kCollArgs, 3},
    {"Every", "Coll", 1, 2000, 100, kEveryArg, sizeof(kEveryArg) / sizeof(kEveryArg[0])},
    {"ProxyOp Send", "ProxyOp", 2, 2500, 700, kStepArgs, 1},
    {"KernelCh", "KernelCh", 3, 3000, 1500, nullptr, 0},
    {"KernelStep", "KernelStep", 4, 3100, 200, kStepArgs, 1},
    {"KernelStep", "KernelStep", 4, 3400, 0, kStepArgs, 1},
    {kHostile, "GroupApi", 1, 4000, 10, nullptr, 0},
    {"early", "CollGpu", 3, -250, 300, nullptr, 0},
    {"AllReduce", "Coll", 1, 9000, 20, kCollArgs, 3},
};

TraceTotals Totals() {
  TraceTotals t;
  t.end_ts = 10000;
  t.events[0] = 1;
  t.events[1] = 2;
  t.drops[1] = 4;
  t.incomplete = 2;
  return t;
}

std::string EncodeTwoRanks() {
  return Encode([](NvtxtEncoder& enc) {
    enc.Begin(TwoRanksOfOneHost());
    for (const TrackInfo& t : kTracks) enc.Track(t);
    const Arg reason = Arg::Str("reason", "KATRACE_DELAY");
    enc.Instant("capture on", 500, &reason, 1);
    for (const SliceEvent& s : kSlices) enc.Slice(s);
    const Arg drops[] = {Arg::Uint("total", 4), Arg::Uint("CollApi", 4)};
    enc.Counter("katrace drops", 6000, drops, 2);
    enc.Instant("dump", 7000, &reason, 1);
    enc.End(Totals());
  });
}

TEST(ExportNvtxtEncoder, EveryLineFollowsTheGrammarImportNvtxtAccepts) {
  const std::string text = EncodeTwoRanks();
  ParsedFile f = Parse(text);
  EXPECT_EQ(f.ranges.size(), sizeof(kSlices) / sizeof(kSlices[0]));
  EXPECT_EQ(f.display_name, "katrace node'7'  pid 4242");
  EXPECT_EQ(f.processes, (std::map<int, std::string>{{3, "rank 3"}, {5, "rank 5"}}));
  for (const TrackInfo& t : kTracks) EXPECT_EQ(f.threads[std::make_pair(t.pid, t.track)], std::string(t.name));
  EXPECT_EQ(f.threads[std::make_pair(3, 0)], "katrace");
  // The markers: process-level (thread 0 of the first rank), the trace's end last.
  ASSERT_EQ(f.markers.size(), 3u);
  EXPECT_EQ(f.markers[0].message, "capture on reason=KATRACE_DELAY");
  EXPECT_EQ(f.markers[0].time, static_cast<int64_t>(kHostBase + 500));
  EXPECT_EQ(f.markers[1].message, "dump reason=KATRACE_DELAY");
  EXPECT_EQ(f.markers[2].message, "katrace trace end drops=4 incomplete=2");
  EXPECT_EQ(f.markers[2].time, static_cast<int64_t>(kHostBase + 10000));
  for (const ParsedMarker& m : f.markers) {
    EXPECT_EQ(m.tid, 0);
    EXPECT_EQ(m.pid, 3);
  }
  // Comments name the tracks, the categories, the clock base and the closing totals.
  auto has = [&](const std::string& c) {
    for (const std::string& line : f.comments) {
      if (line.find(c) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("# track 3: rank 5 GPU ch 0 (pid 5)"));
  EXPECT_TRUE(has("# category 1: katrace, color Blue"));
  EXPECT_TRUE(has("# category 2: Coll, color Green"));
  EXPECT_TRUE(has("base_monotonic_ns 5000000000000 (CLOCK_MONOTONIC) is base_realtime_ns 1700000000123456789"));
  EXPECT_TRUE(has("ImportNvtxt --cmd merge"));
  EXPECT_TRUE(has("# events: GroupApi=1 CollApi=2 P2pApi=0"));
  EXPECT_TRUE(has("# drops: GroupApi=0 CollApi=4 "));
  EXPECT_TRUE(has("# end of trace: 3 events, 4 dropped, 2 incomplete"));
  EXPECT_TRUE(has("# counters: 1 samples skipped"));
}

TEST(ExportNvtxtEncoder, RangesParseBackToTheGivenTimesThreadsProcessesAndNames) {
  ParsedFile f = Parse(EncodeTwoRanks());
  ASSERT_EQ(f.ranges.size(), sizeof(kSlices) / sizeof(kSlices[0]));
  std::map<int, int> pid_of;
  for (const TrackInfo& t : kTracks) pid_of[t.track] = t.pid;
  std::map<std::string, int> category_of;
  for (size_t i = 0; i < f.ranges.size(); ++i) {
    const SliceEvent& s = kSlices[i];
    const ParsedRange& r = f.ranges[i];
    SCOPED_TRACE("slice " + std::to_string(i));
    const int64_t start = std::max<int64_t>(0, static_cast<int64_t>(kHostBase) + s.ts);
    EXPECT_EQ(r.start, start);
    EXPECT_EQ(r.end, start + s.dur);
    EXPECT_EQ(r.tid, s.track);
    EXPECT_EQ(r.pid, pid_of[s.track]);
    const std::string name = s.name == kHostile ? kHostileSanitized : std::string(s.name);
    EXPECT_EQ(r.message.substr(0, name.size()), name);
    EXPECT_TRUE(r.message.size() == name.size() || r.message[name.size()] == ' ') << r.message;
    // One CategoryId (and its color) per category, the same every time it comes back.
    auto it = category_of.emplace(std::string(s.category), r.category).first;
    EXPECT_EQ(it->second, r.category);
  }
  EXPECT_EQ(category_of.size(), 6u);
  EXPECT_EQ(f.ranges[0].message, "AllReduce seq=3 bytes=1048576 algo=Ring");
  EXPECT_EQ(f.ranges[1].message,
            "Every seq=3 peer=-7 send=true algo=Ring gpu_start=12.345us comm=00ab00cd00ef0012 note=" + kHostileSanitized);
}

TEST(ExportNvtxtEncoder, TextIsSanitizedNeverLongerAndCutOnlyBetweenCharacters) {
  char out[64];
  bool whole = false;
  char* e = NvtxtEncoder::PutText(out, kHostile, sizeof(out), &whole);
  EXPECT_TRUE(whole);
  EXPECT_EQ(std::string(out, e), kHostileSanitized);
  // "µ" is two bytes: with room for one it is left out, not cut in half.
  e = NvtxtEncoder::PutText(out, "ab\xc2\xb5", 3, &whole);
  EXPECT_FALSE(whole);
  EXPECT_EQ(std::string(out, e), "ab");
  // Overlong forms, surrogates and code points past U+10FFFF are invalid: a '?' per byte.
  e = NvtxtEncoder::PutText(out, "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xf0\x9f\x98\x80", sizeof(out), &whole);
  EXPECT_EQ(std::string(out, e), "??|???|????|\xf0\x9f\x98\x80");
  e = NvtxtEncoder::PutText(out, std::string("a\0b\x7f", 4), sizeof(out), &whole);
  EXPECT_EQ(std::string(out, e), "a b ");
}

TEST(ExportNvtxtEncoder, MessageFoldsAtMostEightArgsThatFitWhole) {
  const std::string long_value(150, 'v');
  const Arg many[] = {Arg::Uint("a", 1), Arg::Uint("b", 2), Arg::Uint("c", 3), Arg::Uint("d", 4), Arg::Uint("e", 5),
                      Arg::Uint("f", 6), Arg::Uint("g", 7), Arg::Uint("h", 8), Arg::Uint("i", 9)};
  const Arg too_long[] = {Arg::Uint("seq", 1), Arg::Str("comm", long_value), Arg::Uint("after", 2)};
  const std::string long_name(300, 'n');
  ParsedFile f = Parse(Encode([&](NvtxtEncoder& enc) {
    enc.Begin(TwoRanksOfOneHost());
    enc.Track(kTracks[0]);
    enc.Slice(SliceEvent{"Many", "Coll", 1, 0, 1, many, 9});
    enc.Slice(SliceEvent{"Long", "Coll", 1, 0, 1, too_long, 3});
    enc.Slice(SliceEvent{long_name, "Coll", 1, 0, 1, many, 1});
    enc.End(TraceTotals());
  }));
  ASSERT_EQ(f.ranges.size(), 3u);
  EXPECT_EQ(f.ranges[0].message, "Many a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8");
  // An arg that does not fit whole ends the folding: what is shown is a prefix of the args.
  EXPECT_EQ(f.ranges[1].message, "Long seq=1");
  EXPECT_EQ(f.ranges[2].message, std::string(NvtxtEncoder::kMaxMessage, 'n'));
}

TEST(ExportNvtxtEncoder, DefaultLinesAreWrittenOnlyWhenTheirValueChanges) {
  ParsedFile f = Parse(Encode([](NvtxtEncoder& enc) {
    enc.Begin(TwoRanksOfOneHost());
    for (const TrackInfo& t : kTracks) enc.Track(t);
    for (int i = 0; i < 100; ++i) enc.Slice(SliceEvent{"KernelCh", "KernelCh", 3, i * 10, 5, nullptr, 0});
    for (int i = 0; i < 100; ++i) enc.Slice(SliceEvent{"Coll", "Coll", 1, 1000 + i * 10, 5, nullptr, 0});
    enc.End(TraceTotals());
  }));
  ASSERT_EQ(f.ranges.size(), 200u);
  EXPECT_EQ(f.ranges[0].pid, 5);
  EXPECT_EQ(f.ranges[100].pid, 3);
  EXPECT_EQ(f.ranges[100].color, "Green");
  // TimeBase and ProcessId in the header; then per switch ProcessId, CategoryId and Color: to
  // rank 5's KernelCh, to rank 3's Coll, to the closing marker's category.
  EXPECT_EQ(f.default_lines, 2 + 3 + 3 + 2);
}

// A trace much bigger than one buffer goes out in pieces through the write-behind thread, whole
// and in order.
TEST(ExportNvtxtEncoder, ABigTraceStreamsThroughTheWriteBehindThreadInOrder) {
  constexpr int kCount = 40000;
  const std::string text = Encode(
      [](NvtxtEncoder& enc) {
        enc.Begin(TwoRanksOfOneHost());
        for (const TrackInfo& t : kTracks) enc.Track(t);
        for (int i = 0; i < kCount; ++i) {
          const SliceEvent& s = kSlices[static_cast<size_t>(i) % (sizeof(kSlices) / sizeof(kSlices[0]))];
          SliceEvent moved = s;
          moved.ts = static_cast<int64_t>(i) * 1000;
          enc.Slice(moved);
        }
        enc.End(TraceTotals());
      },
      true);
  EXPECT_GT(text.size(), 3u << 20);
  ParsedFile f = Parse(text);
  ASSERT_EQ(f.ranges.size(), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(f.ranges[static_cast<size_t>(i)].start, static_cast<int64_t>(kHostBase) + i * 1000);
}

std::string SpoolDir() {
  // Run from the repository root (test/run_tests.sh) or from the build folder.
  for (const char* dir : {"test/data/spools", "../test/data/spools", "../../test/data/spools"}) {
    if (!katrace_test::ReadWholeFile(std::string(dir) + "/sim_all_kinds.kspool").empty()) return dir;
  }
  return "test/data/spools";
}

std::string ExportAs(const std::string& spool, const std::string& out, TraceFormat format) {
  ExportOptions o;
  o.output = out;
  o.format = format;
  o.summary = false;
  o.progress = false;
  o.threads = 2;
  ExportReport r = ExportSpool(spool, o);
  EXPECT_TRUE(r.ok) << r.message;
  return katrace_test::ReadWholeFile(r.trace_path);
}

// The committed spool of every kind (a katrace-sim run) through the real export stage: the NVTXT
// follows the grammar, and its ranges are the JSON trace's slices, one for one and in order, with
// the same times (absolute here, relative to the base there), threads, processes and names; its
// markers are the JSON's instants.
TEST(ExportNvtxtEncoder, ACommittedSpoolExportsToTheSameSlicesAsItsJsonTrace) {
  const std::string dir = katrace_test::MakeTempDir();
  const std::string spool = SpoolDir() + "/sim_all_kinds.kspool";
  const std::string nvtxt = ExportAs(spool, dir + "/t.nvtxt", TraceFormat::kNvtxt);
  const nlohmann::json json = katrace_test::ParseJson(ExportAs(spool, dir + "/t.json", TraceFormat::kJson));
  ParsedFile f = Parse(nvtxt);
  const int64_t base = json["otherData"]["katrace"]["base_monotonic_ns"].get<int64_t>();
  EXPECT_NE(nvtxt.find("base_monotonic_ns " + std::to_string(base) + " "), std::string::npos);
  size_t i = 0, instants = 0;
  std::set<std::string> categories;
  for (const nlohmann::json& e : json["traceEvents"]) {
    if (e["ph"] == "i") ++instants;
    if (e["ph"] != "X") continue;
    ASSERT_LT(i, f.ranges.size());
    const ParsedRange& r = f.ranges[i++];
    SCOPED_TRACE("slice " + e.dump());
    const int64_t ts = std::llround(e["ts"].get<double>() * 1000), dur = std::llround(e["dur"].get<double>() * 1000);
    EXPECT_EQ(r.start, std::max<int64_t>(0, base + ts));
    EXPECT_EQ(r.end - r.start, dur);
    EXPECT_EQ(r.tid, e["tid"].get<int>());
    EXPECT_EQ(r.pid, e["pid"].get<int>());
    const std::string name = e["name"].get<std::string>();
    std::string sanitized(name.size(), '\0');
    sanitized.resize(static_cast<size_t>(
        NvtxtEncoder::PutText(&sanitized[0], name, NvtxtEncoder::kMaxMessage, nullptr) - &sanitized[0]));
    EXPECT_EQ(r.message.substr(0, sanitized.size()), sanitized);
    categories.insert(e["cat"].get<std::string>());
  }
  EXPECT_EQ(i, f.ranges.size());
  EXPECT_GT(i, 100u);
  EXPECT_GE(categories.size(), 5u);
  EXPECT_EQ(f.markers.size(), instants);  // the JSON's closing instant is the trace end marker
  EXPECT_FALSE(f.threads.empty());
}

}  // namespace
}  // namespace exporting
}  // namespace katrace
