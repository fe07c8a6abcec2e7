// The export's small building blocks on their own, against simple references: the id map (both
// of its hashes), the reorder queue's order, the JSON number writers, the Chrome encoder's slice
// (one-pass path and general path) and the write-behind stage.
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin/export/chrome_json_encoder.h"
#include "plugin/export/id_map.h"
#include "plugin/export/json_buffer.h"
#include "plugin/export/json_out.h"
#include "plugin/export/output_sink.h"
#include "plugin/export/perfetto_encoder.h"
#include "plugin/export/start_order_queue.h"
#include "plugin/export/tick_converter.h"
#include "plugin/export/write_behind.h"
#include "common/perfetto_wire.h"
#include "test/support/subprocess.h"
#include "test/support/trace_validation.h"

namespace katrace {
namespace exporting {
namespace {

// Random puts, finds and erases, each checked against std::unordered_map.
void CheckAgainstReference(const std::vector<uint64_t>& ids, uint32_t seed) {
  IdMap map;
  std::unordered_map<uint64_t, uint32_t> ref;
  std::mt19937 rng(seed);
  for (size_t step = 0; step < ids.size() * 3; ++step) {
    uint64_t id = ids[rng() % ids.size()];
    switch (rng() % 3) {
      case 0: {
        uint32_t v = static_cast<uint32_t>(rng());
        map.Put(id, v);
        ref[id] = v;
        break;
      }
      case 1:
        map.Erase(id);
        ref.erase(id);
        break;
      default: {
        auto it = ref.find(id);
        ASSERT_EQ(map.Find(id), it == ref.end() ? IdMap::kMissing : it->second) << "id " << id << " step " << step;
        break;
      }
    }
    ASSERT_EQ(map.size(), ref.size());
  }
  for (uint64_t id : ids) {
    auto it = ref.find(id);
    ASSERT_EQ(map.Find(id), it == ref.end() ? IdMap::kMissing : it->second) << "id " << id;
  }
}

TEST(ExportIdMap, RunsOfConsecutiveIdsAsTheCaptureHandsThemOut) {
  // Four threads' blocks of 1024 ids, interleaved, as NextRecordId gives them.
  std::vector<uint64_t> ids;
  for (uint64_t block = 0; block < 64; ++block) {
    for (uint64_t i = 1; i <= 1024; i += 3) ids.push_back(block * 1024 + i);
  }
  CheckAgainstReference(ids, 1);
}

TEST(ExportIdMap, IdsThatDoNotComeInRunsSwitchToTheMixingHash) {
  // Multiples of a large power of two all have one home slot without mixing: the map must
  // notice the long probe run, switch, and stay exact (and fast: this finishes in milliseconds).
  std::vector<uint64_t> ids;
  for (uint64_t i = 1; i <= 20000; ++i) ids.push_back(i << 24);
  CheckAgainstReference(ids, 2);
}

// A window of ids wider than the table, kept oldest first (the GPU clock pass's launches, with
// dropped collectives leaving gaps): new ids wrap round onto the home slots of older ones still
// kept, so the table fills densely. Every erase of the oldest stays exact.
TEST(ExportIdMap, AWindowOfIdsThatWrapsRoundTheTableStaysExact) {
  IdMap map;
  std::unordered_map<uint64_t, uint32_t> ref;
  std::vector<uint64_t> window;
  std::mt19937 rng(4);
  const size_t kept = 3000;
  uint64_t id = 1;
  for (uint32_t step = 0; step < 200000; ++step) {
    id += 1 + rng() % 5;  // gaps: ids of events that are not launches, or were dropped
    map.Put(id, step);
    ref[id] = step;
    window.push_back(id);
    if (window.size() > kept) {
      const uint64_t oldest = window[window.size() - kept - 1];
      map.Erase(oldest);
      ref.erase(oldest);
    }
    if (step % 997 == 0) {
      for (size_t k = window.size() > kept + 50 ? window.size() - kept - 50 : 0; k < window.size(); ++k) {
        auto it = ref.find(window[k]);
        ASSERT_EQ(map.Find(window[k]), it == ref.end() ? IdMap::kMissing : it->second) << "id " << window[k];
      }
    }
    ASSERT_EQ(map.size(), ref.size());
  }
}

TEST(ExportIdMap, RandomIds) {
  std::mt19937_64 rng(3);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(rng() | 1);
  CheckAgainstReference(ids, 3);
}

// The segment TickConverter's buckets find for |ticks| is the one a search over all the Clock
// records' ticks finds: the last that starts at or before it (the first before them all).
void CheckSegmentsAgainstSearch(std::vector<uint64_t> record_ticks, const std::vector<uint64_t>& probes) {
  std::vector<spool::ClockBody> clocks;
  for (uint64_t t : record_ticks) clocks.push_back(spool::ClockBody{t, t / 2 + 7, 0});
  TickConverter converter;
  converter.Init(clocks);
  ASSERT_FALSE(converter.identity());
  std::sort(record_ticks.begin(), record_ticks.end());
  record_ticks.erase(std::unique(record_ticks.begin(), record_ticks.end()), record_ticks.end());
  for (uint64_t t : probes) {
    auto after = std::upper_bound(record_ticks.begin(), record_ticks.end(), t);
    const size_t want = after == record_ticks.begin() ? 0 : static_cast<size_t>(after - record_ticks.begin()) - 1;
    ASSERT_EQ(converter.SegmentOf(t), want) << "ticks " << t;
  }
}

// Every record's ticks, one either side, and random ticks across and beyond the records.
std::vector<uint64_t> ProbesAround(const std::vector<uint64_t>& record_ticks, std::mt19937_64* rng) {
  std::vector<uint64_t> probes = {0, UINT64_MAX};
  for (uint64_t t : record_ticks) {
    probes.push_back(t);
    probes.push_back(t - 1);
    probes.push_back(t + 1);
  }
  const auto [low, high] = std::minmax_element(record_ticks.begin(), record_ticks.end());
  for (int i = 0; i < 20000; ++i) probes.push_back(*low + (*rng)() % (*high - *low + 2));
  return probes;
}

TEST(ExportTickConverter, BucketsFindTheSegmentASearchFinds) {
  std::mt19937_64 rng(5);
  // A writer's ticks: about evenly spaced, with jitter.
  std::vector<uint64_t> even;
  for (uint64_t i = 0; i < 3000; ++i) even.push_back(1000000 + i * 100000 + rng() % 5000);
  CheckSegmentsAgainstSearch(even, ProbesAround(even, &rng));
  // Two records only, and records a hostile spool bunches: most in one bucket, a few far away,
  // repeated ticks, a span near the whole range of ticks.
  CheckSegmentsAgainstSearch({10, 20}, ProbesAround({10, 20}, &rng));
  std::vector<uint64_t> bunched;
  for (uint64_t i = 0; i < 500; ++i) bunched.push_back(5000 + i);
  for (uint64_t i = 0; i < 500; ++i) bunched.push_back(5000 + i);
  bunched.push_back(uint64_t{1} << 40);
  bunched.push_back((uint64_t{1} << 40) + 3);
  CheckSegmentsAgainstSearch(bunched, ProbesAround(bunched, &rng));
  std::vector<uint64_t> wide = {1, 2, UINT64_MAX - 2, UINT64_MAX / 2};
  CheckSegmentsAgainstSearch(wide, ProbesAround(wide, &rng));
}

TEST(ExportIdMap, AMissInsideALongRunOfConsecutiveIdsIsFoundMissing) {
  IdMap map;
  for (uint64_t id = 1; id <= 60000; ++id) map.Put(id, static_cast<uint32_t>(id));
  // Same home slots as ids in the run, not present.
  for (uint64_t id = 1; id <= 60000; id += 997) {
    EXPECT_EQ(map.Find(id + (uint64_t{1} << 40)), IdMap::kMissing);
    EXPECT_EQ(map.Find(id), id);
  }
  map.Clear();
  EXPECT_EQ(map.Find(5), IdMap::kMissing);
  EXPECT_EQ(map.size(), 0u);
}

// Pushes, watermark takes and single pops in random mix, against a plain list of what waits:
// what leaves, and in which order, must be what sorting the waiting entries says. |crowd| adds a
// phase of many waiting entries and small takes (the watermark held back), and then single pops.
// Entries go to |streams| streams at random; with |ordered_streams| each stream's starts never
// go back (the queue then merges them without sorting).
void CheckQueueAgainstReference(uint32_t seed, bool crowd, size_t streams = 1, bool ordered_streams = false) {
  struct Item {
    uint64_t start, end;
    uint32_t slot;  // handed out in arrival order, so it breaks ties as arrival does
  };
  auto before = [](const Item& a, const Item& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.slot < b.slot;
  };
  std::mt19937 rng(seed);
  StartOrderQueue q;
  std::vector<Item> waiting;
  uint32_t next_slot = 0;
  uint64_t now = 0;
  std::vector<uint64_t> stream_last(streams, 0);
  auto push = [&](uint64_t start) {
    const size_t stream = streams > 1 ? rng() % streams : 0;
    if (ordered_streams) start = stream_last[stream] = std::max(start, stream_last[stream]);
    uint64_t end = start + rng() % 4;
    q.Push(start, end, next_slot, stream);
    waiting.push_back(Item{start, end, next_slot++});
  };
  std::vector<uint32_t> got;
  for (int round = 0; round < 400; ++round) {
    now += rng() % 8;
    const int pushes = crowd && round == 100 ? 6000 : static_cast<int>(rng() % 40);
    for (int i = 0; i < pushes; ++i) push(now + rng() % 30);  // some start before what already left
    // Single pops only in the crowd's last rounds: before, the watermark's takes are what is
    // checked.
    if (crowd && round >= 300 && rng() % 4 == 0 && !waiting.empty()) {
      auto first = std::min_element(waiting.begin(), waiting.end(), before);
      ASSERT_EQ(q.PopFirst(), first->slot) << "round " << round;
      waiting.erase(first);
    } else {
      uint64_t watermark = crowd && round >= 100 && round < 150 ? now - 25 : now;
      got.clear();
      q.TakeBefore(watermark, &got);
      std::vector<Item> want;
      for (auto it = waiting.begin(); it != waiting.end();) {
        if (it->start < watermark) {
          want.push_back(*it);
          it = waiting.erase(it);
        } else {
          ++it;
        }
      }
      std::sort(want.begin(), want.end(), before);
      ASSERT_EQ(got.size(), want.size()) << "round " << round;
      for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i].slot) << "round " << round;
    }
    ASSERT_EQ(q.size(), waiting.size());
    // Each sorted run at least twice as long as the next, when made: about log2(waiting) of them.
    size_t log2_waiting = 0;
    while ((size_t{2} << log2_waiting) <= waiting.size()) ++log2_waiting;
    ASSERT_LE(q.runs(), log2_waiting + 2) << "round " << round;
  }
  got.clear();
  q.TakeAll(&got);
  std::sort(waiting.begin(), waiting.end(), before);
  ASSERT_EQ(got.size(), waiting.size());
  for (size_t i = 0; i < waiting.size(); ++i) ASSERT_EQ(got[i], waiting[i].slot);
  EXPECT_TRUE(q.empty());
}

TEST(ExportStartOrderQueue, WatermarkTakesAndPopsComeOutInStartLongerArrivalOrder) {
  CheckQueueAgainstReference(7, false);
}

TEST(ExportStartOrderQueue, SameOrderWhileManyWaitAndUnderSinglePops) { CheckQueueAgainstReference(8, true); }

TEST(ExportStartOrderQueue, ArrivalsInSeveralStreamsComeOutInTheSameOrder) {
  CheckQueueAgainstReference(9, false, 3, false);
  CheckQueueAgainstReference(10, true, 5, false);
}

TEST(ExportStartOrderQueue, StreamsInTheirOwnOrderAreMergedInTheSameOrder) {
  CheckQueueAgainstReference(11, false, 3, true);
  CheckQueueAgainstReference(12, true, StartOrderQueue::kStreams, true);
}

TEST(ExportStartOrderQueue, TakeAllWithoutAnyPopSortsWhatWaits) {
  StartOrderQueue q;
  q.Push(5, 6, 0);
  q.Push(5, 9, 1);  // same start, longer: first
  q.Push(1, 1, 2);
  q.Push(5, 9, 3);  // same start and end as slot 1: arrival order
  std::vector<uint32_t> got;
  q.TakeAll(&got);
  EXPECT_EQ(got, (std::vector<uint32_t>{2, 1, 3, 0}));
}

TEST(ExportJsonOut, NumbersAreJsonBuffersBytes) {
  const int64_t ints[] = {0, 1, -1, 9, 10, 99, 100, 999, 1000, -1000, 123456789, -987654321012, INT64_MAX, INT64_MIN};
  const uint64_t uints[] = {0, 1, 9, 10, 99, 100, 12345678901234567890ull, UINT64_MAX, 0x9a3c0f1e12345678ull};
  JsonOut out;
  JsonBuffer ref;
  for (int64_t v : ints) {
    out.Int(v).Char(' ');
    ref.Int(v).Char(' ');
    out.Micros(v).Char(' ');
    ref.Micros(v).Char(' ');
  }
  for (uint64_t v : uints) {
    out.Uint(v).Char(' ').Hex64(v).Char(' ');
    ref.Uint(v).Char(' ').Hex64(v).Char(' ');
  }
  // Every magnitude, at and around each power of ten.
  std::mt19937_64 rng(11);
  for (int digits = 1; digits <= 20; ++digits) {
    uint64_t p = 1;
    for (int i = 1; i < digits; ++i) p *= 10;
    for (uint64_t v : {p - 1, p, p + 1, p + rng() % p, p * 9 + rng() % p}) {
      const int64_t negative = static_cast<int64_t>(0 - v);
      out.Uint(v).Char(' ').Int(static_cast<int64_t>(v)).Char(' ');
      ref.Uint(v).Char(' ').Int(static_cast<int64_t>(v)).Char(' ');
      out.Micros(negative).Char(' ');
      ref.Micros(negative).Char(' ');
    }
  }
  out.String("plain").String("a \"quoted\"\\ and\ttab \x01");
  ref.String("plain").String("a \"quoted\"\\ and\ttab \x01");
  EXPECT_EQ(std::string(out.data(), out.size()), ref.str());
  // Hex digits as the C library writes them, every digit in every place.
  JsonOut hex;
  std::string want;
  for (int i = 0; i < 2000; ++i) {
    const uint64_t v = i < 16 ? uint64_t{0x0123456789abcdefull} << (4 * i) : rng() >> (rng() % 64);
    hex.Hex64(v).Char(' ');
    char digits[24];
    snprintf(digits, sizeof(digits), "%016llx ", static_cast<unsigned long long>(v));
    want += digits;
  }
  EXPECT_EQ(std::string(hex.data(), hex.size()), want);
  JsonOut fast;
  fast.Micros(INT64_MIN);
  EXPECT_EQ(std::string(fast.data(), fast.size()), "-9223372036854775.808");
  JsonBuffer plain;
  plain.Micros(INT64_MIN);
  EXPECT_EQ(plain.str(), "-9223372036854775.808");
}

// Plain reads eight bytes at a time: every byte value, at every place in strings of every
// length up to three words, against the rule said one byte at a time.
TEST(ExportJsonOut, PlainFindsEveryByteThatNeedsEscapingWherever) {
  auto plain_byte = [](int c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; };
  EXPECT_TRUE(JsonOut::Plain(std::string_view()));
  for (size_t n = 1; n <= 24; ++n) {
    for (size_t at = 0; at < n; ++at) {
      for (int c = 0; c < 256; ++c) {
        std::string s(n, 'x');
        s[at] = static_cast<char>(c);
        ASSERT_EQ(JsonOut::Plain(s), plain_byte(c)) << "byte " << c << " at " << at << " of " << n;
      }
    }
  }
  // Two bytes side by side, where the word arithmetic could borrow from one into the other.
  for (int lo = 0; lo < 256; ++lo) {
    for (int hi : {0x00, 0x1f, 0x20, 0x21, 0x22, 0x5c, 0x7f, 0x80, 0xa0, 0xff}) {
      const std::string s = {static_cast<char>(lo), static_cast<char>(hi), 'a', 'b', 'c', 'd', 'e', 'f', 'g'};
      ASSERT_EQ(JsonOut::Plain(s), plain_byte(lo) && plain_byte(hi)) << lo << " " << hi;
    }
  }
}

std::string TempPath(const char* name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid());
}

