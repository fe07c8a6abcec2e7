// RecordDelta suite: the delta filter of spool blocks (katrace/record_delta.h) on the records the
// capture writes: decoding undoes encoding exactly, what repeats from one event to the next
// becomes zero bytes, and a hostile block is never read outside itself. SpoolVersion: spools of
// format version 1 (before delta-coded blocks) still export; a newer version is refused by name.
#include <gtest/gtest.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#include "katrace/event_kinds.h"
#include "katrace/record_delta.h"
#include "katrace/spool_format.h"
#include "nccl_profiler/common.h"
#include "plugin/export/exporter.h"
#include "test/support/plugin_harness.h"
#include "test/support/spool_builder.h"

namespace katrace_test {
namespace {

using katrace::Kind;
namespace spool = katrace::spool;

// Record sizes in the block below.
constexpr size_t kStringBytes = spool::RecordSize(sizeof(spool::StringBody));
constexpr size_t kCollStartBytes = spool::RecordSize(sizeof(spool::StartBody) + sizeof(spool::CollFields));
constexpr size_t kStopBytes = spool::RecordSize(sizeof(spool::StopBody));
constexpr size_t kKernelChStartBytes = spool::RecordSize(sizeof(spool::StartBody) + sizeof(spool::KernelChFields));

// |kind|: the event kind of a Start/State/Stop record, 0 for the others.
template <typename Body>
void Append(std::vector<uint8_t>* block, spool::RecordType type, int kind, const Body& body, uint16_t flags = 0) {
  spool::RecordHeader h{};
  h.type = type;
  h.kind = static_cast<uint8_t>(kind);
  h.flags = flags;
  h.size = spool::RecordSize(sizeof(Body));
  h.context = 1;
  const size_t at = block->size();
  block->resize(at + h.size, 0);
  memcpy(block->data() + at, &h, sizeof(h));
  memcpy(block->data() + at + sizeof(h), &body, sizeof(body));
}

// What the capture leaves for |n| collectives: a name, then per collective a Coll start and stop
// and a KernelCh start and stop (which carries its KernelChStop state), with ids, ticks and GPU
// stamps that advance.
std::vector<uint8_t> CapturedBlock(int n) {
  std::vector<uint8_t> block;
  Append(&block, spool::RecordType::kString, 0, spool::StringBody{1, 0});
  for (int i = 0; i < n; ++i) {
    // Ids from a random per-process base, TSC ticks a few hours after boot, realtime GPU stamps.
    const uint64_t id = 0x5a17c3000000ull + 2 * static_cast<uint64_t>(i);
    const uint64_t ticks = 0x3a51f2e4c000ull + 1300 * static_cast<uint64_t>(i);
    struct {
      spool::StartBody start;
      spool::CollFields fields;
    } coll{{id, 0, ticks}, {}};
    coll.fields.seq = static_cast<uint64_t>(i);
    coll.fields.count = 1 << 20;
    coll.fields.func = 1;
    coll.fields.nchannels = 1;
    Append(&block, spool::RecordType::kStart, static_cast<int>(Kind::kColl), coll);
    Append(&block, spool::RecordType::kStop, static_cast<int>(Kind::kColl), spool::StopBody{id, ticks + 250});
    struct {
      spool::StartBody start;
      spool::KernelChFields fields;
    } ch{{id + 1, id, ticks + 400}, {}};
    ch.fields.gpu_start = 1700000000000000000ull + 600 * static_cast<uint64_t>(i);
    ch.fields.func = 1;
    Append(&block, spool::RecordType::kStart, static_cast<int>(Kind::kKernelCh), ch);
    Append(&block, spool::RecordType::kStop, static_cast<int>(Kind::kKernelCh),
           spool::StopWithGpuStopBody{id + 1, ticks + 900, ch.fields.gpu_start + 350}, spool::kStopCarriesGpuStop);
  }
  return block;
}

size_t ZeroBytes(const std::vector<uint8_t>& b) {
  size_t n = 0;
  for (uint8_t c : b) n += c == 0;
  return n;
}

TEST(RecordDeltaTest, DecodingUndoesEncodingAndWhatRepeatsBecomesZeros) {
  const std::vector<uint8_t> block = CapturedBlock(200);
  std::vector<uint8_t> coded(block.size());
  spool::EncodeRecordDeltas(block.data(), coded.data(), block.size());
  EXPECT_NE(coded, block);
  // Headers are kept; the first record of each (type, kind, size) is kept whole.
  EXPECT_EQ(memcmp(coded.data(), block.data(), kStringBytes + kCollStartBytes + kStopBytes), 0);
  // Of the 176 bytes a later collective takes, all but the record headers and the low bytes of
  // the differences are zero: over three quarters, a fifth of the block more than the values.
  EXPECT_GT(ZeroBytes(coded), block.size() * 3 / 4);
  EXPECT_GT(ZeroBytes(coded), ZeroBytes(block) + block.size() / 5);
  spool::DecodeRecordDeltas(coded.data(), coded.size());
  EXPECT_EQ(coded, block);
}

TEST(RecordDeltaTest, AHostileBlockIsNeverReadOutsideItAndWhatCannotBeWalkedStaysAsItIs) {
  const std::vector<uint8_t> good = CapturedBlock(8);
  // A record header whose size is 0, not a multiple of 8, or past the end, in the middle.
  for (uint16_t bad_size : {uint16_t{0}, uint16_t{4}, uint16_t{12}, uint16_t{0xfff8}}) {
    std::vector<uint8_t> block = good;
    const size_t at = kStringBytes + kCollStartBytes + kStopBytes + kKernelChStartBytes;  // the first KernelCh stop
    memcpy(block.data() + at + 2, &bad_size, sizeof(bad_size));
    std::vector<uint8_t> coded(block.size());
    spool::EncodeRecordDeltas(block.data(), coded.data(), block.size());
    EXPECT_EQ(memcmp(coded.data() + at, block.data() + at, block.size() - at), 0) << bad_size;
    spool::DecodeRecordDeltas(coded.data(), coded.size());
    EXPECT_EQ(coded, block) << bad_size;
  }
  // A block cut inside a record, and random bytes: decoded without a read outside (ASan).
  std::vector<uint8_t> cut(good.begin(), good.begin() + kStringBytes + kCollStartBytes + 20);
  spool::DecodeRecordDeltas(cut.data(), cut.size());
  std::mt19937_64 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> noise(rng() % 512);
    for (uint8_t& c : noise) c = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : (rng() % 3) * 8);
    std::vector<uint8_t> coded(noise.size());
    spool::EncodeRecordDeltas(noise.data(), coded.data(), noise.size());
    spool::DecodeRecordDeltas(coded.data(), coded.size());
    EXPECT_EQ(coded, noise) << "round " << round;
  }
}

