// FlightRing suite (in build/test/test_flight): the flight recorder's memory driven directly. Blocks are evicted oldest first
// and by descriptor count, the sticky records of evicted blocks (and only those) come back in a
// dump, everything stays within the budget, a full sticky area is counted, and a frozen ring
// refuses blocks. Every dump is read back with the exporter's own spool reader.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "katrace/spool_format.h"
#include "plugin/capture/block_frame.h"
#include "plugin/capture/flight_ring.h"
#include "plugin/export/spool_reader.h"

namespace katrace {
namespace {

using spool::RecordType;

// Appends one record of |type| with |body_bytes| of body: its first 8 bytes |tag| (an event's id),
// the next 8 |ticks| when the body has room (where a State's or Stop's ticks are).
void AddRecord(std::vector<uint8_t>* raw, RecordType type, uint64_t tag, size_t body_bytes = 8, uint64_t ticks = 0) {
  uint16_t size = spool::RecordSize(body_bytes);
  size_t at = raw->size();
  raw->resize(at + size, 0);
  spool::RecordHeader h{};
  h.type = type;
  h.size = size;
  memcpy(raw->data() + at, &h, sizeof(h));
  memcpy(raw->data() + at + sizeof(h), &tag, sizeof(tag));
  if (body_bytes >= 16) memcpy(raw->data() + at + sizeof(h) + 8, &ticks, sizeof(ticks));
}

struct ReadRecord {
  RecordType type;
  uint64_t tag;
  uint32_t stream;
};

// A block of Stop records tagged |tag| (|bytes| in all), at ticks 1e9 * tag + 1, + 2, ...
std::vector<uint8_t> EventBlock(uint64_t tag, size_t bytes) {
  std::vector<uint8_t> raw;
  for (uint64_t n = 1; raw.size() + 24 <= bytes; ++n) AddRecord(&raw, RecordType::kStop, tag, 16, 1000000000ull * tag + n);
  return raw;
}

class FlightRingTest : public ::testing::Test {
 protected:
  void Add(FlightRing* ring, uint32_t stream, const std::vector<uint8_t>& raw, bool compress = false) {
    uint32_t crc = FrameBlock(stream, 7, 0, raw.data(), static_cast<uint32_t>(raw.size()), compress, &frame_, &coded_);
    ring->Add(frame_.data(), static_cast<uint32_t>(frame_.size()), crc, raw.data(), static_cast<uint32_t>(raw.size()));
  }

  // Dumps |ring| with a one-record lead and tail and reads every record back, block by block,
  // checking the file reads as one whole spool (numbered blocks, CRCs, an End at the end).
  std::vector<ReadRecord> Dump(const FlightRing& ring) {
    char path[] = "/tmp/flight_ring_XXXXXX";
    int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    std::vector<uint8_t> lead, tail;
    AddRecord(&lead, RecordType::kProcess, 0xfeed, sizeof(spool::ProcessBody));
    AddRecord(&tail, RecordType::kEnd, 0);
    EXPECT_TRUE(ring.WriteSpool(fd, 42, 1, lead.data(), static_cast<uint32_t>(lead.size()), tail.data(),
                                static_cast<uint32_t>(tail.size())));
    close(fd);
    std::vector<ReadRecord> out;
    exporting::SpoolReader file;
    std::string error;
    EXPECT_TRUE(file.Open(path, &error)) << error;
    uint64_t offset = file.first_block_offset();
    uint64_t expected_sequence = 0;
    exporting::ByteBuffer scratch, raw;
    for (;;) {
      exporting::BlockRef ref;
      std::string reason;
      exporting::BlockStatus st = file.ReadBlockHeader(offset, &ref, &reason);
      if (st == exporting::BlockStatus::kEnd) break;
      EXPECT_EQ(st, exporting::BlockStatus::kOk) << reason;
      if (st != exporting::BlockStatus::kOk) break;
      EXPECT_EQ(ref.sequence, expected_sequence++) << "blocks are renumbered in file order";
      EXPECT_TRUE(file.LoadBlock(ref, true, &scratch, &raw, &reason)) << reason;
      exporting::RecordCursor cursor(raw.data(), raw.size());
      spool::RecordHeader h;
      const uint8_t* body;
      size_t n;
      while (cursor.Next(&h, &body, &n)) {
        uint64_t tag = 0;
        memcpy(&tag, body, sizeof(tag));
        out.push_back({h.type, tag, ref.stream});
      }
      EXPECT_FALSE(cursor.malformed());
      offset = ref.end();
    }
    unlink(path);
    EXPECT_FALSE(out.empty());
    if (!out.empty()) {
      EXPECT_EQ(out.front().type, RecordType::kProcess) << "the lead comes first";
      EXPECT_EQ(out.back().type, RecordType::kEnd) << "the tail comes last";
    }
    return out;
  }