// The trace text of one slice, written through the encoder.
std::string EncodeOneSlice(const SliceEvent& slice) {
  std::string path = TempPath("katrace-pieces-slice.json");
  OutputSink sink;
  EXPECT_TRUE(sink.Open(path, false));
  {
    WriteBehind writer(&sink, false);
    ChromeJsonEncoder enc(&writer);
    TraceProcess p;
    p.ranks.push_back(TraceRank{3, 3, 3, 0, "rank 3"});
    enc.Begin(p);
    enc.Track(TrackInfo{1, 3, "t", "t", 0, 0});
    enc.Slice(slice);
    enc.End(TraceTotals());
  }
  EXPECT_TRUE(sink.Commit());
  std::string text = katrace_test::ReadWholeFile(path);
  unlink(path.c_str());
  return text;
}

nlohmann::json SliceOf(const std::string& text) {
  nlohmann::json doc = katrace_test::ParseJson(text);
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") return e;
  }
  return nullptr;
}

TEST(ExportChromeJsonEncoder, SliceLineHasEveryArgTypeInOrder) {
  Arg args[] = {Arg::Uint("id", UINT64_MAX), Arg::Int("peer", -7), Arg::Bool("send", true),
                Arg::Bool("late", false), Arg::Str("func", "AllReduce"), Arg::Time("t", -1500),
                Arg::Hex("comm", 0x00ab00cd00ef0012ull)};
  SliceEvent s{"Coll name", "Coll", 1, 1234567, -5, args, sizeof(args) / sizeof(args[0])};
  std::string text = EncodeOneSlice(s);
  EXPECT_NE(text.find("{\"name\":\"Coll name\",\"cat\":\"Coll\",\"ph\":\"X\",\"pid\":3,\"tid\":1,\"ts\":1234.567,"
                      "\"dur\":0.000,\"args\":{\"id\":18446744073709551615,\"peer\":-7,\"send\":true,\"late\":false,"
                      "\"func\":\"AllReduce\",\"t\":-1.500,\"comm\":\"00ab00cd00ef0012\"}}"),
            std::string::npos)
      << text;
}

