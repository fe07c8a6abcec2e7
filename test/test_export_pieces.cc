// The export's small building blocks on their own, against simple references: the id map (both
// of its hashes), the reorder queue's order, the JSON number writers, the Chrome encoder's slice
// (one-pass path and general path) and the write-behind stage.
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugin/export/chrome_json_encoder.h"
#include "plugin/export/id_map.h"
#include "plugin/export/json_out.h"
#include "plugin/export/start_order_queue.h"
#include "plugin/export/write_behind.h"
#include "plugin/json_buffer.h"
#include "plugin/output_sink.h"

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

TEST(ExportIdMap, RandomIds) {
  std::mt19937_64 rng(3);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(rng() | 1);
  CheckAgainstReference(ids, 3);
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

TEST(ExportStartOrderQueue, EarliestStartThenLongerThenArrivalOrder) {
  struct Item {
    uint64_t start, end;
    uint32_t slot;
  };
  std::mt19937 rng(7);
  StartOrderQueue q;
  std::vector<Item> all;
  std::vector<uint32_t> popped;
  uint32_t next_slot = 0;
  // Pushes and pops interleaved, with many equal starts and ends (ties broken by arrival).
  for (int round = 0; round < 200; ++round) {
    int pushes = static_cast<int>(rng() % 40);
    for (int i = 0; i < pushes; ++i) {
      uint64_t start = rng() % 50, end = start + rng() % 4;
      all.push_back(Item{start, end, next_slot});
      q.Push(start, end, next_slot++);
    }
    int pops = static_cast<int>(rng() % 40);
    for (int i = 0; i < pops && !q.empty(); ++i) popped.push_back(q.Pop());
  }
  while (!q.empty()) popped.push_back(q.Pop());
  ASSERT_EQ(popped.size(), all.size());
  // Replay with a reference: a sorted pool of what is waiting, taking the first each time.
  std::vector<Item> waiting;
  auto before = [](const Item& a, const Item& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.slot < b.slot;  // slots were handed out in arrival order
  };
  rng.seed(7);
  size_t pushed = 0, taken = 0;
  for (int round = 0; round < 200; ++round) {
    int pushes = static_cast<int>(rng() % 40);
    for (int i = 0; i < pushes; ++i) {
      rng();
      rng();
      waiting.push_back(all[pushed++]);
    }
    int pops = static_cast<int>(rng() % 40);
    for (int i = 0; i < pops && !waiting.empty(); ++i) {
      auto first = std::min_element(waiting.begin(), waiting.end(), before);
      ASSERT_EQ(popped[taken++], first->slot);
      waiting.erase(first);
    }
  }
  std::sort(waiting.begin(), waiting.end(), before);
  for (const Item& it : waiting) ASSERT_EQ(popped[taken++], it.slot);
}

TEST(ExportJsonOut, NumbersAreJsonBuffersBytes) {
  const int64_t ints[] = {0, 1, -1, 9, 10, 99, 100, 999, 1000, -1000, 123456789, -987654321012, INT64_MAX, INT64_MIN};
  const uint64_t uints[] = {0, 1, 9, 10, 99, 100, 12345678901234567890ull, UINT64_MAX, 0x9a3c0f1e12345678ull};
  JsonOut out;
  JsonBuffer ref;
  for (int64_t v : ints) {
    out.Int(v).Char(' ').Micros(v).Char(' ');
    ref.Int(v).Char(' ').Micros(v).Char(' ');
  }
  for (uint64_t v : uints) {
    out.Uint(v).Char(' ').Hex64(v).Char(' ');
    ref.Uint(v).Char(' ').Hex64(v).Char(' ');
  }
  out.String("plain").String("a \"quoted\"\\ and\ttab \x01");
  ref.String("plain").String("a \"quoted\"\\ and\ttab \x01");
  EXPECT_EQ(std::string(out.data(), out.size()), ref.str());
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
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
    enc.Track(1, 3, "t", 0);
    enc.Slice(slice);
    enc.End(TraceTotals());
  }
  EXPECT_TRUE(sink.Commit());
  std::string text = ReadFile(path);
  unlink(path.c_str());
  return text;
}

nlohmann::json SliceOf(const std::string& text) {
  nlohmann::json doc = nlohmann::json::parse(text);
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
  EXPECT_EQ(ReadFile(path), expected);
  unlink(path.c_str());
}

}  // namespace
}  // namespace exporting
}  // namespace katrace