// A small spool with one Coll, its version field set to |version|.
std::string SpoolOfVersion(const std::string& dir, uint32_t version) {
  const std::string path = dir + "/v" + std::to_string(version) + ".kspool";
  {
    SpoolBuilder b(path, true);
    b.Process(0, 4242, "node", dir + "/v" + std::to_string(version) + ".json", ncclProfileColl, 1700000000000000000ull,
              5000000000ull);
    b.Clock(5000000000ull, 5000000000ull, 1700000000000000000ull);
    b.Comm(1, 0xc0, 5000000000ull, 0, 1, "world");
    spool::CollFields c{};
    c.seq = 1;
    b.Start(1, Kind::kColl, 1, 1, 0, 5000001000ull, c);
    b.Stop(1, Kind::kColl, 1, 1, 5000002000ull);
    b.End(0);
    b.Close();
  }
  FILE* f = fopen(path.c_str(), "r+b");
  EXPECT_NE(f, nullptr);
  if (f != nullptr) {
    fseek(f, offsetof(spool::FileHeader, version), SEEK_SET);
    fwrite(&version, sizeof(version), 1, f);
    fclose(f);
  }
  return path;
}

TEST(SpoolVersionTest, VersionOneStillExportsAndANewerOneIsRefusedByName) {
  const std::string dir = MakeTempDir();
  katrace::ExportOptions o;
  o.summary = false;
  o.progress = false;
  katrace::ExportReport r1 = katrace::ExportSpool(SpoolOfVersion(dir, 1), o);
  EXPECT_TRUE(r1.ok) << r1.message;
  EXPECT_EQ(r1.events, 1u) << r1.message;
  katrace::ExportReport r3 = katrace::ExportSpool(SpoolOfVersion(dir, spool::kFormatVersion + 1), o);
  EXPECT_FALSE(r3.ok);
  EXPECT_NE(r3.message.find("spool format version " + std::to_string(spool::kFormatVersion + 1)), std::string::npos)
      << r3.message;
  EXPECT_NE(r3.message.find("reads versions 1 to " + std::to_string(spool::kFormatVersion)), std::string::npos)
      << r3.message;
}

}  // namespace
}  // namespace katrace_test