TEST(ExportChromeJsonEncoder, StringsThatNeedEscapingTakeTheGeneralPath) {
  Arg args[] = {Arg::Uint("id", 1), Arg::Str("func", "odd \"func\"\n")};
  SliceEvent escaped_name{"na\\me", "Coll", 1, 1000, 2000, args, 1};
  nlohmann::json a = SliceOf(EncodeOneSlice(escaped_name));
  ASSERT_FALSE(a.is_null());
  EXPECT_EQ(a["name"], "na\\me");
  EXPECT_EQ(a["args"]["id"], 1);
  SliceEvent escaped_arg{"name", "Coll", 1, 1000, 2000, args, 2};
  nlohmann::json b = SliceOf(EncodeOneSlice(escaped_arg));
  ASSERT_FALSE(b.is_null());
  EXPECT_EQ(b["args"]["func"], "odd \"func\"\n");
  EXPECT_DOUBLE_EQ(b["dur"].get<double>(), 2.0);
}

// The slice types (BEGIN 'B', END 'E'; with |all_types| also counter 'C' and instant 'I') of a
// .pftrace's TrackEvents, in packet order, each followed by '*' with |clocks| when its packet
// is not on the incremental clock: a walk over the wire format that needs no schema (every field
// is skipped but the few it looks into).
std::string SliceTypes(const std::string& bytes, bool all_types = false, bool clocks = false) {
  namespace pf = pftrace;
  struct Field {
    uint32_t number;
    uint64_t varint;
    std::string_view bytes;
  };
  auto fields = [](std::string_view m) {
    std::vector<Field> out;
    size_t i = 0;
    auto varint = [&](uint64_t* v) {
      *v = 0;
      for (int shift = 0; i < m.size() && shift < 64; shift += 7) {
        const uint8_t b = static_cast<uint8_t>(m[i++]);
        *v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if ((b & 0x80) == 0) return true;
      }
      return false;
    };
    uint64_t tag = 0;
    while (i < m.size() && varint(&tag)) {
      Field f{static_cast<uint32_t>(tag >> 3), 0, {}};
      const uint32_t type = static_cast<uint32_t>(tag & 7);
      if (type == pf::kVarint) {
        if (!varint(&f.varint)) break;
      } else if (type == pf::kLengthDelimited) {
        uint64_t n = 0;
        if (!varint(&n) || n > m.size() - i) break;
        f.bytes = m.substr(i, n);
        i += n;
      } else {
        i += type == pf::kFixed64 ? 8 : 4;
      }
      out.push_back(f);
    }
    return out;
  };
  std::string types;
  for (const Field& packet : fields(bytes)) {
    if (packet.number != pf::kTracePacket) continue;
    const std::vector<Field> packet_fields = fields(packet.bytes);
    bool own_clock = false;
    for (const Field& f : packet_fields) own_clock |= f.number == pf::packet::kTimestampClockId;
    for (const Field& event : packet_fields) {
      if (event.number != pf::packet::kTrackEvent) continue;
      for (const Field& f : fields(event.bytes)) {
        if (f.number != pf::event::kType) continue;
        const size_t before = types.size();
        if (f.varint == pf::kTypeSliceBegin) types += 'B';
        if (f.varint == pf::kTypeSliceEnd) types += 'E';
        if (all_types && f.varint == pf::kTypeCounter) types += 'C';
        if (all_types && f.varint == pf::kTypeInstant) types += 'I';
        if (clocks && own_clock && types.size() != before) types += '*';
      }
    }
  }
  return types;
}