  static std::vector<uint64_t> EventTags(const std::vector<ReadRecord>& records) {
    std::vector<uint64_t> tags;
    for (const ReadRecord& r : records) {
      if (r.type == RecordType::kStop && (tags.empty() || tags.back() != r.tag)) tags.push_back(r.tag);
    }
    return tags;
  }

  std::vector<uint8_t> frame_, coded_;
};

TEST_F(FlightRingTest, ThePlanStaysWithinTheBudget) {
  for (uint64_t mb : {1, 4, 64, 1024}) {
    FlightRingPlan p = PlanFlightRing(mb << 20);
    uint64_t total = p.ring_bytes + p.sticky_bytes + p.max_marks * 16 + p.max_blocks * 40;
    EXPECT_LE(total, mb << 20) << mb << " MiB";
    EXPECT_GE(p.ring_bytes, (mb << 20) * 3 / 4) << "most of the budget is history";
    EXPECT_GT(p.sticky_bytes, 0u);
  }
}

TEST_F(FlightRingTest, KeepsTheNewestBlocksOldestFirst) {
  FlightRing ring(1u << 20);
  const uint64_t cap = ring.plan().ring_bytes;
  const size_t block = 64u << 10;
  const uint64_t n = 3 * cap / block;  // three laps
  for (uint64_t i = 0; i < n; ++i) Add(&ring, 1 + i % 3, EventBlock(i, block));
  FlightRingStats st = ring.stats();
  EXPECT_EQ(st.added_blocks, n);
  EXPECT_EQ(st.held_blocks + st.evicted_blocks, n);
  EXPECT_GT(st.evicted_blocks, 0u);
  EXPECT_LE(st.held_bytes, cap);
  // The ring is used well: it holds all but about one block's worth.
  EXPECT_GE(st.held_bytes + 2 * (block + sizeof(spool::BlockHeader)), cap);
  std::vector<uint64_t> tags = EventTags(Dump(ring));
  ASSERT_EQ(tags.size(), st.held_blocks);
  for (size_t i = 0; i < tags.size(); ++i) EXPECT_EQ(tags[i], n - tags.size() + i) << "the newest, oldest first";
}

TEST_F(FlightRingTest, TheCutIsTheLatestEventTimeEvicted) {
  FlightRing ring(1u << 20);
  EXPECT_EQ(ring.stats().cut_ticks, 0u) << "nothing evicted, no cut";
  for (uint64_t i = 0; i < 100; ++i) Add(&ring, 1 + i % 2, EventBlock(i, 16u << 10));
  FlightRingStats st = ring.stats();
  ASSERT_GT(st.evicted_blocks, 0u);
  std::vector<uint8_t> last = EventBlock(st.evicted_blocks - 1, 16u << 10);
  uint64_t last_ticks = 0;
  memcpy(&last_ticks, last.data() + last.size() - 8, sizeof(last_ticks));
  EXPECT_EQ(st.cut_ticks, last_ticks) << "the newest event record of the newest evicted block";
  std::vector<uint64_t> tags = EventTags(Dump(ring));
  ASSERT_FALSE(tags.empty());
  EXPECT_EQ(tags.front(), st.evicted_blocks) << "everything after the cut is held";
}

TEST_F(FlightRingTest, CompressedBlocksKeepMoreHistory) {
  FlightRing plain(1u << 20), packed(1u << 20);
  for (uint64_t i = 0; i < 200; ++i) {
    std::vector<uint8_t> raw = EventBlock(i, 32u << 10);
    Add(&plain, 1, raw, false);
    Add(&packed, 1, raw, true);
  }
  EXPECT_GT(packed.stats().held_blocks, 2 * plain.stats().held_blocks);
  std::vector<uint64_t> tags = EventTags(Dump(packed));
  ASSERT_FALSE(tags.empty());
  EXPECT_EQ(tags.back(), 199u);
}

TEST_F(FlightRingTest, StickyRecordsOfEvictedBlocksComeBackOnce) {
  FlightRing ring(1u << 20);
  std::vector<uint8_t> first;
  AddRecord(&first, RecordType::kClock, 0xc10c, sizeof(spool::ClockBody));
  AddRecord(&first, RecordType::kString, 0x5717, 24);
  AddRecord(&first, RecordType::kComm, 0xc0, sizeof(spool::CommBody) + 8);
  AddRecord(&first, RecordType::kStop, 0);
  Add(&ring, 1, first);
  std::vector<uint8_t> later_clock;
  AddRecord(&later_clock, RecordType::kClock, 0xc10d, sizeof(spool::ClockBody));
  AddRecord(&later_clock, RecordType::kCommEnd, 0xe0);
  Add(&ring, 0, later_clock);

  auto count = [](const std::vector<ReadRecord>& rs, RecordType type, uint64_t tag) {
    size_t n = 0;
    for (const ReadRecord& r : rs) n += r.type == type && r.tag == tag;
    return n;
  };
  // Still held: in its own block only, never twice.
  std::vector<ReadRecord> held = Dump(ring);
  EXPECT_EQ(count(held, RecordType::kString, 0x5717), 1u);
  EXPECT_EQ(count(held, RecordType::kComm, 0xc0), 1u);
  EXPECT_EQ(count(held, RecordType::kClock, 0xc10c), 1u);

  for (uint64_t i = 1; i < 100; ++i) Add(&ring, 2, EventBlock(i, 32u << 10));
  ASSERT_GT(ring.stats().evicted_blocks, 2u);
  std::vector<ReadRecord> after = Dump(ring);
  EXPECT_EQ(count(after, RecordType::kString, 0x5717), 1u) << "a name outlives its block";
  EXPECT_EQ(count(after, RecordType::kComm, 0xc0), 1u) << "a communicator outlives its block";
  EXPECT_EQ(count(after, RecordType::kCommEnd, 0xe0), 1u);
  EXPECT_EQ(count(after, RecordType::kClock, 0xc10c), 1u) << "the first clock pair is kept";
  EXPECT_EQ(count(after, RecordType::kClock, 0xc10d), 0u) << "later pairs are not: the held blocks have newer ones";
  EXPECT_EQ(count(after, RecordType::kStop, 0), 0u) << "events are not sticky";
  // The sticky records sit between the lead and the ring's blocks.
  ASSERT_GE(after.size(), 3u);
  EXPECT_EQ(after[1].type, RecordType::kClock);
  EXPECT_EQ(after[1].stream, 0xfffffffeu) << "in a stream of their own";
}

TEST_F(FlightRingTest, AFullStickyAreaIsCountedAndBounded) {
  FlightRing ring(1u << 20);
  const uint64_t cap = ring.plan().sticky_bytes;
  uint64_t tag = 0;
  uint64_t offered = 0;
  while (offered < 2 * cap) {
    std::vector<uint8_t> raw;
    for (int i = 0; i < 100; ++i) AddRecord(&raw, RecordType::kString, tag++, 56);
    offered += raw.size();
    Add(&ring, 1, raw);
  }
  FlightRingStats st = ring.stats();
  EXPECT_LE(st.sticky_bytes, cap);
  EXPECT_GT(st.sticky_bytes, cap - 4096) << "filled before it refused";
  EXPECT_GT(st.sticky_dropped, 0u);
}

TEST_F(FlightRingTest, TinyBlocksEvictByDescriptorCount) {
  FlightRing ring(1u << 20);
  const uint64_t max = ring.plan().max_blocks;
  for (uint64_t i = 0; i < 3 * max; ++i) Add(&ring, 1, EventBlock(i, 48));
  FlightRingStats st = ring.stats();
  EXPECT_EQ(st.held_blocks, max);
  EXPECT_EQ(st.evicted_blocks, 2 * max);
  std::vector<uint64_t> tags = EventTags(Dump(ring));
  ASSERT_EQ(tags.size(), max);
  EXPECT_EQ(tags.front(), 2 * max);
  EXPECT_EQ(tags.back(), 3 * max - 1);
}

TEST_F(FlightRingTest, ABlockLargerThanTheRingIsRefusedAndCounted) {
  FlightRing ring(1u << 20);
  Add(&ring, 1, EventBlock(1, 4096));
  std::vector<uint8_t> huge = EventBlock(2, ring.plan().ring_bytes + 1024);
  Add(&ring, 1, huge);
  FlightRingStats st = ring.stats();
  EXPECT_EQ(st.refused_blocks, 1u);
  EXPECT_EQ(st.held_blocks, 1u);
  EXPECT_EQ(EventTags(Dump(ring)), std::vector<uint64_t>{1});
}

TEST_F(FlightRingTest, AFrozenRingRefusesBlocksUntilThawed) {
  FlightRing ring(1u << 20);
  Add(&ring, 1, EventBlock(1, 4096));
  ring.Freeze();  // no Add in progress: returns at once
  Add(&ring, 1, EventBlock(2, 4096));
  EXPECT_EQ(ring.stats().refused_blocks, 1u);
  EXPECT_EQ(EventTags(Dump(ring)), std::vector<uint64_t>{1});
  ring.Thaw();
  Add(&ring, 1, EventBlock(3, 4096));
  EXPECT_EQ(EventTags(Dump(ring)), (std::vector<uint64_t>{1, 3}));
}

TEST_F(FlightRingTest, AnEmptyRingDumpsLeadAndTailOnly) {
  FlightRing ring(1u << 20);
  std::vector<ReadRecord> rs = Dump(ring);
  EXPECT_EQ(rs.size(), 2u);
}

}  // namespace
}  // namespace katrace