// |between|, when given, runs after the slice it is keyed by (its index), on the encoder.
std::string EncodePerfetto(const std::vector<SliceEvent>& slices,
                           const std::map<size_t, std::function<void(PerfettoEncoder*)>>& between = {}) {
  const std::string path = "/tmp/katrace_pf_test_" + std::to_string(getpid()) + ".pftrace";
  OutputSink sink;
  EXPECT_TRUE(sink.Open(path, false));
  {
    WriteBehind writer(&sink, false);
    PerfettoEncoder enc(&writer);
    TraceProcess p;
    p.ranks.push_back(TraceRank{3, 3, 3, 0, "rank 3"});
    enc.Begin(p);
    enc.Track(TrackInfo{1, 3, "t", "t", 0, 0});
    for (size_t i = 0; i < slices.size(); ++i) {
      enc.Slice(slices[i]);
      if (const auto it = between.find(i); it != between.end()) it->second(&enc);
    }
    TraceTotals totals;
    totals.end_ts = 100000;
    enc.End(totals);
  }
  EXPECT_TRUE(sink.Commit());
  std::string bytes = katrace_test::ReadWholeFile(path);
  unlink(path.c_str());
  return bytes;
}

// A zero-length KernelStep and its two zero-length halves: Perfetto nests by BEGIN/END order,
// so the step's END waits for its parts and the wait ends before the transfer begins (before,
// the step closed first and all three were siblings). A slice that is no part still closes
// what ends at its start.
TEST(ExportPerfettoEncoder, AZeroLengthEventHoldsItsZeroLengthPartsSideBySide) {
  SliceEvent step{"Send", "KernelStep", 1, 1000, 0, nullptr, 0};
  SliceEvent wait{"Send wait", "KernelStepWait", 1, 1000, 0, nullptr, 0};
  wait.part = true;
  SliceEvent transfer{"Send transfer", "KernelStepTransfer", 1, 1000, 0, nullptr, 0};
  transfer.part = true;
  SliceEvent next{"Send", "KernelStep", 1, 1000, 0, nullptr, 0};
  SliceEvent later{"Send", "KernelStep", 1, 2000, 5, nullptr, 0};
  EXPECT_EQ(SliceTypes(EncodePerfetto({step, wait, transfer, next, later})), "BBEBEEBEBE");
  // Halves with lengths: the wait's END at the transfer's start comes first, as before.
  SliceEvent step2{"Send", "KernelStep", 1, 1000, 20, nullptr, 0};
  SliceEvent wait2{"Send wait", "KernelStepWait", 1, 1000, 5, nullptr, 0};
  wait2.part = true;
  SliceEvent transfer2{"Send transfer", "KernelStepTransfer", 1, 1005, 15, nullptr, 0};
  transfer2.part = true;
  EXPECT_EQ(SliceTypes(EncodePerfetto({step2, wait2, transfer2})), "BBEBEE");
}

// Counter samples and markers come as the spool has them, ahead of slices the layout still holds.
// They close no slice and are written on the absolute clock, so the slices after them stay on the
// incremental one (before, each sample moved that clock ahead and closed what ended before it,
// and every slice placed before it went on the absolute clock: 40 % of the demo's packets).
TEST(ExportPerfettoEncoder, ASampleAheadOfHeldSlicesLeavesTheirClockAlone) {
  SliceEvent first{"AllReduce", "Coll", 1, 1000, 10, nullptr, 0};
  SliceEvent second{"AllReduce", "Coll", 1, 2000, 10, nullptr, 0};
  SliceEvent third{"AllReduce", "Coll", 1, 3000, 10, nullptr, 0};
  const Arg drops[1] = {Arg::Uint("total", 3)};
  const Arg reason[1] = {Arg::Str("reason", "signal")};
  const std::string bytes =
      EncodePerfetto({first, second, third}, {{0, [&](PerfettoEncoder* e) { e->Counter("katrace drops", 50000, drops, 1); }},
                                              {1, [&](PerfettoEncoder* e) { e->Instant("dump", 60000, reason, 1); }}});
  EXPECT_EQ(SliceTypes(bytes, true, true), "BC*EBI*EBEI");
}

// Many pieces through the write-behind thread arrive whole and in order; after Finish the
// writes go inline, still in order.
TEST(ExportWriteBehind, BytesArriveInOrderThroughTheThreadAndAfterFinish) {
  std::string path = TempPath("katrace-pieces-write-behind.txt");
  OutputSink sink;
  ASSERT_TRUE(sink.Open(path, false));
  std::string expected;
  {
    WriteBehind writer(&sink, true);
    auto buf = std::make_unique<JsonOut>();
    for (int i = 0; i < 2000; ++i) {
      std::string piece = "piece " + std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'x') + "\n";
      buf->Raw(piece);
      expected += piece;
      if (i % 7 == 0) writer.Hand(&buf);
    }
    writer.Hand(&buf);
    writer.Finish();
    EXPECT_EQ(sink.bytes_written(), expected.size());
    buf->Raw("the end\n");
    expected += "the end\n";
    writer.Hand(&buf);
  }
  ASSERT_TRUE(sink.Commit());
  EXPECT_EQ(katrace_test::ReadWholeFile(path), expected);
  unlink(path.c_str());
}

}  // namespace
}  // namespace exporting
}  // namespace katrace
